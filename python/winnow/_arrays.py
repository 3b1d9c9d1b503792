"""What every winnow function does with its arrays before and after the extension runs.

NumPy (and anything ``numpy.asarray`` takes) is host memory; CuPy arrays and PyTorch CUDA
tensors are device memory; a PyTorch CPU tensor is viewed as NumPy and its results are turned
back into tensors (no copy either way). Outputs of device calls are allocated by the caller's
library on the array's device, so its memory pool serves them, and the calls run on the
caller's current stream of that device. The device calls take pointers (``pointer``), read
here after the checks: DLPack exporters in CuPy and PyTorch do stream bookkeeping in Python on
each export, which cost more than the kernels at small sizes. Their temporary storage and
counts are kept by the extension per (device, stream).

Per-call cost matters here (the target: at most 15 us over the C++ device API), so:
``classify`` finds an array's library by a dict lookup on its type (the type's first call
decides), the device classes are cached per device and look up their library's functions
once, the device is read from the memory pointer (CuPy's ``a.device`` builds an object), the
stream as a raw handle, and ``on_device`` enters no context when the array's device is current.
Checks read cheap attributes (a dtype's ``kind`` and ``itemsize``, not its ``name``, which
NumPy computes in Python).

The adapters only adapt arrays: allocation, layout, transfers, dtypes, the pointer-and-stream
description of a device array (``view``: a ``_winnow.DeviceArray``), and the few array operations
the capabilities need in the caller's library (``take``, ``bincount``, ``unique_inverse``,
``maximum``). What is computed with them (labels' filters, value codes, statistics) lives with
its capability, and its rules in the library.
"""

from __future__ import annotations

import atexit
import sys
from typing import Any

import numpy as np

from . import _winnow

BACKENDS = ("auto", "cpu", "cuda")


def reads_in_place(shape: tuple, strides: tuple, unit: int, whole_rows: bool = False) -> bool:
    """Whether the library reads a [z, y, x] volume of these strides (in bytes, or in elements with
    unit 1; unit: an element's size in them) where it lies: no negative stride, x adjacent (or one
    column), rows at least a row apart, each slice past the rows of the one before
    (``whole_rows``: at least ny rows apart, as the isosurface asks), whole elements apart.
    Otherwise -- a transposed, broadcast or Fortran-order array among them -- the caller copies
    once (a size-1 axis's stride counts too: ``a[None]`` has 0 there)."""
    (_, ny, nx), (sz, sy, sx) = shape, strides
    rows_end = sy * ny if whole_rows else sy * (ny - 1) + nx * unit
    return (min(strides) >= 0 and all(s % unit == 0 for s in strides) and (nx <= 1 or sx == unit)
            and sy >= nx * unit and sz >= rows_end)


def check_backend(backend: str, on_device: bool) -> str:
    """The backend name the extension takes; ValueError for an unknown one or a host-only mix."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of 'auto', 'cpu', 'cuda', got {backend!r}")
    if on_device and backend == "cpu":
        raise ValueError("backend: 'cpu' cannot read a CUDA array; copy it to the host first")
    return backend


class Host:
    """NumPy arrays (and PyTorch CPU tensors, viewed as NumPy and wrapped back)."""

    on_device = False

    def __init__(self, torch_module: Any = None) -> None:
        self._torch = torch_module

    def wrap(self, result: np.ndarray) -> Any:
        """The result in the caller's type."""
        return self._torch.from_numpy(result) if self._torch is not None else result

    @staticmethod
    def empty(shape: Any, dtype: Any) -> np.ndarray:
        return np.empty(shape, dtype=dtype)


class CuPyDevice:
    """CuPy arrays on one device; the current stream of that device."""

    on_device = True

    def __init__(self, cupy: Any, device_id: int) -> None:
        self.xp = cupy
        self.device_id = device_id
        self._current_stream = cupy.cuda.get_current_stream
        self._current_device = cupy.cuda.runtime.getDevice

    def is_current(self) -> bool:
        """CuPy allocates on the current device: the array's must be (see on_device)."""
        return self._current_device() == self.device_id

    def switch_device(self) -> Any:
        """The array's device made current, as a context."""
        return self.xp.cuda.Device(self.device_id)

    def stream(self) -> int:
        return self._current_stream().ptr

    @staticmethod
    def pointer(a: Any) -> int:
        return a.data.ptr

    @staticmethod
    def c_contiguous(a: Any) -> bool:
        return a.flags.c_contiguous

    @staticmethod
    def element_strides(a: Any) -> tuple:
        itemsize = a.itemsize
        return tuple(s // itemsize for s in a.strides)

    def empty(self, shape: Any, dtype: Any) -> Any:
        return self.xp.empty(shape, dtype=dtype)

    @staticmethod
    def prefix(buffer: Any, count: int, owned: bool) -> Any:
        """buffer[:count] (a view)."""
        return buffer[:count]

    def dtype(self, a: Any) -> np.dtype:
        return a.dtype

    def flat(self, a: Any) -> Any:
        """a in C order as a 1-D contiguous array (a copy only when a is not C-contiguous)."""
        if a.ndim == 1 and a.flags.c_contiguous:
            return a
        return self.xp.ascontiguousarray(a).reshape(-1)

    def contiguous(self, a: Any) -> Any:
        return self.xp.ascontiguousarray(a)

    @staticmethod
    def copy(a: Any) -> Any:
        return a.copy()

    @staticmethod
    def to_host(a: Any) -> np.ndarray:
        """A NumPy copy (waits for the stream's work up to here)."""
        return a.get()

    def astype(self, a: Any, dtype: Any) -> Any:
        return a.astype(np.dtype(dtype))

    def nonzero_mask(self, a: Any) -> Any:
        return a != 0

    def from_host(self, a: np.ndarray) -> Any:
        """A device copy of a NumPy array (on the current stream)."""
        return self.xp.asarray(a)

    def view(self, a: Any) -> Any:
        """The extension's description of a: pointer, dtype, shape, strides, device, stream."""
        dtype = a.dtype
        itemsize = dtype.itemsize
        return _winnow.DeviceArray(a.data.ptr, dtype.kind, itemsize, a.shape, tuple(s // itemsize for s in a.strides),
                                   self.device_id, self._current_stream().ptr)

    @staticmethod
    def take(table: Any, index: Any) -> Any:
        """table[index] (a lookup: index holds non-negative integers)."""
        return table[index]

    def bincount(self, a: Any, minlength: int) -> Any:
        """How often each value 0..max of the non-negative integers of a occurs (int64)."""
        return self.xp.bincount(a.reshape(-1), minlength=minlength)

    def unique_inverse(self, a: Any) -> Any:
        """The index of each element's value among the sorted distinct values (a's shape)."""
        _, inverse = self.xp.unique(a, return_inverse=True)
        return inverse.reshape(a.shape)

    @staticmethod
    def maximum(a: Any) -> int:
        """The largest element as a Python int (waits for the stream)."""
        return int(a.max())

    def unravel(self, index: Any, shape: tuple) -> Any:
        """The [K, ndim] int64 array indices of flat C-order indices."""
        return self.xp.stack(self.xp.unravel_index(index, shape), axis=1).astype(np.int64)

    @staticmethod
    def reverse_columns(a: Any) -> Any:
        return a[:, ::-1]

    def value_range(self, a: Any) -> tuple[float, float]:
        """(smallest, largest) value, NaN ignored."""
        if np.dtype(a.dtype).kind == "f":
            return float(self.xp.nanmin(a)), float(self.xp.nanmax(a))
        return float(a.min()), float(a.max())


_HOST = Host()  # NumPy: one instance serves every call

_TORCH_DTYPES = {
    "bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32",
    "int64": "int64", "float16": "float16", "float32": "float32", "float64": "float64",
    "complex64": "complex64", "complex128": "complex128", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64",
}


_TORCH_TO_NUMPY: dict = {}


class TorchDevice:
    """PyTorch CUDA tensors on one device; that device's current stream."""

    on_device = True

    def __init__(self, torch: Any, device_id: int) -> None:
        self.xp = torch
        self.device_id = device_id
        self.device = torch.device("cuda", device_id)
        # The raw handle without a Stream object (what Triton reads); the public call otherwise.
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self._raw_stream = raw if raw is not None else lambda index: torch.cuda.current_stream(index).cuda_stream
        self._torch_dtypes: dict = {}

    @staticmethod
    def is_current() -> bool:
        """PyTorch allocates on the device it is given and the extension makes the array's
        device current itself: never a switch."""
        return True

    def switch_device(self) -> Any:
        return self.xp.cuda.device(self.device_id)

    def stream(self) -> int:
        return self._raw_stream(self.device_id)

    @staticmethod
    def pointer(a: Any) -> int:
        return a.data_ptr()

    @staticmethod
    def c_contiguous(a: Any) -> bool:
        return a.is_contiguous()

    @staticmethod
    def element_strides(a: Any) -> tuple:
        return a.stride()

    @staticmethod
    def prefix(buffer: Any, count: int, owned: bool) -> Any:
        """buffer[:count]: a buffer winnow allocated is shrunk in place (its storage kept; no new
        tensor, cheaper than a view), the caller's ``out=`` is viewed."""
        return buffer.resize_(count) if owned else buffer.narrow(0, 0, count)

    def torch_dtype(self, dtype: Any) -> Any:
        # Counts and labels: PyTorch's unsigned 32/64-bit tensors are partial; the extension
        # takes signed ones of the same width.
        found = self._torch_dtypes.get(dtype)
        if found is None:
            name = {"uint32": "int32", "uint64": "int64"}.get(np.dtype(dtype).name, np.dtype(dtype).name)
            found = self._torch_dtypes[dtype] = getattr(self.xp, name)
        return found

    def empty(self, shape: Any, dtype: Any) -> Any:
        return self.xp.empty(shape, dtype=self.torch_dtype(dtype), device=self.device)

    def dtype(self, a: Any) -> np.dtype:
        found = _TORCH_TO_NUMPY.get(a.dtype)
        if found is None:
            name = str(a.dtype).replace("torch.", "")
            if name not in _TORCH_DTYPES:
                raise TypeError(f"tensor dtype {a.dtype} has no NumPy equivalent")
            found = _TORCH_TO_NUMPY[a.dtype] = np.dtype(_TORCH_DTYPES[name])
        return found

    def flat(self, a: Any) -> Any:
        if a.dim() == 1 and a.is_contiguous():
            return a
        return a.contiguous().reshape(-1)

    def contiguous(self, a: Any) -> Any:
        return a.contiguous()

    @staticmethod
    def copy(a: Any) -> Any:
        return a.clone()

    @staticmethod
    def to_host(a: Any) -> np.ndarray:
        return a.cpu().numpy()

    def astype(self, a: Any, dtype: Any) -> Any:
        return a.to(self.torch_dtype(dtype))

    def nonzero_mask(self, a: Any) -> Any:
        return a != 0

    def from_host(self, a: np.ndarray) -> Any:
        """A device copy of a NumPy array (PyTorch lacks unsigned 32- and 64-bit tensors: their
        signed twins of the same bits)."""
        a = np.ascontiguousarray(a)
        if a.dtype.kind == "u" and a.itemsize >= 4:
            a = a.view(np.int32 if a.itemsize == 4 else np.int64)
        return self.xp.from_numpy(a).to(self.device)

    def view(self, a: Any) -> Any:
        """The extension's description of a: pointer, dtype, shape, strides, device, stream."""
        dtype = self.dtype(a)
        return _winnow.DeviceArray(a.data_ptr(), dtype.kind, dtype.itemsize, tuple(a.shape), a.stride(),
                                   self.device_id, self._raw_stream(self.device_id))

    @staticmethod
    def take(table: Any, index: Any) -> Any:
        """table[index] (a lookup: index holds non-negative integers).

        PyTorch's CUDA indexing has no kernels for uint16/32/64: those tables are read through a
        view as the signed type of the same width (the same bits) and viewed back.
        """
        import torch

        signed = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}.get(table.dtype)
        if signed is None:
            return table[index.long()]
        return table.view(signed)[index.long()].view(table.dtype)

    def bincount(self, a: Any, minlength: int) -> Any:
        return self.xp.bincount(a.reshape(-1).long(), minlength=minlength)

    def unique_inverse(self, a: Any) -> Any:
        _, inverse = self.xp.unique(a, return_inverse=True)
        return inverse.reshape(a.shape)

    def _ordered(self, a: Any) -> tuple:
        """(keys, offset): keys whose min and max PyTorch's CUDA reductions can take, ordered as
        `a`, with value = key + offset. They have no min/max for uint16/32/64: those are read
        as the signed type of the same width with the top bit flipped (u - 2^(bits-1))."""
        torch = self.xp
        signed = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}.get(a.dtype)
        if signed is None:
            return a, 0
        lowest = -(1 << (torch.iinfo(signed).bits - 1))
        return torch.bitwise_xor(a.view(signed), lowest), -lowest

    def maximum(self, a: Any) -> int:
        keys, offset = self._ordered(a)
        return int(keys.max().item()) + offset

    def unravel(self, index: Any, shape: tuple) -> Any:
        index = index.long()
        columns = []
        for side in reversed(shape):
            columns.append(index % side)
            index = index // side
        return self.xp.stack(columns[::-1], dim=1)

    def reverse_columns(self, a: Any) -> Any:
        return self.xp.flip(a, (1,))

    def value_range(self, a: Any) -> tuple[float, float]:
        if a.is_floating_point():
            finite = a[~self.xp.isnan(a)]
            return float(finite.min().item()), float(finite.max().item())
        keys, offset = self._ordered(a)
        return float(keys.min().item() + offset), float(keys.max().item() + offset)


def _cupy_adapter(cupy: Any) -> Any:
    devices: dict = {}  # device index -> CuPyDevice

    def adapt(x: Any, name: str) -> tuple:
        device_id = x.data.device_id  # the pointer's device: x.device would build a Device object
        lib = devices.get(device_id)
        if lib is None:
            lib = devices[device_id] = CuPyDevice(cupy, device_id)
        return x, lib

    return adapt


def _torch_adapter(torch: Any) -> Any:
    devices: dict = {}  # device index -> TorchDevice

    def adapt(x: Any, name: str) -> tuple:
        if x.is_cuda:
            device_id = x.get_device()
            lib = devices.get(device_id)
            if lib is None:
                lib = devices[device_id] = TorchDevice(torch, device_id)
            return x, lib
        if x.device.type != "cpu":
            raise TypeError(f"{name}: expected a CPU or CUDA tensor, got one on {x.device}")
        return x.detach().numpy(), Host(torch)

    return adapt


def native_byte_order(x: np.ndarray) -> np.ndarray:
    """x, or a copy in the machine's byte order when x is byte-swapped (a big-endian file's voxels,
    as nibabel's dataobj or an N5 store gives them): the extension reads native numbers only."""
    return x if x.dtype.isnative else x.astype(x.dtype.newbyteorder("="))


def _host_adapter(x: Any, name: str) -> tuple:
    return native_byte_order(x), _HOST


# Array type -> its adapter, (array as the extension takes it, its library), filled on the
# type's first call; one adapter per library (its per-device cache shared by the library's types).
_ADAPTERS: dict = {np.ndarray: _host_adapter}
_LIBRARY_ADAPTERS: dict = {}


def _adapter_for(kind: type) -> Any:
    """The adapter of an array type, or None (not an array type: numpy.asarray decides)."""
    if issubclass(kind, np.ndarray):
        return _host_adapter
    for name, array_type, make in (("cupy", "ndarray", _cupy_adapter), ("torch", "Tensor", _torch_adapter)):
        module = sys.modules.get(name)
        if module is not None and issubclass(kind, getattr(module, array_type)):
            if name not in _LIBRARY_ADAPTERS:
                _LIBRARY_ADAPTERS[name] = make(module)
            return _LIBRARY_ADAPTERS[name]
    return None


def classify(x: Any, name: str) -> tuple[Any, Any]:
    """(array as the extension takes it, its library: Host, CuPyDevice or TorchDevice)."""
    adapt = _ADAPTERS.get(type(x))
    if adapt is None:
        adapt = _adapter_for(type(x))
        if adapt is None:
            try:
                return np.asarray(x), _HOST
            except Exception as error:  # noqa: BLE001 - any failure means "not an array"
                raise TypeError(f"{name}: expected a NumPy, CuPy or PyTorch array, got {type(x).__name__}") from error
        _ADAPTERS[type(x)] = adapt
    return adapt(x, name)


def same_library(lib: Any, other: Any, name: str) -> None:
    """TypeError unless a second argument lives where the first does (the same device)."""
    if lib is other:
        return
    if lib.on_device != other.on_device or lib.on_device:
        raise TypeError(f"{name}: expected the same kind of array as the first argument (host or the same CUDA "
                        "library and device)")


def on_device(lib: Any, function: Any, *args: Any) -> Any:
    """function(*args) with the device array's device current: directly when it already is (no
    context entered), else inside a switch to it."""
    if lib.is_current():
        return function(*args)
    with lib.switch_device():
        return function(*args)


def trimmed(lib: Any, buffer: Any, count: int, owned: bool, itemsize: int) -> Any:
    """buffer[:count], without holding memory for every input element when winnow allocated the
    buffer and 1 MiB or more of it is unused: a host buffer shrinks in place (``ndarray.resize``:
    realloc, which returns the tail without copying the kept part; nothing else refers to the
    buffer), a device buffer is copied when most of it is unused (below 1 MiB the copy would
    cost more than the memory it frees)."""
    unused = len(buffer) - count
    if owned and unused * itemsize >= 1 << 20:
        if not lib.on_device:
            buffer.resize((count,), refcheck=False)
            return buffer
        if unused > count:
            return lib.copy(buffer[:count])
    return lib.prefix(buffer, count, owned) if lib.on_device else buffer[:count]


@atexit.register
def _release_device_storage() -> None:
    """Frees the extension's per-stream temporary storage while the CUDA runtime is still up."""
    _winnow.release_device_calls()
