#pragma once
// The plan of a volume labeling on CUDA (label_volume.cu): its tuning, its bricks, a volume's
// geometry and keys, the row words the passes share, and the layout of a call's temporary storage.
// The passes have a header each (volume_local, volume_merge, volume_numbering, volume_statistics);
// label_volume.cu launches them.
//
// Bricks. A warp reads 32 voxels of one row (kBX), and a row's 32 columns [32 bx, 32 bx + 32)
// have one word in each per-row array (RowWord, RowMarks, the numbering's offsets): bit x % 32
// is voxel x. Volumes take bricks of 32 x 8 x 8 voxels (VolumeBrick); a volume of one layer (an
// image: multi-label, or of 16- to 64-bit values) takes bricks of 32 x 32 x 1 (LayerBrick), in
// tiles of 4 x 2 bricks (LayerTile) for its local pass and merge -- with 32 x 8 x 8 bricks, 7 of
// every 8 warps would find no layer to work on. Layer bricks and tiles serve single-layer volumes
// only: they have no slice before them, so no z faces.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/cuda/dependent_launch.cuh"
#include "label/cuda/union_find.cuh"
#include "winnow/cuda/label.hpp"

namespace winnow::detail::cuda {

constexpr int kBX = 32;  // a brick's columns: a warp's lanes, a row word's bits
template <int Y, int Z, int X = kBX>
struct BrickShape {
  static constexpr int kX = X, kY = Y, kZ = Z, kRows = Y * Z, kVoxels = X * Y * Z;
  static constexpr bool kLayer = Z == 1;
  static constexpr bool kTile = X != kBX;  // a LayerTile
};

/// Every tuning constant of the volume labeling (the choices and their measurements:
/// bench/results/label.md).
struct VolumeTuning {
  /// A volume's bricks: a thread block each in local_kernel, a warp each in the bit-row passes and
  /// the statistics.
  using VolumeBrick = BrickShape<8, 8>;
  /// A layer's bricks: a warp each in layer_local_kernel and the statistics (a warp's table per
  /// brick).
  using LayerBrick = BrickShape<32, 1>;
  /// The local pass and the merge of a volume of one layer take tiles of 4 x 2 layer bricks, a
  /// thread block each: the block's warps label their bricks alone, then unite across the bricks'
  /// shared borders in shared memory, so only the tile's faces go to the merge in global memory
  /// (a 32 x 32 brick has 96 face pixels in 1024 under 8-connectivity; a 128 x 64 tile 256 in
  /// 8192, a third of the share).
  using LayerTile = BrickShape<64, 1, 128>;
  /// Threads a block of every kernel but the statistics.
  static constexpr int kThreads = 256;
  /// labels_kernel: voxels a thread takes at a time, a grid stride apart.
  static constexpr int kLabelItems = 4;
  /// bits_labels_kernel: row words a warp takes at a time (8 against 4: 0.46 -> 0.45 ms at 512^3
  /// density 0.5, 0.36 -> 0.35 at 0.9; 16: slower on 256^3 and the MRI).
  static constexpr int kRunLabelWords = 8;
  /// resolve_local_roots_kernel and bits_labels_kernel: row words a label below which the label
  /// pass reads numbered roots, not the flattened run forest (volume_numbering.cuh). H200, call 47,
  /// label phase ms, flattened -> numbered, by labels a row word: 0.001 or fewer (the MRI, densities
  /// 0.5 and 0.9 but d0.5 6-connected) 6-18 % faster, e.g. MRI 26 0.392 -> 0.364, 256^3 d0.9 26
  /// 0.050 -> 0.041; 0.29 (d0.5, 6) 256^3 0.060 -> 0.053 but 512^3 0.446 -> 0.509; 0.41 (d0.1, 26)
  /// 0.064 -> 0.060 and 0.599 -> 0.650; 2.25 (d0.1, 6) 0.053 -> 0.067 and 0.433 -> 0.676. 16 (0.06
  /// labels a word) keeps every measured loss out.
  static constexpr int kNumberedRootsWords = 16;
  /// bits_merge_kernel: slots of a warp's table of the pairs it united last.
  static constexpr int kRecentPairs = 64;
  /// brick_stats_kernel: warps a block (a table each), slots of a table, slots a run probes before
  /// it goes out alone, labels of runs loaded ahead.
  static constexpr int kStatsWarps = 4, kStatsSlots = 256, kStatsProbes = 8, kStatsLabelsAhead = 4;
  /// brick_stats_kernel: labels a brick, on average, above which it takes the bricks in passes.
  /// One pass against passes, same run, 512^3: density 0.1, 6-connectivity, 144 a brick, 1.53 ->
  /// 0.83 ms; 26-connectivity, 26 a brick, 0.55 -> 0.62; density 0.5, 18 a brick, 0.48 -> 0.54.
  /// 64 lies between; the counts between 26 and 144 were not measured.
  static constexpr int kStatsPassesLabels = 64;
  /// bits_merge_kernel, 26-connectivity: voxels of a brick's first column (of 64) below which its
  /// x boundary goes over voxel rows, not block rows. H200, run AE (merge phase, ms): 16 against
  /// block rows always: MNI 0.26 -> 0.19, 512^3 d0.1 0.41 -> 0.35, 256^3 d0.1 0.077 -> 0.069,
  /// d0.5 unchanged, d0.9 0.59 -> 0.60; 48 (denser bricks by rows) 512^3 d0.5 0.54 -> 0.67.
  static constexpr int kBlockXBoundaryVoxels = 16;
};

using VolumeBrick = VolumeTuning::VolumeBrick;
using LayerBrick = VolumeTuning::LayerBrick;
using LayerTile = VolumeTuning::LayerTile;
constexpr int kThreads = VolumeTuning::kThreads;
static_assert(LayerTile::kX / kBX * (LayerTile::kY / LayerBrick::kY) == kThreads / 32, "a warp per brick of the tile");
// (The shapes and the tuning stand outside the unnamed namespace: nvcc warns there of members that
// a shape leaves unused.)

namespace {

using winnow::cuda::RawVolumeComponentStats;

// ---- geometry, keys and row words ---------------------------------------------------------------

// A voxel's key is its linear index (z * ny + y) * nx + x, 32 bits, so one call takes volumes of
// fewer than 2^32 voxels (kNone, 0xFFFFFFFF, marks background; sides below 2^31).
struct VolGeo {
  std::uint32_t nx, ny, nz;
  std::uint32_t sxy;                // nx * ny
  std::uint32_t n;                  // nx * ny * nz < 2^32
  std::uint32_t nbx, nby, nbricks;  // bricks (VolumeBrick, or LayerBrick for one layer); nbx: also row words
  std::uint32_t ntx, ntiles;        // LayerTiles of one layer: in x, in all
};

__device__ __forceinline__ std::uint32_t key_of(std::uint32_t x, std::uint32_t y, std::uint32_t z, const VolGeo& g) {
  return z * g.sxy + y * g.nx + x;  // < n for a voxel of the volume
}

// The index of the word (row words, roots, marks) of columns [32 bx, 32 bx + 32) of row (y, z).
__device__ __forceinline__ std::size_t word_index(std::uint32_t bx, std::uint32_t y, std::uint32_t z, const VolGeo& g) {
  return (std::size_t{z} * g.ny + y) * g.nbx + bx;
}

// The words of a row's 32 columns [32 bx, 32 bx + 32): its foreground (a binary volume's, the
// bit-word passes') and its roots (bit x % 32: the voxel is a brick-local root after the local
// pass, a root after the merge). One 8-byte store writes both.
struct alignas(8) RowWord {
  std::uint32_t fg, roots;
};

// The label number of the root at bit b of a word whose root bits are `roots` and whose first root
// is numbered `first` (the roots before the word, from the numbering's scan, plus 1): first plus
// the roots before it in the word -- raster order (volume_numbering.cuh). Bits are columns, or runs
// in the run forest.
__device__ __forceinline__ std::uint32_t number_in_word(std::uint32_t first, unsigned roots, int b) {
  return first + static_cast<std::uint32_t>(__popc(roots & ~(kFull << b)));
}

// The run forest of the bit-row passes (a binary volume of several layers): its nodes are the
// x-runs of the row words, not the voxels -- run k of word w (counted from 0 within the word, at
// most 16 in 32 columns) is node w * kWordRuns + k. Nodes order like their runs' first voxels in
// raster order (words in raster order, runs in a word from left to right), so the smallest node
// of a set is still its raster-first voxel's run, and a root's number comes from its word's offset
// and the root bits of the runs before it. The words' roots and marks bits are then run numbers
// (bit k: run k), not columns. A volume of narrow rows (fewer than 16 columns a word, where the
// run nodes outnumber the voxels) takes the voxel forest instead (VolumePlan::bits).
constexpr int kWordRuns = kBX / 2;
__device__ __forceinline__ std::uint32_t run_node(std::size_t word, int k) {
  return static_cast<std::uint32_t>(word * kWordRuns + static_cast<std::size_t>(k));
}

// The merge's marks of a row's 32 columns, laid out as the root words: the roots it (or a layer
// tile's local pass, across the tile's bricks) linked others under -- so a root without that mark
// holds a component that one brick holds whole: the statistics write its record with plain
// stores. In the run forest the marks are bits 0..15 (runs), and bits 16..31 keep the word's
// brick-local roots as the local pass found them.
struct RowMarks {
  std::uint32_t spans;
};

// The forest: every voxel's parent key, union-find (union_find.cuh) over keys that index their
// entries -- the same code on the volume's keys in global memory and on a brick's or tile's local
// keys in shared memory, where most local passes address it by shared offsets (SharedForest).
using VoxelForest = ConcurrentForest<std::uint32_t>;

// ---- bricks -------------------------------------------------------------------------------------

template <class B>
__device__ __forceinline__ void brick_origin(std::uint32_t brick, const VolGeo& g, std::uint32_t& x0, std::uint32_t& y0,
                                             std::uint32_t& z0) {
  if constexpr (B::kTile) {
    x0 = brick % g.ntx * B::kX;
    y0 = brick / g.ntx * B::kY;
    z0 = 0;
  } else {
    const std::uint32_t bx = brick % g.nbx, rest = brick / g.nbx;
    x0 = bx * kBX;
    y0 = (rest % g.nby) * B::kY;
    z0 = (rest / g.nby) * B::kZ;
  }
}
template <class B>
__host__ __device__ __forceinline__ std::uint32_t brick_count(const VolGeo& g) {
  return B::kTile ? g.ntiles : g.nbricks;
}
// The grid-stride loop of the kernels that give each warp a brick alone (ThreadsPerBlock threads a
// block): body(x0, y0, z0) for each of this warp's bricks, with the brick's first voxel.
template <class B, int ThreadsPerBlock, class Body>
__device__ __forceinline__ void for_each_brick_of_warp(const VolGeo& g, Body body) {
  static_assert(ThreadsPerBlock % 32 == 0, "blocks of whole warps");
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * (ThreadsPerBlock / 32);
  for (std::uint64_t w = (blockIdx.x * static_cast<std::uint64_t>(ThreadsPerBlock) + threadIdx.x) / 32; w < g.nbricks;
       w += warps) {
    const auto brick = static_cast<std::uint32_t>(w);
    std::uint32_t x0, y0, z0;
    brick_origin<B>(brick, g, x0, y0, z0);
    body(x0, y0, z0);
  }
}
// A brick-local index (lz * kY + ly) * kBX + lx and its coordinates.
template <class B>
__device__ __forceinline__ int local_y(int li) {
  return (li / kBX) % B::kY;
}
template <class B>
__device__ __forceinline__ int local_z(int li) {
  return li / (kBX * B::kY);
}

// ---- the temporary storage ----------------------------------------------------------------------

std::size_t align256(std::size_t v) { return (v + 255) & ~std::size_t{255}; }

// One call's plan (make_volume_plan, label_volume.cu): the geometry, which kernels run, and the
// temporary storage's arrays as offsets of 256-byte aligned parts.
struct VolumePlan {
  VolGeo g{};
  int conn = 26;
  bool multilabel = false;
  bool layer = false;  // one layer: LayerTile (local pass, merge) and LayerBrick (statistics), else VolumeBrick
  bool bits = false;   // a binary volume of several layers, rows of 16 columns a word or more: the
                       // bit-row passes over the run forest
  std::uint64_t n = 0;
  std::uint32_t nwords = 0;  // words of 32 columns of a row: nbx * ny * nz < n
  std::size_t scan_bytes = 0;
  std::size_t off_P = 0, off_rows = 0, off_marks = 0, off_offsets = 0, off_scan = 0, total = 0;
};

// The temporary storage's arrays (VolumePlan's offsets).
struct VolumeTemp {
  std::uint32_t* P;        // the forest: a parent per voxel, or per run (the bit-row passes)
  RowWord* rows;           // a row's foreground and roots per 32 columns
  RowMarks* marks;         // the roots the merge linked others under, laid out as rows
  std::uint32_t* offsets;  // per row word: the roots before it
  void* scan;
};
VolumeTemp volume_temp(const VolumePlan& p, void* d_temp) {
  auto* base = static_cast<char*>(d_temp);
  auto at = [&](std::size_t off) { return reinterpret_cast<std::uint32_t*>(base + off); };
  return {at(p.off_P), reinterpret_cast<RowWord*>(base + p.off_rows), reinterpret_cast<RowMarks*>(base + p.off_marks),
          at(p.off_offsets), base + p.off_scan};
}

}  // namespace
}  // namespace winnow::detail::cuda
