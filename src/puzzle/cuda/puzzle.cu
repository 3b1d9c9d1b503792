// Tile puzzles on CUDA: the compatibility matrix and the exhaustive search.
//
// Compatibility: the host cuts each tile side into a strip (puzzle_measures.hpp) and uploads the
// strips; for MGC one thread per (tile, side) computes the gradient mean and inverse covariance;
// then one thread per ordered pair (i, j) evaluates both relations (i left of j, i above j) with
// the same measure code as the CPU (results agree to float rounding: FMA contraction and the
// order of device arithmetic differ). Tile i's strips are shared by a block (blockIdx.y = i),
// tile j's are read through the read-only cache. O(n^2 K) work, n^2 threads.
//
// Exhaustive search (the GPGPU demo's): thread k decodes permutation k from its lexicographic
// rank (factorial number system), scores it with permutation_cost against the two n x n
// matrices held in shared memory, and the block reduces (cost, rank) keys — the cost mapped to
// an order-preserving uint32 in the high half, the rank in the low half — with warp shuffles;
// one 64-bit atomicMin per block gives the least cost, ties to the lowest rank, exactly as the
// CPU. 9! = 362,880 threads.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "common/cuda/check.cuh"
#include "puzzle/backends.hpp"
#include "puzzle/measures.hpp"

namespace winnow::detail::puzzle::cuda {
namespace {

using winnow::detail::cuda::DeviceBuffer;
using winnow::puzzle::Compatibility;
using winnow::puzzle::Measure;
using winnow::puzzle::Tiles;

struct CompatTuning {
  static constexpr int kBlock = 128;  // threads (j tiles) per block
};
struct SearchTuning {
  static constexpr int kBlock = 256;
};

__global__ void mgc_stats_kernel(const float* __restrict__ strips, int sides, int K, float* __restrict__ stats) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= sides) return;
  mgc_stats(strips + static_cast<std::size_t>(s) * 2 * K * 3, K, stats + static_cast<std::size_t>(s) * kStatsFloats);
}

template <int M>
__global__ void compat_kernel(const float* __restrict__ strips, const float* __restrict__ stats, int n, int K,
                              float* __restrict__ lr, float* __restrict__ tb) {
  extern __shared__ float sh[];  // tile i: right strip, bottom strip (2 * 2K * 3 floats)
  const int i = blockIdx.y;
  const std::size_t stride = static_cast<std::size_t>(2) * K * 3;
  const float* gr = strips + (static_cast<std::size_t>(i) * 4 + kRight) * stride;
  const float* gb = strips + (static_cast<std::size_t>(i) * 4 + kBottom) * stride;
  for (int k = threadIdx.x; k < static_cast<int>(stride); k += blockDim.x) {
    sh[k] = gr[k];
    sh[stride + k] = gb[k];
  }
  __syncthreads();
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const float* Ar = sh;
  const float* Ab = sh + stride;
  const float* Bl = strips + (static_cast<std::size_t>(j) * 4 + kLeft) * stride;
  const float* Bt = strips + (static_cast<std::size_t>(j) * 4 + kTop) * stride;
  float vlr, vtb;
  if (i == j) {
    vlr = vtb = INFINITY;
  } else if (M == 0) {
    vlr = measure_ssd(Ar, Bl, K);
    vtb = measure_ssd(Ab, Bt, K);
  } else if (M == 1) {
    vlr = measure_prediction(Ar, Bl, K);
    vtb = measure_prediction(Ab, Bt, K);
  } else {
    auto st = [&](int t, int side) { return stats + (static_cast<std::size_t>(t) * 4 + side) * kStatsFloats; };
    vlr = measure_mgc(Ar, Bl, st(i, kRight), st(j, kLeft), K);
    vtb = measure_mgc(Ab, Bt, st(i, kBottom), st(j, kTop), K);
  }
  lr[static_cast<std::size_t>(i) * n + j] = vlr;
  tb[static_cast<std::size_t>(i) * n + j] = vtb;
}

__device__ inline unsigned long long warp_min(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned long long w = __shfl_down_sync(0xFFFFFFFFu, v, o);
    v = w < v ? w : v;
  }
  return v;
}

__global__ void exhaustive_kernel(const float* __restrict__ d_lr, const float* __restrict__ d_tb, int rows, int cols,
                                  std::uint64_t total, unsigned long long* __restrict__ d_best) {
  __shared__ float lr[81], tb[81];
  __shared__ unsigned long long warp_best[SearchTuning::kBlock / 32];
  const int n = rows * cols;
  for (int k = threadIdx.x; k < n * n; k += blockDim.x) {
    lr[k] = d_lr[k];
    tb[k] = d_tb[k];
  }
  __syncthreads();
  unsigned long long key = ~0ull;
  for (std::uint64_t idx = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    int p[winnow::puzzle::kMaxExhaustiveTiles];
    decode_permutation(idx, n, p);
    const float cost = permutation_cost(p, rows, cols, lr, tb, n);
    const unsigned long long k2 = (static_cast<unsigned long long>(orderable(cost)) << 32) | idx;
    key = k2 < key ? k2 : key;
  }
  key = warp_min(key);
  if ((threadIdx.x & 31) == 0) warp_best[threadIdx.x >> 5] = key;
  __syncthreads();
  if (threadIdx.x < 32) {
    key = threadIdx.x < blockDim.x / 32 ? warp_best[threadIdx.x] : ~0ull;
    key = warp_min(key);
    if (threadIdx.x == 0) atomicMin(d_best, key);
  }
}

}  // namespace

Compatibility compatibility(const Tiles& tiles, Measure measure) {
  const int n = tiles.count(), K = tiles.grid.tile;
  const std::vector<float> strips = make_strips(tiles);
  cudaStream_t stream = nullptr;
  DeviceBuffer<float> d_strips(strips.size(), stream);
  WINNOW_CUDA_CHECK(
      cudaMemcpyAsync(d_strips.get(), strips.data(), strips.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
  DeviceBuffer<float> d_stats;
  if (measure == Measure::mgc) {
    const int sides = n * 4;
    d_stats = DeviceBuffer<float>(static_cast<std::size_t>(sides) * kStatsFloats, stream);
    mgc_stats_kernel<<<(sides + 127) / 128, 128, 0, stream>>>(d_strips.get(), sides, K, d_stats.get());
    WINNOW_CUDA_CHECK_LAUNCH();
  }
  const std::size_t nn = static_cast<std::size_t>(n) * n;
  DeviceBuffer<float> d_lr(nn, stream), d_tb(nn, stream);
  const dim3 grid((n + CompatTuning::kBlock - 1) / CompatTuning::kBlock, n);
  const std::size_t shmem = static_cast<std::size_t>(2) * 2 * K * 3 * sizeof(float);
  if (shmem > 48 * 1024) throw BackendError("puzzle tiles too large for the CUDA compatibility kernel (max 1024 px)");
  switch (measure) {
    case Measure::ssd:
      compat_kernel<0>
          <<<grid, CompatTuning::kBlock, shmem, stream>>>(d_strips.get(), nullptr, n, K, d_lr.get(), d_tb.get());
      break;
    case Measure::prediction:
      compat_kernel<1>
          <<<grid, CompatTuning::kBlock, shmem, stream>>>(d_strips.get(), nullptr, n, K, d_lr.get(), d_tb.get());
      break;
    case Measure::mgc:
      compat_kernel<2>
          <<<grid, CompatTuning::kBlock, shmem, stream>>>(d_strips.get(), d_stats.get(), n, K, d_lr.get(), d_tb.get());
      break;
  }
  WINNOW_CUDA_CHECK_LAUNCH();
  Compatibility c;
  c.n = n;
  c.measure = measure;
  c.lr.resize(nn);
  c.tb.resize(nn);
  WINNOW_CUDA_CHECK(cudaMemcpyAsync(c.lr.data(), d_lr.get(), nn * sizeof(float), cudaMemcpyDeviceToHost, stream));
  WINNOW_CUDA_CHECK(cudaMemcpyAsync(c.tb.data(), d_tb.get(), nn * sizeof(float), cudaMemcpyDeviceToHost, stream));
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(stream));
  return c;
}

std::vector<int> exhaustive(const Compatibility& compat, int rows, int cols) {
  const int n = rows * cols;
  std::uint64_t total = 1;
  for (int i = 2; i <= n; ++i) total *= i;
  cudaStream_t stream = nullptr;
  const std::size_t nn = static_cast<std::size_t>(n) * n;
  DeviceBuffer<float> d_m(2 * nn, stream);
  DeviceBuffer<unsigned long long> d_best(1, stream);
  WINNOW_CUDA_CHECK(cudaMemcpyAsync(d_m.get(), compat.lr.data(), nn * sizeof(float), cudaMemcpyHostToDevice, stream));
  WINNOW_CUDA_CHECK(
      cudaMemcpyAsync(d_m.get() + nn, compat.tb.data(), nn * sizeof(float), cudaMemcpyHostToDevice, stream));
  WINNOW_CUDA_CHECK(cudaMemsetAsync(d_best.get(), 0xFF, sizeof(unsigned long long), stream));
  const std::uint64_t blocks64 = (total + SearchTuning::kBlock - 1) / SearchTuning::kBlock;
  const int blocks = static_cast<int>(blocks64 < 4096 ? blocks64 : 4096);
  exhaustive_kernel<<<blocks, SearchTuning::kBlock, 0, stream>>>(d_m.get(), d_m.get() + nn, rows, cols, total,
                                                                 d_best.get());
  WINNOW_CUDA_CHECK_LAUNCH();
  unsigned long long best = 0;
  WINNOW_CUDA_CHECK(cudaMemcpyAsync(&best, d_best.get(), sizeof best, cudaMemcpyDeviceToHost, stream));
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<int> out(n);
  decode_permutation(best & 0xFFFFFFFFull, n, out.data());
  return out;
}

}  // namespace winnow::detail::puzzle::cuda
