#pragma once
// What the current device can run: kernels that use sm_90 instructions (bulk copies, programmatic
// dependent launch) are launched only where the device and the kernel's compiled architecture
// both have them (a build for an older virtual architecture, JIT-compiled for a Hopper, does not).
#include <cuda_runtime.h>

#include <atomic>

#include "common/cuda/check.cuh"

namespace winnow::detail::cuda {

/// Whether the current device runs `kernel` as an sm_90 kernel: compute capability 9.0 or later
/// and the kernel compiled for a virtual architecture >= 9.0. `known` caches it per device.
inline bool runs_as_sm90(const void* kernel, std::atomic<signed char> (&known)[64]) {
  int device = 0;
  WINNOW_CUDA_CHECK(cudaGetDevice(&device));
  if (device < 64)
    if (const signed char k = known[device].load(std::memory_order_relaxed)) return k == 2;
  int major = 0;
  WINNOW_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  cudaFuncAttributes f{};
  WINNOW_CUDA_CHECK(cudaFuncGetAttributes(&f, kernel));
  const bool ok = major >= 9 && f.ptxVersion >= 90;
  if (device < 64) known[device].store(ok ? 2 : 1, std::memory_order_relaxed);
  return ok;
}

}  // namespace winnow::detail::cuda
