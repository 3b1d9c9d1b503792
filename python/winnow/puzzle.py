"""Square-tile puzzles: ``scramble`` cuts an image into an R x C grid of tiles and shuffles
them; ``unscramble`` restores the image from the tiles alone (winnow/puzzle.hpp: compatibility
of every tile pair, then exhaustive search up to 9 tiles or greedy assembly).

Images are NumPy arrays [height, width] (grey), [height, width, 3] (RGB) or [.., 4] (RGBA),
uint8, uint16 (scaled to 0..255) or float with values in 0..255; they are converted to the
library's float RGBA (one copy). Positions are raster indices r * cols + c.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _winnow
from ._arrays import check_backend, classify


def _rgba(image: Any) -> tuple[np.ndarray, Any]:
    image, lib = classify(image, "image")
    if lib.on_device:
        raise TypeError("image: expected a NumPy array (puzzles read host memory)")
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
    return rgba, lib


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


def scramble(image: Any, grid: Optional[tuple] = None, *, tile: Optional[int] = None, seed: int = 1) -> tuple:
    """(scrambled, truth): the image cropped to whole tiles, its tiles shuffled (Fisher-Yates,
    SplitMix64 seeded with ``seed``: the same puzzle everywhere), and ``truth[t]`` = the
    original position of the tile now at position t. Give ``grid=(rows, cols)`` (tile side: the
    largest that fits) or ``tile=pixels``.

    >>> import numpy as np, winnow
    >>> image = np.arange(16 * 16 * 3, dtype=np.uint8).reshape(16, 16, 3)
    >>> scrambled, truth = winnow.scramble(image, (2, 2), seed=7)
    >>> scrambled.shape, sorted(truth.tolist())
    ((16, 16, 3), [0, 1, 2, 3])
    """
    source = np.asarray(image) if not hasattr(image, "detach") else image.detach().numpy()
    rgba, lib = _rgba(image)
    rows, cols, side = _grid(grid, tile)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: expected an integer in 0..2^64-1, got {seed!r}")
    shuffled, truth, *_ = _winnow.scramble(rgba, rows, cols, side, int(seed))
    return lib.wrap(_like(shuffled, source)), lib.wrap(np.asarray(truth, dtype=np.int64))


def unscramble(image: Any, grid: Optional[tuple] = None, *, tile: Optional[int] = None, measure: str = "mgc",
               method: str = "auto", backend: str = "auto") -> tuple:
    """(restored, placement): the puzzle's tiles reassembled, and ``placement[q]`` = the puzzle
    tile placed at position q. ``measure``: "mgc" (Gallagher 2012), "prediction" (Pomeranz et
    al. 2011) or "ssd"; ``method``: "auto" (exhaustive up to 9 tiles, else greedy),
    "exhaustive" or "greedy"; ``backend`` computes the compatibilities (and the exhaustive
    search). ``restored`` is uint8 with the input's channels.

    >>> import numpy as np, winnow
    >>> rng = np.random.default_rng(0)
    >>> image = rng.integers(0, 255, (32, 32, 3), dtype=np.uint8).cumsum(0).cumsum(1).astype(np.uint8)
    >>> scrambled, truth = winnow.scramble(image, (2, 2))
    >>> restored, placement = winnow.unscramble(scrambled, (2, 2))
    >>> placement.shape
    (4,)
    """
    source = np.asarray(image) if not hasattr(image, "detach") else image.detach().numpy()
    rgba, lib = _rgba(image)
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
    return lib.wrap(restored_like), lib.wrap(np.asarray(tile_at, dtype=np.int64))
