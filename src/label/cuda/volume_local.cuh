#pragma once
// Pass 1 of the volume labeling, local: every brick labelled alone, in shared memory, so that only
// the pairs across bricks' faces are left to the merge (volume_merge.cuh). Whichever kernel runs,
// every foreground voxel's parent is then its brick-local root (a global key; background kNone),
// or, bits_local_kernel, every run's parent is its brick-local root run (the run forest,
// volume_plan.cuh), and the roots bits of the row words mark the brick-local roots.
//   local_kernel        multi-label volumes (and binary ones of rows under 16 columns): a brick
//                       of 32 x 8 x 8 voxels a thread block;
//   layer_local_kernel  volumes of one layer: a tile of 4 x 2 bricks of 32 x 32 pixels a block;
//   bits_local_kernel   other binary volumes: a brick of 32 x 8 x 8 voxels a warp, rows as bit words
//                       (26-connectivity: over runs of 2 x 2 x 2 blocks, volume_rows.cuh).
// All three split rows into x-runs with ballots and unite a run once with each stretch of joining
// voxels in each backward row -- one union per run and stretch instead of one per voxel and offset
// (a dense 26-connected row of 32 voxels: a handful instead of 160, and far fewer colliding
// atomics on the brick's root).
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "label/cuda/volume_plan.cuh"
#include "label/cuda/volume_rows.cuh"

namespace winnow::detail::cuda {
namespace {

// ---- local_kernel: a brick of voxels a thread block ---------------------------------------------

// The lanes (brick columns) of a warp's row whose voxel joins its left neighbour, as a ballot.
template <class T>
__device__ __forceinline__ unsigned joins_left_ballot(const T* values, int li, bool multilabel) {
  const T v = values[li];
  const int lx = li % kBX;
  return __ballot_sync(kFull, v != T{} && lx > 0 && joins(v, values[li - 1], multilabel));
}

// The first column of lane lx's run: the nearest column at or before lx that does not join its
// left neighbour (bit 0 of `left` is always clear).
__device__ __forceinline__ int run_first_column(unsigned left, int lx) {
  return 31 - __clz(~left & (kFull >> (31 - lx)));
}

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
  grid_dependency_wait();  // launched by launch_dependent
  constexpr int kBrick = B::kVoxels;
  __shared__ T values[kBrick];
  __shared__ std::uint32_t parent[kBrick];  // brick-local keys (lz * kY + ly) * kBX + lx
  const SharedForest forest(parent);
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

// ---- layer_local_kernel: a tile of pixels a thread block ----------------------------------------

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
  grid_dependency_wait();  // launched by launch_dependent
  using B = LayerTile;
  constexpr int kW = B::kX;                // a tile row's stride in `parent`
  constexpr int kBricksX = B::kX / kBX;    // bricks in a tile row
  constexpr int kBrickY = LayerBrick::kY;  // a brick's rows
  static_assert(kBrickY <= 32, "a lane keeps one row's run ballot");
  __shared__ std::uint32_t parent[B::kVoxels];  // tile-local keys ty * kW + tx
  __shared__ unsigned spans[B::kVoxels / 32];   // bit: a root that a step-2 union linked another under
  const SharedForest forest(parent);
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x & 31u);
  const int bx = warp % kBricksX * kBX, by = warp / kBricksX * kBrickY;  // the warp's brick in the tile
  for (std::uint32_t tile = blockIdx.x; tile < g.ntiles; tile += gridDim.x) {
    std::uint32_t x0, y0, z0;
    brick_origin<B>(tile, g, x0, y0, z0);
    for (int i = static_cast<int>(threadIdx.x); i < B::kVoxels / 32; i += kThreads) spans[i] = 0;
    const std::uint32_t x = x0 + bx + static_cast<std::uint32_t>(lane), brick_y = y0 + by;
    const int height = x0 + bx < g.nx && brick_y < g.ny
                           ? static_cast<int>(min(static_cast<std::uint32_t>(kBrickY), g.ny - brick_y))
                           : 0;
    // brick -> tile key
    auto at = [&](int ly, int lx) { return static_cast<std::uint32_t>((by + ly) * kW + bx + lx); };
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

// ---- bits_local_kernel: a brick of bit rows a warp ----------------------------------------------

// A binary volume of several layers is labelled over x-runs held as bits (volume_rows.cuh): a row
// of a brick is one 32-bit word. A warp labels a whole 32 x 8 x 8 brick alone, two rows per lane:
// the union-find nodes are runs (at most 16 per row), not voxels, so a dense brick has a few
// hundred nodes instead of 2048, and a lane unites its rows' runs with their backward rows' runs
// (shared-memory union-find as in local_kernel, in the warp's own arrays). The lanes unite a pair
// each per round at one call site (unite_in_lockstep), then walk their rows' runs to their roots.
// Under 6-connectivity a round is one step of each lane's union (union_step: a halving step of
// both finds, or a link), so no lane runs a find loop of its own and the warp stays converged:
// 512^3 density 0.5, 10 -> 14 of 32 lanes active, local phase 1.10 -> 1.00 ms (H200, call 54).
// Its output is the run forest (volume_plan.cuh), not a parent per voxel: each run's parent is its
// brick-local root's node, and the rows' words (foreground and the runs that are brick-local
// roots) go to a global array, one word per 32 columns of every row, from which the merge, the
// label pass and the statistics read the rows of any brick. A voxel's parent is never written:
// the label pass finds it from the word (its run) -- at density 0.5 a row of 32 voxels has about
// 8 runs, 32 bytes of forest instead of 128.
// Under 26-connectivity the unions are those of runs of 2 x 2 x 2 blocks (unite_blocks): a brick's
// 16 block rows, about 3 block runs each at density 0.5, against 64 rows of 8 runs; 512^3 density
// 0.5, 2.73 -> 0.76 ms (bench/results/label.md). The output is the same run forest.
// A run's node in the brick: row r's k-th run is r * kRunStride + k. Numbers still grow in raster
// order, and the odd stride puts the same run of the 32 lanes' rows in 32 different shared-memory
// banks (a stride of 16 would put them in 2).
constexpr int kRunStride = kWordRuns + 1;

// Bit k of the result: byte k of w is non-zero.
__device__ __forceinline__ unsigned nonzero_bytes(unsigned w) {
  const unsigned high = (((w & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | w) & 0x80808080u;  // bit 7 of each byte
  return ((high >> 7) * 0x00204081u) >> 21 & 0xFu;                              // bits 0, 8, 16, 24 gathered at 21..24
}

// Every entry of nodes [first, first + count) of a brick's forest pointed at its root, by the lane
// that owns them: a lane writes its own entries only, so a concurrent walk through them reads an
// ancestor either way.
template <class Forest>
__device__ __forceinline__ void point_at_roots(const Forest& forest, int first, int count) {
  for (int id = first; id < first + count; ++id) {
    std::uint32_t root = static_cast<std::uint32_t>(id);
    for (std::uint32_t p = parent_of(forest, root); p != root; p = parent_of(forest, root)) root = p;
    forest.lower(forest.entry(static_cast<std::uint32_t>(id)), root);
  }
}

// bits_local_kernel's forest under 26-connectivity: the warp's brick (rows `masks`) labelled over
// runs of blocks (block run t of block row br: node br * kRunStride + t). Afterwards
// first_run[root] holds each set's raster-first voxel run (r * kRunStride + k), the root of every
// voxel run of the set, which bits_local_kernel writes out as for the other connectivities. The
// block rows' work falls to lanes 0..15, a block row each; the unions to all 32, two candidate
// block row pairs each (block row s / 4 with back_row(s % 4), s = lane and lane + 32).
__device__ __forceinline__ void unite_blocks(const unsigned* masks, std::uint32_t* block_parent,
                                             std::uint32_t* first_run, unsigned* block_starts,
                                             const SharedForest& forest, int lane) {
  static_assert(kBlockRows <= 32 && 4 * kBlockRows == 2 * 32, "a lane per block row, two block row pairs a lane");
  auto row = [&](int br, int i) { return masks[block_row_row(br, i)]; };
  if (lane < kBlockRows) {
    const unsigned starts = block_run_starts(row(lane, 0) | row(lane, 1) | row(lane, 2) | row(lane, 3));
    block_starts[lane] = starts;
    for (int id = lane * kRunStride; id < lane * kRunStride + __popc(starts); ++id) {
      block_parent[id] = static_cast<std::uint32_t>(id);
      first_run[id] = kNone;
    }
  }
  __syncwarp();
  // Block row br with its backward block row (dy, dz) of back_row(q), through their face words.
  int br = 0, br2 = 0;
  unsigned starts = 0, starts2 = 0;
  unsigned long long last = ~0ull;  // the lane's last pair: a repeat finds one root twice
  unite_in_lockstep<2>(
      [&](int i, TouchingRuns& runs) {
        const int s = lane + 32 * i, q = s % 4;
        br = s / 4;
        const int by = br % kBlockY, bz = br / kBlockY;
        const BackRow b = back_row(q, 26);
        const int by2 = by + b.dy, bz2 = bz + b.dz;
        if (by2 < 0 || by2 >= kBlockY || bz2 < 0) return false;  // the block row lies in another brick
        br2 = bz2 * kBlockY + by2;
        const BlockFaceRows f = block_face_rows(b);
        const unsigned face = row(br, f.near[0]) | row(br, f.near[1]), face2 = row(br2, f.far[0]) | row(br2, f.far[1]);
        starts = block_starts[br];
        starts2 = block_starts[br2];
        runs = TouchingRuns(face, face2, b.ext);
        return true;
      },
      [&](int a, int c) {
        const auto na = static_cast<std::uint32_t>(br * kRunStride + run_of_starts(starts, a)),
                   nb = static_cast<std::uint32_t>(br2 * kRunStride + run_of_starts(starts2, c));
        const unsigned long long both = static_cast<unsigned long long>(na) << 32 | nb;
        if (both == last) return;
        last = both;
        unite(forest, na, nb);
      });
  __syncwarp();
  // Roots, as bits_local_kernel's; then each set's first voxel run: a block run's is the first of
  // its four rows (raster order) that holds a bit in its columns, that bit's run (a voxel run lies
  // in one block run: its columns join their blocks).
  if (lane < kBlockRows) point_at_roots(forest, lane * kRunStride, __popc(block_starts[lane]));
  __syncwarp();
  if (lane < kBlockRows) {
    unsigned rest = block_starts[lane];
    for (int id = lane * kRunStride; rest; ++id) {
      const int first_bit = __ffs(rest) - 1;
      rest &= rest - 1;
      const unsigned columns = (rest ? (1u << (__ffs(rest) - 1)) - 1 : kFull) & (kFull << first_bit);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = block_row_row(lane, i);
        const unsigned m = masks[r], held = m & columns;
        if (!held) continue;
        atomicMin(first_run + block_parent[id],
                  static_cast<std::uint32_t>(r * kRunStride + run_index(m, __ffs(held) - 1)));
        break;
      }
    }
  }
}

// vector_rows: bytes (T of one byte), a 16-byte aligned volume and rows of a multiple of 16 bytes,
// so a lane reads a brick row as two 16-byte loads.
template <class T, int Conn>
__global__ void __launch_bounds__(kThreads)
    bits_local_kernel(const T* vol, std::uint32_t* R, RowWord* rows, RowMarks* marks, VolGeo g, bool vector_rows) {
  grid_dependency_wait();  // launched by launch_dependent
  using B = VolumeBrick;
  constexpr int kRows = B::kRows, kLaneRows = kRows / 32;
  static_assert(kRows % 32 == 0, "a lane takes whole rows");
  constexpr bool kBlocks = Conn == 26;
  // 26-connectivity: a block run's parent, then its set's first voxel run, and each block row's
  // block_run_starts (block run t of block row br: node br * kRunStride + t).
  // Other connectivities: a run's parent (run r * kRunStride + k).
  constexpr int kForestWords = kBlocks ? 2 * kBlockRows * kRunStride + kBlockRows : kRows * kRunStride;
  __shared__ unsigned row_words[kThreads / 32][kRows];
  __shared__ std::uint32_t parents[kThreads / 32][kForestWords];
  unsigned* masks = row_words[threadIdx.x / 32];
  std::uint32_t* parent = parents[threadIdx.x / 32];
  std::uint32_t* block_parent = parent;  // 26-connectivity: the block runs' entries
  std::uint32_t* first_run = block_parent + kBlockRows * kRunStride;
  unsigned* block_starts = first_run + kBlockRows * kRunStride;
  // The forest: over 32-bit shared offsets (SharedForest) under 6- and 26-connectivity; 18 keeps
  // generic pointers with its lockstep unions (the offsets alone measured slower there at 6 on the
  // tiled MRI, H200 call 52: local phase 0.39 -> 0.43 ms; with the unions a step a round, call 54,
  // 0.38 -> 0.35 ms).
  using Forest = std::conditional_t<kBlocks || Conn == 6, SharedForest, VoxelForest>;
  const Forest forest{parent};
  const int lane = static_cast<int>(threadIdx.x & 31u);
  for_each_brick_of_warp<B, kThreads>(g, [&](std::uint32_t x0, std::uint32_t y0, std::uint32_t z0) {
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
      // Every lane's rows are in `masks` before unite_blocks reads another's (the other
      // connectivities first fill their own forest entries, then synchronise).
      if constexpr (kBlocks) __syncwarp();
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
    // The forest of the brick's runs: over block runs under 26-connectivity, else over runs.
    if constexpr (kBlocks) {
      // Skipped for a brick of background only (it stores its empty row words below). Not under
      // 6-connectivity: there the same skip made the tiled MRI's local pass 0.346 -> 0.407 ms (H200,
      // call 63), here 0.325 -> 0.315.
      if (warp_has_foreground(mine)) unite_blocks(masks, block_parent, first_run, block_starts, forest, lane);
    } else {
#pragma unroll
      for (int j = 0; j < kLaneRows; ++j) {
        const int r = lane + 32 * j;
        // Every run is its own set at first.
        const int runs = __popc(run_starts(mine[j]));
        for (int id = r * kRunStride; id < r * kRunStride + runs; ++id) parent[id] = static_cast<std::uint32_t>(id);
      }
      __syncwarp();
      // Unions of each row's runs with the runs they touch in its backward rows inside the brick
      // (rows outside it: the merge). Run numbers grow in raster order, so the smallest number of
      // a set is its raster-first run.
      if constexpr (Conn == 6) {
        // 6-connectivity: a lane's four row pairs (rows j = 0, 1 with the row before in z and in
        // y) as masks of their stretches' first bits, and the unions advanced a step a round
        // (union_step) so that the warp stays converged: no lane runs a find loop of its own.
        static_assert(kLaneRows == 2, "two rows a lane");
        unsigned stretches[4], far_starts[4], near_starts[2];
        int far_first[4];
#pragma unroll
        for (int p = 0; p < 4; ++p) {
          const int j = p / 2;
          const BackRow b = back_row(p % 2 ? 3 : 1, Conn);
          const int r = lane + 32 * j, ry = r % B::kY + b.dy, rz = r / B::kY + b.dz;
          const bool inside = ry >= 0 && rz >= 0;  // else the row lies in another brick (the merge's)
          const int r2 = inside ? rz * B::kY + ry : 0;
          const unsigned m2 = inside ? masks[r2] : 0u;
          stretches[p] = run_starts(mine[j] & m2);
          far_starts[p] = run_starts(m2);
          far_first[p] = r2 * kRunStride;
        }
#pragma unroll
        for (int j = 0; j < 2; ++j) near_starts[j] = run_starts(mine[j]);
        std::uint32_t a = 0, c = 0;
        bool busy = false;
        for (;;) {
          if (!busy) {  // the next stretch: of the lane's first row pair that has one left
            // Chosen by selects, not a branch a pair (the lanes' pairs differ: the warp would run
            // every pair's branch).
            auto pick = [](const auto* v, int p) { return p == 0 ? v[0] : p == 1 ? v[1] : p == 2 ? v[2] : v[3]; };
            const int p = stretches[0] ? 0 : stretches[1] ? 1 : stretches[2] ? 2 : 3;
            const unsigned left = pick(stretches, p);
            if (left) {
              const int bit = __ffs(left) - 1;
#pragma unroll
              for (int k = 0; k < 4; ++k)
                if (k == p) stretches[k] = left & (left - 1);
              const unsigned near = p < 2 ? near_starts[0] : near_starts[1];
              a = static_cast<std::uint32_t>((lane + 32 * (p / 2)) * kRunStride + run_of_starts(near, bit));
              c = static_cast<std::uint32_t>(pick(far_first, p) + run_of_starts(pick(far_starts, p), bit));
              busy = true;
            }
          }
          if (!__any_sync(kFull, busy)) break;
          if (busy) busy = !union_step(forest, a, c);
        }
      } else {
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
      }
      __syncwarp();
      // Roots: every run's entry becomes its root's number, each lane walking its own rows' runs
      // (no empty slots visited).
#pragma unroll
      for (int j = 0; j < kLaneRows; ++j)
        point_at_roots(forest, (lane + 32 * j) * kRunStride, __popc(run_starts(mine[j])));
    }
    __syncwarp();
    // Each run's parent in the run forest (volume_plan.cuh): its root's node, and the rows' words,
    // foreground and brick-local roots (bit k: run k is its own root) in one store -- the merge
    // and the statistics read the foreground of any brick's rows, the numbering the roots. The
    // marks word starts with a copy of the brick-local roots in its upper half, which the merge
    // leaves alone: after it, the brick-local roots that it linked are those no longer roots.
#pragma unroll
    for (int j = 0; j < kLaneRows; ++j) {
      const int r = lane + 32 * j;
      const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
      if (y >= g.ny || z >= g.nz) continue;  // no runs (the row words were read as empty)
      const std::size_t w = word_index(x0 / kBX, y, z, g);
      const int first_id = r * kRunStride, runs = __popc(run_starts(mine[j]));
      unsigned root_bits = 0, rest = run_starts(mine[j]);  // rest: the starts of the runs left
      const int br = block_of_row(r);                      // 26-connectivity: the row's block row
      int root = 0;
      // Whole 32-byte sectors of the word's 16 entries, 8 at a time (those past the runs are never
      // read): a store per run left partial sectors, 0.69 against 0.43 ms at 512^3 d0.1.
      for (int k0 = 0; k0 < runs; k0 += 8) {
        std::uint32_t e[8];
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          const int k = k0 + q;
          if (k < runs) {  // past the runs: the last run's root again
            if constexpr (kBlocks)
              root = static_cast<int>(
                  first_run[block_parent[br * kRunStride + run_of_starts(block_starts[br], __ffs(rest) - 1)]]);
            else root = static_cast<int>(parent[first_id + k]);
            rest &= rest - 1;
            if (root == first_id + k) root_bits |= 1u << k;
          }
          const int root_row = root / kRunStride;
          e[q] = run_node(word_index(x0 / kBX, y0 + root_row % B::kY, z0 + root_row / B::kY, g),
                          root - root_row * kRunStride);
        }
        auto* sector = reinterpret_cast<uint4*>(R + run_node(w, k0));
        sector[0] = uint4{e[0], e[1], e[2], e[3]};
        sector[1] = uint4{e[4], e[5], e[6], e[7]};
      }
      rows[w] = RowWord{mine[j], root_bits};
      marks[w] = RowMarks{root_bits << kWordRuns};  // the brick-local roots, kept in the upper half
    }
    __syncwarp();  // the shared arrays are refilled for the next brick
  });
}

}  // namespace
}  // namespace winnow::detail::cuda
