#pragma once
// Passes 3 and 4 of the volume labeling: numbering and labels. After the merge the bits left in
// the root words are the roots. An exclusive scan (CUB) of the words' bit counts, in raster order
// of the words, gives each word the number of roots before it, and N; a root's number is then its
// word's offset plus the roots before it in its word, plus 1 -- raster order, without a pass over
// the forest (the forest is 4 bytes a voxel, the words 1 bit). The label pass gives every
// foreground voxel its root's number (read-only finds: its brick-local root, then the merge's
// chain), background 0.
#include <cuda_runtime.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstddef>
#include <cstdint>

#include "label/cuda/volume_plan.cuh"

namespace winnow::detail::cuda {
namespace {

// The scan's input: the number of roots in a row's word.
struct RootsInWord {
  __host__ __device__ std::uint32_t operator()(const RowWord& word) const {
#ifdef __CUDA_ARCH__
    return static_cast<std::uint32_t>(__popc(word.roots));
#else
    return static_cast<std::uint32_t>(__builtin_popcount(word.roots));
#endif
  }
};

// The numbering scan's input: each root word's count of roots.
thrust::transform_iterator<RootsInWord, const RowWord*> root_counts(const RowWord* rows) {
  return thrust::transform_iterator<RootsInWord, const RowWord*>(rows, RootsInWord{});
}

// N: the roots before the last word and in it.
__global__ void total_kernel(const RowWord* rows, const std::uint32_t* offsets, std::uint64_t words,
                             std::uint32_t* d_count) {
  *d_count = offsets[words - 1] + static_cast<std::uint32_t>(__popc(rows[words - 1].roots));
}

// The number of root r: the roots before its word, those before it in its word, plus 1.
__device__ __forceinline__ std::uint32_t root_number(std::uint32_t r, const RowWord* rows, const std::uint32_t* offsets,
                                                     const VolGeo& g) {
  const std::uint32_t row = r / g.nx, x = r - row * g.nx;  // row: y + ny z
  const std::size_t w = std::size_t{row} * g.nbx + x / kBX;
  return __ldg(offsets + w) + static_cast<std::uint32_t>(__popc(__ldg(&rows[w].roots) & ~(kFull << (x % kBX)))) + 1;
}

// A thread takes kLabelItems voxels a grid stride apart at a time, their loads issued together:
// each voxel's find is a chain of dependent loads (parent, root, the root's words), and the
// independent chains of several voxels overlap.
constexpr int kLabelItems = VolumeTuning::kLabelItems;
__global__ void __launch_bounds__(kThreads)
    labels_kernel(const std::uint32_t* P, const RowWord* rows, const std::uint32_t* offsets, std::uint32_t* labels,
                  VolGeo g) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * kThreads;
  for (std::uint64_t base = blockIdx.x * static_cast<std::uint64_t>(kThreads) + threadIdx.x; base < g.n;
       base += stride * kLabelItems) {
    std::uint32_t p[kLabelItems], r[kLabelItems];
#pragma unroll
    for (int j = 0; j < kLabelItems; ++j) {
      const std::uint64_t i = base + j * stride;
      p[j] = i < g.n ? P[i] : kNone;
    }
#pragma unroll
    for (int j = 0; j < kLabelItems; ++j) {
      const auto i = static_cast<std::uint32_t>(base + j * stride);
      r[j] = p[j] == i || p[j] == kNone ? p[j] : find_root_read_only(FinalForest{P}, p[j]);
    }
#pragma unroll
    for (int j = 0; j < kLabelItems; ++j) {
      const std::uint64_t i = base + j * stride;
      if (i < g.n) labels[i] = r[j] == kNone ? 0u : root_number(r[j], rows, offsets, g);
    }
  }
}

}  // namespace
}  // namespace winnow::detail::cuda
