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
  return number_in_word(__ldg(offsets + w) + 1, __ldg(&rows[w].roots), static_cast<int>(x % kBX));
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
  return number_in_word(__ldg(offsets + w) + 1, __ldg(&rows[w].roots), static_cast<int>(k));
}

// A run-forest entry that holds its root's label number instead of a node: the high bit.
constexpr std::uint32_t kNumbered = 0x80000000u;

// Whether the label pass reads numbered roots (few labels) or the flattened run forest (many), from
// the count the numbering left on the device (VolumeTuning::kNumberedRootsWords). Numbered roots
// also need every node below kNumbered, so that the high bit tells a number from a node (a number
// is at most the count, smaller still); a larger forest (a narrow volume of more than 2^31
// voxels) is flattened.
__device__ __forceinline__ bool labels_by_numbered_roots(std::uint32_t labels, std::uint32_t words) {
  return std::uint64_t{words} * kWordRuns <= kNumbered &&
         std::uint64_t{labels} * VolumeTuning::kNumberedRootsWords < words;
}

// The labels of a volume labelled over the run forest (bits_local_kernel, bits_merge_kernel).
// After the merge a run's entry holds its brick-local root, and a brick-local root's entry itself
// (a root) or the start of the merge's chain to its root. resolve_local_roots_kernel (a thread per
// row word) readies the brick-local roots for the label pass, one of two ways:
//   numbered roots  every brick-local root's entry (its word's roots, and the upper half of its
//                   marks word: the brick-local roots that the merge linked) takes its root's
//                   label number, tagged kNumbered, so a run's label is one or two loads away: its
//                   entry when the run is a brick-local root, else that entry's entry. A walk up a
//                   merge chain stops at the first numbered entry it meets (every entry on the
//                   chain is of one component), so the concurrent stores of numbers over the
//                   chains' entries only shorten the walks.
//   flattened       each brick-local root that the merge linked is pointed straight at its root,
//                   so a run's root is two loads away, and the label pass computes its number
//                   (run_root_number: the root word's offset and a popcount). A store of a root
//                   over a chain's entry leaves every concurrent walk through it on its way to the
//                   same root.
// Numbered roots take a number for every brick-local root, flattening a pointer for the linked
// ones only: the numbers pay where the labels are few and every run of the label pass saves its
// number's two gathers (label phase, call 47: MRI 26-connected 0.392 -> 0.364 ms, 512^3 d0.9
// 0.336 -> 0.317), and cost where they are many (512^3 d0.1 6-connected 0.433 -> 0.676 ms).
// Each entry is stored only by its word's thread.
template <bool kNumberedRoots>
__device__ __forceinline__ void resolve_local_roots(std::uint32_t* R, const RowWord* rows, const RowMarks* marks,
                                                    const std::uint32_t* offsets, std::uint32_t words) {
  for (std::uint32_t w = blockIdx.x * kThreads + threadIdx.x; w < words; w += gridDim.x * kThreads) {
    const unsigned roots = rows[w].roots, linked = marks[w].spans >> kWordRuns & ~roots;
    if constexpr (!kNumberedRoots) {
      for (unsigned rest = linked; rest; rest &= rest - 1) {
        const std::uint32_t node = run_node(w, __ffs(rest) - 1);
        std::uint32_t root = __ldcg(R + node);
        for (std::uint32_t p = __ldcg(R + root); p != root; p = __ldcg(R + root)) root = p;
        __stcg(R + node, root);
      }
    } else {
      for (unsigned local = roots | linked; local; local &= local - 1) {
        const int k = __ffs(local) - 1;
        const std::uint32_t node = run_node(w, k);
        std::uint32_t number;
        if (roots >> k & 1u) {
          number = run_root_number(node, rows, offsets);
        } else {
          std::uint32_t p = __ldcg(R + node);  // a node: only this thread stores this entry
          for (;;) {
            const std::uint32_t q = __ldcg(R + p);
            if (q & kNumbered) {
              number = q & ~kNumbered;
              break;
            }
            if (q == p) {
              number = run_root_number(p, rows, offsets);
              break;
            }
            p = q;
          }
        }
        __stcg(R + node, number | kNumbered);
      }
    }
  }
}
// Each way is its own straight code (one body with the choice inside its loops ran both ways
// slower, call 48).
__global__ void __launch_bounds__(kThreads)
    resolve_local_roots_kernel(std::uint32_t* R, const RowWord* rows, const RowMarks* marks,
                               const std::uint32_t* offsets, std::uint32_t words, const std::uint32_t* d_count) {
  grid_dependency_wait();  // launched by launch_dependent
  if (labels_by_numbered_roots(*d_count, words)) resolve_local_roots<true>(R, rows, marks, offsets, words);
  else resolve_local_roots<false>(R, rows, marks, offsets, words);
}

// Then a warp per row of the volume, 32 columns (a word) at a time, kRunLabelWords words in flight:
// each foreground voxel takes its run from the word by bit arithmetic, the run's entry and, unless
// that is already a number, that entry's entry (with numbered roots its brick-local root's number,
// else its root, whose number it then computes); the lanes of a run load the same words, and the
// warp stores 32 consecutive labels, so the labels go out in raster order whatever the rows'
// alignment (a warp per brick, with the runs' numbers in shared memory, wrote rows of 32 labels
// scattered over 64 rows: slower on every volume measured, bench/results/label.md).
template <bool kNumberedRoots>
__device__ __forceinline__ void run_labels(const std::uint32_t* R, const RowWord* rows, const std::uint32_t* offsets,
                                           std::uint32_t* labels, const VolGeo& g) {
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
      // Background: kNumbered (label 0) with numbered roots, else kNone.
      constexpr std::uint32_t kBackground = kNumberedRoots ? kNumbered : kNone;
#pragma unroll
      for (int q = 0; q < kItems; ++q)
        v[q] = m[q] >> lane & 1u ? __ldg(R + run_node(first_word + bx0 + q, run_index(m[q], lane))) : kBackground;
#pragma unroll
      for (int q = 0; q < kItems; ++q)
        if (kNumberedRoots ? !(v[q] & kNumbered) : v[q] != kNone) v[q] = __ldg(R + v[q]);
#pragma unroll
      for (int q = 0; q < kItems; ++q) {
        const std::uint32_t x = (bx0 + q) * kBX + static_cast<std::uint32_t>(lane);
        if (x < g.nx) {
          if constexpr (kNumberedRoots) out[x] = v[q] & ~kNumbered;
          else out[x] = v[q] == kNone ? 0u : run_root_number(v[q], rows, offsets);
        }
      }
    }
  }
}
__global__ void __launch_bounds__(kThreads)
    bits_labels_kernel(const std::uint32_t* R, const RowWord* rows, const std::uint32_t* offsets, std::uint32_t* labels,
                       VolGeo g, const std::uint32_t* d_count, std::uint32_t words) {
  grid_dependency_wait();  // launched by launch_dependent
  if (labels_by_numbered_roots(*d_count, words)) run_labels<true>(R, rows, offsets, labels, g);
  else run_labels<false>(R, rows, offsets, labels, g);
}

}  // namespace
}  // namespace winnow::detail::cuda
