#pragma once
// Rows and their neighbours, shared by the passes of the volume labeling: a voxel's backward
// neighbours and the backward rows of a row (the pairs a pass unites), and the x-runs of a row
// held as a bit word -- where they start, which run holds a bit, which runs of two rows touch --
// with the warp-wide loop that unites touching runs one pair a lane at a time.
#include <cuda_runtime.h>

#include "label/cuda/volume_plan.cuh"

namespace winnow::detail::cuda {
namespace {

// ---- neighbours ---------------------------------------------------------------------------------
//
// Backward neighbours are those before a voxel in raster order (3, 9, 13 of them for 6-, 18- and
// 26-connectivity): every adjacent pair is seen once, from its later voxel.

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

// A backward row of the row (y, z): the row (y + dy, z + dz) and how far a run's window reaches
// past its ends there (1 when the diagonal dx = +-1 neighbours count for Conn, else 0).
struct BackRow {
  int dy, dz, ext;
};
// The four candidate rows, in the order of backward_offset: (y-1, z-1), (y, z-1), (y+1, z-1), (y-1, z).
__host__ __device__ constexpr BackRow back_row(int r, int conn) {
  return r == 0   ? BackRow{-1, -1, conn == 26 ? 1 : 0}
         : r == 1 ? BackRow{0, -1, conn == 6 ? 0 : 1}
         : r == 2 ? BackRow{1, -1, conn == 26 ? 1 : 0}
                  : BackRow{-1, 0, conn == 6 ? 0 : 1};
}
// Whether the row reaches the voxel at all: (dy, dz) both moving needs 18 or 26.
__host__ __device__ constexpr bool back_row_used(int r, int conn) { return conn != 6 || r == 1 || r == 3; }

// ---- x-runs of bit rows -------------------------------------------------------------------------
//
// A row's 32 columns as a word (bit l: column x0 + l is foreground): everything a run needs -- its
// start, its number within the row, the runs of a neighbouring row it touches -- is bit arithmetic
// on two words.

// The first bit of each run of row word m.
__device__ __forceinline__ unsigned run_starts(unsigned m) { return m & ~(m << 1); }
// Whether any lane's row words hold a voxel. A brick of background only (69 % of the tiled MRI's,
// around its objects) has no run to unite or count: its warp skips that work.
template <int N>
__device__ __forceinline__ bool warp_has_foreground(const unsigned (&words)[N]) {
  unsigned any = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) any |= words[j];
  return __any_sync(kFull, any != 0u);
}
// The number of the run whose first bit is among `starts` and holds bit b (its start at or before
// b), counted from 0: of x-runs (starts: run_starts) or of runs of blocks (block_run_starts).
__device__ __forceinline__ int run_of_starts(unsigned starts, int b) {
  return __popc(starts & (kFull >> (31 - b))) - 1;
}
// The number of the run holding bit b of row word m, counted from 0 within the row.
__device__ __forceinline__ int run_index(unsigned m, int b) { return run_of_starts(run_starts(m), b); }
// The first bit of the run holding bit b.
__device__ __forceinline__ int run_start_bit(unsigned m, int b) {
  return 31 - __clz(run_starts(m) & (kFull >> (31 - b)));
}
// The lowest bit of m among b - 1, b, b + 1 (one of them is set).
__device__ __forceinline__ int nearest_bit(unsigned m, int b) { return __ffs(m & (b == 0 ? 3u : 7u << (b - 1))) - 1; }

// Run pairs of two rows m (the later) and m2 (a backward row): with ext 0 (the rows' voxels meet
// face to face) every stretch of m & m2 lies in one run of each, and every touching pair of runs
// shares one: a union per stretch. With ext 1 (diagonal neighbours count too) a stretch of
// m2 & dilate(m) lies in one run of m2 but may touch several runs of m, and the converse holds for
// m & dilate(m2); uniting the first voxel of each stretch of both with the run of the other row
// that is nearest to it (its lowest neighbour) joins exactly the sets that all touching pairs join
// (checked exhaustively over all pairs of 12-bit rows, also with the second kind's pairs left out
// where the first kind joins the same two runs).
//
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

// ---- runs of 2 x 2 x 2 blocks (26-connectivity) ------------------------------------------------
//
// 26-connectivity unites 2 x 2 x 2 blocks of voxels first (after BKE 3D, Allegretti, Bolelli and
// Grana 2019): any two voxels of a block are 26-adjacent, so a block's foreground is one set. The
// four rows (ly, lz), (ly + 1, lz), (ly, lz + 1), (ly + 1, lz + 1) of a block row (even ly and lz)
// are ORed into one word o, where block k holds bits 2k and 2k + 1; blocks k and k + 1 join when
// o has both bits 2k + 1 and 2k + 2 (every voxel of the one column is adjacent to every voxel of
// the other), so runs of joined blocks are the nodes: a 32 x 8 x 8 brick has 16 block rows and 4
// backward block rows each, against 64 rows, and at density 0.5 a block row holds about 3 block
// runs where a row holds 8 runs. Two block rows touch through a face word of each -- the OR of the
// rows of one that meet the other's (two rows across a face, one across an edge) -- and
// TouchingRuns over the two face words finds the voxel runs that touch, each inside one block run.
// The local pass (bits_local_kernel) unites block runs inside a brick, the merge
// (bits_merge_kernel) the block rows across its faces.
constexpr int kBlockRows = VolumeBrick::kRows / 4;
static_assert(VolumeBrick::kY % 2 == 0 && VolumeBrick::kZ % 2 == 0, "bricks of whole blocks");
// Block row br of a brick: blocks (by, bz) = (br % kBlockY, br / kBlockY); its row i < 4 in raster
// order is the brick row (2 bz + i / 2) kY + 2 by + i % 2.
constexpr int kBlockY = VolumeBrick::kY / 2;
__host__ __device__ __forceinline__ int block_row_row(int br, int i) {
  return (br / kBlockY * 2 + i / 2) * VolumeBrick::kY + br % kBlockY * 2 + i % 2;
}
// Bit 2k of the result: block k of a block row whose rows' OR is o starts a run of joined blocks
// (it holds a voxel, and block k - 1 does not join it).
__host__ __device__ __forceinline__ unsigned block_run_starts(unsigned o) {
  const unsigned held = (o | o >> 1) & 0x55555555u;
  const unsigned joined = o & (o << 1) & 0x55555555u;  // bits 2k - 1 and 2k
  return held & ~joined;
}
// The block row of brick row r.
__device__ __forceinline__ int block_of_row(int r) {
  return r / VolumeBrick::kY / 2 * kBlockY + r % VolumeBrick::kY / 2;
}

// The rows of block rows that meet across back_row b (26-connectivity): the later block row's
// rows `near[0..1]`, the backward block row's `far[0..1]` (rows i of a block row: bit 0 of i is
// y + 1, bit 1 is z + 1) -- across a y face the two rows of the near y, across a z face the two of
// the near z, across an edge one (given twice).
struct BlockFaceRows {
  int near[2], far[2];
};
__host__ __device__ constexpr BlockFaceRows block_face_rows(BackRow b) {
  return b.dz == 0   ? BlockFaceRows{{0, 2}, {1, 3}}
         : b.dy == 0 ? BlockFaceRows{{0, 1}, {2, 3}}
         : b.dy < 0  ? BlockFaceRows{{0, 0}, {3, 3}}
                     : BlockFaceRows{{1, 1}, {2, 2}};
}

}  // namespace
}  // namespace winnow::detail::cuda
