"""Connected-component labeling of 2D images: ``label``, numbered as ``scipy.ndimage.label``
and ``cc3d.connected_components`` number them (1..N in raster order of each component's first
pixel), on NumPy arrays (any backend) and CuPy / PyTorch CUDA arrays (the device API on the
caller's current stream).

Layouts: a mask whose rows have adjacent pixels (C order, or a slice of rows or a cropped
region) is read in place; Fortran order, a column step or a non-bool/uint8 dtype (``a != 0``)
costs one copy. A device call waits for its stream once, to read the count.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _winnow
from ._arrays import check_backend, classify, device_context, run_device, same_library

LABEL_DTYPES = ("uint16", "uint32", "uint64", "int32", "int64")


def _rows_readable(a: Any, itemsize_strides: tuple) -> bool:
    return a.shape[1] <= 1 or itemsize_strides[1] == 1 and (a.shape[0] <= 1 or itemsize_strides[0] >= a.shape[1])


def _statistics(labels: np.ndarray, boxes: np.ndarray, centroids: np.ndarray) -> dict:
    """cc3d.statistics' fields (index 0 is the background) from the library's per-label rows."""
    height, width = labels.shape
    background = labels == 0
    counts = np.empty(len(boxes) + 1, dtype=np.uint64)
    counts[1:] = boxes[:, 0]
    counts[0] = int(background.sum())
    all_boxes = [None] * (len(boxes) + 1)
    all_centroids = np.full((len(boxes) + 1, 2), np.nan)
    if counts[0]:
        ys, xs = np.nonzero(background)
        all_boxes[0] = (slice(int(ys.min()), int(ys.max()) + 1), slice(int(xs.min()), int(xs.max()) + 1))
        all_centroids[0] = (ys.mean(), xs.mean())
    for i, (_, left, top, w, h) in enumerate(boxes.tolist(), start=1):
        all_boxes[i] = (slice(top, top + h), slice(left, left + w))
    all_centroids[1:] = centroids[:, ::-1]  # the library's (x, y) as cc3d's (row, column)
    return {"voxel_counts": counts, "bounding_boxes": all_boxes, "centroids": all_centroids}


def label(a: Any, connectivity: Optional[int] = None, *, return_N: bool = False, min_area: int = 0,
          out_dtype: Any = None, stats: bool = False, backend: str = "auto", out: Any = None) -> Any:
    """Labels the connected components of the non-zero pixels of a 2D image.

    The labels are those of ``scipy.ndimage.label(a, structure)`` (``structure`` the 3x3 cross
    for ``connectivity=4``, all ones for 8) and of ``cc3d.connected_components`` on a binary
    image: 0 background, 1..N in raster order of each component's first pixel. Non-zero pixels
    are foreground (bool and uint8 are read in place; other dtypes through ``a != 0``).

    connectivity: 4 or 8 (None: 8, cc3d's default). min_area: components of fewer pixels are
    removed and the rest renumbered. out_dtype: uint32 (default) or uint16, uint64, int32,
    int64 (a converted copy). stats: also return cc3d.statistics' fields (``voxel_counts``,
    ``bounding_boxes`` as slices, ``centroids`` as (y, x)), NumPy input only. out: a C-contiguous
    uint32 array of a's shape to write into (returned). Returns labels, or (labels, N) with
    ``return_N``, with the statistics last when ``stats``. CuPy and PyTorch CUDA arrays give
    the same type on the same device (min_area through bincount and a lookup on the device).

    >>> import numpy as np, winnow
    >>> winnow.label(np.array([[1, 0, 1], [1, 0, 0]], bool), 4, return_N=True)
    (array([[1, 0, 2],
           [1, 0, 0]], dtype=uint32), 2)
    """
    if connectivity is None:
        connectivity = 8
    if connectivity not in (4, 8):
        raise ValueError(f"connectivity: expected 4 or 8 for a 2D image, got {connectivity!r}")
    if isinstance(min_area, bool) or not isinstance(min_area, (int, np.integer)) or min_area < 0:
        raise ValueError(f"min_area: expected a non-negative integer, got {min_area!r}")
    if out_dtype is not None:
        out_dtype = np.dtype(out_dtype)
        if out_dtype.name not in LABEL_DTYPES:
            raise TypeError(f"out_dtype: expected one of {', '.join(LABEL_DTYPES)}, got {out_dtype}")
    a, lib = classify(a, "a")
    check_backend(backend, lib.on_device)
    if len(a.shape) != 2:
        raise ValueError(f"a: expected a 2D image, got {len(a.shape)} dimensions")
    if stats and lib.on_device:
        raise ValueError("stats: statistics are computed for NumPy input only")
    dtype = lib.dtype(a) if lib.on_device else a.dtype
    if dtype.hasobject or dtype.kind not in "biuf":
        raise TypeError(f"a: expected a bool or numeric dtype, got {dtype}")
    if dtype.name not in ("bool", "uint8"):
        a = lib.nonzero_mask(a) if lib.on_device else a != 0
    strides = tuple(a.stride()) if hasattr(a, "stride") and callable(a.stride) else tuple(
        s // a.itemsize for s in a.strides)
    if not _rows_readable(a, strides) or any(s < 0 for s in strides):
        a = lib.contiguous(a) if lib.on_device else np.ascontiguousarray(a)
    shape = tuple(a.shape)
    if out is None:
        labels = lib.empty(shape, np.uint32)
    else:
        labels, out_lib = classify(out, "out")
        same_library(lib, out_lib, "out")
        if tuple(labels.shape) != shape:
            raise ValueError(f"out: expected the shape of a {shape}, got {tuple(labels.shape)}")
    statistics = None
    if lib.on_device:
        with device_context(lib):
            count = lib.empty(1, np.uint32)
            run_device(lib, _winnow.label_device, a, labels, count, connectivity, lib.stream())
            n = lib.item(count)
            if min_area > 1 and n:
                labels, n = lib.relabel(labels, n, int(min_area))
            if out_dtype is not None:
                labels = lib.astype(labels, out_dtype)
        result = labels
    else:
        n, raw = _winnow.label_host(a, labels, connectivity, int(min_area), stats, backend)
        if raw is not None:
            statistics = _statistics(labels, *raw)
        if out_dtype is not None:
            if out_dtype.name == "uint16" and n > 0xFFFF:
                raise ValueError(f"out_dtype: {n} components do not fit uint16")
            labels = labels.astype(out_dtype)
        result = lib.wrap(labels)
    parts: tuple = (result,)
    if return_N:
        parts += (n,)
    if stats:
        parts += (statistics,)
    return parts if len(parts) > 1 else result
