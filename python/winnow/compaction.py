"""Stream compaction: ``compact`` (``a[mask]``), ``select`` (a fused comparison, no mask array)
and ``flatnonzero``, on NumPy arrays (any backend) and CuPy / PyTorch CUDA arrays (the device
API on the caller's current stream).

Layouts: the data is read in C order; a non-contiguous input (Fortran order, a strided slice)
is first copied into a C-contiguous one, the one copy these functions make. A device call ends
by reading the number kept (the output's length), so it waits for its stream once, as
``a[mask]`` does in CuPy.
"""

from __future__ import annotations

import math
from typing import Any, Union

import numpy as np
import numpy.typing as npt

from . import _winnow
from ._arrays import check_backend, classify, on_device, same_library, trimmed

OPS = {">": 0, ">=": 1, "<": 2, "<=": 3, "==": 4, "!=": 5,
       "greater": 0, "greater_equal": 1, "less": 2, "less_equal": 3, "equal": 4, "not_equal": 5}
ORDERS = ("stable", "any")
SELECT_DTYPES = ("uint8", "uint16", "int32", "uint32", "float32", "int64", "uint64", "float64")
# (kind, itemsize) of SELECT_DTYPES: checked without dtype.name, which NumPy computes in Python.
_SELECT_KINDS = frozenset((np.dtype(name).kind, np.dtype(name).itemsize) for name in SELECT_DTYPES)
_BOOL = np.dtype(np.bool_)
_INDEX = np.dtype(np.int64)
_INTEGER_RANGES: dict = {}  # integer dtype -> (smallest, largest): np.iinfo costs microseconds
# Below this many elements NumPy's nonzero of a host array is faster than a call into the extension
# (about 2.5 us), and gives the same indices, so it runs instead (without np.flatnonzero's Python
# layer). Measured on the 2-core development machine, NumPy / extension at 1 % and 50 % non-zero:
# 1024 elements, float32 1.05 / 0.98, int32 0.73 / 0.75, uint8 0.62 / 0.63; 2048 elements 1.33 /
# 1.16, 1.12 / 1.05; bool is NumPy's fastest case: 0.83 / 1.10 at 10^4 elements, 1.04 / 1.23 at 2^14.
_NUMPY_FLATNONZERO_BELOW = 1 << 11
_NUMPY_FLATNONZERO_BOOL_BELOW = 1 << 14


def _check_order(order: str) -> bool:
    if order not in ORDERS:
        raise ValueError(f"order: expected 'stable' or 'any', got {order!r}")
    return order == "stable"


def _flat(lib: Any, a: Any) -> Any:
    return lib.flat(a) if lib.on_device else np.ascontiguousarray(a).reshape(-1)


def _output(lib: Any, out: Any, n: int, dtype: np.dtype) -> tuple[Any, bool]:
    """(the output buffer, whether winnow allocated it). Device buffers are allocated on the
    array's device (the caller runs under on_device)."""
    if out is None:
        return lib.empty(n, dtype), True
    out_array, out_lib = classify(out, "out")
    same_library(lib, out_lib, "out")
    if len(out_array.shape) != 1 or out_array.shape[0] < n:
        raise ValueError(f"out: expected a 1-D array of at least {n} elements")
    out_dtype = out_lib.dtype(out_array) if out_lib.on_device else out_array.dtype
    if out_dtype.itemsize != np.dtype(dtype).itemsize:
        raise TypeError(f"out: expected dtype {np.dtype(dtype).name}, got {out_dtype.name}")
    if lib.on_device and not lib.c_contiguous(out_array):
        raise ValueError("out: expected a C-contiguous array")
    return out_array, False


def _dtype(lib: Any, a: Any) -> np.dtype:
    return lib.dtype(a) if lib.on_device else a.dtype


def _kept(lib: Any, function: str, buffer: Any, owned: bool, arrays: tuple, options: tuple, backend: str,
          dtype: np.dtype) -> Any:
    """Runs a host compaction (the extension's ``function``_host) and returns the kept prefix of
    ``buffer``. ``arrays``: the inputs and the output; ``options``: what follows."""
    kept = getattr(_winnow, function + "_host")(*arrays, *options, backend)
    return lib.wrap(trimmed(lib, buffer, kept, owned, dtype.itemsize))


def compact(a: npt.ArrayLike, mask: npt.ArrayLike, *, order: str = "stable", backend: str = "auto",
            out: Any = None) -> Any:
    """The elements of an array where a mask is True: ``a[mask]``, in input order.

    Parameters
    ----------
    a : array_like
        Any shape (read in C order), elements of 1, 2, 4, 8 or 16 bytes: NumPy, CuPy or PyTorch.
    mask : array_like
        bool, a's shape, in a's place (host or the same device).
    order : {'stable', 'any'}, optional
        'any' lets the GPU keep the elements in any order (faster).
    backend : {'auto', 'cpu', 'cuda'}, optional
        Where NumPy input is compacted; device arrays are compacted on their device.
    out : array, optional
        1-D, at least ``a.size`` elements of a's item size, in a's place: the result is then a
        view of it.

    Returns
    -------
    array
        1-D, the kept elements, of a's library and device (a device call waits for its stream
        once, for the count, as ``a[mask]`` does in CuPy).

    Raises
    ------
    TypeError
        Objects or other item sizes, a mask that is not bool, arrays in different places.
    ValueError
        A mask of another shape, a bad order or backend, an ``out`` too small.

    See Also
    --------
    select : a fused comparison, no mask array.
    flatnonzero

    Examples
    --------
    >>> import numpy as np, winnow
    >>> a = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    >>> winnow.compact(a, a > 3)
    array([4, 5, 9, 6])
    """
    stable = _check_order(order)
    a, lib = classify(a, "a")
    mask, mask_lib = classify(mask, "mask")
    same_library(lib, mask_lib, "mask")
    check_backend(backend, lib.on_device)
    dtype = _dtype(lib, a)
    if dtype.hasobject or dtype.itemsize not in (1, 2, 4, 8, 16):
        raise TypeError(f"a: expected elements of 1, 2, 4, 8 or 16 bytes (no objects), got dtype {dtype}")
    if _dtype(mask_lib, mask) != _BOOL:
        raise TypeError(f"mask: expected dtype bool, got {_dtype(mask_lib, mask)}")
    if mask.shape != a.shape:
        raise ValueError(f"mask: expected the shape of a {tuple(a.shape)}, got {tuple(mask.shape)}")
    if lib.on_device:
        return on_device(lib, _compact_device, lib, a, mask, out, dtype, stable)
    flat_a, flat_mask = _flat(lib, a), _flat(lib, mask)
    buffer, owned = _output(lib, out, flat_a.shape[0], dtype)
    return _kept(lib, "compact", buffer, owned, (flat_a, flat_mask, buffer), (stable,), backend, dtype)


def _compact_device(lib: Any, a: Any, mask: Any, out: Any, dtype: np.dtype, stable: bool) -> Any:
    flat_a, flat_mask = lib.flat(a), lib.flat(mask)
    n = flat_a.shape[0]
    if out is None:
        # The mask counted first (a byte an element, a fifth of the compaction's traffic for
        # float32): the result allocated at its size, never trimmed by a copy. The device
        # compaction writes the kept elements alone, at their positions below the count.
        kept = _winnow.count_flagged_device(lib.pointer(flat_mask), n, lib.device_id, lib.stream())
        buffer = lib.empty(kept, dtype)
        if kept:
            _winnow.compact_device(lib.pointer(flat_a), lib.pointer(flat_mask), lib.pointer(buffer), n,
                                   dtype.itemsize, stable, lib.device_id, lib.stream(), False)
        return buffer
    buffer, owned = _output(lib, out, n, dtype)
    kept = _winnow.compact_device(lib.pointer(flat_a), lib.pointer(flat_mask), lib.pointer(buffer), n,
                                  dtype.itemsize, stable, lib.device_id, lib.stream(), True)
    return trimmed(lib, buffer, kept, owned, dtype.itemsize)


def _integer_range(dtype: np.dtype) -> tuple:
    found = _INTEGER_RANGES.get(dtype)
    if found is None:
        info = np.iinfo(dtype)
        found = _INTEGER_RANGES[dtype] = (int(info.min), int(info.max))
    return found


def _integer_threshold(op: int, threshold: Union[int, float], dtype: np.dtype) -> Union[int, bool]:
    """The comparison with an integer threshold in the dtype's range that keeps the same
    elements as the exact comparison with ``threshold``; True (keep all) or False (keep none)
    where no such integer exists."""
    if isinstance(threshold, float) and math.isnan(threshold):
        return op == OPS["!="]
    if isinstance(threshold, float) and not math.isfinite(threshold):
        positive = threshold > 0
        return {0: not positive, 1: not positive, 2: positive, 3: positive, 4: False, 5: True}[op]
    if isinstance(threshold, float) and threshold != math.floor(threshold):
        if op in (OPS["=="], OPS["!="]):
            return op == OPS["!="]
        # x > 2.5 <=> x > 2; x >= 2.5 <=> x >= 3; x < 2.5 <=> x < 3; x <= 2.5 <=> x <= 2
        value = math.floor(threshold) if op in (0, 3) else math.ceil(threshold)
    else:
        value = int(threshold)
    low, high = _integer_range(dtype)
    if low <= value <= high:
        if (op == 0 and value == high) or (op == 2 and value == low):
            return False
        return value
    above = value > high
    return {0: not above, 1: not above, 2: above, 3: above, 4: False, 5: True}[op]


def select(a: npt.ArrayLike, op: str, threshold: Union[int, float], *, order: str = "stable",
           backend: str = "auto", out: Any = None) -> Any:
    """The elements x of an array with ``x <op> threshold``: ``a[a > threshold]`` in one pass,
    with no mask array.

    Parameters
    ----------
    a : array_like
        Any shape (read in C order): uint8, uint16, int32, uint32, float32, int64, uint64 or
        float64; NumPy, CuPy or PyTorch.
    op : str
        ``">" ">=" "<" "<=" "==" "!="`` (or ``"greater"`` ... ``"not_equal"``).
    threshold : int or float
        Integer elements compare exactly with any threshold (``x > 2.5`` keeps 3 and up); for
        float elements it is converted to the element type first, as NumPy does with a Python
        float.
    order, backend, out
        As in :func:`compact`.

    Returns
    -------
    array
        1-D, the kept elements, of a's library and device.

    Raises
    ------
    TypeError
        Another dtype, a threshold that is not a number.
    ValueError
        An unknown op, order or backend, an ``out`` too small.

    See Also
    --------
    compact

    Examples
    --------
    >>> import numpy as np, winnow
    >>> winnow.select(np.array([0.5, 2.0, 0.1, 3.5], np.float32), ">", 1.0)
    array([2. , 3.5], dtype=float32)
    """
    stable = _check_order(order)
    if op not in OPS:
        raise ValueError(f"op: expected one of {', '.join(repr(k) for k in OPS)}, got {op!r}")
    code = OPS[op]
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.integer, np.floating)):
        raise TypeError(f"threshold: expected an int or a float, got {type(threshold).__name__}")
    a, lib = classify(a, "a")
    check_backend(backend, lib.on_device)
    dtype = _dtype(lib, a)
    if (dtype.kind, dtype.itemsize) not in _SELECT_KINDS:
        raise TypeError(f"a: expected dtype {', '.join(SELECT_DTYPES)}, got {dtype}")
    if dtype.kind in "iu":
        exact = threshold.item() if hasattr(threshold, "item") else threshold
        value: Union[int, float, bool] = _integer_threshold(code, exact, dtype)
    else:
        value = float(threshold)
    if lib.on_device:
        return on_device(lib, _select_device, lib, a, code, value, out, dtype, stable)
    flat_a = _flat(lib, a)
    n = flat_a.shape[0]
    buffer, owned = _output(lib, out, n, dtype)
    if isinstance(value, bool):
        return lib.wrap(_all_or_nothing(lib, flat_a, buffer, owned, value, dtype))
    return _kept(lib, "select", buffer, owned, (flat_a, code, value, buffer), (stable,), backend, dtype)


def _all_or_nothing(lib: Any, flat_a: Any, buffer: Any, owned: bool, keep_all: bool, dtype: np.dtype) -> Any:
    """A selection whose comparison is always true or always false: no comparison to run."""
    count = flat_a.shape[0] if keep_all else 0
    buffer[:count] = flat_a[:count]
    return trimmed(lib, buffer, count, owned, dtype.itemsize)


def _select_device(lib: Any, a: Any, code: int, value: Union[int, float, bool], out: Any, dtype: np.dtype,
                   stable: bool) -> Any:
    flat_a = lib.flat(a)
    n = flat_a.shape[0]
    buffer, owned = _output(lib, out, n, dtype)
    if isinstance(value, bool):
        return _all_or_nothing(lib, flat_a, buffer, owned, value, dtype)
    kept = _winnow.select_device(lib.pointer(flat_a), dtype.kind, dtype.itemsize, code, value,
                                 lib.pointer(buffer), n, stable, lib.device_id, lib.stream(), True)
    return trimmed(lib, buffer, kept, owned, dtype.itemsize)


def flatnonzero(a: npt.ArrayLike, *, backend: str = "auto", out: Any = None) -> Any:
    """The indices of the non-zero elements of an array in C order: ``np.flatnonzero(a)``.

    Parameters
    ----------
    a : array_like
        Any shape and numeric or bool dtype (float16 and complex through ``a != 0``, a copy);
        ``-0.0`` is zero and NaN is not, as in NumPy. NumPy, CuPy or PyTorch.
    backend : {'auto', 'cpu', 'cuda'}, optional
        Where NumPy input is compacted (below 2048 elements, 16384 for bool, with 'auto' and no
        ``out``, NumPy's own flatnonzero runs: a call into the extension costs more than that work).
    out : array, optional
        1-D int64, at least ``a.size`` elements, in a's place: the result is a view of it.

    Returns
    -------
    array
        int64, the indices, of a's library and device.

    Raises
    ------
    TypeError
        Objects or strings.
    ValueError
        A bad backend, an ``out`` too small.

    See Also
    --------
    numpy.flatnonzero, voxels

    Examples
    --------
    >>> import numpy as np, winnow
    >>> winnow.flatnonzero(np.array([[0, 3], [0, 7]]))
    array([1, 3])
    """
    if (a.__class__ is np.ndarray and out is None and backend == "auto" and a.dtype.kind in "biufc"
            and a.size < (_NUMPY_FLATNONZERO_BOOL_BELOW if a.dtype.kind == "b" else _NUMPY_FLATNONZERO_BELOW)):
        return a.ravel().nonzero()[0]  # np.flatnonzero's work without its Python layer
    a, lib = classify(a, "a")
    check_backend(backend, lib.on_device)
    dtype = _dtype(lib, a)
    if dtype.hasobject or dtype.kind not in "biufc":
        raise TypeError(f"a: expected a bool or numeric dtype, got {dtype}")
    if dtype.kind == "c" or (dtype.kind == "f" and dtype.itemsize == 2):
        a = lib.nonzero_mask(a) if lib.on_device else a != 0
    if lib.on_device:
        return on_device(lib, _flatnonzero_device, lib, a, out)
    flat_a = _flat(lib, a)
    if out is None and dtype.kind == "b":
        # Bool is counted first (NumPy's own count, a few percent of the work) and the result
        # allocated at its size, as NumPy's nonzero does: no input-sized buffer whose pages are
        # touched, trimmed and handed back to the system on every call.
        buffer = np.empty(int(np.count_nonzero(flat_a)), _INDEX)
        _winnow.flatnonzero_host(flat_a, buffer, backend)
        return lib.wrap(buffer)
    buffer, owned = _output(lib, out, flat_a.shape[0], _INDEX)
    return _kept(lib, "flatnonzero", buffer, owned, (flat_a, buffer), (), backend, _INDEX)


def _flatnonzero_device(lib: Any, a: Any, out: Any) -> Any:
    flat_a = lib.flat(a)
    n = flat_a.shape[0]
    buffer, owned = _output(lib, out, n, _INDEX)
    element = lib.dtype(flat_a)
    kept = _winnow.flatnonzero_device(lib.pointer(flat_a), element.kind, element.itemsize, lib.pointer(buffer),
                                      n, lib.device_id, lib.stream(), True)
    return trimmed(lib, buffer, kept, owned, _INDEX.itemsize)
