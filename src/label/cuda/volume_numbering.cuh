#pragma once
// Passes 3 and 4 of the volume labeling: numbering and labels. After the merge the bits left in
// the root words are the roots. An exclusive scan (CUB) of the words' bit counts, in raster order
// of the words, gives each word the number of roots before it, and N; a root's number is then its
// word's offset plus the roots before it in its word, plus 1 -- raster order, without a pass over
// the forest (the forest is 4 bytes a voxel, the words 1 bit). The label pass gives every
// foreground voxel its root's number (read-only finds: its brick-local root, then the merge's
// chain), background 0; over the run forest of the bit-row passes, bits_labels_kernel does the
// same run by run.
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
  grid_dependency_wait();  // launched by launch_dependent
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
  grid_dependency_wait();  // launched by launch_dependent
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

// The number of run-forest root r (volume_plan.cuh): as root_number, with bits that are runs.
__device__ __forceinline__ std::uint32_t run_root_number(std::uint32_t r, const RowWord* rows,
                                                         const std::uint32_t* offsets) {
  const std::uint32_t w = r / kWordRuns, k = r % kWordRuns;
  return __ldg(offsets + w) + static_cast<std::uint32_t>(__popc(__ldg(&rows[w].roots) & ~(kFull << k))) + 1;
}

// The labels of a volume labelled over the run forest (bits_local_kernel, bits_merge_kernel).
// After the merge a run's entry holds its brick-local root, and a brick-local root's entry itself
// or the start of the merge's chain to its root. flatten_runs_kernel points each brick-local root
// that the merge linked (a thread per row word: the upper half of its marks word, less its roots)
// straight at its root, so that a run's root is then two loads away: its entry, that entry's
// entry. A store of a root over a chain's entry leaves every concurrent walk through it on its way
// to the same root.
__global__ void __launch_bounds__(kThreads)
    flatten_runs_kernel(std::uint32_t* R, const RowWord* rows, const RowMarks* marks, std::uint32_t words) {
  grid_dependency_wait();  // launched by launch_dependent
  for (std::uint32_t w = blockIdx.x * kThreads + threadIdx.x; w < words; w += gridDim.x * kThreads) {
    for (unsigned linked = marks[w].spans >> kWordRuns & ~rows[w].roots; linked; linked &= linked - 1) {
      const std::uint32_t node = run_node(w, __ffs(linked) - 1);
      std::uint32_t root = __ldcg(R + node);
      for (std::uint32_t p = __ldcg(R + root); p != root; p = __ldcg(R + root)) root = p;
      __stcg(R + node, root);
    }
  }
}

// Then a warp per row of the volume, 32 columns (a word) at a time, kRunLabelWords words in flight:
// each foreground voxel takes its run from the word by bit arithmetic, the run's entry (its
// brick-local root), that entry's entry (the root) and the root's number; the lanes of a run load
// the same words, and the warp stores 32 consecutive labels, so the labels go out in raster order
// whatever the rows' alignment (a warp per brick, with the runs' numbers in shared memory, wrote
// rows of 32 labels scattered over 64 rows: slower on every volume measured,
// bench/results/label.md).
__global__ void __launch_bounds__(kThreads)
    bits_labels_kernel(const std::uint32_t* R, const RowWord* rows, const std::uint32_t* offsets, std::uint32_t* labels,
                       VolGeo g) {
  grid_dependency_wait();  // launched by launch_dependent
  constexpr int kItems = VolumeTuning::kRunLabelWords;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const std::uint32_t volume_rows = g.ny * g.nz;
  const std::uint32_t warps = gridDim.x * (kThreads / 32);
  for (std::uint32_t row = (blockIdx.x * kThreads + threadIdx.x) / 32; row < volume_rows; row += warps) {
    const std::size_t first_word = std::size_t{row} * g.nbx;
    std::uint32_t* const out = labels + std::size_t{row} * g.nx;
    for (std::uint32_t bx0 = 0; bx0 < g.nbx; bx0 += kItems) {
      unsigned m[kItems];
      std::uint32_t v[kItems];
#pragma unroll
      for (int q = 0; q < kItems; ++q) m[q] = bx0 + q < g.nbx ? __ldg(&rows[first_word + bx0 + q].fg) : 0u;
#pragma unroll
      for (int q = 0; q < kItems; ++q)
        v[q] = m[q] >> lane & 1u ? __ldg(R + run_node(first_word + bx0 + q, run_index(m[q], lane))) : kNone;
#pragma unroll
      for (int q = 0; q < kItems; ++q)
        if (v[q] != kNone) v[q] = __ldg(R + v[q]);
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        const std::uint32_t x = (bx0 + q) * kBX + static_cast<std::uint32_t>(lane);
        if (x < g.nx) out[x] = v[q] == kNone ? 0u : run_root_number(v[q], rows, offsets);
      }
    }
  }
}

}  // namespace
}  // namespace winnow::detail::cuda
