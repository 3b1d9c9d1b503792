#pragma once
// The random masks of the GPU labeling benchmarks (bench_label_gpu, bench_label_volume_gpu):
// element i (linear index, x fastest) is 1 when fmix32(i ^ seed * 0x9E3779B9) < cut, with cut =
// density * 2^32. bench/bench_common.py's fmix32_mask builds the identical masks for the peers.
#include <cuda_runtime.h>

#include <cstdint>

#include "fmix32.hpp"

/// Writes the n mask bytes m[0, n) (a grid-stride loop: any launch shape covers them).
__global__ inline void random_mask_kernel(std::uint8_t* m, std::uint64_t n, std::uint32_t seed, std::uint32_t cut) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    m[i] = fmix32(static_cast<std::uint32_t>(i) ^ (seed * 0x9E3779B9u)) < cut ? 1 : 0;
}
