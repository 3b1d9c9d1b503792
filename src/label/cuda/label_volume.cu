// CUDA connected-component labeling of volumes (6-, 18- or 26-connectivity, binary or
// multi-label): union-find on the device over voxel keys that order like raster indices, bricks
// labelled in shared memory and merged across their faces, numbering by a scan over the roots,
// statistics by aggregated atomics.
//
// Keys. A voxel's key is its linear index (z * ny + y) * nx + x, 32 bits, so one call takes
// volumes of fewer than 2^32 voxels (0xFFFFFFFF marks background; sides below 2^31). Unions link the larger root
// under the smaller (atomicMin), so every component's root is its raster-first voxel -- the
// voxel that decides its number in scipy.ndimage.label's and cc3d's numbering.
//
// Binary volumes of more than one layer take passes 1 and 2 over rows held as bit words (one
// 32-bit word per brick row; bits_local_kernel, bits_merge_kernel, described where they stand;
// the statistics read their runs from the same words): a warp labels a brick alone with runs, not voxels, as union-find
// nodes, and the forest they leave is the one the passes below expect (every foreground voxel's
// parent is its brick-local root). Multi-label volumes and single layers take the passes below.
//
// Passes (one kernel each, stream order between them):
//   1. local: one thread block per brick of 32 x 8 x 8 voxels (the tile idea of the 2D tile_merge
//      in 3D) loads the brick's values into shared memory. A warp holds one brick row, and a
//      ballot of "joins my left neighbour" splits it into x-runs: every voxel's parent starts as
//      its run's first voxel (no atomic). Each run then unites (shared-memory union-find:
//      atomicMin links, path halving by atomicMin) with the first voxel of each stretch of
//      joining voxels in its backward rows' windows -- one union per run and stretch instead of
//      one per voxel and offset (a dense 26-connected row of 32 voxels: a handful instead of 160,
//      and far fewer colliding atomics on the brick's root). Each foreground voxel's brick-local
//      root is written as a global key, and the brick's rows' words of brick-local roots (bit x % 32
//      of word (z, y, x / 32), the raster order of the rows' 32-column segments).
//      A volume of one layer (an image) takes tiles of 128 x 64 pixels instead, a thread block
//      each (layer_local_kernel): a warp labels each 32 x 32 brick of the tile alone, walking
//      down its rows with the row above in registers (neighbours by shuffles, no shared values),
//      the same runs and stretches; then the bricks' shared borders are united in shared memory,
//      so the merge sees only the tile's faces.
//   2. merge: the voxels on brick faces unite with their backward neighbours in other bricks,
//      union-find on global memory (atomicMin links, path halving by atomicMin). Threads map to
//      face slots only (z0, y0, yl, x0, x31; a crossing pair belongs to exactly one), a warp per
//      32 slots of one face group, so warps are full, and a pair is replaced by its voxels'
//      parents and de-duplicated per lane and per warp (__match_any_sync) before any find: across a face of a dense component the pairs are
//      nearly all (brick root, brick root) of the same two bricks, and one union suffices.
//      Backward neighbours: those before the voxel in raster order (3, 9, 13 of them for 6, 18,
//      26); every adjacent pair is seen once, from its later voxel, by pass 1 when both lie in one
//      brick and by pass 2 otherwise. 26-connectivity drops redundant pairs: when the voxel's
//      left neighbour joins it, every backward neighbour with dx <= 0 is also a neighbour of that
//      left voxel, so the pair is implied (by induction over raster order) and only the left pair
//      and the four dx = +1 pairs are united -- 5 instead of 13 in dense volumes. Every link
//      takes the root it linked out of the root words (an atomic and of its bit: the brick-local
//      roots left there are the roots), and marks the root it went under, a bit per voxel in
//      words laid out as the root words (RowMarks): its component spans bricks.
//      No pass points every linked root at its root: the label pass walks the merge's chains
//      itself (only brick-local roots are on them). Such a pass, a thread per word of marks,
//      cost more than the walks it saved in every benchmark case (up to 0.3 ms at 512^3;
//      bench/results/label.md).
//   3. numbering: an exclusive scan (CUB) of the root words' bit counts, in raster order of the
//      words, gives each word the number of roots before it, and N. A root's number is then its
//      word's offset plus the roots before it in the word, plus 1 -- raster order, without a pass
//      over the forest (the forest is 4 bytes a voxel, the words 1 bit).
//   4. final: every foreground voxel finds its root (read-only: its brick-local root, then the
//      merge's chain) and takes the root's number from the words, background 0; with statistics,
//      then a warp per brick adds up the brick's runs per label in shared memory and flushes each
//      label once per brick, with a per-warp carry of its dominant label across bricks
//      (brick_stats_kernel, described where it stands), into records whose starting values a
//      coalesced fill writes before; a component that one brick holds whole (its root unmarked)
//      is written by plain stores.
//
// Cost model of the voxel passes (512^3, dense, 26-connected, one component; before these changes
// 68 ms on an H200):
// the per-voxel unions of pass 1 (5 per voxel, all onto one root per brick) and, above all, the
// merge's ~0.4 face voxels per voxel with up to 5 global unions each (two dependent find walks
// through chains of brick roots, atomics colliding on the few roots) and the final pass's find
// per voxel through the same chains. Now pass 1 does a few shared unions per run, pass 2 a few
// global unions per warp and face, and the remaining passes read the forest once (with the short
// chains of brick roots the merge left) and write the labels.
// The bit-word passes take the same volume in 5.0 ms (labels; 20.7 with the voxel passes), most of
// it in their shared- and global-memory unions (bench/results/label.md). The benchmark's
// --breakdown prints each phase's time (set_volume_phase_events).
//
// Races: every load of a parent another thread may store concurrently is a volatile load, and
// every such store an atomicMin that writes an ancestor (a smaller key) over a descendant: it
// never undoes a concurrent link, and a link that loses a race retries from the value it found
// (unite). Passes 3 and 4 only read the forest.
//
// References: K. Wu, E. Otoo, K. Suzuki, "Optimizing two-pass connected-component labeling
// algorithms", Pattern Anal. Appl. 2009 (union-find with the smaller root as parent);
// D. P. Playne, K. Hawick, "A new algorithm for parallel connected-component labelling on GPUs",
// IEEE TPDS 2018 (atomicMin union-find on the GPU); S. Allegretti, F. Bolelli, C. Grana,
// "Optimized block-based algorithms to label connected components on GPUs", IEEE TPDS 2019.
//
// Complexity: O(nx * ny * nz) work (union-find trees stay shallow in practice: near-linear);
// memory: 4 bytes per voxel of temporary storage (the forest), and four words of 4 bytes per 32
// columns of each row (foreground, roots, marks, numbering offsets: 1 bit per voxel each, up to 4
// bytes per voxel for volumes 1 voxel wide).
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "common/cuda/arch.cuh"
#include "common/cuda/check.cuh"
#include "common/cuda/runtime.hpp"
#include "common/cuda/staging.cuh"
#include "label/backends.hpp"
#include "label/cuda/union_find.cuh"
#include "winnow/cuda/label.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cuda {

/// Benchmark hook, not for concurrent use: with `events` (6 CUDA events, or null to stop), every
/// labeling records events[0..5] in its stream at its phase boundaries -- 0 start, 1 after the
/// local pass, 2 merge, 3 roots counted and scanned, 4 labels written, 5 statistics
/// (none without them) -- so a benchmark can time each phase (bench/label_volume_gpu_bench.cu
/// --breakdown). Declared here and by that benchmark only.
void set_volume_phase_events(cudaEvent_t* events);

// Bricks of the local pass: a warp reads 32 voxels of one row (kBX). Volumes take bricks of
// 32 x 8 x 8 voxels, a thread block each; a volume of one layer (an image: multi-label, or of 16-
// to 64-bit values) takes bricks of 32 x 32 x 1, a warp each, in tiles of 4 x 2 bricks
// (layer_local_kernel) -- with 32 x 8 x 8 bricks, 7 of every 8 warps would find no layer to work
// on. Layer bricks and tiles serve single-layer volumes only: they have no slice before them, so
// no z faces.
constexpr int kBX = 32;
template <int Y, int Z, int X = kBX>
struct BrickShape {
  static constexpr int kX = X, kY = Y, kZ = Z, kRows = Y * Z, kVoxels = X * Y * Z;
  static constexpr bool kLayer = Z == 1;
  static constexpr bool kTile = X != kBX;  // a LayerTile
};
using VolumeBrick = BrickShape<8, 8>;
using LayerBrick = BrickShape<32, 1>;
constexpr int kThreads = 256;
// The local pass and the merge of a volume of one layer take tiles of 4 x 2 layer bricks, a
// thread block each: the block's warps label their bricks alone, then unite across the bricks'
// shared borders in shared memory, so only the tile's faces go to the merge in global memory
// (a 32 x 32 brick has 96 face pixels in 1024 under 8-connectivity; a 128 x 64 tile 256 in
// 8192, a third of the share). The statistics keep the layer bricks (a warp's table per brick).
using LayerTile = BrickShape<64, 1, 128>;
static_assert(LayerTile::kX / kBX * (LayerTile::kY / LayerBrick::kY) == kThreads / 32, "a warp per brick of the tile");
// (The shapes above stand outside the unnamed namespace: nvcc warns there of members that a shape
// leaves unused.)

namespace {

using winnow::cuda::RawVolumeComponentStats;

struct VolGeo {
  std::uint32_t nx, ny, nz;
  std::uint32_t sxy;  // nx * ny
  std::uint32_t n;    // nx * ny * nz < 2^32
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

// The k-th backward neighbour (k < 13): the nine of the slice before, the three of the row
// before, the voxel to the left. Its number of moving axes decides the connectivity it needs.
struct Offset {
  int dx, dy, dz;
};
__host__ __device__ constexpr Offset backward_offset(int k) {
  return k < 9 ? Offset{k % 3 - 1, k / 3 - 1, -1} : k < 12 ? Offset{k - 10, -1, 0} : Offset{-1, 0, 0};
}
__host__ __device__ constexpr bool in_connectivity(Offset d, int conn) {
  const int axes = (d.dx != 0) + (d.dy != 0) + (d.dz != 0);
  return axes <= (conn == 6 ? 1 : conn == 18 ? 2 : 3);
}

// Whether a foreground voxel of value a joins a neighbour of value b.
template <class T>
__device__ __forceinline__ bool joins(T a, T b, bool multilabel) {
  return multilabel ? a == b : b != T{};
}

// The union-find (union_find.cuh) over keys that index their entries, the same code on shared
// memory (a brick's or a tile's local keys) and on global memory (the volume's keys).
using VoxelForest = ConcurrentForest<std::uint32_t>;

// Whether the backward pair (voxel, voxel + d) is implied by 26-connectivity's left-neighbour rule.
__device__ __forceinline__ bool implied_by_left(Offset d, int conn, bool left_joins) {
  return conn == 26 && left_joins && d.dx <= 0 && !(d.dx == -1 && d.dy == 0 && d.dz == 0);
}

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
__device__ __forceinline__ int local_y(int li) { return (li / kBX) % B::kY; }
template <class B>
__device__ __forceinline__ int local_z(int li) { return li / (kBX * B::kY); }

// ---- pass 1: bricks in shared memory ------------------------------------------------------------

// A backward row of the row (y, z): the row (y + dy, z + dz) and how far a run's window reaches
// past its ends there (1 when the diagonal dx = +-1 neighbours count for Conn, else 0).
struct BackRow {
  int dy, dz, ext;
};
// The four candidate rows, in the order of backward_offset: (y-1, z-1), (y, z-1), (y+1, z-1), (y-1, z).
__host__ __device__ constexpr BackRow back_row(int r, int conn) {
  return r == 0 ? BackRow{-1, -1, conn == 26 ? 1 : 0}
       : r == 1 ? BackRow{0, -1, conn == 6 ? 0 : 1}
       : r == 2 ? BackRow{1, -1, conn == 26 ? 1 : 0}
                : BackRow{-1, 0, conn == 6 ? 0 : 1};
}
// Whether the row reaches the voxel at all: (dy, dz) both moving needs 18 or 26.
__host__ __device__ constexpr bool back_row_used(int r, int conn) { return conn != 6 || r == 1 || r == 3; }

// The lanes (brick columns) of a warp's row whose voxel joins its left neighbour, as a ballot.
template <class T>
__device__ __forceinline__ unsigned joins_left_ballot(const T* values, int li, bool multilabel) {
  const T v = values[li];
  const int lx = li % kBX;
  return __ballot_sync(kFull, v != T{} && lx > 0 && joins(v, values[li - 1], multilabel));
}

// The first column of lane lx's run: the nearest column at or before lx that does not join its
// left neighbour (bit 0 of `left` is always clear).
__device__ __forceinline__ int run_first_column(unsigned left, int lx) { return 31 - __clz(~left & (kFull >> (31 - lx))); }

// Rows of x-runs. A warp holds one brick row (kBX = 32 lanes), so a ballot of "joins my left
// neighbour" gives every lane its run's first and last column with bit arithmetic, and a run is
// united internally without any atomic: every voxel's parent starts as its run's first voxel.
// A run R = [s, e] of value v then needs one union per backward row r' -- not one per voxel and
// offset -- for each maximal stretch of consecutive voxels of r' that join v inside its window
// W = [s - ext, e + ext]: the voxels of one stretch are 6-adjacent and all join v, so they are
// one set already, and every neighbour of R in r' lies in W. The first voxel t of each stretch
// (t = lo or t - 1 does not join v) is united by the thread of column clamp(t, s, e).
template <class T, int Conn, class B>
__global__ void __launch_bounds__(kThreads)
    local_kernel(const T* vol, std::uint32_t* P, RowWord* rows, VolGeo g, bool multilabel) {
  constexpr int kBrick = B::kVoxels;
  __shared__ T values[kBrick];
  __shared__ std::uint32_t parent[kBrick];  // brick-local keys (lz * kY + ly) * kBX + lx
  const VoxelForest forest{parent};
  for (std::uint32_t brick = blockIdx.x; brick < g.nbricks; brick += gridDim.x) {
    std::uint32_t x0, y0, z0;
    brick_origin<B>(brick, g, x0, y0, z0);
    for (int li = threadIdx.x; li < kBrick; li += kThreads) {
      const std::uint32_t x = x0 + (li % kBX), y = y0 + local_y<B>(li), z = z0 + local_z<B>(li);
      values[li] = (x < g.nx && y < g.ny && z < g.nz) ? vol[key_of(x, y, z, g)] : T{};
    }
    __syncthreads();
    // Runs: each voxel's parent is its run's first voxel (background: itself, never read).
    for (int li = threadIdx.x; li < kBrick; li += kThreads) {
      const unsigned left = joins_left_ballot(values, li, multilabel);
      const int lx = li % kBX;
      parent[li] = static_cast<std::uint32_t>(li - lx + run_first_column(left, lx));
    }
    __syncthreads();
    // Unions between runs and their backward rows inside the brick (the rest: the merge pass).
    for (int li = threadIdx.x; li < kBrick; li += kThreads) {
      const unsigned left = joins_left_ballot(values, li, multilabel);  // every lane takes part
      const T v = values[li];
      if (v == T{}) continue;
      const int lx = li % kBX, ly = local_y<B>(li), lz = local_z<B>(li);
      const bool run_first = !(left >> lx & 1u);
      const bool run_last = lx == kBX - 1 || !(left >> (lx + 1) & 1u);
      const int s = run_first_column(left, lx);  // not parent[li]: a union may have lowered it
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        if (!back_row_used(r, Conn)) continue;
        const BackRow b = back_row(r, Conn);
        if (B::kLayer && b.dz != 0) continue;  // a single layer has no slice before it
        const int ry = ly + b.dy, rz = lz + b.dz;
        if (ry < 0 || ry >= B::kY || rz < 0) continue;  // the row lies in another brick
        const int row = (rz * B::kY + ry) * kBX;
        const int lo = max(s - b.ext, 0);  // the window's first column inside the brick
        const int t_begin = run_first ? max(lx - b.ext, 0) : lx;
        const int t_end = run_last ? min(lx + b.ext, kBX - 1) : lx;
        for (int t = t_begin; t <= t_end; ++t) {
          if (!joins(v, values[row + t], multilabel)) continue;
          if (t > lo && joins(v, values[row + t - 1], multilabel)) continue;  // not a stretch's first voxel
          unite(forest, static_cast<std::uint32_t>(li), static_cast<std::uint32_t>(row + t));
        }
      }
    }
    __syncthreads();
    // Every link is in place: a read-only walk to the brick-local root. A warp holds one brick
    // row: its ballot of brick-local roots is the row's root word.
    for (int li = threadIdx.x; li < kBrick; li += kThreads) {
      const std::uint32_t x = x0 + (li % kBX), y = y0 + local_y<B>(li), z = z0 + local_z<B>(li);
      std::uint32_t key = kNone, r = static_cast<std::uint32_t>(li);
      if (values[li] != T{}) {
        r = find_root_read_only(forest, r);
        const int lr = static_cast<int>(r);
        key = key_of(x0 + lr % kBX, y0 + local_y<B>(lr), z0 + local_z<B>(lr), g);
      }
      const unsigned root_bits = __ballot_sync(kFull, values[li] != T{} && r == static_cast<std::uint32_t>(li));
      if ((li % kBX) == 0 && y < g.ny && z < g.nz) rows[word_index(x0 / kBX, y, z, g)].roots = root_bits;
      if (x < g.nx && y < g.ny && z < g.nz) P[key_of(x, y, z, g)] = key;
    }
    __syncthreads();  // the shared arrays are refilled for the next brick
  }
}

// The merge's marks of a row's 32 columns, laid out as the root words: the roots it (or a layer
// tile's local pass, across the tile's bricks) linked others under -- so a root without that mark
// holds a component that one brick holds whole: the statistics write its record with plain
// stores.
struct RowMarks {
  std::uint32_t spans;
};

// Pass 1 for a volume of one layer: a thread block labels a LayerTile of 4 x 2 bricks of 32 x 32
// pixels, in three steps with block barriers between them; parents are tile-local keys
// ty * kX + tx (raster order in the tile, so the smaller key is still the raster-first pixel).
//  1. A warp labels its brick alone, row by row. Lane l holds column l; the row above stays in
//     registers (`up`), its diagonal neighbours come by shuffles, and the runs and stretches are
//     local_kernel's: a ballot of "joins my left neighbour" gives each pixel its run's first
//     column s, its parent starts at (row, s), and the run unites with the first pixel of each
//     stretch of joining pixels in its window of the row above -- through the up-left pixel
//     (run's first lane, 8-connectivity), the pixel above (unless the up-left one joins too: the
//     same stretch), the up-right pixel (run's last lane, unless the pixel above joins). These
//     unions touch the warp's own parents only, so __syncwarp orders them.
//  2. The pixels on a brick's first row, first and last column unite with their backward
//     neighbours in the tile's other bricks (shared-memory union-find, all the block's warps at
//     once); pairs that leave the tile are the merge's. A root that such a union linked another
//     under is marked: its component spans bricks, so the statistics (a table per brick) must not
//     write its record by plain stores (as for the merge's marks).
//  3. A run's first lane walks to the tile-local root, and the run's other lanes take it by a
//     shuffle; each pixel's root goes out as a global key, a ballot of the tile-local roots is the
//     row's root word, and the row's marks word starts with step 2's marks (so the marks need no
//     reset before the local pass).
template <class T, int Conn>
__global__ void __launch_bounds__(kThreads)
    layer_local_kernel(const T* vol, std::uint32_t* P, RowWord* rows, RowMarks* marks, VolGeo g, bool multilabel) {
  using B = LayerTile;
  constexpr int kW = B::kX;                        // a tile row's stride in `parent`
  constexpr int kBricksX = B::kX / kBX;            // bricks in a tile row
  constexpr int kBrickY = LayerBrick::kY;          // a brick's rows
  static_assert(kBrickY <= 32, "a lane keeps one row's run ballot");
  __shared__ std::uint32_t parent[B::kVoxels];     // tile-local keys ty * kW + tx
  __shared__ unsigned spans[B::kVoxels / 32];      // bit: a root that a step-2 union linked another under
  const VoxelForest forest{parent};
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x & 31u);
  const int bx = warp % kBricksX * kBX, by = warp / kBricksX * kBrickY;  // the warp's brick in the tile
  for (std::uint32_t tile = blockIdx.x; tile < g.ntiles; tile += gridDim.x) {
    std::uint32_t x0, y0, z0;
    brick_origin<B>(tile, g, x0, y0, z0);
    for (int i = static_cast<int>(threadIdx.x); i < B::kVoxels / 32; i += kThreads) spans[i] = 0;
    const std::uint32_t x = x0 + bx + static_cast<std::uint32_t>(lane), brick_y = y0 + by;
    const int height =
        x0 + bx < g.nx && brick_y < g.ny ? static_cast<int>(min(static_cast<std::uint32_t>(kBrickY), g.ny - brick_y)) : 0;
    auto at = [&](int ly, int lx) { return static_cast<std::uint32_t>((by + ly) * kW + bx + lx); };  // brick -> tile key
    // Step 1.
    auto load = [&](int ly) { return x < g.nx && ly < height ? vol[key_of(x, brick_y + ly, 0, g)] : T{}; };
    T v = load(0), up = T{};
    unsigned row_left = 0;  // lane ly: row ly's ballot of "joins my left neighbour"
    unsigned fg = 0;        // bit ly: this lane's pixel of row ly is foreground
    for (int ly = 0; ly < height; ++ly) {
      const T next = load(ly + 1);  // the next row's load is in flight during this row's unions
      const T left = __shfl_up_sync(kFull, v, 1);
      const unsigned joins_left = __ballot_sync(kFull, v != T{} && lane > 0 && joins(v, left, multilabel));
      if (lane == ly) row_left = joins_left;
      const int s = run_first_column(joins_left, lane);
      parent[at(ly, lane)] = at(ly, s);
      fg |= static_cast<unsigned>(v != T{}) << ly;
      const T up_left = __shfl_up_sync(kFull, up, 1), up_right = __shfl_down_sync(kFull, up, 1);
      __syncwarp();  // the row's parents are in place before any union reads them
      if (ly > 0 && v != T{}) {
        const std::uint32_t run = at(ly, s), above = at(ly - 1, lane);
        const bool first = !(joins_left >> lane & 1u);
        const bool last = lane == kBX - 1 || !(joins_left >> (lane + 1) & 1u);
        const bool j_up = joins(v, up, multilabel), j_left = lane > 0 && joins(v, up_left, multilabel);
        // At most two unions per lane, through one call site (lanes that diverge into separate
        // calls would run them one after the other).
        std::uint32_t targets[2] = {kNone, kNone};
        if (Conn == 26) {
          if (j_left) targets[0] = first ? above - 1 : kNone;
          else if (j_up) targets[0] = above;
          if (last && lane < kBX - 1 && !j_up && joins(v, up_right, multilabel)) targets[1] = above + 1;
        } else if (j_up && (first || !j_left)) {
          targets[0] = above;
        }
#pragma unroll 1
        for (int k = 0; k < (Conn == 26 ? 2 : 1); ++k)
          if (targets[k] != kNone) unite(forest, run, targets[k]);
      }
      __syncwarp();  // this row's unions are done before the next row's parents are written
      up = v;
      v = next;
    }
    __syncthreads();  // every brick's parents are in place
    // Step 2: the brick's border pixels -- its first row, then its first and last columns below
    // it, each pixel once -- with their backward neighbours in the tile's other bricks.
#pragma unroll 1
    for (int side = 0; side < 3; ++side) {
      const int lx = side == 0 ? lane : side == 1 ? 0 : kBX - 1, ly = side == 0 ? 0 : lane;
      const int tx = bx + lx, ty = by + ly;
      const std::uint32_t px = x0 + static_cast<std::uint32_t>(tx), py = y0 + static_cast<std::uint32_t>(ty);
      if (ly >= height || (side > 0 && ly == 0) || px >= g.nx) continue;
      const T pv = vol[key_of(px, py, 0, g)];
      if (pv == T{}) continue;
#pragma unroll
      for (int k = 9; k < 13; ++k) {  // the backward neighbours in the layer
        const Offset d = backward_offset(k);
        if (!in_connectivity(d, Conn)) continue;
        const int nlx = lx + d.dx, nly = ly + d.dy, ntx = tx + d.dx, nty = ty + d.dy;
        const bool in_brick = nlx >= 0 && nlx < kBX && nly >= 0;
        if (in_brick || ntx < 0 || ntx >= kW || nty < 0 || px + d.dx >= g.nx) continue;  // step 1's, or the merge's
        if (!joins(pv, vol[key_of(px + d.dx, py + d.dy, 0, g)], multilabel)) continue;
        unite(forest, static_cast<std::uint32_t>(ty * kW + tx), static_cast<std::uint32_t>(nty * kW + ntx),
              [&](std::uint32_t, std::uint32_t a) { atomicOr(&spans[a / 32], 1u << (a % 32)); });
      }
    }
    __syncthreads();  // every link is in place
    // Step 3.
    for (int ly = 0; ly < height; ++ly) {
      const unsigned joins_left = __shfl_sync(kFull, row_left, ly);
      const int s = run_first_column(joins_left, lane);
      const bool is_fg = fg >> ly & 1u;
      const std::uint32_t own = at(ly, lane);
      std::uint32_t r = own;
      if (is_fg && s == lane)
        for (std::uint32_t p = parent[r]; p != r; p = parent[r]) r = p;
      r = __shfl_sync(kFull, r, s);
      const unsigned root_bits = __ballot_sync(kFull, is_fg && r == own);
      if (lane == 0) {
        const std::size_t w = word_index((x0 + bx) / kBX, brick_y + ly, 0, g);
        rows[w].roots = root_bits;
        marks[w] = RowMarks{spans[own / 32]};
      }
      if (x < g.nx) P[key_of(x, brick_y + ly, 0, g)] = is_fg ? key_of(x0 + r % kW, y0 + r / kW, 0, g) : kNone;
    }
    __syncthreads();  // the shared arrays are refilled for the next tile
  }
}

// Marks root a (a global key) as one that others were linked under. Most links of a large
// component go under one root: its mark is read first, and set only when it is not yet (an atomic
// per link on one word would serialize them).
__device__ __forceinline__ void mark_spans(RowMarks* marks, std::uint32_t a, const VolGeo& g) {
  const std::uint32_t row_a = a / g.nx, x_a = a - row_a * g.nx;  // y + ny z
  std::uint32_t* spans = &marks[std::size_t{row_a} * g.nbx + x_a / kBX].spans;
  const unsigned bit = 1u << (x_a % kBX);
  if (!(*reinterpret_cast<const volatile std::uint32_t*>(spans) & bit)) atomicOr(spans, bit);
}
// The merge linked root b under root a: b leaves the root words, and a is marked as spanning.
__device__ __forceinline__ void unlink_root(RowWord* rows, RowMarks* marks, std::uint32_t b, std::uint32_t a, const VolGeo& g) {
  const std::uint32_t row_b = b / g.nx, x_b = b - row_b * g.nx;  // y + ny z
  atomicAnd(&rows[std::size_t{row_b} * g.nbx + x_b / kBX].roots, ~(1u << (x_b % kBX)));
  mark_spans(marks, a, g);
}

// ---- pass 2: across brick faces -----------------------------------------------------------------

// A pair (voxel, backward neighbour) that leaves the brick crosses exactly one face slot group:
// the slice before (z0: the neighbour's lz < 0), else the row before (y0: ly < 0), else the row
// after in the slice before (yl: ly >= kY, 18/26 only), else the left or right column (x0, x31).
enum Face : int { kZ0, kY0, kYL, kX0, kX31, kInside };
template <class B>
__host__ __device__ constexpr Face face_of(int nx, int ny, int nz) {
  return nz < 0 ? kZ0 : ny < 0 ? kY0 : ny >= B::kY ? kYL : nx < 0 ? kX0 : nx >= B::kX ? kX31 : kInside;
}
// Slots per brick, in this order: z0 (lx, ly), y0 and yl (lx, lz), x0 and x31 (ly, lz); every
// group is a multiple of 32, so a warp works on one group. 6-connectivity has no yl and no x31
// pairs (their offsets need dx = +1 or dy = +1); a layer brick has no z0 and no yl pairs (both
// need dz = -1).
template <int Conn, class B>
__host__ __device__ constexpr int face_group_slots(Face f) {
  const bool used = f == kZ0 || f == kYL ? !B::kLayer && (f == kZ0 || Conn != 6) : f == kX31 ? Conn != 6 : true;
  return !used ? 0 : f == kZ0 ? B::kX * B::kY : f == kY0 || f == kYL ? B::kX * B::kZ : B::kY * B::kZ;
}
template <int Conn, class B>
constexpr int face_slots() {
  int n = 0;
  for (int f = kZ0; f < kInside; ++f) n += face_group_slots<Conn, B>(static_cast<Face>(f));
  return n;
}
// Slot -> face group and brick-local voxel.
template <int Conn, class B>
__device__ __forceinline__ Face slot_voxel(int slot, int& lx, int& ly, int& lz) {
#pragma unroll
  for (int f = kZ0; f < kInside; ++f) {
    const Face face = static_cast<Face>(f);
    const int n = face_group_slots<Conn, B>(face);
    if (slot >= n) {
      slot -= n;
      continue;
    }
    switch (face) {
      case kZ0: lx = slot % B::kX, ly = slot / B::kX, lz = 0; break;
      case kY0: lx = slot % B::kX, ly = 0, lz = slot / B::kX; break;
      case kYL: lx = slot % B::kX, ly = B::kY - 1, lz = slot / B::kX; break;
      default: ly = slot % B::kY, lz = slot / B::kY, lx = face == kX0 ? 0 : B::kX - 1; break;
    }
    return face;
  }
  return kInside;
}

// Whether the merge pairs voxels at backward offset k: it is in the connectivity, and a layer
// brick has no slice before it.
template <int Conn, class B>
__host__ __device__ constexpr bool merge_offset_used(int k) {
  return in_connectivity(backward_offset(k), Conn) && !(B::kLayer && backward_offset(k).dz != 0);
}

// Every slot's voxel unites with its backward neighbours across that face. A warp takes 32 slots
// of one face group of one brick (grid-stride over all bricks' groups, so no lane idles on a
// brick with fewer slots than the block has threads). Before a union the pair is replaced by its
// voxels' parents (each an ancestor, so the same sets), and a pair that the same lane just
// united, or that a lower lane of the warp holds for the same offset (__match_any_sync), is
// skipped: across a face of a dense component nearly every pair is (brick root, brick root) of
// the same two bricks, and one union of them is enough.
template <class T, int Conn, class B>
__global__ void __launch_bounds__(kThreads)
    merge_kernel(const T* vol, std::uint32_t* P, RowWord* rows, RowMarks* marks, VolGeo g, bool multilabel) {
  constexpr int kSlots = face_slots<Conn, B>();
  static_assert(kSlots % 32 == 0, "a warp's slots lie in one face group");
  constexpr int kWarpsPerBrick = kSlots / 32;
  const std::uint64_t units = std::uint64_t{brick_count<B>(g)} * kWarpsPerBrick;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * (kThreads / 32);
  const VoxelForest forest{P};
  for (std::uint64_t u = (blockIdx.x * static_cast<std::uint64_t>(kThreads) + threadIdx.x) / 32; u < units; u += warps) {
    const auto brick = static_cast<std::uint32_t>(u / kWarpsPerBrick);
    const int slot = static_cast<int>(u % kWarpsPerBrick) * 32 + static_cast<int>(threadIdx.x & 31u);
    std::uint32_t x0, y0, z0;
    brick_origin<B>(brick, g, x0, y0, z0);
    // Every lane of the warp reaches the __match_any_sync calls below: the voxel's checks only
    // clear `active`.
    int lx = 0, ly = 0, lz = 0;
    const Face face = slot_voxel<Conn, B>(slot, lx, ly, lz);
    const std::uint32_t x = x0 + lx, y = y0 + ly, z = z0 + lz;
    bool active = face != kInside && x < g.nx && y < g.ny && z < g.nz;
    const std::uint32_t a = active ? key_of(x, y, z, g) : 0u;
    const T v = active ? vol[a] : T{};
    active = active && v != T{};
    const bool left_joins = active && x > 0 && joins(v, vol[a - 1], multilabel);
    const std::uint32_t parent_a = active ? parent_of(forest, a) : kNone;
    // The pairs' loads are issued together, before any union (a union's atomics and volatile loads
    // would otherwise hold back the next offset's loads): first the neighbours' values, then their
    // parents. A parent read early is still an ancestor, so the pairs stay the same sets.
    bool pair[13];
    std::uint32_t b[13];
    T vb[13];
#pragma unroll
    for (int k = 0; k < 13; ++k) {
      const Offset d = backward_offset(k);
      pair[k] = false, b[k] = 0, vb[k] = T{};
      if (!merge_offset_used<Conn, B>(k)) continue;  // compile-time: uniform over the warp
      const long long tx = static_cast<long long>(x) + d.dx, ty = static_cast<long long>(y) + d.dy,
                      tz = static_cast<long long>(z) + d.dz;
      pair[k] = active && face_of<B>(lx + d.dx, ly + d.dy, lz + d.dz) == face &&
                !implied_by_left(d, Conn, left_joins) && tx >= 0 && ty >= 0 && tz >= 0 && tx < g.nx &&
                ty < g.ny;  // tz <= z < nz
      if (pair[k]) {
        b[k] = key_of(static_cast<std::uint32_t>(tx), static_cast<std::uint32_t>(ty), static_cast<std::uint32_t>(tz), g);
        vb[k] = vol[b[k]];
      }
    }
    std::uint32_t pb[13];
#pragma unroll
    for (int k = 0; k < 13; ++k) {
      pair[k] = pair[k] && joins(v, vb[k], multilabel);
      pb[k] = pair[k] ? parent_of(forest, b[k]) : 0u;
    }
    unsigned long long last_pair = ~0ull;
#pragma unroll
    for (int k = 0; k < 13; ++k) {
      if (!merge_offset_used<Conn, B>(k)) continue;
      const unsigned long long both = pair[k] ? (static_cast<unsigned long long>(parent_a) << 32 | pb[k]) : ~0ull;
      const unsigned peers = __match_any_sync(kFull, both);
      const bool first_in_warp = (threadIdx.x & 31u) == static_cast<unsigned>(__ffs(peers) - 1);
      if (pair[k] && first_in_warp && both != last_pair) {
        unite(forest, static_cast<std::uint32_t>(both >> 32), static_cast<std::uint32_t>(both),
              [&](std::uint32_t b, std::uint32_t a) {
          unlink_root(rows, marks, b, a, g);
        });
        last_pair = both;
      }
    }
  }
}

// ---- pass 1 and 2 for binary volumes: rows as bit words -------------------------------------------

// A binary volume (not multi-label, more than one layer) is labelled over x-runs held as bits: a
// row of a brick is one 32-bit word (bit l: column x0 + l is foreground), and everything a run
// needs -- its start, its number within the row, the runs of a neighbouring row it touches -- is
// bit arithmetic on two words. A warp labels a whole 32 x 8 x 8 brick alone, two rows per lane:
// the union-find nodes are runs (at most 16 per row), not voxels, so a dense brick has a few
// hundred nodes instead of 2048, and a lane unites its rows' runs with their backward rows' runs
// (shared-memory union-find as in pass 1, in the warp's own arrays). The lanes unite a pair each
// per round at one call site (unite_in_lockstep), the roots are walked a run per lane across the
// brick, and each run's root becomes a global key once, so the voxels' parents are written as
// coalesced rows of 32 keys. The rows' words also go to a global array (one word per 32 columns
// of every row), from which the merge and the statistics read the rows of any brick.
//
// Where the time goes (512^3 random, density 0.5, H200; bench/results/label.md): the unions, whose
// divergent find walks keep about a third of a warp's lanes busy (ncu: 11 of 32 on average), and
// the merge's global unions; the bit arithmetic and the volume's reads and writes are a small part.
//
// Run pairs of two rows m (the later) and m2 (a backward row): with ext 0 (the rows' voxels meet
// face to face) every stretch of m & m2 lies in one run of each, and every touching pair of runs
// shares one: a union per stretch. With ext 1 (diagonal neighbours count too) a stretch of
// m2 & dilate(m) lies in one run of m2 but may touch several runs of m, and the converse holds for
// m & dilate(m2); uniting the first voxel of each stretch of both with the run of the other row
// that is nearest to it (its lowest neighbour) joins exactly the sets that all touching pairs join
// (checked exhaustively over all pairs of 12-bit rows, also with the second kind's pairs left out
// where the first kind joins the same two runs).
constexpr int kMaxRuns = kBX / 2;  // runs per 32-bit row word
// A run's node in the brick: row r's k-th run is r * kRunStride + k. Numbers still grow in raster
// order, and the odd stride puts the same run of the 32 lanes' rows in 32 different shared-memory
// banks (a stride of 16 would put them in 2).
constexpr int kRunStride = kMaxRuns + 1;

__device__ __forceinline__ unsigned run_starts(unsigned m) { return m & ~(m << 1); }
// The number of the run holding bit b of row word m, counted from 0 within the row.
__device__ __forceinline__ int run_index(unsigned m, int b) { return __popc(run_starts(m) & (kFull >> (31 - b))) - 1; }
// The first bit of the run holding bit b.
__device__ __forceinline__ int run_start_bit(unsigned m, int b) { return 31 - __clz(run_starts(m) & (kFull >> (31 - b))); }
// The lowest bit of m among b - 1, b, b + 1 (one of them is set).
__device__ __forceinline__ int nearest_bit(unsigned m, int b) { return __ffs(m & (b == 0 ? 3u : 7u << (b - 1))) - 1; }

// The unions that join the touching runs of rows m and m2, handed out one at a time (next: a bit
// of m and a bit of m2 in the two runs). The lanes of a warp take their next pairs together and
// unite them at one call site (unite_in_lockstep): lanes that each loop over their own pairs and
// unite inside the loop diverge, and the warp then runs their unions one lane after another.
struct TouchingRuns {
  unsigned m, m2, first, second;  // first: stretch starts of m2 & dilate(m) (or of m & m2, ext 0)
  int ext;
  // leave_out_repeats: leave out a pair of the second kind when the first kind unites the same two
  // runs (c lies in a stretch of m2 & dilate(m) whose first voxel's nearest run of m is a's run).
  // Worth its bit arithmetic where a union is dear (global memory); in shared memory a repeated
  // union, which finds one root twice, costs about as much as the test.
  __device__ TouchingRuns(unsigned m_, unsigned m2_, int ext_, bool leave_out_repeats = false)
      : m(m_), m2(m2_), first(0), second(0), ext(ext_) {
    if (!ext) {
      first = run_starts(m & m2);
      return;
    }
    const unsigned touched = m2 & (m | m << 1 | m >> 1);
    first = run_starts(touched);
    const unsigned second_kind = run_starts(m & (m2 | m2 << 1 | m2 >> 1));
    if (!leave_out_repeats) {
      second = second_kind;
      return;
    }
    for (unsigned t = second_kind; t; t &= t - 1) {
      const int a = __ffs(t) - 1, c = nearest_bit(m2, a);
      const int a1 = nearest_bit(m, run_start_bit(touched, c));
      const int lo = min(a, a1), hi = max(a, a1);
      const unsigned between = (kFull >> (31 - hi)) & (kFull << lo);
      if ((m & between) != between) second |= 1u << a;  // a gap of m: another run
    }
  }
  __device__ bool empty() const { return !(first | second); }
  __device__ bool next(int& a, int& c) {
    if (first) {
      c = __ffs(first) - 1;
      first &= first - 1;
      a = ext ? nearest_bit(m, c) : c;
      return true;
    }
    if (second) {
      a = __ffs(second) - 1;
      second &= second - 1;
      c = nearest_bit(m2, a);
      return true;
    }
    return false;
  }
};

// A lane's pairs over several row pairs, as one stream: the lanes of a warp take a pair each per
// round until every lane's stream is dry, so a lane with few pairs in one row pair goes on to its
// next row pair instead of idling until the warp's busiest lane finishes the first.
// open(i, runs) sets up the lane's row pair i < kPairs in runs (false: the lane has no such pair).
template <int kPairs, class Open, class UnitePair>
__device__ __forceinline__ void unite_in_lockstep(Open open, UnitePair unite_pair) {
  TouchingRuns runs(0u, 0u, 0);
  int i = 0;  // the next row pair to open
  auto refill = [&] {
    while (runs.empty() && i < kPairs)
      if (!open(i++, runs)) runs = TouchingRuns(0u, 0u, 0);
  };
  refill();
  while (__any_sync(kFull, !runs.empty())) {
    int a = 0, c = 0;
    if (runs.next(a, c)) {
      unite_pair(a, c);
      refill();
    }
    __syncwarp();  // the lanes' unions end at different times: reconverge before the vote
  }
}

// Bit k of the result: byte k of w is non-zero.
__device__ __forceinline__ unsigned nonzero_bytes(unsigned w) {
  const unsigned high = (((w & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | w) & 0x80808080u;  // bit 7 of each byte
  return ((high >> 7) * 0x00204081u) >> 21 & 0xFu;  // bits 0, 8, 16, 24 gathered at 21..24
}

// vector_rows: bytes (T of one byte), a 16-byte aligned volume and rows of a multiple of 16 bytes,
// so a lane reads a brick row as two 16-byte loads.
template <class T, int Conn>
__global__ void __launch_bounds__(kThreads)
    bits_local_kernel(const T* vol, std::uint32_t* P, RowWord* rows, VolGeo g, bool vector_rows) {
  using B = VolumeBrick;
  constexpr int kRows = B::kRows, kLaneRows = kRows / 32;
  static_assert(kRows % 32 == 0, "a lane takes whole rows");
  __shared__ unsigned row_words[kThreads / 32][kRows];
  __shared__ std::uint32_t parents[kThreads / 32][kRows * kRunStride];  // run r * kRunStride + k
  __shared__ std::uint8_t first_bits[kThreads / 32][kRows * kRunStride];
  unsigned* masks = row_words[threadIdx.x / 32];
  std::uint32_t* parent = parents[threadIdx.x / 32];
  const VoxelForest forest{parent};
  std::uint8_t* first_bit = first_bits[threadIdx.x / 32];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  for_each_brick_of_warp<B, kThreads>(
      g, [&](std::uint32_t x0, std::uint32_t y0, std::uint32_t z0) {
    const std::uint32_t x = x0 + static_cast<std::uint32_t>(lane);
    unsigned mine[kLaneRows];
    if (vector_rows) {
      // Lane l reads rows l and l + 32 itself, 16 bytes at a time (all four loads in flight).
      uint4 half[kLaneRows][2];
#pragma unroll
      for (int j = 0; j < kLaneRows; ++j) {
        const int r = lane + 32 * j;
        const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
        const bool in = y < g.ny && z < g.nz;
        const auto* row = reinterpret_cast<const uint4*>(vol + (in ? key_of(x0, y, z, g) : 0u));
        half[j][0] = in ? row[0] : uint4{0, 0, 0, 0};
        half[j][1] = in && x0 + 16 < g.nx ? row[1] : uint4{0, 0, 0, 0};
      }
#pragma unroll
      for (int j = 0; j < kLaneRows; ++j) {
        const unsigned q[8] = {half[j][0].x, half[j][0].y, half[j][0].z, half[j][0].w,
                               half[j][1].x, half[j][1].y, half[j][1].z, half[j][1].w};
        unsigned m = 0;
#pragma unroll
        for (int k = 0; k < 8; ++k) m |= nonzero_bytes(q[k]) << (4 * k);
        mine[j] = m;
        masks[lane + 32 * j] = m;
      }
    } else {
      // Lane l reads column l of each row (32 consecutive values), a ballot packs them.
#pragma unroll 8
      for (int r = 0; r < kRows; ++r) {
        const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
        const T v = x < g.nx && y < g.ny && z < g.nz ? vol[key_of(x, y, z, g)] : T{};
        const unsigned m = __ballot_sync(kFull, v != T{});
        if (lane == 0) masks[r] = m;
      }
      __syncwarp();
#pragma unroll
      for (int j = 0; j < kLaneRows; ++j) mine[j] = masks[lane + 32 * j];
    }
#pragma unroll
    for (int j = 0; j < kLaneRows; ++j) {
      const int r = lane + 32 * j;
      // Every run is its own set at first.
      int k = 0;
      for (unsigned t = run_starts(mine[j]); t; t &= t - 1, ++k) {
        const int id = r * kRunStride + k;
        parent[id] = static_cast<std::uint32_t>(id);
        first_bit[id] = static_cast<std::uint8_t>(__ffs(t) - 1);
      }
    }
    __syncwarp();
    // Unions of each row's runs with the runs they touch in its backward rows inside the brick
    // (rows outside it: the merge). Run numbers grow in raster order, so the smallest number of
    // a set is its raster-first run.
    // Row pair i: the lane's row j = i / 4 with its backward row q = i % 4.
    int r = 0, r2 = 0;
    unite_in_lockstep<kLaneRows * 4>(
        [&](int i, TouchingRuns& runs) {
          const int j = i / 4, q = i % 4;
          if (!back_row_used(q, Conn)) return false;
          const BackRow b = back_row(q, Conn);
          r = lane + 32 * j;
          const int ry = r % B::kY + b.dy, rz = r / B::kY + b.dz;
          if (ry < 0 || ry >= B::kY || rz < 0) return false;  // the row lies in another brick
          r2 = rz * B::kY + ry;
          runs = TouchingRuns(masks[r], masks[r2], b.ext);
          return true;
        },
        [&](int a, int c) {
          unite(forest, static_cast<std::uint32_t>(r * kRunStride + run_index(masks[r], a)),
                static_cast<std::uint32_t>(r2 * kRunStride + run_index(masks[r2], c)));
        });
    __syncwarp();
    // Roots: every run's entry becomes its root's number, then its root's first voxel as a global
    // key. The warp's lanes take the brick's run numbers in turn (lane l: l, l + 32, ...), so the
    // walks of one row's runs run side by side; a lane writes its own entries only, so a concurrent
    // walk through them reads an ancestor either way.
    constexpr int kNodes = kRows * kRunStride;
    for (int id = lane; id < kNodes; id += 32) {
      const int row = id / kRunStride;
      if (id - row * kRunStride >= __popc(run_starts(masks[row]))) continue;  // no such run
      std::uint32_t root = static_cast<std::uint32_t>(id);
      for (std::uint32_t p = parent_of(forest, root); p != root; p = parent_of(forest, root)) root = p;
      lower_to(parent + id, root);  // an atomic store over what concurrent walks read
    }
    __syncwarp();
    // The rows' words, foreground and brick-local roots (the runs that are their own root) in one
    // store (the merge and the statistics read the foreground of any brick's rows, the numbering
    // the roots).
#pragma unroll
    for (int j = 0; j < kLaneRows; ++j) {
      const int r = lane + 32 * j;
      const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
      unsigned root_bits = 0;
      int id = r * kRunStride;
      for (unsigned t = run_starts(mine[j]); t; t &= t - 1, ++id)
        if (parent[id] == static_cast<std::uint32_t>(id)) root_bits |= t & (0u - t);  // the run's first bit
      if (y < g.ny && z < g.nz) rows[word_index(x0 / kBX, y, z, g)] = RowWord{mine[j], root_bits};
    }
    for (int id = lane; id < kNodes; id += 32) {
      const int row = id / kRunStride;
      if (id - row * kRunStride >= __popc(run_starts(masks[row]))) continue;
      const std::uint32_t root = parent[id];
      const int root_row = static_cast<int>(root) / kRunStride;
      parent[id] = key_of(x0 + first_bit[root], y0 + root_row % B::kY, z0 + root_row / B::kY, g);
    }
    __syncwarp();
    // Every voxel's parent: its run's root voxel as a global key (coalesced rows of 32).
#pragma unroll 4
    for (int r = 0; r < kRows; ++r) {
      const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
      if (x >= g.nx || y >= g.ny || z >= g.nz) continue;
      const unsigned m = masks[r];
      std::uint32_t key = kNone;
      if (m >> lane & 1u) key = parent[r * kRunStride + run_index(m, lane)];
      P[key_of(x, y, z, g)] = key;
    }
    __syncwarp();  // the shared arrays are refilled for the next brick
  });
}

// Row pair t of a volume brick whose backward row (back_row q) lies in another brick: the rows
// of the z0 face with the row below them (q 1), the rows of the y0 face with the row before them
// (q 3), and for 18/26-connectivity the rows of the y0 or z0 face with the row (y - 1, z - 1)
// (q 0) and those of the yl or z0 face with (y + 1, z - 1) (q 2). False past the last.
template <int Conn>
__device__ __forceinline__ bool outside_row_pair(int t, int& r, int& q) {
  using B = VolumeBrick;
  static_assert(B::kY == 8 && B::kZ == 8, "the groups below count rows of 8 x 8 bricks");
  if (t < 8) return r = t, q = 1, true;                   // z0: (ly = t, lz = 0)
  if (t < 16) return r = (t - 8) * B::kY, q = 3, true;    // y0: (0, lz)
  if (Conn == 6) return false;
  if (t < 31) {                                           // z0 (8 rows), then y0 with lz >= 1 (7)
    const int i = t - 16;
    return r = i < 8 ? i : (i - 7) * B::kY, q = 0, true;
  }
  if (t < 46) {                                           // z0 (8 rows), then yl with lz >= 1 (7)
    const int i = t - 31;
    return r = i < 8 ? i : (i - 7) * B::kY + B::kY - 1, q = 2, true;
  }
  return false;
}

// The merge of a binary volume: a warp per brick, reading row words. A row
// unites its runs with those of its backward rows that lie in other bricks (TouchingRuns),
// and its first voxel with the last voxels of the rows of the brick to its left that touch it (the
// x boundary: every pair across it is seen once, from its right side, for each (dy, dz) of the
// connectivity). A pair's keys are replaced by their parents first (brick-local roots), and a
// pair that the warp united already is skipped: a table of the warp's recent pairs in shared
// memory (a slot per hash, swapped atomically; a pair that two lanes unite at once is united
// twice, which is harmless). Across the faces of a dense component nearly every pair is the same two brick roots.
template <int Conn>
__global__ void __launch_bounds__(kThreads)
    bits_merge_kernel(RowWord* rows, std::uint32_t* P, RowMarks* marks, VolGeo g) {
  using B = VolumeBrick;
  constexpr int kLaneRows = B::kRows / 32;
  constexpr int kRecent = 64;  // slots of a warp's table of recent pairs
  __shared__ unsigned long long recent_pairs[kThreads / 32][kRecent];
  unsigned long long* recent = recent_pairs[threadIdx.x / 32];
  const VoxelForest forest{P};
  const int lane = static_cast<int>(threadIdx.x & 31u);
  for (int i = lane; i < kRecent; i += 32) recent[i] = ~0ull;
  __syncwarp();
  for_each_brick_of_warp<B, kThreads>(
      g, [&](std::uint32_t x0, std::uint32_t y0, std::uint32_t z0) {
    const std::uint32_t bx = x0 / kBX;
    auto unite_keys = [&](std::uint32_t ka, std::uint32_t kb) {
      const unsigned long long both = static_cast<unsigned long long>(parent_of(forest, ka)) << 32 | parent_of(forest, kb);
      if (atomicExch(&recent[(both * 0x9E3779B97F4A7C15ull) >> 58], both) == both) return;  // united already
      unite(forest, static_cast<std::uint32_t>(both >> 32), static_cast<std::uint32_t>(both),
            [&](std::uint32_t b, std::uint32_t a) { unlink_root(rows, marks, b, a, g); });
    };
    unsigned row_word[kLaneRows];
#pragma unroll
    for (int j = 0; j < kLaneRows; ++j) {
      const int r = lane + 32 * j;
      const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
      row_word[j] = y < g.ny && z < g.nz ? rows[word_index(bx, y, z, g)].fg : 0u;
    }
    // The row pairs whose backward row lies in another brick (outside_row_pair), two per lane at
    // most, so no lane waits on a few busy ones (only the rows on the brick's y0, z0 and yl faces
    // have such pairs).
    std::uint32_t row_key = 0, row2_key = 0;
    unsigned m = 0, m2 = 0;
    unite_in_lockstep<2>(
        [&](int i, TouchingRuns& runs) {
          int r = 0, q = 0;
          if (!outside_row_pair<Conn>(lane + 32 * i, r, q)) return false;
          const BackRow b = back_row(q, Conn);
          const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
          const long long ty = static_cast<long long>(y) + b.dy, tz = static_cast<long long>(z) + b.dz;
          if (y >= g.ny || z >= g.nz || ty < 0 || ty >= g.ny || tz < 0) return false;
          const auto uy = static_cast<std::uint32_t>(ty), uz = static_cast<std::uint32_t>(tz);
          m = rows[word_index(bx, y, z, g)].fg;
          m2 = rows[word_index(bx, uy, uz, g)].fg;
          row_key = key_of(x0, y, z, g);
          row2_key = key_of(x0, uy, uz, g);
          runs = TouchingRuns(m, m2, b.ext, true);
          return true;
        },
        [&](int a, int c) { unite_keys(row_key + run_start_bit(m, a), row2_key + run_start_bit(m2, c)); });
    // The x boundary: each row's first voxel and the last voxels of the left brick's rows
    // (y + dy, z + dz) that are its neighbours, found first (bit 9 j + 3 (dz + 1) + dy + 1 of the
    // lane's rows j), then united one per round.
    unsigned long long across = 0;
#pragma unroll
    for (int j = 0; j < kLaneRows; ++j) {
      const int r = lane + 32 * j;
      const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
      if (bx == 0 || !(row_word[j] & 1u)) continue;
#pragma unroll
      for (int dz = -1; dz <= 1; ++dz)
#pragma unroll
        for (int dy = -1; dy <= 1; ++dy) {
          if (!in_connectivity(Offset{-1, dy, dz}, Conn)) continue;
          const long long ty = static_cast<long long>(y) + dy, tz = static_cast<long long>(z) + dz;
          if (ty < 0 || ty >= g.ny || tz < 0 || tz >= g.nz) continue;
          const unsigned left = rows[word_index(bx - 1, static_cast<std::uint32_t>(ty), static_cast<std::uint32_t>(tz), g)].fg;
          across |= static_cast<unsigned long long>(left >> 31) << (9 * j + 3 * (dz + 1) + dy + 1);
        }
    }
    while (__any_sync(kFull, across != 0)) {
      if (across) {
        const int n = __ffsll(static_cast<long long>(across)) - 1, j = n / 9, d = n % 9;
        across &= across - 1;
        const int r = lane + 32 * j;
        const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY, uy = y + d % 3 - 1, uz = z + d / 3 - 1;
        const unsigned left = rows[word_index(bx - 1, uy, uz, g)].fg;
        unite_keys(key_of(x0, y, z, g), key_of(x0 - kBX, uy, uz, g) + run_start_bit(left, 31));
      }
      __syncwarp();  // reconverge before the vote
    }
  });
}

// ---- pass 3: numbering --------------------------------------------------------------------------

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

// ---- pass 4: labels (and statistics) ------------------------------------------------------------

// A thread takes kLabelItems voxels a grid stride apart at a time, their loads issued together:
// each voxel's find is a chain of dependent loads (parent, root, the root's words), and the
// independent chains of several voxels overlap.
constexpr int kLabelItems = 4;
__global__ void __launch_bounds__(kThreads) labels_kernel(const std::uint32_t* P, const RowWord* rows,
                                                          const std::uint32_t* offsets, std::uint32_t* labels, VolGeo g) {
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

// The statistics records' starting values (sums 0, minima all ones, maxima 0; value 1 in a binary
// volume, a multi-label one's root_values_kernel writes the root's), as consecutive 8-byte words
// of the record array: coalesced stores. Written a record per root, the records' scattered
// stores ran at about a tenth of the copy rate in volumes of many components (4 ms for 26 M records).
__global__ void __launch_bounds__(kThreads) init_records_kernel(RawVolumeComponentStats* st, std::uint64_t cap,
                                                                const std::uint32_t* d_count, bool multilabel) {
  static_assert(sizeof(RawVolumeComponentStats) == 64 && offsetof(RawVolumeComponentStats, min_x) == 32 &&
                    offsetof(RawVolumeComponentStats, value) == 56,
                "the record's words below");
  const std::uint64_t records = min(cap, std::uint64_t{*d_count});
  auto* words = reinterpret_cast<unsigned long long*>(st);
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(kThreads) + threadIdx.x; i < records * 8;
       i += static_cast<std::uint64_t>(gridDim.x) * kThreads) {
    const unsigned word = static_cast<unsigned>(i % 8);
    // word 4: min_x, min_y; 5: min_z, max_x; 6: max_y, max_z; 7: value (little-endian halves)
    words[i] = word == 4 ? ~0ull : word == 5 ? 0xFFFFFFFFull : word == 7 && !multilabel ? 1ull : 0ull;
  }
}

// A multi-label volume's records take their root's value: a thread per root word.
template <class T>
__global__ void __launch_bounds__(kThreads) root_values_kernel(const T* vol, const RowWord* rows,
                                                               const std::uint32_t* offsets, VolGeo g,
                                                               RawVolumeComponentStats* st, std::uint64_t cap) {
  const std::uint64_t words = std::uint64_t{g.nbx} * g.ny * g.nz;
  for (std::uint64_t w = blockIdx.x * static_cast<std::uint64_t>(kThreads) + threadIdx.x; w < words;
       w += static_cast<std::uint64_t>(gridDim.x) * kThreads) {
    std::uint32_t number = offsets[w] + 1;
    const std::uint32_t row_key = static_cast<std::uint32_t>(w / g.nbx) * g.nx + static_cast<std::uint32_t>(w % g.nbx) * kBX;
    for (unsigned bits = rows[w].roots; bits && number <= cap; bits &= bits - 1, ++number)
      st[number - 1].value = static_cast<std::uint64_t>(vol[row_key + static_cast<std::uint32_t>(__ffs(bits) - 1)]);
  }
}

// Sums of part of a component (exact integers).
struct Acc {
  std::uint64_t voxels = 0, sx = 0, sy = 0, sz = 0;
  std::uint32_t mnx = 0xFFFFFFFFu, mny = 0xFFFFFFFFu, mnz = 0xFFFFFFFFu, mxx = 0, mxy = 0, mxz = 0;
};

__device__ void add_to_record(RawVolumeComponentStats& s, const Acc& a) {
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.voxels), static_cast<unsigned long long>(a.voxels));
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_x), static_cast<unsigned long long>(a.sx));
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_y), static_cast<unsigned long long>(a.sy));
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_z), static_cast<unsigned long long>(a.sz));
  atomicMin(&s.min_x, a.mnx);
  atomicMin(&s.min_y, a.mny);
  atomicMin(&s.min_z, a.mnz);
  atomicMax(&s.max_x, a.mxx);
  atomicMax(&s.max_y, a.mxy);
  atomicMax(&s.max_z, a.mxz);
}

__device__ __forceinline__ void merge_acc(Acc& c, const Acc& a) {
  c.voxels += a.voxels, c.sx += a.sx, c.sy += a.sy, c.sz += a.sz;
  c.mnx = min(c.mnx, a.mnx), c.mny = min(c.mny, a.mny), c.mnz = min(c.mnz, a.mnz);
  c.mxx = max(c.mxx, a.mxx), c.mxy = max(c.mxy, a.mxy), c.mxz = max(c.mxz, a.mxz);
}

// Writes a whole record with plain 16-byte stores (the record is 16-byte aligned), all but its value:
// a binary volume's is 1 from init_records_kernel, a multi-label one's from root_values_kernel.
__device__ __forceinline__ void write_record(RawVolumeComponentStats& s, const Acc& a) {
  auto* q = reinterpret_cast<ulonglong2*>(&s);
  q[0] = ulonglong2{a.voxels, a.sx};
  q[1] = ulonglong2{a.sy, a.sz};
  q[2] = ulonglong2{a.mnx | static_cast<unsigned long long>(a.mny) << 32, a.mnz | static_cast<unsigned long long>(a.mxx) << 32};
  reinterpret_cast<unsigned long long*>(q + 3)[0] = a.mxy | static_cast<unsigned long long>(a.mxz) << 32;
}

// Statistics, after the labels: a warp per brick adds up its runs per label in a table in shared
// memory and flushes each label once per brick, so a component costs a flush per brick it touches
// (a voxel-by-voxel pass over a volume of many small components spends most of its time in the
// flushes of single voxels). The runs: in a binary volume of several layers, the stretches of
// foreground of the row words; otherwise the stretches of one label, from the labels themselves,
// read a row at a time by the warp (in a multi-label volume two touching voxels of different
// values are different components, so a stretch of foreground may hold several runs). A run's
// label is read at its first voxel.
// A table slot: the label, the run sums packed in one 64-bit word (voxel count and the sums of
// x, y, z relative to the brick's origin, fields wide enough for a whole brick: no carries across
// them), and the columns, rows and layers it covers as bit masks in another; a lane adds a run with
// one 64-bit atomic add and one 64-bit atomic or. These memory operations are what the pass is
// bound by (ncu: the memory pipes 78 % busy with the slots' seven 32-bit fields, the records'
// ten global atomics per label and a warp-wide match and six reductions per round), so the
// packing cuts them, and a component that the brick holds whole (its root is in the brick and no
// merge united it with another brick's) is written with four plain stores instead of ten atomics.
// A run that finds no free slot within kProbes (a brick of more labels than the table holds) is
// flushed alone, by atomics. A component that spans many bricks would still take a flush per
// brick, all onto one record: the warp keeps a carry label (the largest spanning one of a brick
// where the carry is absent) whose records it adds up in registers, in the lane of its slot, and
// flushes when the carry changes and at the end.
constexpr int kStatsWarps = 4, kStatsSlots = 256, kProbes = 8;
struct BrickRecords {
  unsigned long long sums[kStatsSlots];   // RunSums<B>
  unsigned long long cover[kStatsSlots];  // bit x - x0; bit 32 + y - y0 and 32 + kY + z - z0
  std::uint32_t label[kStatsSlots];
  unsigned whole[kStatsSlots / 32];       // bit i % 32 of word i / 32: the brick holds slot i's component whole
};

// The fields of a brick's packed run sums: each as wide as its largest sum over a whole brick.
template <class B>
struct RunSums {
  static constexpr int kN = std::bit_width(static_cast<unsigned>(B::kVoxels));
  static constexpr int kX = std::bit_width(static_cast<unsigned>(B::kRows * (kBX - 1) * kBX / 2));
  static constexpr int kY = std::bit_width(static_cast<unsigned>(B::kVoxels * (B::kY - 1)));
  static constexpr int kZ = std::bit_width(static_cast<unsigned>(B::kVoxels * (B::kZ - 1)));
  static_assert(kN + kX + kY + kZ <= 64, "a brick's sums fit one word");
  __device__ static unsigned long long pack(std::uint32_t n, std::uint32_t sx, std::uint32_t sy, std::uint32_t sz) {
    return n | static_cast<unsigned long long>(sx) << kN | static_cast<unsigned long long>(sy) << (kN + kX) |
           static_cast<unsigned long long>(sz) << (kN + kX + kY);
  }
  __device__ static std::uint32_t field(unsigned long long w, int shift, int bits) {
    return static_cast<std::uint32_t>(w >> shift) & ((1u << bits) - 1u);
  }
  __device__ static std::uint32_t n(unsigned long long w) { return field(w, 0, kN); }
  __device__ static std::uint32_t x(unsigned long long w) { return field(w, kN, kX); }
  __device__ static std::uint32_t y(unsigned long long w) { return kY ? field(w, kN + kX, kY) : 0u; }
  __device__ static std::uint32_t z(unsigned long long w) { return kZ ? field(w, kN + kX + kY, kZ) : 0u; }
};

// A slot (packed sums relative to the brick's origin, coverage masks) as global sums and ranges.
template <class B>
__device__ __forceinline__ Acc brick_acc(unsigned long long sums, unsigned long long cover, std::uint32_t x0,
                                         std::uint32_t y0, std::uint32_t z0) {
  static_assert(B::kY + (B::kZ > 1 ? B::kZ : 0) <= 32, "rows and layers share the cover's upper word");
  using S = RunSums<B>;
  constexpr unsigned kRowBits = B::kY == 32 ? kFull : (1u << B::kY) - 1;
  const auto columns = static_cast<unsigned>(cover), rows_layers = static_cast<unsigned>(cover >> 32);
  const std::uint32_t n = S::n(sums);
  Acc a;
  a.voxels = n;
  a.sx = S::x(sums) + std::uint64_t{n} * x0, a.sy = S::y(sums) + std::uint64_t{n} * y0;
  a.sz = S::z(sums) + std::uint64_t{n} * z0;
  a.mnx = x0 + __ffs(columns) - 1, a.mxx = x0 + 31 - __clz(columns);
  a.mny = y0 + __ffs(rows_layers & kRowBits) - 1, a.mxy = y0 + 31 - __clz(rows_layers & kRowBits);
  if constexpr (B::kZ > 1)
    a.mnz = z0 + __ffs(rows_layers >> B::kY) - 1, a.mxz = z0 + 31 - __clz(rows_layers >> B::kY);
  else
    a.mnz = a.mxz = z0;
  return a;
}

// kRowWords: the runs from the row words (binary volumes of several layers), else from the labels.
template <class B, bool kRowWords>
__global__ void __launch_bounds__(kStatsWarps * 32)
    brick_stats_kernel(const RowWord* rows, const RowMarks* marks, const std::uint32_t* labels, VolGeo g,
                       RawVolumeComponentStats* st, std::uint64_t cap) {
  static_assert(B::kRows % 32 == 0, "a lane takes whole rows");
  constexpr int kLaneRows = B::kRows / 32;
  using S = RunSums<B>;
  __shared__ BrickRecords tables[kStatsWarps];
  BrickRecords& t = tables[threadIdx.x / 32];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  for (int i = lane; i < kStatsSlots; i += 32) t.label[i] = 0, t.sums[i] = 0, t.cover[i] = 0;
  if (lane < kStatsSlots / 32) t.whole[lane] = 0;
  std::uint32_t carry_label = 0;  // the warp's
  Acc carry;                      // this lane's part of the carry's record
  for_each_brick_of_warp<B, kStatsWarps * 32>(g, [&](std::uint32_t x0, std::uint32_t y0, std::uint32_t z0) {
    __syncwarp();  // the table is empty (the previous brick's flush cleared it)
    // Lane l holds rows l + 32 j: m (foreground), starts (first voxels of runs), stops (bit b:
    // the run holding b - 1 ends there, at a new run or a gap) and whole (roots of components
    // that the brick holds whole).
    unsigned m[kLaneRows], starts[kLaneRows], stops[kLaneRows], whole[kLaneRows];
#pragma unroll
    for (int j = 0; j < kLaneRows; ++j) {
      const int r = lane + 32 * j;
      const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
      const bool in = y < g.ny && z < g.nz;
      const std::size_t w = in ? word_index(x0 / kBX, y, z, g) : 0;
      const RowWord row = in ? rows[w] : RowWord{0u, 0u};
      whole[j] = in ? row.roots & ~marks[w].spans : 0u;
      if constexpr (kRowWords) m[j] = row.fg, starts[j] = run_starts(row.fg);
    }
    if constexpr (!kRowWords) {
      // The warp reads each row's labels (coalesced) and ballots its foreground and run starts;
      // lane r % 32 keeps row r's.
      const std::uint32_t x = x0 + static_cast<std::uint32_t>(lane);
#pragma unroll 8
      for (int r = 0; r < B::kRows; ++r) {
        const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
        const std::uint32_t label = x < g.nx && y < g.ny && z < g.nz ? __ldg(labels + key_of(x, y, z, g)) : 0u;
        const std::uint32_t left = __shfl_up_sync(kFull, label, 1);
        const unsigned fg = __ballot_sync(kFull, label != 0);
        const unsigned first = __ballot_sync(kFull, label != 0 && (lane == 0 || label != left));
#pragma unroll
        for (int j = 0; j < kLaneRows; ++j)
          if (r == lane + 32 * j) m[j] = fg, starts[j] = first;
      }
    }
    // A run goes into the table by a 64-bit add of the packed sums and a 64-bit or of the cover
    // (or alone, by atomics, when the table is crowded).
    auto insert = [&](std::uint32_t label, unsigned long long sums, unsigned long long cover, bool is_whole) {
      int slot = static_cast<int>((label * 0x9E3779B9u) >> 24) % kStatsSlots, probe = 0;
      for (; probe < kProbes; ++probe, slot = (slot + 1) % kStatsSlots) {
        const std::uint32_t held = atomicCAS(&t.label[slot], 0u, label);
        if (held == 0u || held == label) break;
      }
      if (probe == kProbes) {  // the table is crowded: this part goes out alone
        add_to_record(st[label - 1], brick_acc<B>(sums, cover, x0, y0, z0));
        return;
      }
      atomicAdd(&t.sums[slot], sums);
      atomicOr(&t.cover[slot], cover);
      if (is_whole) atomicOr(&t.whole[slot / 32], 1u << (slot % 32));
    };
    // Each lane walks its own runs and adds up consecutive runs of one label in registers (a dense
    // component's rows: one label), inserting when the label changes; at the end the lanes' last
    // labels are added up across the warp (__match_any_sync and reductions) and inserted once
    // each, so the lanes of one component do not meet on its slot's atomics.
    std::uint32_t acc_label = 0;
    unsigned long long acc_sums = 0, acc_cover = 0;
    bool acc_whole = false;
#pragma unroll
    for (int j = 0; j < kLaneRows; ++j) {
      stops[j] = starts[j] | ~m[j];
      const int r = lane + 32 * j, ly = r % B::kY, lz = r / B::kY;
      const std::uint32_t row_key = key_of(x0, y0 + ly, z0 + lz, g);
      // The labels of kAhead runs are loaded together (independent loads in flight at once).
      constexpr int kAhead = 4;
      std::uint32_t ahead[kAhead];
      unsigned fetched = starts[j];
#pragma unroll
      for (int k = 0; k < kAhead; ++k) {
        ahead[k] = fetched ? __ldg(labels + row_key + static_cast<std::uint32_t>(__ffs(fetched) - 1)) : 0u;
        fetched &= fetched - 1;
      }
      int k = 0;
      for (unsigned left = starts[j]; left; left &= left - 1, k = (k + 1) % kAhead) {
        const int first = __ffs(left) - 1;
        const unsigned after = first < 31 ? stops[j] & (kFull << (first + 1)) : 0u;
        const int last = after ? __ffs(after) - 2 : 31;  // the run's last column
        std::uint32_t label = 0;
#pragma unroll
        for (int q = 0; q < kAhead; ++q)
          if (q == k) {  // registers, not a local array: a constant index after unrolling
            label = ahead[q];
            ahead[q] = fetched ? __ldg(labels + row_key + static_cast<std::uint32_t>(__ffs(fetched) - 1)) : 0u;
          }
        fetched &= fetched - 1;
        if (label > cap) continue;  // no record
        if (label != acc_label) {
          if (acc_label) insert(acc_label, acc_sums, acc_cover, acc_whole);
          acc_label = label, acc_sums = 0, acc_cover = 0, acc_whole = false;
        }
        const auto n = static_cast<std::uint32_t>(last - first + 1);
        acc_sums += S::pack(n, n * static_cast<std::uint32_t>(first) + n * (n - 1) / 2, n * static_cast<std::uint32_t>(ly),
                            n * static_cast<std::uint32_t>(lz));
        const unsigned columns = (kFull >> (31 - last)) & (kFull << first);
        const unsigned rows_layers = 1u << ly | (B::kZ > 1 ? 1u << (B::kY + lz) : 0u);
        acc_cover |= columns | static_cast<unsigned long long>(rows_layers) << 32;
        acc_whole = acc_whole || (whole[j] >> first & 1u);  // the component's root run
      }
    }
    {
      const unsigned peers = __match_any_sync(kFull, acc_label);
      const std::uint32_t n = __reduce_add_sync(peers, S::n(acc_sums)), sx = __reduce_add_sync(peers, S::x(acc_sums)),
                          sy = __reduce_add_sync(peers, S::y(acc_sums)), sz = __reduce_add_sync(peers, S::z(acc_sums));
      const unsigned columns = __reduce_or_sync(peers, static_cast<unsigned>(acc_cover)),
                     rows_layers = __reduce_or_sync(peers, static_cast<unsigned>(acc_cover >> 32));
      const bool is_whole = __reduce_or_sync(peers, acc_whole ? 1u : 0u) != 0;
      if (acc_label && lane == __ffs(peers) - 1)
        insert(acc_label, S::pack(n, sx, sy, sz), columns | static_cast<unsigned long long>(rows_layers) << 32, is_whole);
    }
    __syncwarp();
    // A new carry when the carry is absent from this brick: the brick's largest spanning label.
    bool present = false;
    unsigned best = 0;  // voxels << 8 | slot
    for (int i = lane; i < kStatsSlots; i += 32) {
      const std::uint32_t label = t.label[i];
      present = present || (carry_label && label == carry_label);
      if (label && !(t.whole[i / 32] >> (i % 32) & 1u)) best = max(best, S::n(t.sums[i]) << 8 | static_cast<unsigned>(i));
    }
    if (!__any_sync(kFull, present)) {
      if (carry_label && carry.voxels) add_to_record(st[carry_label - 1], carry);
      carry = Acc{};
      best = __reduce_max_sync(kFull, best);
      carry_label = best ? t.label[best & 0xFFu] : 0u;
    }
    __syncwarp();  // every lane has read the carry's slot before its owner clears it
    // One flush per label of the brick (the carry's into registers, a whole component's by plain
    // stores); the slots are cleared for the next brick.
    for (int i = lane; i < kStatsSlots; i += 32) {
      const std::uint32_t label = t.label[i];
      if (!label) continue;
      const Acc a = brick_acc<B>(t.sums[i], t.cover[i], x0, y0, z0);
      if (t.whole[i / 32] >> (i % 32) & 1u) write_record(st[label - 1], a);
      else if (label == carry_label) merge_acc(carry, a);
      else add_to_record(st[label - 1], a);
      t.label[i] = 0, t.sums[i] = 0, t.cover[i] = 0;
    }
    __syncwarp();  // every lane has read the whole-component bits
    if (lane < kStatsSlots / 32) t.whole[lane] = 0;
  });
  if (carry_label && carry.voxels) add_to_record(st[carry_label - 1], carry);
}

// ---- host side ----------------------------------------------------------------------------------

std::size_t align256(std::size_t v) { return (v + 255) & ~std::size_t{255}; }

struct VolumePlan {
  VolGeo g{};
  int conn = 26;
  bool multilabel = false;
  bool layer = false;  // one layer: LayerTile (local pass, merge) and LayerBrick (statistics), else VolumeBrick
  bool bits = false;   // a binary volume of several layers: bits_local_kernel and bits_merge_kernel
  std::uint64_t n = 0;
  std::uint32_t nwords = 0;  // words of 32 columns of a row: nbx * ny * nz < n
  std::size_t scan_bytes = 0;
  std::size_t off_P = 0, off_rows = 0, off_marks = 0, off_offsets = 0, off_scan = 0, total = 0;
};

// The numbering scan's input: each root word's count of roots.
thrust::transform_iterator<RootsInWord, const RowWord*> root_counts(const RowWord* rows) {
  return thrust::transform_iterator<RootsInWord, const RowWord*>(rows, RootsInWord{});
}

VolumePlan make_volume_plan(std::int64_t nx, std::int64_t ny, std::int64_t nz, const LabelOptions& o) {
  VolumePlan p;
  p.conn = o.connectivity == 0 ? 26 : o.connectivity;
  if (p.conn != 6 && p.conn != 18 && p.conn != 26)
    throw InputError("label: connectivity of a volume must be 6, 18 or 26, not " + std::to_string(o.connectivity));
  if (o.algorithm != LabelAlgorithm::automatic && o.algorithm != LabelAlgorithm::tile_merge)
    throw BackendError("labeling algorithm '" + std::string(to_string(o.algorithm)) +
                       "' is not available for volumes on the cuda backend");
  if (nx < 0 || ny < 0 || nz < 0)
    throw InputError("label: negative volume size " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz));
  p.multilabel = o.multilabel;
  if (nx == 0 || ny == 0 || nz == 0) return p;  // n = 0: nothing to label
  // Guard the product against overflow before forming it.
  constexpr std::uint64_t kMaxVoxels = 0xFFFFFFFFull;  // keys < 2^32 - 1; 0xFFFFFFFF is background
  const auto ux = static_cast<std::uint64_t>(nx), uy = static_cast<std::uint64_t>(ny), uz = static_cast<std::uint64_t>(nz);
  // Sides below 2^31 keep a brick's coordinates (side + 31) within 32 bits.
  constexpr std::uint64_t kMaxSide = std::uint64_t{1} << 31;
  if (ux >= kMaxSide || uy >= kMaxSide || uz >= kMaxSide || uy > kMaxVoxels / ux || uz > kMaxVoxels / (ux * uy))
    throw Error("label: a volume of " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                " voxels is beyond one CUDA call's 32-bit keys (fewer than 2^32 voxels, sides below 2^31)");
  p.n = ux * uy * uz;
  p.g.nx = static_cast<std::uint32_t>(nx);
  p.g.ny = static_cast<std::uint32_t>(ny);
  p.g.nz = static_cast<std::uint32_t>(nz);
  p.g.sxy = static_cast<std::uint32_t>(ux * uy);
  p.g.n = static_cast<std::uint32_t>(p.n);
  p.g.nbx = static_cast<std::uint32_t>((ux + kBX - 1) / kBX);
  // In one layer 18- and 26-connectivity pair the same voxels: one instantiation serves both.
  p.layer = nz == 1;
  if (p.layer && p.conn == 18) p.conn = 26;
  const std::uint64_t by = p.layer ? LayerBrick::kY : VolumeBrick::kY, bz = p.layer ? LayerBrick::kZ : VolumeBrick::kZ;
  p.g.nby = static_cast<std::uint32_t>((uy + by - 1) / by);
  // Every brick holds a voxel of the volume, so there are at most n of them.
  p.g.nbricks = static_cast<std::uint32_t>(std::uint64_t{p.g.nbx} * p.g.nby * ((uz + bz - 1) / bz));
  p.g.ntx = static_cast<std::uint32_t>((ux + LayerTile::kX - 1) / LayerTile::kX);
  p.g.ntiles = static_cast<std::uint32_t>(std::uint64_t{p.g.ntx} * ((uy + LayerTile::kY - 1) / LayerTile::kY));  // <= nbricks
  p.nwords = static_cast<std::uint32_t>(std::uint64_t{p.g.nbx} * uy * uz);
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, p.scan_bytes, root_counts(nullptr),
                                                  static_cast<std::uint32_t*>(nullptr), p.nwords));
  const std::size_t word_bytes = std::size_t{p.nwords} * 4;
  p.bits = !p.layer && !p.multilabel;
  p.off_P = 0;
  p.off_rows = align256(p.off_P + p.n * 4);
  p.off_marks = align256(p.off_rows + std::size_t{p.nwords} * sizeof(RowWord));
  p.off_offsets = align256(p.off_marks + std::size_t{p.nwords} * sizeof(RowMarks));
  p.off_scan = align256(p.off_offsets + word_bytes);
  p.total = align256(p.off_scan + p.scan_bytes);
  return p;
}

// Thread blocks for a grid-stride kernel: as many as the device holds at once (the kernel's
// occupancy: its registers and shared memory decide), so that no block waits for a second wave
// (a layer tile's 33 KB of parents and marks leave room for 6 blocks per SM, not 8), and no more
// than the work needs.
template <class... Params>
unsigned resident_blocks(std::uint64_t wanted, void (*kernel)(Params...), int block_threads = kThreads) {
  const unsigned resident = resident_blocks_on_device(reinterpret_cast<const void*>(kernel), block_threads);
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(wanted, resident)));
}

// Phase timing for the benchmark (set_volume_phase_events): null, or 7 events recorded in the
// labeling's stream at the phase boundaries.
cudaEvent_t* g_phase_events = nullptr;
void mark_phase(int boundary, cudaStream_t s) {
  if (g_phase_events) WINNOW_CUDA_CHECK(cudaEventRecord(g_phase_events[boundary], s));
}

// The temporary storage's arrays (VolumePlan's offsets).
struct VolumeTemp {
  std::uint32_t* P;        // the forest
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

template <class T, int Conn, class B>
void launch_link(const VolumePlan& p, const T* d_vol, const VolumeTemp& t, cudaStream_t s) {
  constexpr unsigned kWarps = kThreads / 32;
  const unsigned brick_warp_blocks = (p.g.nbricks + kWarps - 1) / kWarps;  // a warp per brick
  const bool bits = !B::kLayer && p.bits;
  if constexpr (B::kLayer)
    layer_local_kernel<T, Conn><<<resident_blocks(p.g.ntiles, layer_local_kernel<T, Conn>), kThreads, 0, s>>>(
        d_vol, t.P, t.rows, t.marks, p.g, p.multilabel);
  else if (bits)
    bits_local_kernel<T, Conn><<<resident_blocks(brick_warp_blocks, bits_local_kernel<T, Conn>), kThreads, 0, s>>>(
        d_vol, t.P, t.rows, p.g,
        sizeof(T) == 1 && reinterpret_cast<std::uintptr_t>(d_vol) % 16 == 0 && p.g.nx % 16 == 0);
  else
    local_kernel<T, Conn, B><<<resident_blocks(p.g.nbricks, local_kernel<T, Conn, B>), kThreads, 0, s>>>(
        d_vol, t.P, t.rows, p.g, p.multilabel);
  WINNOW_CUDA_CHECK_LAUNCH();
  mark_phase(1, s);
  if constexpr (!B::kLayer)
    if (bits)
      bits_merge_kernel<Conn><<<resident_blocks(brick_warp_blocks, bits_merge_kernel<Conn>), kThreads, 0, s>>>(
          t.rows, t.P, t.marks, p.g);
  if (!bits) {
    const std::uint64_t face_warps = std::uint64_t{brick_count<B>(p.g)} * (face_slots<Conn, B>() / 32);
    merge_kernel<T, Conn, B><<<resident_blocks((face_warps + kWarps - 1) / kWarps, merge_kernel<T, Conn, B>), kThreads, 0,
                               s>>>(d_vol, t.P, t.rows, t.marks, p.g, p.multilabel);
  }
  WINNOW_CUDA_CHECK_LAUNCH();
  mark_phase(2, s);
}

// Passes 1-3: the forest, the roots' words scanned, N in *d_count.
template <class T>
void run_link_count(const VolumePlan& p, void* d_temp, const T* d_vol, std::uint32_t* d_count, cudaStream_t s) {
  if (p.n == 0) {
    WINNOW_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(std::uint32_t), s));
    return;
  }
  const VolumeTemp t = volume_temp(p, d_temp);
  mark_phase(0, s);
  if (!p.layer)  // the layer kernel writes every marks word
    WINNOW_CUDA_CHECK(cudaMemsetAsync(t.marks, 0, std::size_t{p.nwords} * sizeof(RowMarks), s));
  if (p.layer) {
    if (p.conn == 6) launch_link<T, 6, LayerTile>(p, d_vol, t, s);
    else launch_link<T, 26, LayerTile>(p, d_vol, t, s);
  } else if (p.conn == 6) {
    launch_link<T, 6, VolumeBrick>(p, d_vol, t, s);
  } else if (p.conn == 18) {
    launch_link<T, 18, VolumeBrick>(p, d_vol, t, s);
  } else {
    launch_link<T, 26, VolumeBrick>(p, d_vol, t, s);
  }
  std::size_t scan_bytes = p.scan_bytes;
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(t.scan, scan_bytes, root_counts(t.rows), t.offsets, p.nwords, s));
  total_kernel<<<1, 1, 0, s>>>(t.rows, t.offsets, p.nwords, d_count);
  WINNOW_CUDA_CHECK_LAUNCH();
  mark_phase(3, s);
}

// Pass 4: labels, and the statistics of labels <= cap when st.
template <class T>
void run_number_label(const VolumePlan& p, void* d_temp, const T* d_vol, std::uint32_t* d_labels,
                      const std::uint32_t* d_count, RawVolumeComponentStats* st, std::uint64_t cap, cudaStream_t s) {
  if (p.n == 0) return;
  if (!cap) st = nullptr;
  const VolumeTemp t = volume_temp(p, d_temp);
  labels_kernel<<<resident_blocks((p.n + kThreads - 1) / kThreads, labels_kernel), kThreads, 0, s>>>(
      t.P, t.rows, t.offsets, d_labels, p.g);
  WINNOW_CUDA_CHECK_LAUNCH();
  mark_phase(4, s);
  if (st) {  // the records brick by brick, from the row words or from the labels just written
    init_records_kernel<<<resident_blocks((std::min<std::uint64_t>(cap, p.n) * 8 + kThreads - 1) / kThreads,
                                          init_records_kernel),
                          kThreads, 0, s>>>(st, cap, d_count, p.multilabel);
    WINNOW_CUDA_CHECK_LAUNCH();
    if (p.multilabel) {
      root_values_kernel<T><<<resident_blocks((p.nwords + kThreads - 1) / kThreads, root_values_kernel<T>), kThreads, 0,
                              s>>>(d_vol, t.rows, t.offsets, p.g, st, cap);
      WINNOW_CUDA_CHECK_LAUNCH();
    }
    auto launch = [&](auto kernel) {
      const unsigned blocks = resident_blocks((p.g.nbricks + kStatsWarps - 1) / kStatsWarps, kernel, kStatsWarps * 32);
      kernel<<<blocks, kStatsWarps * 32, 0, s>>>(t.rows, t.marks, d_labels, p.g, st, cap);
    };
    if (p.bits) launch(brick_stats_kernel<VolumeBrick, true>);
    else if (p.layer) launch(brick_stats_kernel<LayerBrick, false>);
    else launch(brick_stats_kernel<VolumeBrick, false>);
    WINNOW_CUDA_CHECK_LAUNCH();
  }
  mark_phase(5, s);
}

template <class T>
void device_label_volume(void* d_temp, std::size_t& temp_bytes, const T* d_volume, std::int64_t nx, std::int64_t ny,
                         std::int64_t nz, std::uint32_t* d_labels, std::uint32_t* d_count,
                         RawVolumeComponentStats* d_stats, std::uint64_t stats_capacity, const LabelOptions& options,
                         cudaStream_t stream) {
  if (options.min_area > 1 || options.largest_k != 0)
    throw InputError("winnow::cuda::label_volume: min_area and largest_k need the count on the host; use winnow::label");
  const VolumePlan p = make_volume_plan(nx, ny, nz, options);
  if (!d_temp) {
    temp_bytes = std::max<std::size_t>(p.total, 1);
    return;
  }
  if (temp_bytes < p.total) throw InputError("winnow::cuda::label_volume: temporary storage too small");
  if (d_stats && reinterpret_cast<std::uintptr_t>(d_stats) % alignof(RawVolumeComponentStats) != 0)
    throw InputError("winnow::cuda::label_volume: d_stats must be 16-byte aligned");
  run_link_count(p, d_temp, d_volume, d_count, stream);
  run_number_label(p, d_temp, d_volume, d_labels, d_count, d_stats, d_stats ? stats_capacity : 0, stream);
}

}  // namespace

void set_volume_phase_events(cudaEvent_t* events) { g_phase_events = events; }

namespace {

/// One call: the whole request on the device at once (fewer than 2^32 voxels, 32-bit labels), after
/// layers_per_call has started the device.
template <class T>
std::uint64_t label_volume_once(const VolumeLabelRequest<T>& req, std::vector<VolumeComponentSums>* sums) {
  if (sums) sums->clear();
  const VolumeView<const T>& v = req.volume;
  if (v.empty()) return 0;
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t) { return std::chrono::duration<double, std::milli>(clock::now() - t).count(); };
  StageTimes times;
  auto t = clock::now();
  LabelOptions o;
  o.connectivity = req.connectivity;
  o.multilabel = req.multilabel;
  const VolumePlan p = make_volume_plan(v.nx, v.ny, v.nz, o);  // the context: started by layers_per_call
  cudaStream_t s = nullptr;
  const auto n = static_cast<std::size_t>(p.n);
  DeviceBuffer<T> d_vol(n, s);
  DeviceBuffer<std::uint32_t> d_labels(n, s);
  DeviceBuffer<char> d_temp(p.total, s);
  DeviceBuffer<std::uint32_t> d_count(1, s);
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  times.device_setup = since(t);
  t = clock::now();
  const std::size_t row_bytes = static_cast<std::size_t>(v.nx) * sizeof(T);
  if (v.slice_stride == v.row_stride * v.ny)  // rows evenly spaced: one pitched copy
    copy_to_device(d_vol.get(), row_bytes, v.data, static_cast<std::size_t>(v.row_stride) * sizeof(T), row_bytes,
                   static_cast<std::size_t>(v.ny * v.nz), s);
  else
    for (std::int64_t z = 0; z < v.nz; ++z)
      copy_to_device(d_vol.get() + static_cast<std::size_t>(z * v.nx * v.ny), row_bytes, v.row(0, z),
                     static_cast<std::size_t>(v.row_stride) * sizeof(T), row_bytes, static_cast<std::size_t>(v.ny), s);
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  times.transfers = since(t);
  t = clock::now();
  run_link_count(p, d_temp.get(), d_vol.get(), d_count.get(), s);
  std::uint32_t count = 0;
  WINNOW_CUDA_CHECK(cudaMemcpyAsync(&count, d_count.get(), 4, cudaMemcpyDeviceToHost, s));
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  DeviceBuffer<RawVolumeComponentStats> d_stats(sums && count ? count : 0, s);
  run_number_label(p, d_temp.get(), d_vol.get(), d_labels.get(), d_count.get(), d_stats.get(), d_stats.size(), s);
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  times.compute = since(t);
  t = clock::now();
  const VolumeView<std::uint32_t>& out = req.labels32;
  const std::size_t label_row_bytes = static_cast<std::size_t>(v.nx) * 4;
  if (out.slice_stride == out.row_stride * out.ny)
    copy_to_host(out.data, static_cast<std::size_t>(out.row_stride) * 4, d_labels.get(), label_row_bytes,
                 label_row_bytes, static_cast<std::size_t>(v.ny * v.nz), s);
  else
    for (std::int64_t z = 0; z < v.nz; ++z)
      copy_to_host(out.row(0, z), static_cast<std::size_t>(out.row_stride) * 4,
                   d_labels.get() + static_cast<std::size_t>(z * v.nx * v.ny), label_row_bytes, label_row_bytes,
                   static_cast<std::size_t>(v.ny), s);
  if (sums && count) {
    std::vector<RawVolumeComponentStats> raw(count);
    copy_to_host(raw.data(), raw.size() * sizeof(raw[0]), d_stats.get(), raw.size() * sizeof(raw[0]),
                 raw.size() * sizeof(raw[0]), 1, s);
    sums->resize(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      const RawVolumeComponentStats& r = raw[i];
      VolumeComponentSums& m = (*sums)[i];
      m.voxels = r.voxels;
      m.sum_x = r.sum_x, m.sum_y = r.sum_y, m.sum_z = r.sum_z;
      m.min_x = r.min_x, m.min_y = r.min_y, m.min_z = r.min_z;
      m.max_x = r.max_x, m.max_y = r.max_y, m.max_z = r.max_z;
      m.value = r.value;
    }
  }
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  times.transfers += since(t);
  if (req.times) *req.times += times;
  return count;
}

/// The most layers of nx x ny voxels one call takes: fewer than 2^32 voxels (the keys), and what
/// the device's free memory holds (input, labels, parents and a margin for the rest: 9 bytes a
/// voxel besides the input's). Throws Error when not even one layer fits.
std::int64_t layers_per_call(std::int64_t nx, std::int64_t ny, std::size_t voxel_bytes, StageTimes* times) {
  const auto layer = static_cast<std::uint64_t>(nx) * static_cast<std::uint64_t>(ny);
  const std::uint64_t by_keys = static_cast<std::uint64_t>(nx) < (std::uint64_t{1} << 31) &&
                                        static_cast<std::uint64_t>(ny) < (std::uint64_t{1} << 31)
                                    ? 0xFFFFFFFFull / layer
                                    : 0;
  const auto t = std::chrono::steady_clock::now();
  WINNOW_CUDA_CHECK(cudaFree(nullptr));  // the context, if this is the process's first CUDA call
  note_device_started();
  std::size_t free_bytes = 0, total_bytes = 0;
  WINNOW_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (times) times->device_setup += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  const std::uint64_t by_memory = static_cast<std::uint64_t>(0.9 * static_cast<double>(free_bytes)) / (layer * (voxel_bytes + 9));
  const std::uint64_t layers = std::min(by_keys, by_memory);
  if (layers == 0)
    throw Error("label: a layer of " + std::to_string(nx) + "x" + std::to_string(ny) + " voxels is beyond one CUDA call (" +
                (by_keys == 0 ? std::string("fewer than 2^32 voxels, sides below 2^31")
                              : std::to_string(free_bytes >> 20) + " MiB of device memory free") + ")");
  return static_cast<std::int64_t>(layers);  // at most 2^32 - 1
}

}  // namespace

template <class T>
std::uint64_t label_volume(const VolumeLabelRequest<T>& req, std::vector<VolumeComponentSums>* sums,
                           std::int64_t band_layers) {
  if (sums) sums->clear();
  const VolumeView<const T>& v = req.volume;
  if (v.empty()) return 0;
  const std::int64_t max_layers = layers_per_call(v.nx, v.ny, sizeof(T), req.times);
  band_layers = band_layers > 0 ? std::min(band_layers, max_layers) : max_layers;
  if (v.nz > band_layers || !req.labels32.data)  // beyond one call, or 64-bit labels: bands (label/bands.cpp)
    return label_volume_in_bands<T>(req, sums, band_layers,
                                    [](const VolumeLabelRequest<T>& band, std::vector<VolumeComponentSums>* band_sums) {
                                      return label_volume_once(band, band_sums);
                                    });
  return label_volume_once(req, sums);
}

template std::uint64_t label_volume<std::uint8_t>(const VolumeLabelRequest<std::uint8_t>&, std::vector<VolumeComponentSums>*, std::int64_t);
template std::uint64_t label_volume<std::uint16_t>(const VolumeLabelRequest<std::uint16_t>&, std::vector<VolumeComponentSums>*, std::int64_t);
template std::uint64_t label_volume<std::uint32_t>(const VolumeLabelRequest<std::uint32_t>&, std::vector<VolumeComponentSums>*, std::int64_t);
template std::uint64_t label_volume<std::uint64_t>(const VolumeLabelRequest<std::uint64_t>&, std::vector<VolumeComponentSums>*, std::int64_t);

}  // namespace winnow::detail::cuda

namespace winnow::cuda {

template <VolumeVoxel T>
void label_volume(void* d_temp, std::size_t& temp_bytes, const T* d_volume, std::int64_t nx, std::int64_t ny,
                  std::int64_t nz, std::uint32_t* d_labels, std::uint32_t* d_count, RawVolumeComponentStats* d_stats,
                  std::uint64_t stats_capacity, const LabelOptions& options, cudaStream_t stream) {
  detail::cuda::device_label_volume(d_temp, temp_bytes, d_volume, nx, ny, nz, d_labels, d_count, d_stats, stats_capacity,
                                    options, stream);
}
template void label_volume<std::uint8_t>(void*, std::size_t&, const std::uint8_t*, std::int64_t, std::int64_t,
                                         std::int64_t, std::uint32_t*, std::uint32_t*, RawVolumeComponentStats*,
                                         std::uint64_t, const LabelOptions&, cudaStream_t);
template void label_volume<std::uint16_t>(void*, std::size_t&, const std::uint16_t*, std::int64_t, std::int64_t,
                                          std::int64_t, std::uint32_t*, std::uint32_t*, RawVolumeComponentStats*,
                                          std::uint64_t, const LabelOptions&, cudaStream_t);
template void label_volume<std::uint32_t>(void*, std::size_t&, const std::uint32_t*, std::int64_t, std::int64_t,
                                          std::int64_t, std::uint32_t*, std::uint32_t*, RawVolumeComponentStats*,
                                          std::uint64_t, const LabelOptions&, cudaStream_t);
template void label_volume<std::uint64_t>(void*, std::size_t&, const std::uint64_t*, std::int64_t, std::int64_t,
                                          std::int64_t, std::uint32_t*, std::uint32_t*, RawVolumeComponentStats*,
                                          std::uint64_t, const LabelOptions&, cudaStream_t);

}  // namespace winnow::cuda
