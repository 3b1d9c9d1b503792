"""Voxel compaction: ``voxels`` gives the coordinates and values of the voxels of a volume above
a level (or below it, or non-zero), in raster order: NumPy volumes through the library's
compact_voxels (any backend), CuPy and PyTorch CUDA volumes through its device entry
(winnow/cuda/voxels.hpp: the kept voxels' raster indices on the caller's stream), whose
coordinates and values are then read with the caller's library on the device. Volumes are
indexed [z, y, x] (C order); coordinates come back in the same order, as ``np.argwhere`` gives
them.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _winnow
from ._arrays import check_backend, classify, on_device, trimmed

MODES = ("above", "below", "nonzero")
_WIDENED = {("i", 1): np.int32, ("i", 2): np.int32}  # no precompiled device comparison for these: widened


def voxels(volume: npt.ArrayLike, level: float = 0.0, *, mode: str = "above", backend: str = "auto") -> tuple:
    """The coordinates and values of the voxels of a volume above a level.

    Parameters
    ----------
    volume : array_like
        3D [z, y, x]: NumPy, CuPy or PyTorch (CPU or CUDA); int8 to int64, uint8 to uint64,
        float32 or float64. Rows and slices at any stride are read in place where the last axis
        is adjacent (else one copy).
    level : float, optional
        Compared exactly in the voxel's type: an integer voxel is above 2.5 when it is at least 3.
    mode : {'above', 'below', 'nonzero'}, optional
        Keep value > level, value < level, or value != 0 (level ignored; -0.0 is zero). NaN
        voxels are never kept.
    backend : {'auto', 'cpu', 'cuda'}, optional
        Where a NumPy volume is compacted; device volumes are compacted on their device.

    Returns
    -------
    coordinates : array
        int64 [K, 3] as (z, y, x) in raster order (x fastest): ``np.argwhere(volume > level)``.
    values : array
        [K] in the volume's dtype: ``volume[volume > level]``.

    Arrays of the volume's library and device (device volumes: on the caller's current stream,
    which is waited for once, for K). Nothing kept gives empty arrays and a UserWarning.

    Raises
    ------
    TypeError
        An unsupported dtype, a level that is not a number.
    ValueError
        Not 3D, an unknown mode, a NaN level.

    See Also
    --------
    numpy.argwhere, compact, flatnonzero

    Examples
    --------
    >>> import numpy as np, winnow
    >>> coordinates, values = winnow.voxels(np.arange(8, dtype=np.uint8).reshape(2, 2, 2), 5)
    >>> coordinates.tolist(), values.tolist()
    ([[1, 1, 0], [1, 1, 1]], [6, 7])
    """
    if mode not in MODES:
        raise ValueError(f"mode: expected 'above', 'below' or 'nonzero', got {mode!r}")
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)):
        raise TypeError(f"level: expected a number, got {type(level).__name__}")
    if level != level:
        raise ValueError("level: expected a number, got NaN")
    volume, lib = classify(volume, "volume")
    check_backend(backend, lib.on_device)
    if len(volume.shape) != 3:
        raise ValueError(f"volume: expected 3 dimensions [z, y, x], got {len(volume.shape)}")
    if lib.on_device:
        coordinates, values = on_device(lib, _voxels_device, volume, lib, float(level), mode)
    else:
        _check_dtype(volume.dtype)
        if volume.size == 0:
            coordinates, values = np.zeros((0, 3), np.int64), np.zeros(0, volume.dtype)
        else:
            if volume.shape[2] > 1 and volume.strides[2] != volume.itemsize or any(s < 0 for s in volume.strides):
                volume = np.ascontiguousarray(volume)
            coordinates, values = _winnow.voxels_host(volume, float(level), mode, backend)
    if values.shape[0] == 0:
        if math.prod(volume.shape) == 0:  # no range to name (a device library's min/max refuses one)
            values_text = "the volume is empty"
        else:
            lo, hi = lib.value_range(volume) if lib.on_device else _host_range(volume)
            values_text = f"values {lo:g}..{hi:g}" if lo == lo else "no finite value"
        what = "non-zero" if mode == "nonzero" else f"{mode} level {float(level):g}"
        warnings.warn(f"voxels: no voxel kept: no voxel is {what} ({values_text})", UserWarning, stacklevel=2)
    if lib.on_device:
        return coordinates, values
    return lib.wrap(coordinates), lib.wrap(values)


def _host_range(volume: np.ndarray) -> tuple:
    finite = volume[np.isfinite(volume)] if volume.dtype.kind == "f" else volume
    if finite.size == 0:
        return float("nan"), float("nan")
    return float(finite.min()), float(finite.max())


def _check_dtype(dtype: np.dtype) -> None:
    if dtype.kind not in "iuf" or (dtype.kind == "f" and dtype.itemsize == 2):
        raise TypeError(f"volume: expected integers, float32 or float64, got {dtype}")


def _voxels_device(volume: Any, lib: Any, level: float, mode: str) -> tuple:
    dtype = lib.dtype(volume)
    _check_dtype(dtype)
    shape = tuple(volume.shape)
    flat = lib.flat(volume)
    widened = _WIDENED.get((dtype.kind, dtype.itemsize))
    keys = flat if widened is None else lib.astype(flat, widened)
    n = math.prod(shape)
    out = lib.empty(n, np.int64)
    count = _winnow.voxel_indices_device(lib.view(keys), lib.view(out), level, mode) if n else 0
    index = trimmed(lib, out, count, True, 8)
    coordinates = lib.unravel(index, shape)
    values = lib.take(flat, index)
    if dtype.kind == "f" and mode == "nonzero":  # NaN != 0 passed the comparison: dropped here
        real = values == values
        coordinates, values = coordinates[real], values[real]
    return coordinates, values
