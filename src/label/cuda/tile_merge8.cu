// CUDA labeling, tile_merge at 8-connectivity (the write-up's method on 2x2 blocks): the tile pass
// (local2) labels 64 x 64-pixel tiles in shared memory with per-tile statistics, the border pass
// (border2) unites across tile borders, flatten_kernel<2> points linked local roots at their
// roots, assign2 numbers the roots counted by the tile pass, and merge_stats adds the tile-local
// parts of components that cross tiles. The kernels after the tile pass are programmatic
// dependents (launch_dependent). O(W*H) work.
#include <algorithm>

#include "label/cuda/plan.cuh"

namespace winnow::detail::cuda {
namespace {

// ---- tile_merge on 2x2 blocks (8-connectivity) ------------------------------------------------
//
// One thread block (32 x 8 threads) per tile of 32 x 32 blocks = 64 x 64 pixels; lane = block
// column, warp wy owns the strip of block rows 4wy .. 4wy + 3 and sweeps it top to bottom. In a
// row, connections to the left come from a ballot, so every horizontal run of connected blocks is
// known at once; a block's candidates are the labels of its connected blocks in the strip's
// previous row (registers and shuffles); a run takes the candidate of its first lane that has
// one, or a fresh label (the run's first pixel, whose node becomes a root). Only a run that
// touches two components of the row above unites them (shared-memory atomicMin union inside the
// warp's own strip). Then each strip's first row is united with the last row of the strip above
// (a lane skips targets its left neighbour in the same run already unites), and the label nodes
// resolve their roots. Local keys are (y << 6) | x inside the tile, which order like raster
// indices and union links the larger root under the smaller, so each local root holds the
// tile-local component's first pixel; the kernel writes every block's global parent = its local
// root's global key. With statistics, each local component's area, coordinate sums and bounding
// box are accumulated in shared memory (per horizontal run) and stored at its root node together
// with a flag "touches another tile" (exact: the pixels around the tile are read into shared
// memory with the mask); a component that does not is final there, and the numbering pass
// copies its statistics without any global atomic. The others are listed per tile
// for merge_stats. Then only blocks on tile borders are united globally (border2).

__device__ __forceinline__ std::uint32_t lnode(std::uint32_t k) { return (k >> 7) * kTB + ((k & 63u) >> 1); }

// Tile pass details: the mask is read as 16-bit words (a block's two pixels of a row in one load,
// all rows of a thread issued before the ballots); the unions' finds halve paths (a halving store
// writes an ancestor over a parent, so no cycle; a racing atomicMin link it overwrites is retried
// by its linking thread with the old parent); a block's entry is its run's label, and after the
// unions only the label nodes resolve their root (read-only finds, each writes only its own node),
// so every block reaches its root in two hops. Statistics: per horizontal run (not per block: a
// run is one component) two 32-bit shared adds of packed sums (area << 18 | sum x; sum y | runs
// that touch another tile << 18: a 64x64 tile bounds each field) and min / max atomics of the
// bounding box only where they change it. The run's sums come from the row's pixel ballots
// (population counts masked to the run), so no match / reduction is needed.

// A tile's forest in shared memory: key (y << 6) | x lies in the entry of its 2x2 block.
struct BlockOfKey {
  __device__ __forceinline__ std::uint32_t operator()(std::uint32_t k) const { return lnode(k); }
};
using TileForest = ConcurrentForest<std::uint32_t, BlockOfKey>;

// The two pixels (x, y), (x + 1, y) as bits 0 and 1; x, y inside the image.
__device__ __forceinline__ std::uint32_t pair_bits(const std::uint8_t* m, const Geo& g, int x, int y, bool v2) {
  const std::uint8_t* row = m + static_cast<long long>(y) * g.mstride + x;
  if (v2 && x + 1 < g.W) {
    const std::uint32_t w = __ldg(reinterpret_cast<const unsigned short*>(row));
    return ((w & 0xFFu) ? 1u : 0u) | ((w >> 8) ? 2u : 0u);
  }
  std::uint32_t r = __ldg(row) ? 1u : 0u;
  if (x + 1 < g.W && __ldg(row + 1)) r |= 2u;
  return r;
}

// Pixel (x, y) as 0 / 1, 0 outside the image (a predicated load, no branch around it).
__device__ __forceinline__ std::uint32_t px(const std::uint8_t* m, const Geo& g, int x, int y) {
  const bool in = x >= 0 && y >= 0 && x < g.W && y < g.H;
  return in && __ldg(m + static_cast<long long>(y) * g.mstride + x) ? 1u : 0u;
}

template <bool Stats>
__global__ void __launch_bounds__(256, 8)
    local2_kernel(const std::uint8_t* m, std::uint32_t* P, uint4* S, std::uint32_t* xlist, std::uint32_t* xcount,
                  std::uint32_t* rc, Geo g) {
  __shared__ std::uint32_t s[kTB * kTB];
  __shared__ std::uint8_t sp[kTB * kTB];
  // per local root (32-bit: shared atomics on 64-bit words are compare-and-swap loops):
  // area << 18 | sum x;  sum y | count of runs with an outside neighbour << 18;  columns, last row
  __shared__ std::uint32_t a_ax[Stats ? kTB * kTB : 1], a_sy[Stats ? kTB * kTB : 1], a_cmin[Stats ? kTB * kTB : 1],
      a_cmax[Stats ? kTB * kTB : 1], a_rmax[Stats ? kTB * kTB : 1];
  __shared__ std::uint32_t s_next;  // entries of this tile in xlist
  // the pixels around the tile (Stats): rows above / below and columns left / right of it, each
  // from -1 to 64 relative to the tile's first pixel (index + 1)
  __shared__ std::uint8_t halo[Stats ? 4 : 1][Stats ? 68 : 1];
  const TileForest forest{s};
  const int lane = threadIdx.x, wy = threadIdx.y;
  const int tbx0 = blockIdx.x * kTB;
  const int bx = tbx0 + lane;
  const bool v2 = ((reinterpret_cast<std::uintptr_t>(m) | static_cast<std::uintptr_t>(g.mstride)) & 1u) == 0;
  const auto rowof = [wy](int r) { return 4 * wy + r; };  // block row of the warp's r-th row
  for (int tby0 = blockIdx.y * kTB; tby0 < g.bh; tby0 += gridDim.y * kTB) {
    if (Stats && lane == 0 && wy == 0) s_next = 0;
    if constexpr (Stats) {  // one or two predicated byte loads per thread, issued with the mask loads
      const int x0 = 2 * tbx0, y0 = 2 * tby0;
#pragma unroll
      for (int k0 = 0; k0 < 2 * 256; k0 += 256) {
        const int k = k0 + wy * kTB + lane;
        if (k < 4 * 66) {
          const int side = k / 66, j = k - side * 66 - 1;
          const int x = side == 0 || side == 1 ? x0 + j : side == 2 ? x0 - 1 : x0 + 2 * kTB;
          const int y = side == 2 || side == 3 ? y0 + j : side == 0 ? y0 - 1 : y0 + 2 * kTB;
          halo[side][j + 1] = static_cast<std::uint8_t>(px(m, g, x, y));
        }
      }
    }
    std::uint32_t pat[4];
    std::uint32_t flags = 0;  // bit r: block row r connects to its left neighbour
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int by = tby0 + rowof(r);
      std::uint32_t p = 0;
      if (bx < g.bw && by < g.bh) {
        p = pair_bits(m, g, 2 * bx, 2 * by, v2);
        if (2 * by + 1 < g.H) p |= pair_bits(m, g, 2 * bx, 2 * by + 1, v2) << 2;
      }
      pat[r] = p;
    }
    // Each warp sweeps its strip (see above); unions here stay inside the warp's own strip.
    std::uint32_t pu = 0, lu = kNone;  // the strip's previous row: pattern, label (a root when the row starts)
    std::uint32_t freshbits = 0;       // bit r: this lane's block of row r is a label node
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int lby = rowof(r), i = lby * kTB + lane;
      const std::uint32_t p = pat[r];
      const bool a = p & 1u, b = p & 2u, c = p & 4u;
      const std::uint32_t ly0 = 2u * lby, lx0 = 2u * lane;
      const std::uint32_t lkey = a   ? (ly0 << 6) | lx0
                                 : b ? (ly0 << 6) | (lx0 + 1)
                                 : c ? ((ly0 + 1) << 6) | lx0
                                     : ((ly0 + 1) << 6) | (lx0 + 1);
      const std::uint32_t left = __shfl_up_sync(kFull, p, 1);
      const bool cl = lane > 0 && (a || c) && (left & 0xAu);
      if (cl) flags |= 1u << r;
      const bool f = p != 0;
      const unsigned fgm = __ballot_sync(kFull, f);
      const unsigned starts = __ballot_sync(kFull, f && !cl);
      const unsigned tops = __ballot_sync(kFull, a || b);
      int h = 31 - __clz(starts & ((2u << lane) - 1u));  // lane 31: 2u << 31 == 0, mask all
      if (!f) h = lane;
      const unsigned above = h == 31 ? 0u : ~((2u << h) - 1u);
      const unsigned brk = (starts | ~fgm) & above;
      const int e = brk ? __ffs(brk) - 2 : 31;
      const unsigned tm = tops & ~((1u << h) - 1u);
      const int t = tm ? __ffs(tm) - 1 : 32;
      const int head = t <= e ? t : h;
      const std::uint32_t hk = __shfl_sync(kFull, lkey, head);
      const unsigned rm = f ? (e == 31 ? kFull : (2u << e) - 1u) & ~((1u << h) - 1u) : 0u;
      std::uint32_t tu = kNone, tl = kNone, tr = kNone;
      if (r > 0) {
        const std::uint32_t pul = __shfl_up_sync(kFull, pu, 1), lul = __shfl_up_sync(kFull, lu, 1);
        const std::uint32_t pur = __shfl_down_sync(kFull, pu, 1), lur = __shfl_down_sync(kFull, lu, 1);
        if ((p & 3u) && (pu & 0xCu)) tu = lu;
        if (lane > 0 && a && (pul & 8u)) tl = lul;
        if (lane < kTB - 1 && b && (pur & 4u)) tr = lur;
      }
      const std::uint32_t cm = min(tu, min(tl, tr));
      const unsigned fc = __ballot_sync(kFull, cm != kNone) & rm;
      const std::uint32_t first = __shfl_sync(kFull, cm, fc ? __ffs(fc) - 1 : lane);
      const std::uint32_t L = !f ? kNone : fc ? first : hk;
      if (f && !fc && lane == head) freshbits |= 1u << r;
      s[i] = L;
      sp[i] = static_cast<std::uint8_t>(p);
      // unions: only where a run touches several components of the row above
      if (tu == L) tu = kNone;
      if (tl == L || tl == tu) tl = kNone;
      if (tr == L || tr == tu || tr == tl) tr = kNone;
      // the rest only where some lane still has a candidate to unite (none in most rows); the
      // statistics variant runs it in every row (skipping was measured only without statistics)
      std::uint32_t Lr = L;
      if (Stats || __any_sync(kFull, tu != kNone || tl != kNone || tr != kNone)) {
        const std::uint32_t qu = __shfl_up_sync(kFull, tu, 1), ql = __shfl_up_sync(kFull, tl, 1),
                            qr = __shfl_up_sync(kFull, tr, 1);
        if (cl) {  // lane - 1 is in the same run and unites its own candidates
          if (tu == qu || tu == ql || tu == qr) tu = kNone;
          if (tl == qu || tl == ql || tl == qr) tl = kNone;
          if (tr == qu || tr == ql || tr == qr) tr = kNone;
        }
        const bool u = tu != kNone || tl != kNone || tr != kNone;
        __syncwarp();  // the strip's stores so far are visible to every lane
        if (u) {
#pragma unroll 1
          for (int j = 0; j < 3; ++j) {
            const std::uint32_t x = j == 0 ? tu : j == 1 ? tl : tr;
            if (x != kNone) unite(forest, x, L);
          }
        }
        if (__any_sync(kFull, u)) {  // labels back to roots for the next row
          __syncwarp();
          if (f) Lr = find_root_read_only(forest, L);
        }
      }
      pu = p;
      lu = Lr;
    }
    __syncthreads();
    // The strips' first rows (warps 1..7) with the last row of the strip above.
    std::uint32_t mine = kNone, tu = kNone, tl = kNone, tr = kNone;
    if (wy > 0 && pat[0]) {
      const int i = rowof(0) * kTB + lane, u = i - kTB;
      const std::uint32_t p = pat[0];
      mine = s[i];
      if ((p & 3u) && (sp[u] & 0xCu)) tu = s[u];
      if (lane > 0 && (p & 1u) && (sp[u - 1] & 8u)) tl = s[u - 1];
      if (lane < kTB - 1 && (p & 2u) && (sp[u + 1] & 4u)) tr = s[u + 1];
    }
    if (tl == tu) tl = kNone;
    if (tr == tu || tr == tl) tr = kNone;
    const std::uint32_t qu = __shfl_up_sync(kFull, tu, 1), ql = __shfl_up_sync(kFull, tl, 1),
                        qr = __shfl_up_sync(kFull, tr, 1);
    if (flags & 1u) {  // lane - 1 is in the same run and unites its own targets
      if (tu == qu || tu == ql || tu == qr) tu = kNone;
      if (tl == qu || tl == ql || tl == qr) tl = kNone;
      if (tr == qu || tr == ql || tr == qr) tr = kNone;
    }
    __syncthreads();
    if (tu != kNone) unite(forest, mine, tu);
    if (tl != kNone) unite(forest, mine, tl);
    if (tr != kNone) unite(forest, mine, tr);
    __syncthreads();
    // Label nodes resolve their roots (read-only finds; each writes only its own node, a root).
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      if ((freshbits >> r) & 1u) {
        const int i = rowof(r) * kTB + lane;
        const std::uint32_t k0 = s[i];  // only this thread writes its node
        const std::uint32_t rt = find_root_read_only(forest, k0);
        if (rt != k0) lower_to(s + i, rt);
      }
    }
    __syncthreads();
    std::uint32_t root[4];
    std::uint32_t rootbits = 0;  // bit r: block row r's block is a local root
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int lby = rowof(r), by = tby0 + lby;
      root[r] = pat[r] ? s[lnode(s[lby * kTB + lane])] : kNone;  // a block's entry: its head's / label's key
      if (bx < g.bw && by < g.bh) {
        std::uint32_t v = kNone;
        if (pat[r])
          v = key_of(2 * tbx0 + static_cast<int>(root[r] & 63u), 2 * tby0 + static_cast<int>(root[r] >> 6), g);
        P[static_cast<long long>(by) * g.bw + bx] = v;
      }
      {  // roots per (pixel row, tile column): the numbering's counts (border2 removes linked roots)
        const bool isroot = pat[r] && lnode(root[r]) == static_cast<std::uint32_t>(lby * kTB + lane);
        const unsigned rt = __ballot_sync(kFull, isroot && !((root[r] >> 6) & 1u));
        const unsigned rb = __ballot_sync(kFull, isroot && ((root[r] >> 6) & 1u));
        if (lane == 0 && by < g.bh) {
          rc[static_cast<std::size_t>(2 * by) * gridDim.x + blockIdx.x] = __popc(rt);
          if (2 * by + 1 < g.H) rc[static_cast<std::size_t>(2 * by + 1) * gridDim.x + blockIdx.x] = __popc(rb);
        }
      }
      if constexpr (Stats) {
        if (pat[r] && lnode(root[r]) == static_cast<std::uint32_t>(lby * kTB + lane)) {
          const int i = lby * kTB + lane;
          a_ax[i] = a_sy[i] = a_cmax[i] = a_rmax[i] = 0;
          a_cmin[i] = 0xFFu;
          rootbits |= 1u << r;
        }
      }
    }
    // The statistics below re-read patterns and roots from shared memory (sp; s: a block's entry
    // is the key of its run head / label, whose node now holds the root) instead of keeping them in
    // registers: fewer live registers, so more thread blocks per SM.
    if constexpr (Stats) {
      __syncthreads();
      // One record update per horizontal run, by its first lane, from the row's ballots: a run
      // covers lanes h..e (all the same component), so its area and coordinate sums are
      // population counts of the pixel ballots masked to h..e, its columns the contiguous range
      // from its first to its last pixel column, its rows the OR of its top / bottom pixels.
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const std::uint32_t p = sp[rowof(r) * kTB + lane];
        // touches another tile: a perimeter pixel with a foreground 8-neighbour outside the tile
        const int lby = rowof(r), j = 2 * lane, q = 2 * lby;
        const auto h3 = [&](int side, int i) { return (halo[side][i] | halo[side][i + 1] | halo[side][i + 2]) != 0; };
        const bool ext = (lby == 0 && (((p & 1u) && h3(0, j)) || ((p & 2u) && h3(0, j + 1)))) ||
                         (lby == kTB - 1 && (((p & 4u) && h3(1, j)) || ((p & 8u) && h3(1, j + 1)))) ||
                         (lane == 0 && (((p & 1u) && h3(2, q)) || ((p & 4u) && h3(2, q + 1)))) ||
                         (lane == kTB - 1 && (((p & 2u) && h3(3, q)) || ((p & 8u) && h3(3, q + 1))));
        const unsigned bA = __ballot_sync(kFull, p & 1u), bB = __ballot_sync(kFull, p & 2u),
                       bC = __ballot_sync(kFull, p & 4u), bD = __ballot_sync(kFull, p & 8u);
        const unsigned bE = __ballot_sync(kFull, ext), bL = __ballot_sync(kFull, (flags >> r) & 1u);
        const unsigned fgm = bA | bB | bC | bD;
        const unsigned starts = fgm & ~bL;
        if ((starts >> lane) & 1u) {
          const unsigned above = lane == 31 ? 0u : ~((2u << lane) - 1u);
          const unsigned brk = (starts | ~fgm) & above;
          const int e = brk ? __ffs(brk) - 2 : 31;
          const unsigned rm = (e == 31 ? kFull : ((2u << e) - 1u)) & ~((1u << lane) - 1u);
          const unsigned mA = bA & rm, mB = bB & rm, mC = bC & rm, mD = bD & rm;
          const std::uint32_t cB = __popc(mB), cC = __popc(mC), cD = __popc(mD);
          const std::uint32_t area = __popc(mA) + cB + cC + cD;
          std::uint32_t lanesum = 0;  // sum over the run's pixels of their lane index
#pragma unroll
          for (int k = 0; k < 5; ++k) {
            const unsigned K = k == 0   ? 0xAAAAAAAAu
                               : k == 1 ? 0xCCCCCCCCu
                               : k == 2 ? 0xF0F0F0F0u
                               : k == 3 ? 0xFF00FF00u
                                        : 0xFFFF0000u;
            lanesum += (__popc(mA & K) + __popc(mB & K) + __popc(mC & K) + __popc(mD & K)) << k;
          }
          const std::uint32_t ly = 2u * rowof(r);
          const std::uint32_t sx = 2u * lanesum + cB + cD;
          const std::uint32_t sy = area * ly + cC + cD;
          const std::uint32_t mnx = ((mA | mC) >> lane) & 1u ? 2u * lane : 2u * lane + 1u;
          const std::uint32_t mxx = ((mB | mD) >> e) & 1u ? 2u * e + 1u : 2u * e;
          const std::uint32_t mxy = (mC | mD) ? ly + 1u : ly;
          const std::uint32_t slot = lnode(s[lnode(s[rowof(r) * kTB + lane])]);
          // area <= 4096 and sums < 2^18 in a 64x64 tile; at most 512 runs per tile
          atomicAdd(a_ax + slot, (area << 18) | sx);
          atomicAdd(a_sy + slot, sy | ((bE & rm) ? 1u << 18 : 0u));
          // bounding box: atomics only where they would change it (a stale read only errs
          // towards an atomic that changes nothing)
          if (mnx < a_cmin[slot]) atomicMin(a_cmin + slot, mnx);
          if (mxx > a_cmax[slot]) atomicMax(a_cmax + slot, mxx);
          if (mxy > a_rmax[slot]) atomicMax(a_rmax + slot, mxy);
        }
      }
      __syncthreads();
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int lby = rowof(r), by = tby0 + lby, i = lby * kTB + lane;
        if ((rootbits >> r) & 1u) {
          const std::uint32_t rk = s[i];  // a root's entry is its own key
          const std::uint32_t ax = a_ax[i], sye = a_sy[i];
          const std::uint32_t area = ax >> 18, sx = ax & 0x3FFFFu, sy = sye & 0x3FFFFu;
          const bool ext = (sye >> 18) != 0;
          const long long n = static_cast<long long>(by) * g.bw + bx;
          S[n] = make_uint4(area | (ext ? 0x80000000u : 0u), sx, sy,
                            a_cmin[i] | (a_cmax[i] << 8) | (a_rmax[i] << 16) | ((rk >> 6) << 24));
          if (ext)
            xlist[(static_cast<std::size_t>(tby0 / kTB) * gridDim.x + blockIdx.x) * kXCap + atomicAdd(&s_next, 1u)] =
                static_cast<std::uint32_t>(n);
        }
      }
      __syncthreads();
      if (lane == 0 && wy == 0) xcount[static_cast<std::size_t>(tby0 / kTB) * gridDim.x + blockIdx.x] = s_next;
    }
    __syncthreads();
  }
}

// Unites blocks on a tile's top row / left column / right column with their neighbours in other
// tiles (backward neighbours, plus the up-right neighbour of the right column, which lies in the
// tile to the right). Lanes skip a pair their predecessor on the border already unites.
__global__ void __launch_bounds__(96)
    border2_kernel(const std::uint8_t* m, std::uint32_t* P, Geo g, std::uint32_t* rc) {
  grid_dependency_wait();
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int tbx0 = blockIdx.x * kTB;
  for (int tby0 = blockIdx.y * kTB; tby0 < g.bh; tby0 += gridDim.y * kTB) {
    int bx, by;
    if (w == 0) {
      bx = tbx0 + lane;
      by = tby0;
    } else if (w == 1) {
      bx = tbx0;
      by = tby0 + lane;
    } else {
      bx = tbx0 + kTB - 1;
      by = tby0 + lane;
    }
    std::uint32_t ra = kNone, t0 = kNone, t1 = kNone, t2 = kNone, t3 = kNone;
    const bool active = bx < g.bw && by < g.bh && (w == 0 || lane > 0);
    if (active) {
      const long long b = static_cast<long long>(by) * g.bw + bx;
      const int x = 2 * bx, y = 2 * by;
      ra = __ldcg(P + b);
      // every pixel read is independent of the others and of ra (OR'ed, not short-circuited),
      // so the loads issue together
      const bool a = px(m, g, x, y), bb = px(m, g, x + 1, y), c = px(m, g, x, y + 1);
      const bool nl = px(m, g, x - 1, y) | px(m, g, x - 1, y + 1), nu = px(m, g, x, y - 1) | px(m, g, x + 1, y - 1);
      const bool nur = px(m, g, x + 2, y - 1), nul = px(m, g, x - 1, y - 1);
      if (ra != kNone) {
        const long long u = b - g.bw;
        if (w == 0) {
          if (lane == 0 && bx > 0 && (a || c) && nl) t0 = __ldcg(P + b - 1);
          if (by > 0) {
            if ((a || bb) && nu) t1 = __ldcg(P + u);
            if (bb && nur) t2 = __ldcg(P + u + 1);
            if (a && nul) t3 = __ldcg(P + u - 1);
          }
        } else if (w == 1) {
          if (bx > 0) {
            if ((a || c) && nl) t0 = __ldcg(P + b - 1);
            if (a && nul) t3 = __ldcg(P + u - 1);
          }
        } else {
          if (bb && nur) t2 = __ldcg(P + u + 1);
        }
      }
    }
    const std::uint32_t pa = __shfl_up_sync(kFull, ra, 1), p0 = __shfl_up_sync(kFull, t0, 1),
                        p1 = __shfl_up_sync(kFull, t1, 1), p2 = __shfl_up_sync(kFull, t2, 1),
                        p3 = __shfl_up_sync(kFull, t3, 1);
    if (ra != kNone) {
      const bool same = lane > 0 && pa == ra;
      auto go = [&](std::uint32_t t) {
        if (t == kNone || t == ra) return;
        if (same && (t == p0 || t == p1 || t == p2 || t == p3)) return;
        unite_counted<2, 6>(P, ra, t, g, rc, gridDim.x);
      };
      go(t0);
      if (t1 != t0) go(t1);
      if (t2 != t0 && t2 != t1) go(t2);
      if (t3 != t0 && t3 != t1 && t3 != t2) go(t3);
    }
  }
}

// After border2 the forest is final. Every local root that was linked has a block on its tile's
// perimeter; pointing those local roots (and the perimeter blocks) straight at their roots keeps
// the compress pass at one or two hops per block. Every store writes a root, so concurrent
// read-only finds see either the old parent or the root.

// tile_merge on 2x2 blocks: no compress pass. After the flatten a node's parent is its tile-local
// root, whose parent is the root, so roots are the nodes that hold their own key. The tile pass
// counted roots per (pixel row, tile column) and border2 subtracted the linked ones; after the
// scan, a warp takes one block row of one tile, ranks its roots of each pixel row with a ballot
// and writes the number and the statistics record: in full (with kDone) for a component
// that stays inside its tile, initialised for the others (merge_stats adds their parts).
template <bool Local>
__global__ void __launch_bounds__(256)
    assign2_kernel(std::uint32_t* P, const uint4* S, Geo g, const std::uint32_t* offsets, RawComponentStats* st,
                   std::uint64_t cap) {
  grid_dependency_wait();
  const int lane = threadIdx.x, bx = blockIdx.x * kTB + lane;
  for (int by = blockIdx.y * 8 + threadIdx.y; by < g.bh; by += gridDim.y * 8) {
    const long long n = static_cast<long long>(by) * g.bw + bx;
    std::uint32_t p = kNone;
    if (bx < g.bw) p = P[n];
    const bool root = p != kNone && node_of<2>(p, g) == static_cast<std::uint32_t>(n);
    const bool bottom = root && static_cast<int>(p >> g.shift) != 2 * by;
    const unsigned rt = __ballot_sync(kFull, root && !bottom), rb = __ballot_sync(kFull, bottom);
    if (!root) continue;
    const std::size_t y = static_cast<std::size_t>(2 * by + (bottom ? 1 : 0));
    const std::uint32_t num =
        offsets[y * gridDim.x + blockIdx.x] + __popc((bottom ? rb : rt) & ((1u << lane) - 1u)) + 1;
    std::uint32_t word = num | kHigh;
    RawComponentStats rs = empty_stats();
    if constexpr (Local) {
      const uint4 v = S[n];
      if (!(v.x & 0x80000000u)) {
        word |= kDone;
        const std::uint32_t X0 = static_cast<std::uint32_t>(bx & ~(kTB - 1)) * 2u;
        const std::uint32_t Y0 = static_cast<std::uint32_t>(by & ~(kTB - 1)) * 2u;
        rs.area = v.x;
        rs.sum_x = v.y + static_cast<std::uint64_t>(v.x) * X0;
        rs.sum_y = v.z + static_cast<std::uint64_t>(v.x) * Y0;
        rs.left = X0 + (v.w & 0xFFu);
        rs.right = X0 + ((v.w >> 8) & 0xFFu);
        rs.bottom = Y0 + ((v.w >> 16) & 0xFFu);
        rs.top = Y0 + (v.w >> 24);
      }
    }
    P[n] = word;
    if (st && num <= cap) st[num - 1] = rs;
  }
}

// ---- statistics of components that cross tiles (tile_merge, 8-connectivity) --------------------
//
// assign initialised their records; every tile-local part (listed by the tile pass with its
// tile-relative statistics) is added here. A thread block takes kMergeWarps tiles of one tile row,
// a warp one tile: the warp groups its entries by label (__match_any_sync) and reduces
// tile-relative values in 32 bits. Parts of the block's dominant label (the label of the first
// entry of its first tile: the giant component of a dense mask) go to a shared accumulator that
// one thread adds to the record at the end, so a component spanning every tile costs one set of
// global atomics per block instead of per tile; other labels update their records directly
// (bounding box atomics only where they would change it).
constexpr int kMergeWarps = 16;

__device__ __forceinline__ void stats_add(RawComponentStats& r, std::uint32_t area, std::uint64_t sx, std::uint64_t sy,
                                          std::uint32_t mnx, std::uint32_t mxx, std::uint32_t mny, std::uint32_t mxy) {
  atomicAdd(&r.area, area);
  atomicAdd(reinterpret_cast<unsigned long long*>(&r.sum_x), static_cast<unsigned long long>(sx));
  atomicAdd(reinterpret_cast<unsigned long long*>(&r.sum_y), static_cast<unsigned long long>(sy));
  if (mnx < __ldcg(&r.left)) atomicMin(&r.left, mnx);
  if (mxx > __ldcg(&r.right)) atomicMax(&r.right, mxx);
  if (mny < __ldcg(&r.top)) atomicMin(&r.top, mny);
  if (mxy > __ldcg(&r.bottom)) atomicMax(&r.bottom, mxy);
}

__global__ void __launch_bounds__(32 * kMergeWarps)
    merge_stats_kernel(const std::uint32_t* P, const uint4* S, const std::uint32_t* xlist, const std::uint32_t* xcount,
                       Geo g, int ntx, RawComponentStats* st, std::uint64_t cap) {
  grid_dependency_wait();
  // block accumulator, relative to the block's first tile (x) and the tile row (y): at most
  // 16 tiles * (2^18 + 4096 * 960) < 2^32
  __shared__ std::uint32_t sh_dom, sh_area, sh_sx, sh_sy, sh_mnx, sh_mxx, sh_mny, sh_mxy;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int nty = (g.bh + kTB - 1) / kTB;
  const int tx = blockIdx.x * kMergeWarps + w;
  const std::uint32_t Xb = blockIdx.x * kMergeWarps * 2u * kTB, X0r = static_cast<std::uint32_t>(w) * 2u * kTB;
  for (int ty = blockIdx.y; ty < nty; ty += gridDim.y) {  // block-uniform
    const std::uint32_t Y0 = static_cast<std::uint32_t>(ty) * 2u * kTB;
    const std::size_t tile = static_cast<std::size_t>(ty) * ntx + tx;
    const std::uint32_t cnt = tx < ntx ? __ldg(xcount + tile) : 0u;
    auto load = [&](std::uint32_t i, std::uint32_t& num, uint4& v) {
      num = 0;
      v = make_uint4(0, 0, 0, 0);
      if (i < cnt) {
        const std::uint32_t n = __ldg(xlist + tile * kXCap + i);
        v = __ldg(S + n);
        std::uint32_t q = __ldg(P + n);
        if (!(q & kHigh)) q = __ldg(P + node_of<2>(q, g));
        num = q & ~(kHigh | kDone);
      }
    };
    std::uint32_t num;
    uint4 v;
    load(lane, num, v);
    if (threadIdx.x == 0) {
      sh_dom = num;
      sh_area = sh_sx = sh_sy = sh_mxx = sh_mxy = 0;
      sh_mnx = sh_mny = 0xFFFFFFFFu;
    }
    __syncthreads();
    const std::uint32_t dom = sh_dom;
    for (std::uint32_t base = 0; base < cnt; base += 32) {  // warp-uniform
      if (base) load(base + lane, num, v);
      const unsigned peers = __match_any_sync(kFull, num);
      const std::uint32_t area = __reduce_add_sync(peers, v.x & 0x7FFFFFFFu);
      const std::uint32_t sx = __reduce_add_sync(peers, v.y), sy = __reduce_add_sync(peers, v.z);
      const std::uint32_t mnx = __reduce_min_sync(peers, v.w & 0xFFu),
                          mxx = __reduce_max_sync(peers, (v.w >> 8) & 0xFFu);
      const std::uint32_t mxy = __reduce_max_sync(peers, (v.w >> 16) & 0xFFu),
                          mny = __reduce_min_sync(peers, v.w >> 24);
      if (num && num <= cap && lane == __ffs(peers) - 1) {
        if (num == dom) {
          atomicAdd(&sh_area, area);
          atomicAdd(&sh_sx, sx + area * X0r);
          atomicAdd(&sh_sy, sy);
          atomicMin(&sh_mnx, X0r + mnx);
          atomicMax(&sh_mxx, X0r + mxx);
          atomicMin(&sh_mny, mny);
          atomicMax(&sh_mxy, mxy);
        } else {
          const std::uint32_t X0 = Xb + X0r;
          stats_add(st[num - 1], area, sx + static_cast<std::uint64_t>(area) * X0,
                    sy + static_cast<std::uint64_t>(area) * Y0, X0 + mnx, X0 + mxx, Y0 + mny, Y0 + mxy);
        }
      }
    }
    __syncthreads();
    if (threadIdx.x == 0 && sh_area)
      stats_add(st[dom - 1], sh_area, sh_sx + static_cast<std::uint64_t>(sh_area) * Xb,
                sh_sy + static_cast<std::uint64_t>(sh_area) * Y0, Xb + sh_mnx, Xb + sh_mxx, Y0 + sh_mny, Y0 + sh_mxy);
    __syncthreads();
  }
}

}  // namespace

void link_tile_merge8(const Plan& p, const Scratch& t, const std::uint8_t* d_mask, bool stats, cudaStream_t s) {
  const Geo g = p.g;
  const dim3 tg((g.bw + kTB - 1) / kTB, std::min((g.bh + kTB - 1) / kTB, kMaxGridY));
  if (stats) local2_kernel<true><<<tg, dim3(kTB, 8), 0, s>>>(d_mask, t.P, t.S, t.xlist, t.xcount, t.counts, g);
  else local2_kernel<false><<<tg, dim3(kTB, 8), 0, s>>>(d_mask, t.P, t.S, t.xlist, t.xcount, t.counts, g);
  WINNOW_CUDA_CHECK_LAUNCH();
  launch_dependent(border2_kernel, tg, dim3(96), s, d_mask, t.P, g, t.counts);
  launch_dependent(flatten_kernel<2>, tg, dim3(128), s, t.P, g);
}

void number_tile_merge8(const Plan& p, const Scratch& t, RawComponentStats* st, std::uint64_t cap, cudaStream_t s) {
  const Geo g = p.g;
  const dim3 ag((g.bw + kTB - 1) / kTB, std::min((g.bh + 7) / 8, kMaxGridY));
  if (st) launch_dependent(assign2_kernel<true>, ag, dim3(kTB, 8), s, t.P, t.S, g, t.offsets, st, cap);
  else launch_dependent(assign2_kernel<false>, ag, dim3(kTB, 8), s, t.P, t.S, g, t.offsets, st, cap);
  if (st) {  // components that cross tiles: add their tile-local parts
    const int ntx = (g.bw + kTB - 1) / kTB;
    const dim3 mg((ntx + kMergeWarps - 1) / kMergeWarps, std::min((g.bh + kTB - 1) / kTB, kMaxGridY));
    launch_dependent(merge_stats_kernel, mg, dim3(32 * kMergeWarps), s, t.P, t.S, t.xlist, t.xcount, g, ntx, st, cap);
  }
}

}  // namespace winnow::detail::cuda
