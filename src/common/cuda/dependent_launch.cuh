#pragma once
// Programmatic dependent launch (sm_90), shared by the labeling pipelines: a kernel launched with
// programmatic stream serialisation (launch_dependent) is launched, and its blocks start up, while
// its predecessor in the stream still runs, so a pipeline of short kernels saves each one's launch
// and block start-up; every thread of such a kernel first waits in grid_dependency_wait for the
// predecessor grid (complete, its memory visible) before it reads or writes anything.
#include <cuda_runtime.h>

#include <atomic>

#include "common/cuda/arch.cuh"
#include "common/cuda/check.cuh"

namespace winnow::detail::cuda {

// The wait at the start of a kernel launched by launch_dependent. Without the launch attribute
// (an older device, or a plain launch) it returns at once.
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Whether the current device may run this unit's kernels as programmatic dependents: compute
// capability 9.0 or later, and kernels compiled for a virtual architecture >= 9.0 (an older one,
// e.g. -DCMAKE_CUDA_ARCHITECTURES=80 JIT-compiled for a Hopper, has no grid_dependency_wait, so
// its kernels must be launched in plain stream order). Cached per device.
inline bool programmatic_launch_ok(const void* kernel_of_this_unit) {
  static std::atomic<signed char> known[64] = {};  // per device: 0 unknown, 1 no, 2 yes
  return runs_as_sm90(kernel_of_this_unit, known);
}

// Launch with programmatic stream serialisation where allowed (see grid_dependency_wait).
template <typename... Params, typename... Args>
inline void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t s, Args... args) {
  if (!programmatic_launch_ok(reinterpret_cast<const void*>(kernel))) {
    kernel<<<grid, block, 0, s>>>(static_cast<Params>(args)...);
    WINNOW_CUDA_CHECK_LAUNCH();
    return;
  }
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  WINNOW_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, static_cast<Params>(args)...));
}

}  // namespace winnow::detail::cuda
