#pragma once
// MurmurHash3's 32-bit finaliser: the hash of the labeling benchmarks' random masks, on the device
// (bench/random_mask.cuh) and on the host (label_cpu_bench.cpp), so both build the same masks.
#include <cstdint>

#if defined(__CUDACC__)
#define WINNOW_BENCH_HOST_DEVICE __host__ __device__
#else
#define WINNOW_BENCH_HOST_DEVICE
#endif

WINNOW_BENCH_HOST_DEVICE inline std::uint32_t fmix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}
