"""What every winnow function does with its arrays before and after the extension runs.

NumPy (and anything ``numpy.asarray`` takes) is host memory; CuPy arrays and PyTorch CUDA
tensors are device memory, handed to the extension through DLPack without a copy; a PyTorch CPU
tensor is viewed as NumPy and its results are turned back into tensors (no copy either way).
Outputs, counts and temporary storage of device calls are allocated by the caller's library on
the caller's current stream and device, so its memory pool serves them and ordering holds.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import numpy as np

BACKENDS = ("auto", "cpu", "cuda")


def check_backend(backend: str, on_device: bool) -> str:
    """The backend name the extension takes; ValueError for an unknown one or a host-only mix."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of 'auto', 'cpu', 'cuda', got {backend!r}")
    if on_device and backend == "cpu":
        raise ValueError("backend: 'cpu' cannot read a CUDA array; copy it to the host first")
    return backend


def _is_cupy(x: Any) -> bool:
    return type(x).__module__.startswith("cupy") and hasattr(x, "__cuda_array_interface__")


def _is_torch(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


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

    def context(self) -> Any:
        return self.xp.cuda.Device(self.device_id)

    def stream(self) -> int:
        return int(self.xp.cuda.get_current_stream().ptr)

    def empty(self, shape: Any, dtype: Any) -> Any:
        return self.xp.empty(shape, dtype=np.dtype(dtype))

    def dtype(self, a: Any) -> np.dtype:
        return np.dtype(a.dtype)

    def flat(self, a: Any) -> Any:
        """a in C order as a 1-D contiguous array (a copy only when a is not C-contiguous)."""
        return self.xp.ascontiguousarray(a).reshape(-1)

    def contiguous(self, a: Any) -> Any:
        return self.xp.ascontiguousarray(a)

    @staticmethod
    def item(a: Any) -> int:
        """The one element of a device array (waits for the stream's work up to here)."""
        return int(a.get()[0])

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

    def relabel(self, labels: Any, count: int, min_area: int, largest_k: int) -> tuple[Any, int]:
        """Removes the components of fewer than min_area pixels, then all but the largest_k
        largest (0: all), renumbering the rest in order."""
        xp = self.xp
        areas = xp.bincount(labels.reshape(-1), minlength=count + 1)
        keep = surviving(xp, areas, min_area, largest_k)
        lut = xp.cumsum(keep).astype(labels.dtype) * keep
        return lut[labels], int(keep.sum())

    def value_codes(self, a: Any) -> Any:
        """Multi-label floating-point input: one integer code per distinct value, 0 for zero."""
        _, inverse = self.xp.unique(a, return_inverse=True)
        codes = (inverse.reshape(a.shape) + 1).astype(np.uint32 if a.size < 2**32 - 1 else np.uint64)
        codes[a == 0] = 0
        return codes

    @staticmethod
    def reverse_columns(a: Any) -> Any:
        return a[:, ::-1]

    def value_range(self, a: Any) -> tuple[float, float]:
        """(smallest, largest) value, NaN ignored."""
        if np.dtype(a.dtype).kind == "f":
            return float(self.xp.nanmin(a)), float(self.xp.nanmax(a))
        return float(a.min()), float(a.max())


_TORCH_DTYPES = {
    "bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32",
    "int64": "int64", "float16": "float16", "float32": "float32", "float64": "float64",
    "complex64": "complex64", "complex128": "complex128", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64",
}


class TorchDevice:
    """PyTorch CUDA tensors on one device; that device's current stream."""

    on_device = True

    def __init__(self, torch: Any, device: Any) -> None:
        self.xp = torch
        self.device = device

    def context(self) -> Any:
        return self.xp.cuda.device(self.device)

    def stream(self) -> int:
        return int(self.xp.cuda.current_stream(self.device).cuda_stream)

    def torch_dtype(self, dtype: Any) -> Any:
        # Counts and labels: PyTorch's unsigned 32/64-bit tensors are partial; the extension
        # takes signed ones of the same width.
        name = {"uint32": "int32", "uint64": "int64"}.get(np.dtype(dtype).name, np.dtype(dtype).name)
        return getattr(self.xp, name)

    def empty(self, shape: Any, dtype: Any) -> Any:
        return self.xp.empty(shape, dtype=self.torch_dtype(dtype), device=self.device)

    def dtype(self, a: Any) -> np.dtype:
        name = str(a.dtype).replace("torch.", "")
        if name not in _TORCH_DTYPES:
            raise TypeError(f"tensor dtype {a.dtype} has no NumPy equivalent")
        return np.dtype(_TORCH_DTYPES[name])

    def flat(self, a: Any) -> Any:
        return a.contiguous().reshape(-1)

    def contiguous(self, a: Any) -> Any:
        return a.contiguous()

    @staticmethod
    def item(a: Any) -> int:
        return int(a[0].item())

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

    def relabel(self, labels: Any, count: int, min_area: int, largest_k: int) -> tuple[Any, int]:
        index = labels.long()
        areas = self.xp.bincount(index.reshape(-1), minlength=count + 1)
        keep = surviving(self.xp, areas, min_area, largest_k)
        lut = self.xp.cumsum(keep, 0) * keep
        return lut[index].to(labels.dtype), int(keep.sum().item())

    def value_codes(self, a: Any) -> Any:
        _, inverse = self.xp.unique(a, return_inverse=True)
        codes = (inverse.reshape(a.shape) + 1).to(self.xp.int32 if a.numel() < 2**31 - 1 else self.xp.int64)
        codes[a == 0] = 0
        return codes

    def reverse_columns(self, a: Any) -> Any:
        return self.xp.flip(a, (1,))

    def value_range(self, a: Any) -> tuple[float, float]:
        finite = a[~self.xp.isnan(a)] if a.is_floating_point() else a
        return float(finite.min().item()), float(finite.max().item())


def surviving(xp: Any, areas: Any, min_area: int, largest_k: int) -> Any:
    """Which labels survive (a boolean per label, the background's False): at least min_area
    voxels, then the largest_k largest of those (0: all), ties to the lower label -- the
    library's rule (label/backends.hpp), for the device arrays' filters."""
    keep = areas >= min_area
    keep[0] = False
    if largest_k and int(keep.sum()) > largest_k:
        kept_areas = areas * keep
        ordered = xp.sort(kept_areas)
        threshold = getattr(ordered, "values", ordered)[-largest_k]  # the k-th largest area (torch: .values)
        above = kept_areas > threshold
        room = largest_k - int(above.sum())
        tied = kept_areas == threshold
        keep = above | (tied & (xp.cumsum(tied, 0) <= room))
    return keep


def classify(x: Any, name: str) -> tuple[Any, Any]:
    """(array as the extension takes it, its library: Host, CuPyDevice or TorchDevice)."""
    if _is_cupy(x):
        import cupy

        return x, CuPyDevice(cupy, x.device.id)
    if _is_torch(x):
        torch = sys.modules["torch"]
        if x.device.type == "cuda":
            return x, TorchDevice(torch, x.device)
        if x.device.type != "cpu":
            raise TypeError(f"{name}: expected a CPU or CUDA tensor, got one on {x.device}")
        return x.detach().numpy(), Host(torch)
    if isinstance(x, np.ndarray):
        return x, Host()
    try:
        return np.asarray(x), Host()
    except Exception as error:  # noqa: BLE001 - any failure means "not an array"
        raise TypeError(f"{name}: expected a NumPy, CuPy or PyTorch array, got {type(x).__name__}") from error


def same_library(lib: Any, other: Any, name: str) -> None:
    """TypeError unless a second argument lives where the first does."""
    if lib.on_device != other.on_device or (lib.on_device and type(lib) is not type(other)):
        raise TypeError(f"{name}: expected the same kind of array as the first argument (host or the same CUDA library)")


def device_context(lib: Any) -> Any:
    return lib.context() if lib.on_device else contextlib.nullcontext()


def run_device(lib: Any, function: Any, *args: Any) -> None:
    """Calls a device function twice: once to size its temporary storage, once to run with it."""
    temp_bytes = function(None, *args)
    temp = lib.empty(max(int(temp_bytes), 1), np.uint8)
    function(temp, *args)


def trimmed(lib: Any, buffer: Any, count: int, owned: bool) -> Any:
    """buffer[:count]; a copy when winnow allocated the buffer and most of it is unused (so the
    result does not hold memory for every input element)."""
    view = buffer[:count]
    if owned and count < len(buffer) // 2:
        return lib.copy(view) if lib.on_device else view.copy()
    return view
