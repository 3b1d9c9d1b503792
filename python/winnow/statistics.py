"""Statistics of label arrays: ``statistics``, cc3d.statistics' fields (voxel counts, bounding
boxes, centroids) and per-label reductions of an intensity image (scipy.ndimage's ``sum_labels``,
``mean``, ``minimum``, ``maximum``; scikit-image's ``regionprops`` ``intensity_*``), in physical
units given a spacing; and ``BoundingBoxes``, the boxes as a lazy sequence.

The library computes every per-label array (winnow/label_statistics.hpp: one pass over the
labels' runs, exact integer sums; on the device for CuPy and PyTorch CUDA arrays); this module
wraps them. A label's tuple of slices is built only when it is asked for: building one tuple per
component in Python cost 95 % of the time of ``label(..., stats=True)`` (one component per 35 voxels
of a random 256^3 mask: 1.18 M tuples, 3.5 s), where the labeling takes 0.1 s.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _winnow
from ._arrays import classify, on_device

ArrayLike = npt.ArrayLike
BoxSlices = tuple  # tuple[slice, ...], one slice per array axis


class BoundingBoxes(Sequence):
    """The bounding boxes of labels 0..M-1 as a sequence of tuples of slices, built when indexed.

    ``boxes[label]`` is ``(slice(z0, z1 + 1), slice(y0, y1 + 1), slice(x0, x1 + 1))`` (two slices
    for an image), ready to index the labelled array, or None for a label without voxels: element
    for element what ``cc3d.statistics`` lists. It compares equal to such a list (or to another
    ``BoundingBoxes``), iterates, slices (a list) and has a length, but holds only the
    ``[M, 2 * ndim]`` integer array of first and last indices (``array``, cc3d's
    ``no_slice_conversion=True`` form), so that millions of labels cost no Python objects until
    they are used.

    Parameters
    ----------
    array : numpy.ndarray
        [M, 2 * ndim] unsigned integers: per array axis the first and last index of each label's
        voxels; a row whose first index exceeds its last (cc3d writes the type's largest value and
        0) is a label without voxels.

    Examples
    --------
    >>> import numpy as np, winnow
    >>> boxes = winnow.statistics(np.array([[0, 1, 1], [0, 0, 3]]))["bounding_boxes"]
    >>> len(boxes), boxes[1], boxes[2]
    (4, (slice(0, 1, None), slice(1, 3, None)), None)
    >>> boxes.array[3].tolist()
    [1, 1, 2, 2]
    """

    __slots__ = ("_array", "_ndim")

    def __init__(self, array: np.ndarray) -> None:
        array = np.asarray(array)
        if array.ndim != 2 or array.shape[1] % 2:
            raise ValueError(f"array: expected [M, 2 * ndim] first and last indices, got shape {array.shape}")
        self._array = array
        self._ndim = array.shape[1] // 2

    @property
    def array(self) -> np.ndarray:
        """[M, 2 * ndim]: per array axis the first and last (inclusive) index of each label."""
        return self._array

    def __len__(self) -> int:
        return self._array.shape[0]

    def _box(self, row: list) -> Optional[BoxSlices]:
        if row[0] > row[1]:
            return None
        return tuple(slice(row[2 * a], row[2 * a + 1] + 1) for a in range(self._ndim))

    def __getitem__(self, index: Union[int, slice]) -> Any:
        if isinstance(index, slice):
            return [self._box(row) for row in self._array[index].tolist()]
        i = operator.index(index)
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"bounding_boxes: index {index} out of range for {n} labels")
        return self._box(self._array[i].tolist())

    def __iter__(self) -> Iterator[Optional[BoxSlices]]:
        chunk = 1 << 16  # rows turned into Python ints at once
        for start in range(0, len(self), chunk):
            for row in self._array[start:start + chunk].tolist():
                yield self._box(row)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BoundingBoxes):
            if len(self) != len(other) or self._ndim != other._ndim:
                return False
            mine, theirs = self._array.astype(np.int64), other._array.astype(np.int64)
            empty, other_empty = mine[:, 0] > mine[:, 1], theirs[:, 0] > theirs[:, 1]
            return bool(np.array_equal(empty, other_empty) and np.array_equal(mine[~empty], theirs[~other_empty]))
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(mine == theirs for mine, theirs in zip(self, other))
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"BoundingBoxes({len(self)} labels, {self._ndim}D)"

    def tolist(self) -> list:
        """Every box, as cc3d.statistics lists them."""
        return list(self)


def cc3d_fields(counts: np.ndarray, boxes: np.ndarray, centroids: np.ndarray,
                no_slice_conversion: bool = False) -> dict:
    """cc3d.statistics' dict from the extension's arrays (statistics.hpp: Cc3dArrays)."""
    return {"voxel_counts": counts, "bounding_boxes": boxes if no_slice_conversion else BoundingBoxes(boxes),
            "centroids": centroids}


def _empty_raw(ndim: int, intensity: Optional[np.dtype]) -> dict:
    """The raw statistics of an array without voxels: the background alone, with no voxels."""
    raw = {"voxel_counts": np.zeros(1, np.uint32), "bounding_boxes": np.array([[0xFFFF, 0] * ndim], np.uint16),
           "centroids": np.full((1, ndim), np.nan)}
    if intensity is not None:
        sum_dtype = np.float64 if intensity.kind == "f" else np.int64 if intensity.kind == "i" else np.uint64
        extreme = np.full(1, np.nan if intensity.kind == "f" else 0, intensity)
        raw.update(intensity_sum=np.zeros(1, sum_dtype), intensity_mean=np.full(1, np.nan), intensity_min=extreme,
                   intensity_max=extreme.copy())
    return raw


def _host_layout(a: np.ndarray) -> np.ndarray:
    """a [z, y, x] (an image as [1, y, x]) with the last axis adjacent and no negative strides, as
    the extension reads it: a view when it already is, else a C-order copy."""
    volume = a if a.ndim == 3 else a[None]
    strides = volume.strides
    if (volume.shape[-1] > 1 and strides[-1] != volume.itemsize) or any(s < 0 for s in strides):
        volume = np.ascontiguousarray(volume)
    return volume


def _device_layout(lib: Any, a: Any) -> Any:
    strides = lib.element_strides(a)
    if (a.shape[-1] > 1 and strides[-1] != 1) or any(s < 0 for s in strides):
        a = lib.contiguous(a)
    return a


def _checked_spacing(spacing: Any, ndim: int) -> Optional[np.ndarray]:
    if spacing is None:
        return None
    try:
        values = np.asarray(spacing, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as error:
        raise TypeError(f"spacing: expected {ndim} numbers, got {spacing!r}") from error
    if values.shape != (ndim,) or not np.all(np.isfinite(values)) or not np.all(values > 0):
        raise ValueError(f"spacing: expected {ndim} positive numbers (one per axis), got {spacing!r}")
    return values


def statistics(labels: ArrayLike, intensity: Optional[ArrayLike] = None, spacing: Optional[Sequence[float]] = None,
               *, no_slice_conversion: bool = False) -> dict:
    """Per-label statistics of a label array, as ``cc3d.statistics`` gives them, with
    intensity reductions and physical units.

    Every label 0..max(labels) has a row, the background's first. One pass over the labels'
    runs in the library (exact integer sums); a CuPy array or PyTorch CUDA tensor is reduced on
    its device, on the current stream, and its statistics come back as NumPy arrays, as cc3d's.

    Parameters
    ----------
    labels : array_like
        2D or 3D array of non-negative integers (any integer dtype; NumPy, CuPy or PyTorch), such
        as :func:`label` returns.
    intensity : array_like, optional
        An image of the labels' shape, in the same place (host or the same device): adds each
        label's sum, mean, minimum and maximum of its values. Integers, floats or bool (float16
        is read as float32).
    spacing : sequence of float, optional
        The size of a voxel along each array axis: centroids are then in physical units (index
        times spacing) and ``volumes`` is added.
    no_slice_conversion : bool, optional
        As in cc3d: ``bounding_boxes`` is then the ``[M, 2 * ndim]`` array of first and last
        indices instead of a sequence of slices.

    Returns
    -------
    dict
        ``voxel_counts`` : uint32 [M] (uint64 from 2^32 voxels), index = label.
        ``bounding_boxes`` : :class:`BoundingBoxes`, a lazy sequence equal to cc3d's list (a
        tuple of slices per label, None without voxels); or the array (``no_slice_conversion``).
        ``centroids`` : float64 [M, ndim], the mean index along each axis (NaN without voxels).
        With ``intensity``: ``intensity_sum`` (int64 for signed integers, uint64 for unsigned ones
        and bool, exact; float64 for floats), ``intensity_mean`` (float64, NaN without voxels),
        ``intensity_min`` and ``intensity_max`` (the intensity's dtype; 0 or NaN without voxels;
        NaN values are left out of both). With ``spacing``: ``volumes`` (float64 [M], counts
        times the voxel's volume, or area for an image) and centroids in physical units.

    Raises
    ------
    TypeError
        Labels that are not integers, an intensity of another kind or place.
    ValueError
        Not 2D or 3D, a negative label, labels far beyond the number of voxels (more than
        2^20 above it: not a labeling's output), an intensity of another shape, a bad spacing.

    See Also
    --------
    label : labels with ``stats=True`` computes these during the labeling.
    cc3d.statistics, scipy.ndimage.sum_labels, skimage.measure.regionprops

    Examples
    --------
    >>> import numpy as np, winnow
    >>> labels = np.array([[0, 1, 1], [0, 0, 2]])
    >>> s = winnow.statistics(labels, intensity=np.array([[5, 2, 4], [1, 1, 7]]))
    >>> s["voxel_counts"].tolist(), s["bounding_boxes"][1], s["centroids"][2].tolist()
    ([3, 2, 1], (slice(0, 1, None), slice(1, 3, None)), [1.0, 2.0])
    >>> s["intensity_sum"].tolist(), s["intensity_mean"].tolist(), s["intensity_max"].tolist()
    ([7, 6, 7], [2.3333333333333335, 3.0, 7.0], [5, 4, 7])
    >>> winnow.statistics(labels, spacing=(2.0, 0.5))["volumes"].tolist()
    [3.0, 2.0, 1.0]
    """
    labels, lib = classify(labels, "labels")
    ndim = len(labels.shape)
    if ndim not in (2, 3):
        raise ValueError(f"labels: expected a 2D or 3D array, got {ndim} dimensions")
    dtype = lib.dtype(labels) if lib.on_device else labels.dtype
    if dtype.kind not in "biu":
        raise TypeError(f"labels: expected an integer dtype, got {dtype}")
    physical = _checked_spacing(spacing, ndim)
    values = None
    if intensity is not None:
        values, values_lib = classify(intensity, "intensity")
        if values_lib.on_device != lib.on_device or (lib.on_device and values_lib is not lib):
            raise TypeError("intensity: expected an array in the place of labels (host or the same device)")
        if tuple(values.shape) != tuple(labels.shape):
            raise ValueError(f"intensity: expected the shape of labels {tuple(labels.shape)}, "
                             f"got {tuple(values.shape)}")
    if lib.on_device:
        raw = on_device(lib, _device_statistics, lib, labels, values)
    else:
        raw = _host_statistics(labels, values)
    return _fields(raw, no_slice_conversion, physical)


def _intensity_dtype(dtype: np.dtype) -> Optional[np.dtype]:
    """What the library reads of an intensity dtype: itself, float32 for float16, uint8 for bool;
    TypeError for anything else."""
    if dtype.kind in "iu" or (dtype.kind == "f" and dtype.itemsize in (4, 8)):
        return None
    if dtype.kind == "f" and dtype.itemsize == 2:
        return np.dtype(np.float32)
    if dtype.kind == "b":
        return np.dtype(np.uint8)
    raise TypeError(f"intensity: expected integers, floats or bool, got {dtype}")


def _host_statistics(labels: np.ndarray, values: Optional[np.ndarray]) -> dict:
    if labels.size == 0:
        return _empty_raw(labels.ndim, None if values is None else values.dtype)
    if values is not None:
        convert = _intensity_dtype(values.dtype)
        if convert is not None:
            values = values.astype(convert)
        values = _host_layout(values)
    return _winnow.label_statistics_host(_host_layout(labels), values, labels.ndim, 0, False)


def _device_statistics(lib: Any, labels: Any, values: Any) -> dict:
    ndim = len(labels.shape)
    if values is not None:
        convert = _intensity_dtype(lib.dtype(values))
        if convert is not None:
            values = lib.astype(values, convert)
        values = lib.view(_device_layout(lib, values))
    if math.prod(labels.shape) == 0:
        return _empty_raw(ndim, None if values is None else np.dtype(lib.dtype(values)))
    labels = _device_layout(lib, labels)
    count = max(lib.maximum(labels), 0) + 1  # M (a negative label is the extension's to refuse)
    return _winnow.label_statistics_device(lib.view(labels), values, count, False)


def _fields(raw: dict, no_slice_conversion: bool, spacing: Optional[np.ndarray]) -> dict:
    """The public dict from the extension's raw one (whose coordinate_sums, when asked for, are the
    exact sums of each label's indices: what adding the statistics of pieces needs)."""
    fields = cc3d_fields(raw["voxel_counts"], raw["bounding_boxes"], raw["centroids"], no_slice_conversion)
    for key in ("intensity_sum", "intensity_mean", "intensity_min", "intensity_max"):
        if key in raw:
            fields[key] = raw[key]
    if spacing is not None:
        fields["centroids"] = fields["centroids"] * spacing
        fields["volumes"] = fields["voxel_counts"] * float(np.prod(spacing))
    return fields


def background_row(labels: Any, lib: Any) -> tuple:
    """The background's (count, box, centroid) of labels: what a labeling's statistics lack (its
    rows are those of labels 1..N), from the library's statistics of label 0 alone."""
    ndim = len(labels.shape)
    if lib.on_device:
        raw = on_device(lib, _winnow.label_statistics_device, lib.view(_device_layout(lib, labels)), None, 1, True)
    else:
        raw = _winnow.label_statistics_host(_host_layout(labels), None, ndim, 1, True)
    return raw["voxel_counts"][0], raw["bounding_boxes"][0], raw["centroids"][0]
