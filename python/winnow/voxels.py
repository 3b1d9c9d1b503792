"""Voxel compaction: ``voxels`` gives the coordinates and values of the voxels of a volume above
a level (or below it, or non-zero), in raster order, through the library's compact_voxels (any
backend). Volumes are NumPy arrays indexed [z, y, x] (C order); coordinates come back in the
same order, as ``np.argwhere`` gives them.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _winnow
from ._arrays import check_backend, classify

MODES = ("above", "below", "nonzero")


def voxels(volume: Any, level: float = 0.0, *, mode: str = "above", backend: str = "auto") -> tuple:
    """(coordinates, values) of the voxels with value > level (``mode="below"``: < level;
    ``"nonzero"``: != 0, level ignored), in raster order (x fastest).

    coordinates: int64 [K, 3] as (z, y, x), ``np.argwhere(volume > level)``; values: [K] in the
    volume's dtype, ``volume[volume > level]``. Compared exactly in the voxel's type (an integer
    voxel is above 2.5 when it is at least 3); NaN voxels are never kept. dtypes: int8 to int64,
    uint8 to uint64, float32, float64. Rows and slices at any stride are read in place (x must be
    the contiguous axis, else one copy). Host (NumPy) volumes; ``backend`` picks where the
    compaction runs. Nothing kept is returned as empty arrays with a UserWarning.

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
    if lib.on_device:
        raise TypeError("volume: expected a NumPy array (voxels reads host memory)")
    check_backend(backend, False)
    if volume.ndim != 3:
        raise ValueError(f"volume: expected 3 dimensions [z, y, x], got {volume.ndim}")
    if volume.shape[2] > 1 and volume.strides[2] != volume.itemsize or any(s < 0 for s in volume.strides):
        volume = np.ascontiguousarray(volume)
    coordinates, values = _winnow.voxels_host(volume, float(level), mode, backend)
    if values.size == 0:
        finite = volume[np.isfinite(volume)] if volume.dtype.kind == "f" else volume
        values_text = f"values {float(finite.min()):g}..{float(finite.max()):g}" if finite.size else "no finite value"
        what = "non-zero" if mode == "nonzero" else f"{mode} level {float(level):g}"
        warnings.warn(f"voxels: no voxel kept: no voxel is {what} ({values_text})", UserWarning, stacklevel=2)
    return lib.wrap(coordinates), lib.wrap(values)
