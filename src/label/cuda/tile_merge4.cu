// CUDA labeling, tile_merge at 4-connectivity (the write-up's method on pixels): one thread block
// labels a tile of 32 x 32 pixels in shared memory and writes each pixel's tile-local root as a
// global key; a border pass unites across tile borders; flatten_kernel<1> points the linked local
// roots at their roots; roots were counted per (pixel row, tile column) by the tile pass (the
// border pass subtracts those it links), so after the scan assign1 ranks them with a ballot -- no
// compress pass. O(W*H) work.
#include <algorithm>

#include "label/cuda/plan.cuh"

namespace winnow::detail::cuda {
namespace {

// ---- tile_merge on pixels (4-connectivity) ------------------------------------------------------
//
// One thread block (32 x 8 threads) per tile of 32 x 32 pixels; a warp takes whole tile rows, so a
// row's horizontal runs come from one ballot and every pixel starts out pointing at its run's
// first pixel (chains inside a row are one hop). Only vertical contacts are united, and of those
// only the first of each overlap between a run and the run above (its left neighbour would unite
// the same pair), by union_find.cuh's unite over the tile's entries (finds halve paths). Then
// every pixel jumps to its root in rounds (s[i] = s[s[i]] until no pixel changes: log2 of the
// depth), instead of each of the 1024 pixels walking the chains of run roots a dense tile builds.
// Local keys are indices inside the tile and union links the larger root under the smaller, so
// each local root is its component's raster-first pixel in the tile; the kernel writes every
// pixel's global parent = its local root's global key, and counts the local roots per (pixel row,
// tile column) for the numbering (border4 subtracts the ones it links), so no compress pass is
// needed.

__global__ void __launch_bounds__(256) tile4_kernel(const std::uint8_t* m, std::uint32_t* P, Geo g, std::uint32_t* rc) {
  __shared__ int s[kTile * kTile];
  volatile int* vs = s;
  const int tx0 = blockIdx.x * kTile;
  const int lx = threadIdx.x;
  const unsigned below = (1u << lx) - 1u;  // lanes left of this one
  for (int ty = blockIdx.y; ty * kTile < g.H; ty += gridDim.y) {
    const int ty0 = ty * kTile;
    bool f[4];
    unsigned left_fg = 0;  // bit r: the left neighbour in row r is foreground
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int ly = threadIdx.y + 8 * r, i = ly * kTile + lx;
      f[r] = fg(m, g, tx0 + lx, ty0 + ly);
      const unsigned bits = __ballot_sync(kFull, f[r]);
      const unsigned gaps = ~bits & below;  // background lanes left of this one
      const int run_start = gaps ? 32 - __clz(gaps) : 0;
      s[i] = f[r] ? ly * kTile + run_start : -1;
      if (lx > 0 && ((bits >> (lx - 1)) & 1u)) left_fg |= 1u << r;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int ly = threadIdx.y + 8 * r, i = ly * kTile + lx;
      // (foreground tests: other threads' finds may rewrite these entries meanwhile, never to -1)
      if (!f[r] || ly == 0 || vs[i - kTile] < 0) continue;
      if (((left_fg >> r) & 1u) && vs[i - kTile - 1] >= 0) continue;  // the left neighbour unites this pair
      unite(ConcurrentForest<int>{s}, i, i - kTile);
    }
    // The forest is final: a store writes an ancestor over a parent, so concurrent readers see one
    // or the other and every round shortens every path.
    for (;;) {
      __syncthreads();
      bool changed = false;
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        if (!f[r]) continue;
        const int i = (threadIdx.y + 8 * r) * kTile + lx, p = vs[i], pp = vs[p];
        if (pp != p) {
          lower_to(s + i, pp);
          changed = true;
        }
      }
      if (!__syncthreads_or(changed)) break;
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int ly = threadIdx.y + 8 * r, i = ly * kTile + lx, x = tx0 + lx, y = ty0 + ly;
      const int root = f[r] ? s[i] : -1;                       // the rounds are over: no thread writes now
      const unsigned roots = __ballot_sync(kFull, root == i);  // a row of the tile is one warp
      if (y >= g.H) continue;
      if (lx == 0) rc[static_cast<std::size_t>(y) * gridDim.x + blockIdx.x] = __popc(roots);
      if (x < g.W)
        P[static_cast<long long>(y) * g.W + x] = f[r] ? key_of(tx0 + root % kTile, ty0 + root / kTile, g) : kNone;
    }
    __syncthreads();
  }
}

// Unites pixels on a tile's top row and left column with their neighbours in the tiles above and
// to the left (4-connectivity), skipping a pair the previous pixel on the border already unites.
// A local root linked under another is subtracted from its row's root count (unite_counted).
__global__ void __launch_bounds__(64) border4_kernel(std::uint32_t* P, Geo g, std::uint32_t* rc) {
  const int tx0 = blockIdx.x * kTile;
  const int i = threadIdx.x;  // 0..31 top row, 32..63 left column
  for (int ty = blockIdx.y; ty * kTile < g.H; ty += gridDim.y) {
    const int ty0 = ty * kTile;
    const bool top = i < 32;
    const int x = top ? tx0 + i : tx0, y = top ? ty0 : ty0 + (i - 32);
    if ((top ? y == 0 : x == 0) || x >= g.W || y >= g.H) continue;
    const long long p = static_cast<long long>(y) * g.W + x;
    const long long q = top ? p - g.W : p - 1;  // the neighbour in the other tile
    const std::uint32_t pp = __ldcg(P + p), pq = __ldcg(P + q);
    if (pp == kNone || pq == kNone) continue;
    const long long step = top ? 1 : g.W;  // to the previous pixel along the border
    if ((top ? x > tx0 : y > ty0) && __ldcg(P + p - step) != kNone && __ldcg(P + q - step) != kNone) continue;
    unite_counted<1, 5>(P, pp, pq, g, rc, gridDim.x);
  }
}

// After border4 the forest is final. As flatten2: every linked local root has a pixel on its
// tile's perimeter; pointing those local roots (and the perimeter pixels) at their roots keeps the
// compress pass at one or two hops per pixel -- without it every pixel of a tile walks its local
// root's whole chain across tiles. Every store writes a root (see flatten2).

// tile_merge on pixels (4-connectivity), as assign2: after the flatten the roots are the pixels that
// hold their own key; tile4 counted roots per (pixel row, tile column) and border4 subtracted the
// linked ones. A warp takes one row of one tile and ranks its roots with a ballot.
__global__ void __launch_bounds__(256)
    assign1_kernel(std::uint32_t* P, Geo g, const std::uint32_t* offsets, RawComponentStats* st, std::uint64_t cap) {
  const int lane = threadIdx.x, x = blockIdx.x * kTile + lane;
  for (int y = blockIdx.y * 8 + threadIdx.y; y < g.H; y += gridDim.y * 8) {
    const long long n = static_cast<long long>(y) * g.W + x;
    const std::uint32_t p = x < g.W ? P[n] : kNone;
    const bool root = p != kNone && p == key_of(x, y, g);
    const unsigned roots = __ballot_sync(kFull, root);
    if (!root) continue;
    const std::uint32_t num =
        offsets[static_cast<std::size_t>(y) * gridDim.x + blockIdx.x] + __popc(roots & ((1u << lane) - 1u)) + 1;
    P[n] = num | kHigh;
    if (st && num <= cap) st[num - 1] = empty_stats();
  }
}

}  // namespace

void link_tile_merge4(const Plan& p, const Scratch& t, const std::uint8_t* d_mask, cudaStream_t s) {
  const Geo g = p.g;
  const dim3 tg((g.W + kTile - 1) / kTile, std::min((g.H + kTile - 1) / kTile, kMaxGridY));
  tile4_kernel<<<tg, dim3(kTile, 8), 0, s>>>(d_mask, t.P, g, t.counts);
  WINNOW_CUDA_CHECK_LAUNCH();
  border4_kernel<<<tg, 64, 0, s>>>(t.P, g, t.counts);
  WINNOW_CUDA_CHECK_LAUNCH();
  flatten_kernel<1><<<tg, 128, 0, s>>>(t.P, g);
  WINNOW_CUDA_CHECK_LAUNCH();
}

void number_tile_merge4(const Plan& p, const Scratch& t, RawComponentStats* st, std::uint64_t cap, cudaStream_t s) {
  const Geo g = p.g;
  const dim3 ag((g.W + kTile - 1) / kTile, std::min((g.H + 7) / 8, kMaxGridY));
  assign1_kernel<<<ag, dim3(kTile, 8), 0, s>>>(t.P, g, t.offsets, st, cap);
  WINNOW_CUDA_CHECK_LAUNCH();
}

}  // namespace winnow::detail::cuda
