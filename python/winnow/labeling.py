"""Connected-component labeling of 2D images and 3D volumes: ``label``, a drop-in for
``cc3d.connected_components`` (numbered as it and ``scipy.ndimage.label`` number them: 1..N in
raster order of each component's first pixel, the last axis fastest), and ``statistics``, the
fields of ``cc3d.statistics``. NumPy arrays go through the host API (any backend); CuPy arrays
and PyTorch CUDA tensors through the device API on the caller's current stream.

Which path a call takes:
- a binary 2D image (bool input, or ``multilabel=False``): the image labeling (tile merge, BUF);
- anything else (volumes, multi-label images): the volume labeling, a 2D image being a volume of
  one slice (4-connectivity is then 6, 8 is 26).

Layouts: arrays whose last axis is adjacent in memory (C order, slices of rows or planes,
crops) are read in place; Fortran order, a step along the last axis or negative strides cost
one copy (a device volume must be C-contiguous: one copy otherwise). Signed integers are read
as the unsigned type of their width (no copy). Floating-point input costs one pass: ``a != 0``
(binary) or a code per distinct value (multi-label). A device call waits for its stream only
when N is needed (``return_N``, ``min_area``, ``largest_k`` or ``stats``): the labels alone stay
queued on the caller's stream.

Statistics (``stats=True``) of a device labeling are computed by the labeling itself on the
device (one record per component, brought to the host: N records, where N is read anyway), the
background's from its voxel counts along each axis (reductions on the device); the first time a
stream's record storage is too small for N, the labeling runs again after it grows.
``statistics`` of a device label array copies the labels to the host once.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _winnow
from ._arrays import check_backend, classify, on_device, same_library, surviving

LABEL_DTYPES = ("uint16", "uint32", "uint64", "int32", "int64")
CONNECTIVITIES = {2: (4, 8), 3: (6, 18, 26)}
_BYTE_MASK_KINDS = (("b", 1), ("u", 1))  # bool, uint8: what the image labeling reads as is


def _element_strides(a: np.ndarray) -> tuple:
    itemsize = a.itemsize
    return tuple(s // itemsize for s in a.strides)


def _rows_readable(a: Any, element_strides: tuple) -> bool:
    """The mask's rows as the image labeling reads them: pixels adjacent, rows at a stride of at
    least the width, no negative strides."""
    height, width = a.shape
    return ((width <= 1 or element_strides[1] == 1) and (height <= 1 or element_strides[0] >= width)
            and element_strides[0] >= 0 and element_strides[1] >= 0)


def _last_axis_adjacent(a: Any) -> bool:
    strides = _element_strides(a)
    return (a.shape[-1] <= 1 or strides[-1] == 1) and all(s >= 0 for s in strides)


def _non_negative_int(value: Any, name: str) -> int:
    if value.__class__ is int and value >= 0:  # the usual case, checked without isinstance
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name}: expected a non-negative integer, got {value!r}")
    return int(value)


def _cc3d_fields(counts: np.ndarray, lower: np.ndarray, upper: np.ndarray, centroids: np.ndarray,
                 ndim: int) -> dict:
    """cc3d.statistics' dict from per-label rows in [z, y, x] order (index 0 the background):
    voxel_counts (uint32, uint64 beyond 2^32 - 1 voxels), bounding_boxes (a tuple of slices per
    label in array-axis order, None for a label without voxels), centroids (float64 [N + 1,
    ndim] in array-axis order, NaN for a label without voxels)."""
    axes = slice(3 - ndim, 3)
    count_dtype = np.uint32 if int(counts.sum()) < 2**32 else np.uint64
    boxes = [None if count == 0 else tuple(slice(lo, hi + 1) for lo, hi in zip(low[axes], high[axes]))
             for count, low, high in zip(counts.tolist(), lower.tolist(), upper.tolist())]
    return {"voxel_counts": counts.astype(count_dtype), "bounding_boxes": boxes,
            "centroids": np.ascontiguousarray(centroids[:, axes], dtype=np.float64)}


def statistics(labels: Any) -> dict:
    """``cc3d.statistics(labels)``: the voxel count, bounding box and centroid of every label
    0..max(labels) of a 2D or 3D label array (any integer dtype, non-negative). A CuPy array or
    PyTorch CUDA tensor is copied to the host once (no device kernel sums an arbitrary label
    array; ``label(..., stats=True)`` computes them on the device during the labeling); the
    result is NumPy either way, as cc3d's.

    Returns a dict: ``voxel_counts`` (index = label, the background's at 0), ``bounding_boxes``
    (a tuple of slices per label, ready to index the array; None for a label without voxels),
    ``centroids`` (float64 [N + 1, ndim], the mean index along each axis; NaN without voxels).
    Sums are exact 64-bit integers. One pass over the labels (two for signed dtypes).

    >>> import numpy as np, winnow
    >>> s = winnow.statistics(np.array([[0, 1, 1], [0, 0, 2]]))
    >>> s["voxel_counts"].tolist(), s["bounding_boxes"][1], s["centroids"][2].tolist()
    ([3, 2, 1], (slice(0, 1, None), slice(1, 3, None)), [1.0, 2.0])
    """
    labels, lib = classify(labels, "labels")
    if labels.ndim not in (2, 3):
        raise ValueError(f"labels: expected a 2D or 3D array, got {labels.ndim} dimensions")
    dtype = lib.dtype(labels) if lib.on_device else labels.dtype
    if dtype.kind not in "biu":
        raise TypeError(f"labels: expected an integer dtype, got {dtype}")
    if lib.on_device:
        labels = on_device(lib, lib.to_host, labels)
    if labels.size == 0:
        return _empty_statistics(labels.ndim)
    volume = labels if labels.ndim == 3 else labels[None]
    if not _last_axis_adjacent(volume):
        volume = np.ascontiguousarray(volume)
    counts, lower, upper, centroids = _winnow.statistics_host(volume, False)
    return _cc3d_fields(counts, lower, upper, centroids, labels.ndim)


def _empty_statistics(ndim: int) -> dict:
    """The statistics of an array without voxels: the background alone, with no voxels (cc3d gives
    None for each field there; arrays of one row keep the fields' types)."""
    return _cc3d_fields(np.zeros(1, np.uint64), np.zeros((1, 3), np.int64), np.zeros((1, 3), np.int64),
                        np.full((1, 3), np.nan), ndim)


def _host_background(labels: np.ndarray) -> tuple:
    """The background's (count, lower, upper, centroid), axes z, y, x: one pass over host labels."""
    volume = labels if labels.ndim == 3 else labels[None]
    return tuple(part[0] for part in _winnow.statistics_host(volume, True))


def _device_background(lib: Any, labels: Any) -> tuple:
    """The background's (count, lower, upper, centroid), axes z, y, x, of device labels: its
    voxel counts along each axis (two reductions on the device, the sides' lengths back), from
    which the count, the sums of its coordinates (exact) and its extent follow."""
    background = labels == 0
    ndim = background.ndim
    lines = lib.count_along(background, (ndim - 1,))  # per index of the leading axes
    profiles = [lines] if ndim == 2 else [lib.count_along(lines, (1,)), lib.count_along(lines, (0,))]
    profiles.append(lib.count_along(background, tuple(range(ndim - 1))))
    profiles = [lib.to_host(p) for p in profiles]
    count = int(profiles[0].sum())
    lower = np.full(3, np.iinfo(np.int64).max, np.int64)
    upper = np.full(3, -1, np.int64)
    centroid = np.full(3, np.nan)
    for axis, profile in zip(range(3 - ndim, 3), profiles):
        present = np.flatnonzero(profile)
        if count:
            lower[axis], upper[axis] = present[0], present[-1]
            # Exact integer sum, divided as the host pass divides (double by double).
            centroid[axis] = float(int(np.dot(np.arange(len(profile), dtype=np.int64), profile))) / float(count)
    return np.uint64(count), lower, upper, centroid


def _labeling_statistics(n: int, rows: np.ndarray, centroids: np.ndarray, ndim: int, background: tuple) -> dict:
    """cc3d.statistics' fields of a labeling: the library's rows for labels 1..N (voxels, x, y,
    z, width, height, depth and centroid x, y, z) and the background's (count, lower, upper,
    centroid) in z, y, x."""
    counts = np.empty(n + 1, np.uint64)
    lower = np.empty((n + 1, 3), np.int64)
    upper = np.empty((n + 1, 3), np.int64)
    all_centroids = np.empty((n + 1, 3), np.float64)
    counts[0], lower[0], upper[0], all_centroids[0] = background
    counts[1:] = rows[:, 0]
    lower[1:] = rows[:, 3:0:-1]  # x, y, z -> z, y, x
    upper[1:] = lower[1:] + rows[:, 6:3:-1] - 1
    all_centroids[1:] = centroids[:, ::-1]
    return _cc3d_fields(counts, lower, upper, all_centroids, ndim)


def label(a: Any, connectivity: Optional[int] = None, *, multilabel: bool = True, min_area: int = 0,
          largest_k: int = 0, return_N: bool = False, out_dtype: Any = None, stats: bool = False,
          backend: str = "auto", out: Any = None) -> Any:
    """Labels the connected components of a 2D image or a 3D volume, as
    ``cc3d.connected_components`` does.

    Numbering: 0 background, 1..N in raster order of each component's first voxel, the last
    array axis fastest (x of a C-order [z, y, x] volume): cc3d's numbering for C-order input and
    scipy.ndimage.label's for any layout (cc3d numbers a Fortran-order array in Fortran order;
    winnow keeps the array-index order). For binary input the labels are those of
    ``scipy.ndimage.label(a, structure)`` with the matching structure.

    connectivity: 4 or 8 for 2D, 6, 18 or 26 for 3D (None: 8 / 26, cc3d's defaults).
    multilabel: True (cc3d's rule): neighbours connect only when their values are equal and
    non-zero; False: every non-zero value is foreground. Irrelevant for bool input.
    dtypes: bool, signed and unsigned integers of 8 to 64 bits, floats (a copy).
    min_area: components of fewer voxels are removed (cc3d's ``dust``); largest_k: keep only the
    k largest (ties to the lower label), applied after min_area; the survivors are renumbered in
    raster order. out_dtype: uint32 (the default; cc3d picks the smallest that fits instead) or
    uint16, uint64, int32, int64. stats: also return ``statistics(labels)`` (cc3d.statistics'
    fields as NumPy arrays, for device input too; the sums of labels 1..N come from the labeling
    itself, on the device for device input, and describe the survivors of min_area and largest_k).
    out: a C-contiguous 32-bit integer array of a's shape to write into (returned; NumPy volumes
    and multi-label images are copied into it). backend: "auto", "cpu" or "cuda" for NumPy input.

    Returns labels, or (labels, N) with ``return_N``, with the statistics last when ``stats``.
    CuPy and PyTorch CUDA arrays give the same type on the same device (int32 for PyTorch, which
    lacks uint32; min_area and largest_k through bincount and a lookup on the device).

    >>> import numpy as np, winnow
    >>> winnow.label(np.array([[1, 0, 1], [1, 0, 0]], bool), 4, return_N=True)
    (array([[1, 0, 2],
           [1, 0, 0]], dtype=uint32), 2)
    >>> winnow.label(np.array([[[1, 1, 2], [0, 2, 2]]], np.uint8), 6)
    array([[[1, 1, 2],
            [0, 2, 2]]], dtype=uint32)
    """
    a, lib = classify(a, "a")
    check_backend(backend, lib.on_device)
    ndim = len(a.shape)
    if ndim not in CONNECTIVITIES:
        raise ValueError(f"a: expected a 2D image or a 3D volume, got {ndim} dimensions")
    if connectivity is None:
        connectivity = CONNECTIVITIES[ndim][-1]
    if isinstance(connectivity, bool) or connectivity not in CONNECTIVITIES[ndim]:
        expected = " or ".join(str(c) for c in CONNECTIVITIES[ndim])
        raise ValueError(f"connectivity: expected {expected} for a {ndim}D array, got {connectivity!r}")
    min_area = _non_negative_int(min_area, "min_area")
    largest_k = _non_negative_int(largest_k, "largest_k")
    if out_dtype is not None:
        out_dtype = np.dtype(out_dtype)
        if out_dtype.name not in LABEL_DTYPES:
            raise TypeError(f"out_dtype: expected one of {', '.join(LABEL_DTYPES)}, got {out_dtype}")
    dtype = lib.dtype(a) if lib.on_device else a.dtype
    if dtype.hasobject or dtype.kind not in "biuf":
        raise TypeError(f"a: expected a bool or numeric dtype, got {dtype}")
    binary = dtype.kind == "b" or not multilabel
    if dtype.kind == "f" and lib.on_device:
        a = lib.nonzero_mask(a) if binary else lib.value_codes(a)
    elif dtype.kind == "f":
        a = a != 0 if binary else _value_codes(a)
    shape = tuple(a.shape)
    if out is None:
        labels = None
    else:
        labels, out_lib = classify(out, "out")
        same_library(lib, out_lib, "out")
        if tuple(labels.shape) != shape:
            raise ValueError(f"out: expected the shape of a {shape}, got {tuple(labels.shape)}")

    if ndim == 2 and binary:
        n, result, raw = _label_binary_image(a, lib, labels, connectivity, min_area, largest_k, stats, backend,
                                             return_N)
        raw = None if raw is None else _image_rows(*raw)
    else:
        volume_connectivity = {4: 6, 8: 26}.get(connectivity, connectivity)
        n, result, raw = _label_volume(a, lib, labels, volume_connectivity, not binary, min_area, largest_k, stats,
                                       out_dtype, backend, return_N)
    statistics_fields = None
    if raw is not None and 0 in tuple(result.shape):
        statistics_fields, raw = _empty_statistics(ndim), None
    if lib.on_device:
        if raw is not None:
            background = on_device(lib, _device_background, lib, result)
            statistics_fields = _labeling_statistics(n, raw[0], raw[1], ndim, background)
        if out_dtype is not None:
            result = on_device(lib, lib.astype, result, out_dtype)
    else:
        if raw is not None:
            statistics_fields = _labeling_statistics(n, raw[0], raw[1], ndim, _host_background(result))
        if out_dtype is not None and result.dtype != out_dtype:
            if out_dtype.name == "uint16" and n > 0xFFFF or out_dtype.name == "int32" and n > 0x7FFFFFFF:
                raise ValueError(f"out_dtype: {n} components do not fit {out_dtype}")
            result = result.astype(out_dtype)
        result = out if out is not None and result is labels else lib.wrap(result)
    parts: tuple = (result,)
    if return_N:
        parts += (n,)
    if stats:
        parts += (statistics_fields,)
    return parts if len(parts) > 1 else result


def _value_codes(a: np.ndarray) -> np.ndarray:
    """Multi-label floating-point input: one integer code per distinct value, 0 for zero."""
    _, inverse = np.unique(a, return_inverse=True)
    codes = (inverse.reshape(a.shape) + 1).astype(np.uint32 if a.size < 2**32 - 1 else np.uint64)
    codes[a == 0] = 0
    return codes


def _image_rows(boxes: np.ndarray, centroids: np.ndarray) -> tuple:
    """The image labeling's rows (area, left, top, width, height; centroid x, y) as the volume
    labeling's (voxels, x, y, z, width, height, depth; centroid x, y, z)."""
    n = len(boxes)
    rows = np.zeros((n, 7), np.int64)
    rows[:, :3] = boxes[:, :3]
    rows[:, 4:6] = boxes[:, 3:5]
    rows[:, 6] = 1
    return rows, np.column_stack([centroids, np.zeros(n)])


def _label_binary_image(a: Any, lib: Any, labels: Any, connectivity: int, min_area: int, largest_k: int,
                        stats: bool, backend: str, want_n: bool) -> tuple:
    """The image labeling of a binary 2D image: (N, labels, raw statistics or None). On the
    device N is read (a wait for the stream) only when ``want_n`` or a filter needs it, else None."""
    if lib.on_device:
        return on_device(lib, _label_binary_image_device, a, lib, labels, connectivity, min_area, largest_k, stats,
                         want_n)
    if (a.dtype.kind, a.itemsize) not in _BYTE_MASK_KINDS:
        a = a != 0
    if not _rows_readable(a, _element_strides(a)):
        a = np.ascontiguousarray(a)
    if labels is None:
        labels = np.empty(a.shape, np.uint32)
    n, raw = _winnow.label_host(a, labels, connectivity, min_area, largest_k, stats, backend)
    return n, labels, raw


def _label_binary_image_device(a: Any, lib: Any, labels: Any, connectivity: int, min_area: int, largest_k: int,
                               stats: bool, want_n: bool) -> tuple:
    dtype = lib.dtype(a)
    if (dtype.kind, dtype.itemsize) not in _BYTE_MASK_KINDS:
        a = lib.nonzero_mask(a)
    strides = lib.element_strides(a)
    if not _rows_readable(a, strides):
        a = lib.contiguous(a)
        strides = lib.element_strides(a)
    if labels is None:
        labels = lib.empty(a.shape, np.uint32)
    else:
        _check_device_labels(lib, labels)
    height, width = a.shape
    row_stride = strides[0] if height > 1 else width  # bytes: the mask's elements are bytes
    raw = None
    if stats:
        n, raw = _winnow.label_device_statistics(lib.pointer(a), width, height, row_stride, lib.pointer(labels),
                                                 connectivity, lib.device_id, lib.stream())
    else:
        n = _winnow.label_device(lib.pointer(a), width, height, row_stride, lib.pointer(labels), connectivity,
                                 lib.device_id, lib.stream(), bool(want_n or min_area > 1 or largest_k))
    labels, n, raw = _filter_device_labeling(lib, labels, n, raw, min_area, largest_k)
    return n, labels, raw


def _filter_device_labeling(lib: Any, labels: Any, n: Any, raw: Any, min_area: int, largest_k: int) -> tuple:
    """min_area and largest_k of a device labeling (relabel on the device) and, with statistics,
    the survivors' rows: the same rule (``surviving``) over the rows' counts (column 0), which
    equal the device's per-label areas, keeps the same labels in the same order."""
    if not (min_area > 1 or largest_k) or not n:
        return labels, n, raw
    labels, n = lib.relabel(labels, n, min_area, largest_k)
    if raw is not None:
        rows, centroids = raw
        keep = surviving(np, np.concatenate(([0], rows[:, 0])), min_area, largest_k)[1:]
        raw = rows[keep], centroids[keep]
    return labels, n, raw


def _check_device_labels(lib: Any, labels: Any) -> None:
    """The out= array of a device labeling (its shape is checked by label)."""
    dtype = lib.dtype(labels)
    if dtype.kind not in "iu" or dtype.itemsize != 4:
        raise TypeError(f"out: expected 32-bit integers, got {dtype}")
    if not lib.c_contiguous(labels):
        raise ValueError("out: expected a C-contiguous array")


def _label_volume(a: Any, lib: Any, labels: Any, connectivity: int, multilabel: bool, min_area: int,
                  largest_k: int, stats: bool, out_dtype: Any, backend: str, want_n: bool) -> tuple:
    """The volume labeling (a 2D image as one slice): (N, labels of a's shape, raw statistics or
    None); on the device N as in _label_binary_image."""
    shape = tuple(a.shape)
    volume_shape = shape if len(shape) == 3 else (1,) + shape
    if not lib.on_device:
        volume = a.reshape(volume_shape) if _last_axis_adjacent(a) else np.ascontiguousarray(a).reshape(volume_shape)
        if volume.size == 0:
            result = np.zeros(shape, np.uint64 if out_dtype is not None and out_dtype.itemsize == 8 else np.uint32)
            n, raw = 0, (np.zeros((0, 7), np.int64), np.zeros((0, 3))) if stats else None
        else:
            wide = out_dtype is not None and out_dtype.itemsize == 8
            result, n, raw = _winnow.label_volume_host(volume, connectivity, multilabel, min_area, largest_k, stats,
                                                       wide, backend)
            result = result.reshape(shape)
        if labels is not None:
            if labels.dtype.kind not in "iu" or labels.itemsize != 4 or not labels.flags.c_contiguous:
                raise TypeError("out: expected a C-contiguous array of 32-bit integers")
            if n >= 2**32:
                raise ValueError(f"out: {n} components do not fit 32 bits")
            np.copyto(labels, result, casting="unsafe")
            result = labels
        return n, result, raw
    return on_device(lib, _label_volume_device, a, lib, labels, volume_shape, connectivity, multilabel, min_area,
                     largest_k, stats, want_n)


def _label_volume_device(a: Any, lib: Any, labels: Any, volume_shape: tuple, connectivity: int, multilabel: bool,
                         min_area: int, largest_k: int, stats: bool, want_n: bool) -> tuple:
    volume = a if lib.c_contiguous(a) else lib.contiguous(a)
    if labels is None:
        labels = lib.empty(a.shape, np.uint32)
    else:
        _check_device_labels(lib, labels)
    if 0 in volume_shape:
        return 0, labels, (np.zeros((0, 7), np.int64), np.zeros((0, 3))) if stats else None
    nz, ny, nx = volume_shape
    arguments = (lib.pointer(volume), lib.dtype(volume).itemsize, nx, ny, nz, lib.pointer(labels), connectivity,
                 multilabel, lib.device_id, lib.stream())
    raw = None
    if stats:
        n, raw = _winnow.label_volume_device_statistics(*arguments)
    else:
        n = _winnow.label_volume_device(*arguments, bool(want_n or min_area > 1 or largest_k))
    labels, n, raw = _filter_device_labeling(lib, labels, n, raw, min_area, largest_k)
    return n, labels, raw
