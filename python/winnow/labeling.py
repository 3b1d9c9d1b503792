"""Connected-component labeling of 2D images and 3D volumes: ``label``, a drop-in for
``cc3d.connected_components`` (numbered as it and ``scipy.ndimage.label`` number them: 1..N in
raster order of each component's first pixel, the last axis fastest) that also takes
scikit-image's ``background``, ``return_num`` and ``connectivity=1..ndim`` and scipy's
``structure``. NumPy arrays go through the host API (any backend); CuPy arrays and PyTorch CUDA
tensors through the device API on the caller's current stream.

How a call runs: ``_resolve`` turns the caller's arguments into a request -- the input as the
library reads it (floats and a non-zero background turned into codes or a mask), the library's
LabelOptions (connectivity as the caller gave it, after scikit-image's and scipy's spellings are
translated), the output -- and the library's front end validates the options (its InputError is
a ValueError here). Then ``_label_host`` or ``_label_device`` calls the extension once.

Which library path a call takes:
- a 2D image: the image labeling (binary byte masks: tile merge, BUF; multi-label and wider
  images through the volume path as one slice, where 4-connectivity is 6 and 8 is 26);
- a 3D volume: the volume labeling.

Layouts: arrays whose last axis is adjacent in memory (C order, slices of rows or planes, crops)
are read in place; Fortran order, transposed axes, a broadcast, a step along the last axis or
negative strides cost one copy (a device volume must be C-contiguous: one copy otherwise).
Signed integers are read as the unsigned type of their width (no copy). Floating-point input
costs one pass: ``a != 0`` (binary) or a code per distinct value (multi-label). A device call
waits for its stream only when N is needed (``return_N``, ``min_area``, ``largest_k`` or
``stats``): the labels alone stay queued on the caller's stream.

min_area and largest_k: the library applies them to host labelings; on the device the Python
layer does, with the library's survivor rule (``_winnow.surviving_labels``) over the
components' sizes and a lookup on the device. ``largest_k_rule="cc3d"`` reproduces
``cc3d.largest_k`` instead (see ``label``).

Statistics (``stats=True``): of a device labeling, its own records of labels 1..N (computed with
it, on the device) and the library's device statistics of label 0 for the background; of host
labels, the library's label_statistics of the result (one pass over its runs, the background
included: cheaper than the labeling's own sums). The bounding boxes stay an integer array until a
label's slices are asked for (``statistics.BoundingBoxes``).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _winnow
from ._arrays import check_backend, classify, on_device, reads_in_place, same_library
from .statistics import background_row, cc3d_fields

LABEL_DTYPES = ("uint16", "uint32", "uint64", "int32", "int64")
LARGEST_K_RULES = ("winnow", "cc3d")
# scikit-image's connectivity (the number of orthogonal hops) as cc3d's neighbour counts.
_HOPS = {2: {1: 4, 2: 8}, 3: {1: 6, 2: 18, 3: 26}}
_BYTE_KINDS = (("b", 1), ("u", 1), ("i", 1))  # read as bytes as they are

ArrayLike = npt.ArrayLike


def _non_negative_int(value: Any, name: str) -> int:
    if value.__class__ is int and value >= 0:  # the usual case, checked without isinstance
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name}: expected a non-negative integer, got {value!r}")
    return int(value)


def _connectivity(connectivity: Any, structure: Any, ndim: int) -> int:
    """The connectivity the library takes (4, 8, 6, 18, 26; 0: the densest) from cc3d's neighbour
    counts, scikit-image's hops (1..ndim) or scipy's structure (also accepted in connectivity's
    place, scipy's second argument). Other numbers go to the library, which refuses them."""
    if connectivity is not None and not isinstance(connectivity, (int, np.integer)):
        if np.ndim(connectivity) == 0:
            raise ValueError(f"connectivity: expected an integer (or scipy's structure array), got {connectivity!r}")
        if structure is not None:
            raise ValueError("connectivity, structure: give one of them")
        connectivity, structure = None, connectivity
    if structure is not None:
        if connectivity is not None:
            raise ValueError("connectivity, structure: give one of them")
        return _structure_connectivity(structure, ndim)
    if connectivity is None:
        return 0
    if isinstance(connectivity, (bool, np.bool_)):
        raise ValueError(f"connectivity: expected a number of neighbours, got {connectivity!r}")
    return _HOPS[ndim].get(int(connectivity), int(connectivity))


def _structure_connectivity(structure: Any, ndim: int) -> int:
    """scipy.ndimage's structure as a connectivity: one of generate_binary_structure(ndim, 1..ndim)."""
    try:
        s = np.asarray(structure)
    except Exception as error:  # noqa: BLE001 - anything not an array
        raise ValueError(f"structure: expected a {ndim}D array of 3s, got {type(structure).__name__}") from error
    if s.shape == (3,) * ndim and s.dtype.kind in "biuf":
        hops = np.abs(np.indices((3,) * ndim) - 1).sum(axis=0)
        for k, neighbours in _HOPS[ndim].items():
            if np.array_equal(s != 0, hops <= k):
                return neighbours
    raise ValueError(f"structure: expected one of scipy.ndimage.generate_binary_structure({ndim}, 1..{ndim}) (the "
                     "face, edge and corner neighbourhoods); other structures are not supported")


def _foreground(a: Any, lib: Any, dtype: np.dtype, binary: bool, background: Any) -> Any:
    """The input as the library reads it: zero where ``background`` is, distinct values kept
    distinct (multi-label) or every other value non-zero (binary); floats as codes or a mask."""
    if background is None:
        background = 0
    if isinstance(background, (bool, np.bool_)):
        background = int(background)
    if not isinstance(background, (int, float, np.integer, np.floating)):
        raise TypeError(f"background: expected a number, got {type(background).__name__}")
    if dtype.kind == "b":  # scikit-image's rule: True is the background when it says 1, else False is
        return a == False if background == 1 else a  # noqa: E712 - elementwise (NumPy, CuPy, PyTorch)
    if background == 0:
        if dtype.kind != "f":
            return a
        if binary:
            return lib.nonzero_mask(a) if lib.on_device else a != 0
        return _value_codes(a, lib, 0)
    if binary:
        return a != background
    if dtype.kind in "iu" and float(background).is_integer():
        info = np.iinfo(dtype)
        if info.min <= int(background) <= info.max:
            # (a - background) modulo 2^bits: zero exactly at the background, equal values equal.
            shift = np.array(int(background)).astype(dtype)
            if lib.on_device:
                return a - lib.from_host(shift.reshape(1))
            unsigned = np.dtype(f"u{dtype.itemsize}")
            return a.view(unsigned) - shift.view(unsigned)
    return _value_codes(a, lib, background)


def _value_codes(a: Any, lib: Any, background: Any) -> Any:
    """Multi-label input as one integer code per distinct value, 0 where ``background`` is."""
    size = math.prod(a.shape)
    if lib.on_device:
        inverse = lib.unique_inverse(a)
        codes = lib.astype(inverse + 1, np.uint32 if size < 2**31 - 1 else np.uint64)
    else:
        _, inverse = np.unique(a, return_inverse=True)
        codes = (inverse.reshape(a.shape) + 1).astype(np.uint32 if size < 2**32 - 1 else np.uint64)
    codes[a == background] = 0
    return codes


class _Request:
    """A resolved call of label: what the extension is given, and what happens to its result."""

    __slots__ = ("a", "lib", "ndim", "out", "out_dtype", "options", "want_n", "stats", "min_area", "largest_k", "rule")

    def __init__(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self, name, value)


def _resolve(a: Any, connectivity: Any, structure: Any, multilabel: bool, background: Any, min_area: Any,
             largest_k: Any, largest_k_rule: str, want_n: bool, out_dtype: Any, stats: bool, backend: str,
             out: Any) -> _Request:
    a, lib = classify(a, "a")
    check_backend(backend, lib.on_device)
    ndim = len(a.shape)
    if ndim not in _HOPS:
        raise ValueError(f"a: expected a 2D image or a 3D volume, got {ndim} dimensions")
    connectivity = _connectivity(connectivity, structure, ndim)
    min_area = _non_negative_int(min_area, "min_area")
    largest_k = _non_negative_int(largest_k, "largest_k")
    if largest_k_rule not in LARGEST_K_RULES:
        raise ValueError(f"largest_k_rule: expected 'winnow' or 'cc3d', got {largest_k_rule!r}")
    if out_dtype is not None:
        out_dtype = np.dtype(out_dtype)
        if out_dtype.name not in LABEL_DTYPES:
            raise TypeError(f"out_dtype: expected one of {', '.join(LABEL_DTYPES)}, got {out_dtype}")
    dtype = lib.dtype(a) if lib.on_device else a.dtype
    if dtype.hasobject or dtype.kind not in "biuf":
        raise TypeError(f"a: expected a bool or numeric dtype, got {dtype}")
    binary = dtype.kind == "b" or not multilabel
    a = _foreground(a, lib, dtype, binary, background)
    if out is not None:
        labels, out_lib = classify(out, "out")
        same_library(lib, out_lib, "out")
        if tuple(labels.shape) != tuple(a.shape):
            raise ValueError(f"out: expected the shape of a {tuple(a.shape)}, got {tuple(labels.shape)}")
        out = (out, labels)
    # The library filters host labelings by its own rule; cc3d's rule and device labelings are filtered here.
    library_k = largest_k if largest_k_rule == "winnow" and not lib.on_device else 0
    # Statistics: the device labeling's own (free with it); of host labels, the library's statistics of the
    # result (label_statistics: one pass, the background's row too, cheaper than the labeling's sums).
    options = _winnow.LabelOptions(connectivity=connectivity, multilabel=not binary,
                                   min_area=0 if lib.on_device else min_area, largest_k=library_k,
                                   want_stats=stats and lib.on_device, backend=backend)
    return _Request(a=a, lib=lib, ndim=ndim, out=out, out_dtype=out_dtype, options=options, want_n=want_n,
                    stats=stats, min_area=min_area, largest_k=largest_k, rule=largest_k_rule if largest_k else "winnow")


def label(a: ArrayLike, connectivity: Optional[Union[int, ArrayLike]] = None, *, multilabel: bool = True,
          min_area: int = 0, largest_k: int = 0, largest_k_rule: str = "winnow", return_N: bool = False,
          return_num: bool = False, background: Union[int, float, None] = 0, structure: Optional[ArrayLike] = None,
          out_dtype: npt.DTypeLike = None, stats: bool = False, backend: str = "auto", out: Any = None) -> Any:
    """Label the connected components of a 2D image or a 3D volume, as
    ``cc3d.connected_components`` does (and ``skimage.measure.label`` and ``scipy.ndimage.label``).

    Numbering: 0 background, 1..N in raster order of each component's first voxel, the last
    array axis fastest (x of a C-order [z, y, x] volume): cc3d's numbering for C-order input and
    scipy.ndimage.label's for any layout (cc3d numbers a Fortran-order array in Fortran order;
    winnow keeps the array-index order). For binary input the labels are those of
    ``scipy.ndimage.label(a, structure)`` with the matching structure.

    Parameters
    ----------
    a : array_like
        2D image or 3D volume: NumPy, CuPy or PyTorch (CPU or CUDA); bool, signed and unsigned
        integers of 8 to 64 bits, or floats (one pass to codes or a mask).
    connectivity : int or array_like, optional
        Neighbours: 4 or 8 for 2D, 6, 18 or 26 for 3D (cc3d), or scikit-image's 1..ndim
        (orthogonal hops: 1 is 4 / 6, 2 is 8 / 18, 3 is 26). None: the densest (8 / 26, cc3d's and
        scikit-image's default). An array here is scipy's ``structure`` (its second argument).
    multilabel : bool, optional
        True (cc3d's and scikit-image's rule): neighbours connect only when their values are
        equal and not the background; False: every value other than the background is
        foreground (scipy's rule). Irrelevant for bool input.
    min_area : int, optional
        Components of fewer voxels are removed (cc3d's ``dust``); the survivors are renumbered in
        raster order.
    largest_k : int, optional
        Keep only the k largest components (0: all), after min_area.
    largest_k_rule : {'winnow', 'cc3d'}, optional
        'winnow': ties go to the lower label and the survivors keep raster order (the library's
        rule, every backend the same). 'cc3d': as ``cc3d.largest_k`` chooses and numbers them
        (cc3d 4.x without fastremap): the k largest as ``numpy.argpartition`` picks them among
        equal sizes, numbered by increasing size (the largest gets k). With fastremap installed
        cc3d renumbers its result in raster order instead, as 'winnow' does.
    return_N, return_num : bool, optional
        Also return N, the number of components (cc3d's and scikit-image's names).
    background : int or float, optional
        The value of the background (scikit-image's parameter; 0 by default): its voxels are
        labelled 0, every other value is foreground. Compared by value (scikit-image converts it
        to the image's dtype first: 2.5 is 2 of a uint8 image there, no value here); of a bool
        image, 1 makes True the background and any other value False, as in scikit-image.
    structure : array_like, optional
        scipy.ndimage's structure: one of ``generate_binary_structure(ndim, 1..ndim)``; other
        structures are refused.
    out_dtype : dtype, optional
        uint32 (the default; cc3d picks the smallest that fits instead), uint16, uint64, int32 or
        int64.
    stats : bool, optional
        Also return ``statistics(labels)``: cc3d.statistics' fields as NumPy arrays (device input
        too), the bounding boxes as a lazy :class:`~winnow.statistics.BoundingBoxes`, of the
        labels returned (the survivors of min_area and largest_k). Device labelings compute
        those of labels 1..N during the labeling, on the device; host labels are summed by the
        library's label_statistics in one pass.
    backend : {'auto', 'cpu', 'cuda'}, optional
        Where NumPy input is labelled; device arrays are labelled on their device.
    out : array, optional
        A C-contiguous 32-bit integer array of a's shape to write into, in a's place (returned;
        NumPy volumes and multi-label images are copied into it).

    Returns
    -------
    labels : array
        The labels, of a's library and device: uint32 NumPy or CuPy arrays (int32 for PyTorch,
        which lacks uint32), or ``out_dtype``.
    N : int
        With ``return_N`` or ``return_num``.
    stats : dict
        With ``stats``: ``voxel_counts``, ``bounding_boxes``, ``centroids`` (see :func:`statistics`).

    Raises
    ------
    TypeError
        An unsupported dtype, ``out`` or ``out_dtype`` of the wrong type or place.
    ValueError
        Not 2D or 3D, a connectivity, structure or option the library refuses, a negative
        min_area or largest_k, ``out`` of the wrong shape, a count that does not fit out_dtype.
    RuntimeError
        The backend asked for is not there.

    See Also
    --------
    statistics : the statistics of any label array, with intensity reductions.
    cc3d.connected_components, skimage.measure.label, scipy.ndimage.label

    Examples
    --------
    >>> import numpy as np, winnow
    >>> winnow.label(np.array([[1, 0, 1], [1, 0, 0]], bool), 4, return_N=True)
    (array([[1, 0, 2],
           [1, 0, 0]], dtype=uint32), 2)
    >>> winnow.label(np.array([[[1, 1, 2], [0, 2, 2]]], np.uint8), 6)
    array([[[1, 1, 2],
            [0, 2, 2]]], dtype=uint32)
    >>> winnow.label(np.array([[5, 5, 0], [0, 5, 0]]), connectivity=1, background=5, return_num=True)
    (array([[0, 0, 1],
           [2, 0, 1]], dtype=uint32), 2)
    """
    request = _resolve(a, connectivity, structure, multilabel, background, min_area, largest_k, largest_k_rule,
                       return_N or return_num, out_dtype, stats, backend, out)
    if request.lib.on_device:
        labels, n, fields = on_device(request.lib, _label_device, request)
    else:
        labels, n, fields = _label_host(request)
    parts: tuple = (labels,)
    if return_N or return_num:
        parts += (n,)
    if stats:
        parts += (fields,)
    return parts if len(parts) > 1 else labels


def _empty(request: _Request, shape: tuple) -> tuple:
    """The labeling of an array without voxels: no component, the background alone."""
    lib = request.lib
    wide = request.out_dtype is not None and request.out_dtype.itemsize == 8
    labels = lib.empty(shape, np.uint32) if lib.on_device else np.zeros(shape, np.uint64 if wide else np.uint32)
    ndim = len(shape)
    rows = (np.zeros(1, np.uint32), np.array([[0xFFFF, 0] * ndim], np.uint16), np.full((1, ndim), np.nan))
    return labels, 0, rows if request.stats else None


def _label_host(request: _Request) -> tuple:
    a, options = request.a, request.options
    shape = tuple(a.shape)
    if a.size == 0:
        labels, n, rows = _empty(request, shape)
    elif request.ndim == 2:
        (height, width), (row, pixel) = shape, a.strides
        if not ((width <= 1 or pixel == a.itemsize) and (height <= 1 or row >= width * a.itemsize) and row >= 0
                and pixel >= 0):
            a = np.ascontiguousarray(a)  # pixels adjacent, rows apart, as the image labeling reads them
        into = None
        if (a.dtype.kind, a.itemsize) in _BYTE_KINDS:  # labelled into the caller's out= or a new array
            into = request.out[1] if request.out is not None else np.empty(shape, np.uint32)
        labels, n, rows = _winnow.label_image_host(a, into, options)
    else:
        if not reads_in_place(a.shape, a.strides, a.itemsize):
            a = np.ascontiguousarray(a)
        wide = request.out_dtype is not None and request.out_dtype.itemsize == 8
        into = None  # the caller's out=, labelled in place when it holds what the labeling writes
        if request.out is not None and a.size < 2**32 and not wide and _holds_labels(request.out[1]):
            into = request.out[1]
        labels, n, rows = _winnow.label_volume_host(a, into, options, wide)
    labels, n, rows = _filtered(request, labels, n, rows)
    fields = None
    if request.stats:
        fields = cc3d_fields(*rows) if rows is not None else _host_statistics(labels, n)
    return _host_output(request, labels, n), n, fields


def _host_statistics(labels: np.ndarray, n: int) -> tuple:
    """cc3d.statistics' dict of host labels 0..n (the library's label_statistics, one pass)."""
    raw = _winnow.label_statistics_host(labels if labels.ndim == 3 else labels[None], None, labels.ndim, n + 1, False)
    return cc3d_fields(raw["voxel_counts"], raw["bounding_boxes"], raw["centroids"])


def _holds_labels(out: np.ndarray) -> bool:
    """Whether a host out= can take the labels: C-contiguous 32-bit integers."""
    return out.dtype.kind in "iu" and out.itemsize == 4 and out.flags.c_contiguous


def _host_output(request: _Request, labels: np.ndarray, n: int) -> Any:
    """The labels in the caller's out= or out_dtype, and type (a PyTorch CPU tensor stays one)."""
    if request.out is not None:
        out, into = request.out
        if labels is not into:
            if not _holds_labels(into):
                raise TypeError("out: expected a C-contiguous array of 32-bit integers")
            if n >= 2**32:
                raise ValueError(f"out: {n} components do not fit 32 bits")
            np.copyto(into, labels, casting="unsafe")
        return out
    out_dtype = request.out_dtype
    if out_dtype is not None and labels.dtype != out_dtype:
        if out_dtype.name == "uint16" and n > 0xFFFF or out_dtype.name == "int32" and n > 0x7FFFFFFF:
            raise ValueError(f"out_dtype: {n} components do not fit {out_dtype}")
        labels = labels.astype(out_dtype)
    return request.lib.wrap(labels)


def _label_device(request: _Request) -> tuple:
    a, lib, options = request.a, request.lib, request.options
    shape = tuple(a.shape)
    if request.ndim == 2 and not options.multilabel:
        dtype = lib.dtype(a)
        if (dtype.kind, dtype.itemsize) not in _BYTE_KINDS[:2]:
            a = lib.nonzero_mask(a)
        strides = lib.element_strides(a)
        height, width = shape
        if not ((width <= 1 or strides[1] == 1) and (height <= 1 or strides[0] >= width) and min(strides) >= 0):
            a = lib.contiguous(a)
        call = _winnow.label_image_device
    else:
        a = a if lib.c_contiguous(a) else lib.contiguous(a)
        call = _winnow.label_volume_device
    if request.out is not None:
        labels = request.out[1]
    else:
        labels = lib.empty(shape, np.uint32)
    if math.prod(shape) == 0:
        _, n, rows = _empty(request, shape)
    else:
        filters = request.largest_k > 0 or request.min_area > 1
        n, rows = call(lib.view(a), lib.view(labels), options, bool(request.want_n or filters))
    labels, n, rows = _filtered(request, labels, n, rows)
    fields = _statistics_of(request, labels, rows)
    if request.out_dtype is not None:
        labels = lib.astype(labels, request.out_dtype)
    return labels, n, fields


def _statistics_of(request: _Request, labels: Any, rows: Optional[tuple]) -> Optional[dict]:
    """cc3d.statistics' dict of a labeling: its rows of labels 1..N, the background's row 0."""
    if rows is None:
        return None
    counts, boxes, centroids = rows
    if math.prod(labels.shape) > 0:
        counts[0], boxes[0], centroids[0] = background_row(labels, request.lib)
    return cc3d_fields(counts, boxes, centroids)


def _filtered(request: _Request, labels: Any, n: Optional[int], rows: Optional[tuple]) -> tuple:
    """The filters the library has not applied: min_area and largest_k of device labelings (the
    library's rule), cc3d's largest_k rule of any labeling. Labels are renumbered through a
    lookup table (on the device for device labels), the statistics' rows taken along."""
    lib = request.lib
    min_area = request.min_area if lib.on_device else 0  # the library has applied it to host labelings
    k = request.largest_k if (lib.on_device or request.rule == "cc3d") else 0
    if not n or (min_area <= 1 and not k):
        return labels, n, rows
    if rows is not None:
        sizes = rows[0].astype(np.uint64)
    elif lib.on_device:
        sizes = lib.to_host(lib.bincount(labels, n + 1)).astype(np.uint64)
    else:
        flat = labels.reshape(-1)
        sizes = np.bincount(flat.view(np.int64) if flat.dtype == np.uint64 else flat, minlength=n + 1).astype(np.uint64)
    if request.rule == "cc3d":
        survivors, kept = _winnow.surviving_labels(sizes, min_area, 0)
        if kept > k:
            survivors, kept = _cc3d_largest_k(sizes, survivors, k), k
    else:
        survivors, kept = _winnow.surviving_labels(sizes, min_area, k)
    if kept == n:
        return labels, n, rows
    table = survivors.astype(np.uint32 if lib.on_device or labels.dtype == np.uint32 else labels.dtype)
    labels = lib.take(lib.from_host(table), labels) if lib.on_device else table[labels]
    if rows is not None:
        order = np.zeros(kept + 1, np.int64)
        present = np.flatnonzero(survivors)
        order[survivors[present].astype(np.int64)] = present
        rows = tuple(column[order] for column in rows)
    return labels, kept, rows


def _cc3d_largest_k(sizes: np.ndarray, survivors: np.ndarray, k: int) -> np.ndarray:
    """cc3d.largest_k's choice and numbering (cc3d 4.1, without fastremap) among the survivors
    of min_area: numpy.argpartition over their sizes in their order, the chosen numbered by
    increasing size (a stable sort of argpartition's output; k == 1: the first largest)."""
    present = np.flatnonzero(survivors)  # old labels of the survivors, in order
    counts = sizes[present].astype(np.uint32 if int(sizes.sum()) < 2**32 else np.uint64)  # cc3d's voxel_counts
    cts = np.concatenate([[0], counts]).astype(counts.dtype)
    if k == 1:
        chosen = [int(np.argmax(cts[1:])) + 1]
    else:
        preserve = np.argpartition(cts[1:], len(cts) - k - 1)[-k:] + 1
        chosen = sorted(preserve.tolist(), key=lambda label: cts[label])
    table = np.zeros(len(sizes), np.uint64)
    table[present[np.array(chosen, np.int64) - 1]] = np.arange(1, len(chosen) + 1, dtype=np.uint64)
    return table
