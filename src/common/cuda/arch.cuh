#pragma once
// What the current device is and can run, asked of the runtime once and kept: its multiprocessors,
// how many blocks of a kernel it holds at once (the grid of a persistent or grid-stride kernel),
// and whether kernels that use sm_90 instructions (bulk copies, programmatic dependent launch) may
// run -- only where the device and the kernel's compiled architecture both have them (a build for
// an older virtual architecture, JIT-compiled for a Hopper, does not).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <tuple>

#include "common/cuda/check.cuh"

namespace winnow::detail::cuda {

/// The current device's multiprocessors, asked once per device (devices 0-63; others each time).
inline int multiprocessor_count() {
  static std::atomic<int> known[64] = {};  // per device: 0 unknown
  int device = 0;
  WINNOW_CUDA_CHECK(cudaGetDevice(&device));
  if (device < 64)
    if (const int n = known[device].load(std::memory_order_relaxed)) return n;
  int n = 0;
  WINNOW_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  if (device < 64) known[device].store(n, std::memory_order_relaxed);
  return n;
}

/// Blocks of `kernel` that one multiprocessor of the current device holds at once, with `threads`
/// threads and `dynamic_smem` bytes of dynamic shared memory a block (its registers and shared
/// memory decide); at least 1. Asked each time: a caller keeps it where it launches often.
inline int resident_blocks_per_multiprocessor(const void* kernel, int threads, std::size_t dynamic_smem = 0) {
  int blocks = 0;
  WINNOW_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem));
  return std::max(blocks, 1);
}

/// Blocks of `kernel` (`threads` threads a block, no dynamic shared memory) that the whole current
/// device holds at once: the grid of a grid-stride kernel whose blocks should all start in the
/// first wave. A kernel's occupancy and a device's multiprocessors do not change, so this is asked
/// once per (kernel, device, threads) and kept (a thread-safe cache).
inline unsigned resident_blocks_on_device(const void* kernel, int threads) {
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, int>, unsigned> known;  // (kernel, device, threads) -> blocks
  int device = 0;
  WINNOW_CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(kernel, device, threads);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = known.find(key); it != known.end()) return it->second;
  }
  const unsigned resident = static_cast<unsigned>(resident_blocks_per_multiprocessor(kernel, threads)) *
                            static_cast<unsigned>(std::max(multiprocessor_count(), 1));
  const std::lock_guard<std::mutex> lock(mutex);
  known.emplace(key, resident);
  return resident;
}

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
