#pragma once
// Pass 2 of the volume labeling, merge: the voxels on brick faces unite with their backward
// neighbours in other bricks, union-find on global memory. Every adjacent pair is seen once, from
// its later voxel: by pass 1 when both lie in one brick, here otherwise.
//   merge_kernel       multi-label volumes and volumes of one layer: a warp per 32 face voxels;
//   bits_merge_kernel  binary volumes of several layers: a warp per brick, over the row words and
//                      the run forest (volume_plan.cuh); under 26-connectivity over the block rows
//                      of 2 x 2 x 2 blocks (merge_blocks).
// Both replace a pair by its voxels' parents (brick-local roots, the same sets) and skip the pairs
// the warp united already: across the faces of a dense component nearly every pair is the same two
// brick roots, and one union suffices.
//
// 26-connectivity drops redundant pairs: when the voxel's left neighbour joins it, every backward
// neighbour with dx <= 0 is also a neighbour of that left voxel, so the pair is implied (by
// induction over raster order) and only the left pair and the four dx = +1 pairs are united -- 5
// instead of 13 in dense volumes.
//
// Every link takes the root it linked out of the root words (an atomic and of its bit: the
// brick-local roots left there are the roots) and marks the root it went under, a bit per voxel
// (per run in the run forest) in words laid out as the root words (RowMarks): its component spans
// bricks. No pass points every
// linked root at its root afterwards: the label pass walks the merge's chains itself (only
// brick-local roots are on them).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "label/cuda/volume_plan.cuh"
#include "label/cuda/volume_rows.cuh"

namespace winnow::detail::cuda {
namespace {

// Marks root a (a global key) as one that others were linked under. Most links of a large
// component go under one root: its mark is read first, and set only when it is not yet (an atomic
// per link on one word would serialize them).
__device__ __forceinline__ void set_mark(std::uint32_t* spans, unsigned bit) {
  if (!(*reinterpret_cast<const volatile std::uint32_t*>(spans) & bit)) atomicOr(spans, bit);
}
__device__ __forceinline__ void mark_spans(RowMarks* marks, std::uint32_t a, const VolGeo& g) {
  const std::uint32_t row_a = a / g.nx, x_a = a - row_a * g.nx;  // y + ny z
  set_mark(&marks[std::size_t{row_a} * g.nbx + x_a / kBX].spans, 1u << (x_a % kBX));
}
// The merge linked root b under root a: b leaves the root words, and a is marked as spanning.
__device__ __forceinline__ void unlink_root(RowWord* rows, RowMarks* marks, std::uint32_t b, std::uint32_t a,
                                            const VolGeo& g) {
  const std::uint32_t row_b = b / g.nx, x_b = b - row_b * g.nx;  // y + ny z
  atomicAnd(&rows[std::size_t{row_b} * g.nbx + x_b / kBX].roots, ~(1u << (x_b % kBX)));
  mark_spans(marks, a, g);
}
// The same for roots of the run forest (bit k of word w: node w * kWordRuns + k).
__device__ __forceinline__ void unlink_root_run(RowWord* rows, RowMarks* marks, std::uint32_t b, std::uint32_t a) {
  atomicAnd(&rows[b / kWordRuns].roots, ~(1u << (b % kWordRuns)));
  set_mark(&marks[a / kWordRuns].spans, 1u << (a % kWordRuns));
}

// ---- merge_kernel: face slots, a warp per 32 ----------------------------------------------------

// Whether the backward pair (voxel, voxel + d) is implied by 26-connectivity's left-neighbour rule.
__device__ __forceinline__ bool implied_by_left(Offset d, int conn, bool left_joins) {
  return conn == 26 && left_joins && d.dx <= 0 && !(d.dx == -1 && d.dy == 0 && d.dz == 0);
}

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
  grid_dependency_wait();  // launched by launch_dependent
  constexpr int kSlots = face_slots<Conn, B>();
  static_assert(kSlots % 32 == 0, "a warp's slots lie in one face group");
  constexpr int kWarpsPerBrick = kSlots / 32;
  const std::uint64_t units = std::uint64_t{brick_count<B>(g)} * kWarpsPerBrick;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * (kThreads / 32);
  const VoxelForest forest{P};
  for (std::uint64_t u = (blockIdx.x * static_cast<std::uint64_t>(kThreads) + threadIdx.x) / 32; u < units;
       u += warps) {
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
        b[k] =
            key_of(static_cast<std::uint32_t>(tx), static_cast<std::uint32_t>(ty), static_cast<std::uint32_t>(tz), g);
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
              [&](std::uint32_t b, std::uint32_t a) { unlink_root(rows, marks, b, a, g); });
        last_pair = both;
      }
    }
  }
}

// ---- bits_merge_kernel: a brick of bit rows a warp ----------------------------------------------

// Row pair t of a volume brick whose backward row (back_row q) lies in another brick: the rows
// of the z0 face with the row below them (q 1), the rows of the y0 face with the row before them
// (q 3), and for 18/26-connectivity the rows of the y0 or z0 face with the row (y - 1, z - 1)
// (q 0) and those of the yl or z0 face with (y + 1, z - 1) (q 2). False past the last.
template <int Conn>
__device__ __forceinline__ bool outside_row_pair(int t, int& r, int& q) {
  using B = VolumeBrick;
  static_assert(B::kY == 8 && B::kZ == 8, "the groups below count rows of 8 x 8 bricks");
  if (t < 8) return r = t, q = 1, true;                 // z0: (ly = t, lz = 0)
  if (t < 16) return r = (t - 8) * B::kY, q = 3, true;  // y0: (0, lz)
  if (Conn == 6) return false;
  if (t < 31) {  // z0 (8 rows), then y0 with lz >= 1 (7)
    const int i = t - 16;
    return r = i < 8 ? i : (i - 7) * B::kY, q = 0, true;
  }
  if (t < 46) {  // z0 (8 rows), then yl with lz >= 1 (7)
    const int i = t - 31;
    return r = i < 8 ? i : (i - 7) * B::kY + B::kY - 1, q = 2, true;
  }
  return false;
}

// The x boundary of a brick over voxel rows: each of the lane's rows (row_word, rows lane and
// lane + 32) whose first voxel is foreground unites with the last voxels of the left brick's rows
// (y + dy, z + dz) that are its neighbours, found first (bit 9 j + 3 (dz + 1) + dy + 1 of the
// lane's rows j), then united one per round.
template <int Conn, class UniteRuns>
__device__ __forceinline__ void unite_x_boundary_rows(const RowWord* rows, const VolGeo& g, std::uint32_t bx,
                                                      std::uint32_t y0, std::uint32_t z0, int lane,
                                                      const unsigned (&row_word)[VolumeBrick::kRows / 32],
                                                      UniteRuns unite_runs) {
  using B = VolumeBrick;
  constexpr int kLaneRows = B::kRows / 32;
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
        const unsigned left =
            rows[word_index(bx - 1, static_cast<std::uint32_t>(ty), static_cast<std::uint32_t>(tz), g)].fg;
        across |= static_cast<unsigned long long>(left >> 31) << (9 * j + 3 * (dz + 1) + dy + 1);
      }
  }
  while (__any_sync(kFull, across != 0)) {
    if (across) {
      const int n = __ffsll(static_cast<long long>(across)) - 1, j = n / 9, d = n % 9;
      across &= across - 1;
      const int r = lane + 32 * j;
      const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY, uy = y + d % 3 - 1, uz = z + d / 3 - 1;
      const std::size_t left_w = word_index(bx - 1, uy, uz, g);
      const unsigned left = rows[left_w].fg;
      unite_runs(run_node(word_index(bx, y, z, g), 0), run_node(left_w, __popc(run_starts(left)) - 1));
    }
    __syncwarp();  // reconverge before the vote
  }
}

// Block row pair t of a volume brick whose backward block row (back_row q) lies in another brick
// (22 of them): the block rows of the z0 face with q 0, 1, 2; those of the y0 face with q 3; those
// of the y0 and yl faces above the first block slice with q 0 and q 2. False past the last.
__device__ __forceinline__ bool outside_block_pair(int t, int& br, int& q) {
  static_assert(kBlockY == 4 && kBlockRows == 16, "the groups below count block rows of 4 x 4");
  if (t < 12) return br = t / 3, q = t % 3, true;               // z0: (by = t / 3, bz = 0)
  if (t < 16) return br = (t - 12) * kBlockY, q = 3, true;      // y0: (0, bz)
  if (t < 19) return br = (t - 15) * kBlockY, q = 0, true;      // y0: (0, bz >= 1)
  if (t < 22) return br = (t - 18) * kBlockY + 3, q = 2, true;  // yl: (3, bz >= 1)
  return false;
}
// bits_merge_kernel's pairs under 26-connectivity, over the block rows of the local pass
// (volume_rows.cuh): every voxel run of a block run has the same brick-local root, so a block row
// unites with each backward block row in another brick through their face words (TouchingRuns;
// the voxel run of a face bit is taken from the first face row that holds it), and a block row's
// first block with the last blocks of the left brick's nine neighbouring block rows once each --
// 22 block row pairs a brick and 144 x boundary pairs at most, against 46 row pairs and 576. The
// brick's rows go to `brick_rows` (shared, kRows words) and the left brick's last column, rows
// y0 - 1 .. y0 + kY and z0 - 1 .. z0 + kZ, to `left_column` as bits (kLeftColumn words), read only
// where a row of the brick's first column lies next to it. Against the merge of voxel rows, 512^3:
// density 0.9 1.23 -> 0.58 ms, 0.5 0.90 -> 0.52; but density 0.1 0.34 -> 0.41, where the pairs are
// few and the left column's reads and tests cost more than the x boundary's unions they save
// (bench/results/label.md). So a brick whose first column holds fewer than kBlockXBoundaryVoxels
// voxels takes its x boundary over voxel rows instead (unite_x_boundary_rows; no left column
// read): the merge at 512^3 d0.1 0.41 -> 0.35 ms, on the MRI 0.26 -> 0.19.
constexpr int kLeftSide = VolumeBrick::kY + 2, kLeftColumn = (kLeftSide * (VolumeBrick::kZ + 2) + 31) / 32;
template <class UniteRuns>
__device__ __forceinline__ void merge_blocks(const RowWord* rows, unsigned* brick_rows, unsigned* left_column,
                                             const VolGeo& g, std::uint32_t bx, std::uint32_t y0, std::uint32_t z0,
                                             int lane, UniteRuns unite_runs) {
  using B = VolumeBrick;
  static_assert(2 * kBlockRows == 32, "the x boundary: two lanes a block row");
  // The word of a block row's row i (block row (by, bz) of the brick, by and bz from -1 to 4):
  // false when the row lies outside the volume.
  auto word_of = [&](int by, int bz, int i, std::size_t& w) {
    const long long y = static_cast<long long>(y0) + 2 * by + i % 2, z = static_cast<long long>(z0) + 2 * bz + i / 2;
    if (y < 0 || z < 0 || y >= g.ny || z >= g.nz) return false;
    w = word_index(bx, static_cast<std::uint32_t>(y), static_cast<std::uint32_t>(z), g);
    return true;
  };
  unsigned mine[B::kRows / 32];
#pragma unroll
  for (int j = 0; j < B::kRows / 32; ++j) {
    const int r = lane + 32 * j;
    const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
    brick_rows[r] = mine[j] = y < g.ny && z < g.nz ? rows[word_index(bx, y, z, g)].fg : 0u;
  }
  if (!warp_has_foreground(mine)) return;  // no pair to unite: every pair holds one of the brick's runs
  // The brick's first column (bit lz * kY + ly): a left row is read only when a brick row within
  // one row and slice of it holds a voxel there.
  static_assert(B::kRows == 64 && B::kY == 8, "the first column as bytes of 8 rows");
  const unsigned long long first_column =
      bx == 0 ? 0ull
              : __ballot_sync(kFull, brick_rows[lane] & 1u) |
                    static_cast<unsigned long long>(__ballot_sync(kFull, brick_rows[lane + 32] & 1u)) << 32;
  // Few voxels in the first column (sparse bricks): the x boundary of voxel rows, whose unions are
  // few there, instead of the left column's reads and tests.
  const bool x_by_rows = __popcll(first_column) < VolumeTuning::kBlockXBoundaryVoxels;
#pragma unroll
  for (int k = 0; k < kLeftColumn; ++k) {
    const int i = lane + 32 * k, ly = i % kLeftSide - 1, lz = i / kLeftSide - 1;  // from -1 to kY, kZ
    const unsigned rows_near = (ly >= 1 ? 7u << (ly - 1) : 7u >> (1 - ly)) & 0xFFu;
    bool wanted = false;
#pragma unroll
    for (int dz = -1; dz <= 1; ++dz)
      wanted = wanted || (lz + dz >= 0 && lz + dz < B::kZ && (first_column >> (8 * (lz + dz)) & rows_near));
    const long long y = static_cast<long long>(y0) + ly, z = static_cast<long long>(z0) + lz;
    const bool held =
        !x_by_rows && wanted && i < kLeftSide * (B::kZ + 2) && y >= 0 && z >= 0 && y < g.ny && z < g.nz &&
        rows[word_index(bx - 1, static_cast<std::uint32_t>(y), static_cast<std::uint32_t>(z), g)].fg >> 31;
    const unsigned bits = __ballot_sync(kFull, held);
    if (lane == 0) left_column[k] = bits;
  }
  __syncwarp();
  // The block row pairs (outside_block_pair), a lane each. A face word's two rows (the same row
  // twice across an edge): their words and foreground.
  struct FaceRows {
    std::size_t w0 = 0, w1 = 0;
    unsigned m0 = 0, m1 = 0;
    // The voxel run of bit a of the face word: in the first of the rows that holds it.
    __device__ std::uint32_t run_of(int a) const {
      return m0 >> a & 1u ? run_node(w0, run_index(m0, a)) : run_node(w1, run_index(m1, a));
    }
  } near, far;
  unite_in_lockstep<1>(
      [&](int, TouchingRuns& runs) {
        int br = 0, q = 0;
        if (!outside_block_pair(lane, br, q)) return false;
        const int by = br % kBlockY, bz = br / kBlockY;
        const BackRow b = back_row(q, 26);
        const int by2 = by + b.dy, bz2 = bz + b.dz;
        const BlockFaceRows f = block_face_rows(b);
        near.m0 = brick_rows[block_row_row(br, f.near[0])];
        near.m1 = brick_rows[block_row_row(br, f.near[1])];
        if (near.m0) word_of(by, bz, f.near[0], near.w0);
        if (near.m1) word_of(by, bz, f.near[1], near.w1);
        far.m0 = word_of(by2, bz2, f.far[0], far.w0) ? rows[far.w0].fg : 0u;
        far.m1 = word_of(by2, bz2, f.far[1], far.w1) ? rows[far.w1].fg : 0u;
        runs = TouchingRuns(near.m0 | near.m1, far.m0 | far.m1, b.ext, true);
        return true;
      },
      [&](int a, int c) { unite_runs(near.run_of(a), far.run_of(c)); });
  if (bx == 0) return;
  if (x_by_rows) {  // the x boundary over voxel rows (a sparse first column)
    const unsigned lane_rows[B::kRows / 32] = {brick_rows[lane], brick_rows[lane + 32]};
    unite_x_boundary_rows<26>(rows, g, bx, y0, z0, lane, lane_rows, unite_runs);
    return;
  }
  // The x boundary over block rows: block row br = lane % 16 with the left brick's block rows
  // (by + dy, bz + dz), (dy, dz) = (k % 3 - 1, k / 3 - 1) for k < 5 (lanes 0..15) or 5 <= k < 9
  // (lanes 16..31). The rows of each that meet: those of the near y and z where dy or dz is not 0.
  const int br = lane % kBlockRows, by = br % kBlockY, bz = br / kBlockY;
  auto meets = [](int i, int dy, int dz, bool near) {
    const int sy = near ? dy > 0 : dy < 0, sz = near ? dz > 0 : dz < 0;
    return (dy == 0 || i % 2 == sy) && (dz == 0 || i / 2 == sz);
  };
  auto left_held = [&](int by2, int bz2, int i) {
    const int t = (2 * bz2 + i / 2 + 1) * kLeftSide + 2 * by2 + i % 2 + 1;  // rows from y0 - 1, z0 - 1
    return t >= 0 && t < kLeftSide * (B::kZ + 2) && (left_column[t / 32] >> (t % 32) & 1u);
  };
  unsigned across = 0;  // bit k: block row br meets the left brick's block row k
  for (int k = lane < kBlockRows ? 0 : 5; k < (lane < kBlockRows ? 5 : 9); ++k) {
    const int dy = k % 3 - 1, dz = k / 3 - 1;
    bool near = false, far = false;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      near = near || (meets(i, dy, dz, true) && (brick_rows[block_row_row(br, i)] & 1u));
      far = far || (meets(i, dy, dz, false) && left_held(by + dy, bz + dz, i));
    }
    if (near && far) across |= 1u << k;
  }
  while (__any_sync(kFull, across != 0)) {
    if (across) {
      const int k = __ffs(across) - 1, dy = k % 3 - 1, dz = k / 3 - 1;
      across &= across - 1;
      int i = 0, i2 = 0;
      while (!(meets(i, dy, dz, true) && (brick_rows[block_row_row(br, i)] & 1u))) ++i;
      while (!(meets(i2, dy, dz, false) && left_held(by + dy, bz + dz, i2))) ++i2;
      std::size_t w = 0, w2 = 0;
      word_of(by, bz, i, w);
      word_of(by + dy, bz + dz, i2, w2);
      w2 -= 1;  // the left brick's word of that row
      unite_runs(run_node(w, 0), run_node(w2, __popc(run_starts(rows[w2].fg)) - 1));
    }
    __syncwarp();  // reconverge before the vote
  }
}

// The merge of a binary volume: a warp per brick, reading row words, over the run forest. A row
// unites its runs with those of its backward rows that lie in other bricks (TouchingRuns), and its
// first run (when it starts at the first column) with the last runs of the rows of the brick to
// its left that touch it (the x boundary: every pair across it is seen once, from its right side,
// for each (dy, dz) of the connectivity). A pair's runs are replaced by their parents first
// (brick-local roots), and a pair that the warp united already is skipped: a table of the warp's
// recent pairs in shared memory (a slot per hash, swapped atomically; a pair that two lanes unite
// at once is united twice, which is harmless).
template <int Conn>
__global__ void __launch_bounds__(kThreads)
    bits_merge_kernel(RowWord* rows, std::uint32_t* R, RowMarks* marks, VolGeo g) {
  grid_dependency_wait();  // launched by launch_dependent
  using B = VolumeBrick;
  constexpr int kLaneRows = B::kRows / 32;
  constexpr int kRecent = VolumeTuning::kRecentPairs;  // slots of a warp's table of recent pairs
  static_assert(kRecent == 64, "a pair's slot is the top 6 bits of its hash");
  __shared__ unsigned long long recent_pairs[kThreads / 32][kRecent];
  unsigned long long* recent = recent_pairs[threadIdx.x / 32];
  constexpr bool kBlocks = Conn == 26;  // merge_blocks
  __shared__ unsigned brick_rows[kThreads / 32][kBlocks ? B::kRows : 1];
  __shared__ unsigned left_columns[kThreads / 32][kBlocks ? kLeftColumn : 1];
  const VoxelForest forest{R};  // the same union-find over run nodes
  const int lane = static_cast<int>(threadIdx.x & 31u);
  for (int i = lane; i < kRecent; i += 32) recent[i] = ~0ull;
  __syncwarp();
  for_each_brick_of_warp<B, kThreads>(g, [&](std::uint32_t x0, std::uint32_t y0, std::uint32_t z0) {
    const std::uint32_t bx = x0 / kBX;
    auto unite_runs = [&](std::uint32_t na, std::uint32_t nb) {
      const unsigned long long both =
          static_cast<unsigned long long>(parent_of(forest, na)) << 32 | parent_of(forest, nb);
      if (atomicExch(&recent[(both * 0x9E3779B97F4A7C15ull) >> 58], both) == both) return;  // united already
      unite(forest, static_cast<std::uint32_t>(both >> 32), static_cast<std::uint32_t>(both),
            [&](std::uint32_t b, std::uint32_t a) { unlink_root_run(rows, marks, b, a); });
    };
    if constexpr (Conn == 26) {
      merge_blocks(rows, brick_rows[threadIdx.x / 32], left_columns[threadIdx.x / 32], g, bx, y0, z0, lane, unite_runs);
    } else {
      unsigned row_word[kLaneRows];
#pragma unroll
      for (int j = 0; j < kLaneRows; ++j) {
        const int r = lane + 32 * j;
        const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
        row_word[j] = y < g.ny && z < g.nz ? rows[word_index(bx, y, z, g)].fg : 0u;
      }
      if (!warp_has_foreground(row_word)) return;  // no pair to unite: every pair holds one of the brick's runs
      // The row pairs whose backward row lies in another brick (outside_row_pair), two per lane at
      // most, so no lane waits on a few busy ones (only the rows on the brick's y0, z0 and yl faces
      // have such pairs). 6-connectivity has 16 such pairs: two lanes take each, a half of its
      // columns each (the stretches that start there), so that no lane idles -- the merge at 512^3
      // density 0.5 0.62 -> 0.48 ms, 0.9 0.29 -> 0.25 (H200, bench/results/label.md).
      constexpr bool kHalves = Conn == 6;
      std::size_t row_w = 0, row2_w = 0;  // the two rows' words
      unsigned m = 0, m2 = 0;
      unite_in_lockstep<kHalves ? 1 : 2>(
          [&](int i, TouchingRuns& runs) {
            int r = 0, q = 0;
            if (!outside_row_pair<Conn>(kHalves ? lane % 16 : lane + 32 * i, r, q)) return false;
            const BackRow b = back_row(q, Conn);
            const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
            const long long ty = static_cast<long long>(y) + b.dy, tz = static_cast<long long>(z) + b.dz;
            if (y >= g.ny || z >= g.nz || ty < 0 || ty >= g.ny || tz < 0) return false;
            const auto uy = static_cast<std::uint32_t>(ty), uz = static_cast<std::uint32_t>(tz);
            row_w = word_index(bx, y, z, g);
            row2_w = word_index(bx, uy, uz, g);
            m = rows[row_w].fg;
            m2 = rows[row2_w].fg;
            runs = TouchingRuns(m, m2, b.ext, true);
            if constexpr (kHalves) runs.first &= lane < 16 ? 0x0000FFFFu : 0xFFFF0000u;  // ext 0: first only
            return true;
          },
          [&](int a, int c) { unite_runs(run_node(row_w, run_index(m, a)), run_node(row2_w, run_index(m2, c))); });
      unite_x_boundary_rows<Conn>(rows, g, bx, y0, z0, lane, row_word, unite_runs);
    }
  });
}

}  // namespace
}  // namespace winnow::detail::cuda
