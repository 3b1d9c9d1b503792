"""Square-tile puzzles: ``scramble`` cuts an image into an R x C grid of tiles and shuffles
them; ``unscramble`` restores the image from the tiles alone (winnow/puzzle.hpp: compatibility
of every tile pair, then exhaustive search up to 9 tiles or greedy assembly).

Images are arrays [height, width] (grey), [height, width, 3] (RGB) or [.., 4] (RGBA), uint8,
uint16 (scaled to 0..255) or float with values in 0..255; they are converted to the library's
float RGBA (one copy). Positions are raster indices r * cols + c. The puzzle library works on
whole tiles in host memory (the CUDA backend computes the compatibilities of ``unscramble``):
CuPy arrays and PyTorch CUDA tensors are copied to the host once and the results come back as
arrays of the same library on the same device.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from . import _winnow
from ._arrays import check_backend, classify, on_device


def _rgba(image: Any) -> tuple[np.ndarray, np.ndarray, Any]:
    """(float RGBA [h, w, 4], the image in host memory, its library)."""
    image, lib = classify(image, "image")
    if lib.on_device:
        image = on_device(lib, lib.to_host, image)
    if image.ndim not in (2, 3) or (image.ndim == 3 and image.shape[2] not in (1, 3, 4)):
        raise ValueError(f"image: expected [height, width] or [height, width, 1|3|4], got shape {image.shape}")
    if image.dtype.kind not in "uf" or image.dtype.itemsize > 8:
        raise TypeError(f"image: expected uint8, uint16 or float pixels, got {image.dtype}")
    pixels = image.astype(np.float32)
    if image.dtype == np.uint16:
        pixels /= 257.0
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    rgba = np.empty(pixels.shape[:2] + (4,), np.float32)
    rgba[..., :3] = pixels[..., :3] if pixels.shape[2] >= 3 else pixels[..., :1]
    rgba[..., 3] = pixels[..., 3] if pixels.shape[2] == 4 else 255.0
    return rgba, image, lib


def _returned(lib: Any, a: np.ndarray) -> Any:
    """A result in the caller's library (a device copy for device input)."""
    return on_device(lib, lib.from_host, a) if lib.on_device else lib.wrap(a)


def _grid(grid: Optional[tuple], tile: Optional[int]) -> tuple[int, int, int]:
    if (grid is None) == (tile is None):
        raise ValueError("grid, tile: give exactly one: grid=(rows, cols) or tile=pixels")
    if grid is not None:
        if len(grid) != 2 or not all(isinstance(v, (int, np.integer)) and v > 0 for v in grid):
            raise ValueError(f"grid: expected (rows, cols) of positive integers, got {grid!r}")
        return int(grid[0]), int(grid[1]), 0
    if not isinstance(tile, (int, np.integer)) or isinstance(tile, bool) or tile < 2:
        raise ValueError(f"tile: expected an integer of at least 2 pixels, got {tile!r}")
    return 0, 0, int(tile)


def _like(rgba: np.ndarray, image: np.ndarray) -> np.ndarray:
    """The channels of the input image, in its dtype for uint8 and float (else uint8)."""
    channels = 1 if image.ndim == 2 else image.shape[2]
    pixels = rgba[..., :3] if channels == 3 else rgba if channels == 4 else rgba[..., 0]
    if image.ndim == 3 and channels == 1:
        pixels = pixels[..., None]
    if image.dtype.kind == "f":
        return np.ascontiguousarray(pixels, dtype=image.dtype)
    return np.clip(np.rint(pixels), 0, 255).astype(np.uint8)


def scramble(image: npt.ArrayLike, grid: Optional[tuple] = None, *, tile: Optional[int] = None,
             seed: int = 1) -> tuple:
    """Cut an image into square tiles and shuffle them.

    Parameters
    ----------
    image : array_like
        [height, width], [height, width, 3] or [height, width, 4]: uint8, uint16 (scaled to
        0..255) or floats in 0..255; NumPy, CuPy or PyTorch.
    grid : (int, int), optional
        (rows, cols): the tile side is the largest that fits. Give ``grid`` or ``tile``.
    tile : int, optional
        The tile side in pixels (at least 2); the grid is as many as fit.
    seed : int, optional
        Fisher-Yates over SplitMix64 seeded with it: the same puzzle on every machine.

    Returns
    -------
    scrambled : array
        The image cropped to whole tiles, its tiles shuffled; the input's channels, in its dtype
        for uint8 and floats (else uint8).
    truth : array
        int64 [rows * cols]: ``truth[t]`` is the original position of the tile now at position t.

    Raises
    ------
    TypeError
        An unsupported dtype.
    ValueError
        A bad shape, grid, tile or seed.

    See Also
    --------
    unscramble

    Examples
    --------
    >>> import numpy as np, winnow
    >>> image = np.arange(16 * 16 * 3, dtype=np.uint8).reshape(16, 16, 3)
    >>> scrambled, truth = winnow.scramble(image, (2, 2), seed=7)
    >>> scrambled.shape, sorted(truth.tolist())
    ((16, 16, 3), [0, 1, 2, 3])
    """
    rgba, source, lib = _rgba(image)
    rows, cols, side = _grid(grid, tile)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: expected an integer in 0..2^64-1, got {seed!r}")
    shuffled, truth, *_ = _winnow.scramble(rgba, rows, cols, side, int(seed))
    return _returned(lib, _like(shuffled, source)), _returned(lib, np.asarray(truth, dtype=np.int64))


def unscramble(image: npt.ArrayLike, grid: Optional[tuple] = None, *, tile: Optional[int] = None,
               measure: str = "mgc", method: str = "auto", backend: str = "auto") -> tuple:
    """Restore a square-tile puzzle from its tiles alone.

    Parameters
    ----------
    image : array_like
        The scrambled image, as :func:`scramble` takes images (NumPy, CuPy or PyTorch).
    grid : (int, int), optional
        (rows, cols) of the puzzle. Give ``grid`` or ``tile``.
    tile : int, optional
        The tile side in pixels.
    measure : {'mgc', 'prediction', 'ssd'}, optional
        The compatibility of two tiles' edges: Mahalanobis gradient compatibility (Gallagher
        2012), prediction-based (Pomeranz et al. 2011) or the sum of squared differences.
    method : {'auto', 'exhaustive', 'greedy'}, optional
        Exhaustive search (up to 9 tiles) or greedy assembly; 'auto' takes the first when it can.
    backend : {'auto', 'cpu', 'cuda'}, optional
        Where the compatibilities (and the exhaustive search) are computed.

    Returns
    -------
    restored : array
        uint8 with the input's channels: the tiles reassembled.
    placement : array
        int64 [rows * cols]: ``placement[q]`` is the puzzle tile placed at position q.

    Raises
    ------
    TypeError
        An unsupported dtype.
    ValueError
        A bad shape, grid, tile, measure, method or backend; exhaustive search of more than 9
        tiles.

    See Also
    --------
    scramble

    Examples
    --------
    >>> import numpy as np, winnow
    >>> rng = np.random.default_rng(0)
    >>> image = rng.integers(0, 255, (32, 32, 3), dtype=np.uint8).cumsum(0).cumsum(1).astype(np.uint8)
    >>> scrambled, truth = winnow.scramble(image, (2, 2))
    >>> restored, placement = winnow.unscramble(scrambled, (2, 2))
    >>> placement.shape
    (4,)
    """
    rgba, source, lib = _rgba(image)
    rows, cols, side = _grid(grid, tile)
    check_backend(backend, False)
    if measure not in ("mgc", "prediction", "ssd"):
        raise ValueError(f"measure: expected 'mgc', 'prediction' or 'ssd', got {measure!r}")
    if method not in ("auto", "exhaustive", "greedy"):
        raise ValueError(f"method: expected 'auto', 'exhaustive' or 'greedy', got {method!r}")
    restored, tile_at, *_ = _winnow.unscramble(rgba, rows, cols, side, method, measure, backend)
    restored_like = _like(restored.astype(np.float32), source)
    if source.dtype.kind == "f":
        restored_like = restored_like.astype(np.uint8)
    return _returned(lib, restored_like), _returned(lib, np.asarray(tile_at, dtype=np.int64))
