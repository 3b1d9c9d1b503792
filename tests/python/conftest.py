"""Shared fixtures of the Python suite: random generators, the bundled images, and the GPU
guard: a test that needs a CUDA device (CuPy, PyTorch or winnow's own CUDA backend) is skipped
without one, and fails instead under WINNOW_REQUIRE_GPU=1 (as tests/common/gpu_guard.hpp does
for the C++ suite)."""

import os
import pathlib
import zlib

import numpy as np
import pytest

import winnow

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "data"


def need_gpu(reason: str) -> None:
    if os.environ.get("WINNOW_REQUIRE_GPU") == "1":
        pytest.fail(f"WINNOW_REQUIRE_GPU=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture
def rng(request):
    # A different, reproducible stream per test.
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def winnow_cuda():
    if not winnow.cuda_available():
        need_gpu("winnow has no CUDA device (or was built without CUDA)")


class DeviceLib:
    """CuPy or PyTorch on the CUDA device: make arrays from NumPy, bring results back, streams."""

    def __init__(self, name):
        self.name = name
        if name == "cupy":
            import cupy

            self.xp = cupy
        else:
            import torch

            self.xp = torch

    def asarray(self, a):
        if self.name == "cupy":
            return self.xp.asarray(a)
        return self.xp.from_numpy(np.ascontiguousarray(a)).to("cuda")

    def to_numpy(self, a):
        return self.xp.asnumpy(a) if self.name == "cupy" else a.cpu().numpy()

    def is_native(self, a):
        if self.name == "cupy":
            return isinstance(a, self.xp.ndarray)
        return isinstance(a, self.xp.Tensor) and a.device.type == "cuda"

    def pointer(self, a):
        return a.data.ptr if self.name == "cupy" else a.data_ptr()

    def new_stream(self):
        return self.xp.cuda.Stream(non_blocking=True) if self.name == "cupy" else self.xp.cuda.Stream()

    def use_stream(self, stream):
        return stream if self.name == "cupy" else self.xp.cuda.stream(stream)

    def current_stream_pointer(self):
        if self.name == "cupy":
            return self.xp.cuda.get_current_stream().ptr
        return self.xp.cuda.current_stream().cuda_stream


@pytest.fixture(params=["cupy", "torch"])
def device_lib(request):
    name = request.param
    try:
        lib = DeviceLib(name)
    except ImportError:
        need_gpu(f"{name} is not installed")
    try:
        available = lib.xp.cuda.runtime.getDeviceCount() > 0 if name == "cupy" else lib.xp.cuda.is_available()
    except Exception:  # noqa: BLE001 - no driver, no device
        available = False
    if not available:
        need_gpu(f"{name} sees no CUDA device")
    if not winnow.cuda_available():
        need_gpu("winnow has no CUDA device (or was built without CUDA)")
    return lib
