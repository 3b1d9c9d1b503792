// CUDA connected-component labeling: union-find on the device with keys that order like raster
// indices, sequential numbering by a scan over "first pixels", statistics by aggregated atomics.
//
// Algorithms
//   block_union_find (BUF; Allegretti, Bolelli, Grana, "Optimized Block-Based Algorithms to Label
//     Connected Components on GPUs", IEEE TPDS 2019): with 8-connectivity the image is cut into
//     2x2 blocks -- all foreground pixels of a block are 8-connected -- and union-find runs over
//     blocks (a quarter of the nodes). With 4-connectivity the pixels of a 2x2 block need not be
//     connected, so the nodes are pixels (Playne & Hawick 2018). Kernels: init, merge (atomicMin
//     union of a node with its backward neighbours), compress (every node -> its root).
//   tile_merge (the write-up's method): one thread block per tile labels the tile in shared memory,
//     writes each node's tile-local root as a global key, then one kernel walks only the tile
//     perimeters and unites across tile borders. 8-connectivity: 64x64-pixel tiles of 2x2 blocks,
//     ballot-built horizontal runs swept down 4-row strips, per-tile statistics
//     (local2/border2/assign2 below), programmatic dependent launches; no
//     compress pass. 4-connectivity: 32x32-pixel tiles of pixels (ballot-built runs, halving
//     finds, pointer jumping), the border pass, a flatten of the linked local roots; roots
//     counted as on 2x2 blocks, no compress pass (tile4, border4, flatten1, assign1 below).
//
// Keys. A node's value is a key (y << shift) | x of a foreground pixel, shift = ceil(log2 W), so
// keys order exactly like raster indices and decode to their node with shifts. A block's own key
// is its first foreground pixel in raster order, and unions link the larger root key under the
// smaller (atomicMin), so every component's root is the node holding its raster-first pixel.
//
// Numbering. A root is "first" in pixel row y when its key lies in row y. Counting those per row
// chunk (tile_merge: per row and tile column, counted by the tile pass, linked
// roots subtracted by the border pass), an exclusive scan (CUB), and a block or warp ranking give
// every root its number 1..N in raster order -- the numbering of OpenCV's SAUF and scipy --
// written into the root node with the high bit set (keys stay below 2^31).
//
// Labels and statistics. tile_merge 8-connectivity: the statistics are complete before the label
// pass -- components inside one tile are copied from the tile pass's records when numbered, the
// tile-local parts of the others are added by merge_stats -- and the label pass only writes
// labels (vectorised). Other paths: the final kernel gives each pixel its root's number and
// accumulates statistics: per-thread runs, warp aggregation (__match_any_sync +
// __reduce_*_sync on values relative to the block origin), and one shared accumulator per thread
// block for its dominant label, so a giant component costs a few atomics per 4096 pixels.
//
// Complexity: O(W*H) work; union-find trees are shallow in practice (near-linear).
// Limits: one call takes height * next_pow2(width) <= 2^31 (32-bit keys); the host API labels
// larger images in bands of rows and merges them on the host (cpu/label_bands.cpp).
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu/label_backends.hpp"
#include "cuda/arch.cuh"
#include "cuda/check.cuh"
#include "winnow/cuda/label.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cuda {
namespace {

using winnow::cuda::RawComponentStats;
constexpr std::uint32_t kNone = 0xFFFFFFFFu;
constexpr std::uint32_t kHigh = 0x80000000u;
constexpr unsigned kFull = 0xFFFFFFFFu;

// Programmatic dependent launch (sm_90): the tile_merge 8-connectivity kernels after the tile pass
// are launched with programmatic stream serialisation, so each one's launch and block start-up
// overlap its predecessor's tail; every thread waits here for the predecessor grid (complete,
// memory visible) before touching anything. Without the launch attribute this is a no-op.
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

struct Geo {
  int W, H;           // pixels
  long long mstride;  // mask row stride (bytes)
  int shift;          // key = (y << shift) | x
  int bw, bh;         // nodes per row / column
};

template <int B>
__device__ __forceinline__ std::uint32_t node_of(std::uint32_t k, const Geo& g) {
  const std::uint32_t y = k >> g.shift, x = k & ((1u << g.shift) - 1u);
  return (y / B) * static_cast<std::uint32_t>(g.bw) + x / B;
}
__device__ __forceinline__ std::uint32_t key_of(int x, int y, const Geo& g) {
  return (static_cast<std::uint32_t>(y) << g.shift) | static_cast<std::uint32_t>(x);
}
__device__ __forceinline__ bool fg(const std::uint8_t* m, const Geo& g, int x, int y) {
  return x >= 0 && y >= 0 && x < g.W && y < g.H && m[static_cast<long long>(y) * g.mstride + x] != 0;
}

// Find with path halving. A halving store writes an ancestor (a smaller key) over a parent, so it
// never creates a cycle; racing with an atomicMin link it may replace the new parent by an older
// ancestor, but the linking thread then retries with that old parent (see unite), so the sets
// stay connected. Without it, long chains (giant components) make every find walk O(chain).
template <int B>
__device__ std::uint32_t find(std::uint32_t* P, std::uint32_t k, const Geo& g) {
  for (;;) {
    const std::uint32_t n = node_of<B>(k, g);
    const std::uint32_t p = __ldcg(P + n);
    if (p == k) return k;
    const std::uint32_t gp = __ldcg(P + node_of<B>(p, g));
    if (gp != p) __stcg(P + n, gp);
    k = gp;
  }
}
// Read-only find for the compress pass: there every thread writes only its own node (the root),
// so a concurrent reader sees either the old parent or the root -- both ancestors. (A halving
// store here could overwrite a node's freshly written root with an older, non-root ancestor.)
template <int B>
__device__ std::uint32_t find_ro(const std::uint32_t* P, std::uint32_t k, const Geo& g) {
  for (;;) {
    const std::uint32_t p = __ldcg(P + node_of<B>(k, g));
    if (p == k) return k;
    k = p;
  }
}

template <int B>
__device__ void unite(std::uint32_t* P, std::uint32_t a, std::uint32_t b, const Geo& g) {
  for (;;) {
    a = find<B>(P, a, g);
    b = find<B>(P, b, g);
    if (a == b) return;
    if (a > b) {
      const std::uint32_t t = a;
      a = b;
      b = t;
    }
    const std::uint32_t old = atomicMin(P + node_of<B>(b, g), a);
    if (old == b) return;
    b = old;
  }
}

// unite for tile_merge: a root that is linked under another stops being a root, so the count of
// roots of its (pixel row, tile column) drops by one. Exactly one link succeeds per former root
// (afterwards its node no longer holds its own key). Tiles are 1 << TileShift pixels wide.
template <int B, int TileShift>
__device__ void unite_counted(std::uint32_t* P, std::uint32_t a, std::uint32_t b, const Geo& g, std::uint32_t* rc, int ntx) {
  for (;;) {
    a = find<B>(P, a, g);
    b = find<B>(P, b, g);
    if (a == b) return;
    if (a > b) {
      const std::uint32_t t = a;
      a = b;
      b = t;
    }
    const std::uint32_t old = atomicMin(P + node_of<B>(b, g), a);
    if (old == b) {
      atomicSub(rc + static_cast<std::size_t>(b >> g.shift) * ntx + ((b & ((1u << g.shift) - 1u)) >> TileShift), 1u);
      return;
    }
    b = old;
  }
}

// ---- block_union_find ---------------------------------------------------------------------------

template <int B>
__global__ void init_kernel(const std::uint8_t* m, std::uint32_t* P, Geo g) {
  const int bx = blockIdx.x * blockDim.x + threadIdx.x;
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    if (bx >= g.bw) continue;
    std::uint32_t k = kNone;
#pragma unroll
    for (int dy = 0; dy < B; ++dy)
#pragma unroll
      for (int dx = 0; dx < B; ++dx) {
        const int x = bx * B + dx, y = by * B + dy;
        if (k == kNone && fg(m, g, x, y)) k = key_of(x, y, g);
      }
    P[static_cast<long long>(by) * g.bw + bx] = k;
  }
}

// 8-connectivity on 2x2 blocks: a b / c d.
__global__ void merge8_kernel(const std::uint8_t* m, std::uint32_t* P, Geo g) {
  const int bx = blockIdx.x * blockDim.x + threadIdx.x;
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    if (bx >= g.bw) continue;
    const long long b = static_cast<long long>(by) * g.bw + bx;
    if (P[b] == kNone) continue;
    const int x = bx * 2, y = by * 2;
    const bool a = fg(m, g, x, y), bb = fg(m, g, x + 1, y), c = fg(m, g, x, y + 1);
    // left block
    if ((a || c) && (fg(m, g, x - 1, y) || fg(m, g, x - 1, y + 1))) unite<2>(P, P[b], P[b - 1], g);
    if (y > 0) {
      const long long u = b - g.bw;
      if ((a || bb) && (fg(m, g, x, y - 1) || fg(m, g, x + 1, y - 1))) unite<2>(P, P[b], P[u], g);
      if (a && fg(m, g, x - 1, y - 1)) unite<2>(P, P[b], P[u - 1], g);
      if (bb && fg(m, g, x + 2, y - 1)) unite<2>(P, P[b], P[u + 1], g);
    }
  }
}

// 4-connectivity on pixels.
__global__ void merge4_kernel(const std::uint8_t* m, std::uint32_t* P, Geo g) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  for (int y = blockIdx.y; y < g.H; y += gridDim.y) {
    if (x >= g.W) continue;
    const long long i = static_cast<long long>(y) * g.W + x;
    if (P[i] == kNone) continue;
    if (x > 0 && P[i - 1] != kNone) unite<1>(P, P[i], P[i - 1], g);
    if (y > 0 && P[i - g.W] != kNone) unite<1>(P, P[i], P[i - g.W], g);
  }
}

// ---- tile_merge on pixels (4-connectivity) ------------------------------------------------------
//
// One thread block (32 x 8 threads) per tile of 32 x 32 pixels; a warp takes whole tile rows, so a
// row's horizontal runs come from one ballot and every pixel starts out pointing at its run's
// first pixel (chains inside a row are one hop). Only vertical contacts are united, and of those
// only the first of each overlap between a run and the run above (its left neighbour would unite
// the same pair); finds halve paths. Then every pixel jumps to its root in rounds (s[i] = s[s[i]]
// until no pixel changes: log2 of the depth), instead of each of the 1024 pixels walking the
// chains of run roots a dense tile builds. Local keys are indices inside the tile and union links
// the larger root under the smaller, so each local root is its component's raster-first pixel in
// the tile; the kernel writes every pixel's global parent = its local root's global key, and
// counts the local roots per (pixel row, tile column) for the numbering (border4 subtracts the
// ones it links), so no compress pass is needed.

constexpr int kTile = 32;
static_assert(kTile == 32, "a tile row is one warp (ballots) and 1 << 5 pixels wide (unite_counted<1, 5>)");

__device__ __forceinline__ int sfind(volatile int* s, int i) {
  for (;;) {
    const int p = s[i];
    if (p == i) return i;
    const int gp = s[p];
    if (gp != p) s[i] = gp;  // halving: an ancestor over a parent (see find)
    i = gp;
  }
}
__device__ void sunite(int* s, int a, int b) {
  for (;;) {
    a = sfind(s, a);
    b = sfind(s, b);
    if (a == b) return;
    if (a > b) {
      const int t = a;
      a = b;
      b = t;
    }
    const int old = atomicMin(s + b, a);
    if (old == b) return;
    b = old;
  }
}

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
      if (!f[r] || ly == 0 || s[i - kTile] < 0) continue;
      if (((left_fg >> r) & 1u) && s[i - kTile - 1] >= 0) continue;  // the left neighbour unites this pair
      sunite(s, i, i - kTile);
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
          vs[i] = pp;
          changed = true;
        }
      }
      if (!__syncthreads_or(changed)) break;
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int ly = threadIdx.y + 8 * r, i = ly * kTile + lx, x = tx0 + lx, y = ty0 + ly;
      const int root = f[r] ? vs[i] : -1;
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
__global__ void __launch_bounds__(128) flatten1_kernel(std::uint32_t* P, Geo g) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int tx0 = blockIdx.x * kTile, tx1 = min(tx0 + kTile, g.W) - 1;
  for (int ty = blockIdx.y; ty * kTile < g.H; ty += gridDim.y) {
    const int ty0 = ty * kTile, ty1 = min(ty0 + kTile, g.H) - 1;
    int x, y;
    if (w == 0) x = tx0 + lane, y = ty0;
    else if (w == 1) x = tx0 + lane, y = ty1;
    else if (w == 2) x = tx0, y = ty0 + lane;
    else x = tx1, y = ty0 + lane;
    if (x > tx1 || y > ty1) continue;
    const long long n = static_cast<long long>(y) * g.W + x;
    const std::uint32_t p = __ldcg(P + n);
    if (p == kNone) continue;
    const std::uint32_t r = find_ro<1>(P, p, g);
    if (r != p) {
      __stcg(P + n, r);
      __stcg(P + node_of<1>(p, g), r);
    }
  }
}

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

constexpr int kTB = 32;  // tile side in blocks
// Local components that touch another tile, listed per tile: each owns a perimeter block,
// so a tile has at most 4 * 32 - 4 of them.
constexpr int kXCap = 128;

__device__ __forceinline__ std::uint32_t lnode(std::uint32_t k) { return (k >> 7) * kTB + ((k & 63u) >> 1); }
__device__ __forceinline__ std::uint32_t lfind(const volatile std::uint32_t* s, std::uint32_t k) {
  for (;;) {
    const std::uint32_t p = s[lnode(k)];
    if (p == k) return k;
    k = p;
  }
}

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

__device__ __forceinline__ std::uint32_t lfind_halve(std::uint32_t* s, std::uint32_t k) {
  volatile std::uint32_t* vs = s;
  for (;;) {
    const std::uint32_t n = lnode(k);
    const std::uint32_t p = vs[n];
    if (p == k) return k;
    const std::uint32_t gp = vs[lnode(p)];
    if (gp != p) vs[n] = gp;
    k = gp;
  }
}
__device__ void lunite_halve(std::uint32_t* s, std::uint32_t a, std::uint32_t b) {
  for (;;) {
    a = lfind_halve(s, a);
    b = lfind_halve(s, b);
    if (a == b) return;
    if (a > b) {
      const std::uint32_t t = a;
      a = b;
      b = t;
    }
    const std::uint32_t old = atomicMin(s + lnode(b), a);
    if (old == b) return;
    b = old;
  }
}

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
__global__ void __launch_bounds__(256, 8) local2_kernel(const std::uint8_t* m, std::uint32_t* P, uint4* S,
                                                        std::uint32_t* xlist, std::uint32_t* xcount, std::uint32_t* rc,
                                                        Geo g) {
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
      const std::uint32_t lkey = a ? (ly0 << 6) | lx0
                                   : b ? (ly0 << 6) | (lx0 + 1) : c ? ((ly0 + 1) << 6) | lx0 : ((ly0 + 1) << 6) | (lx0 + 1);
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
            if (x != kNone) lunite_halve(s, x, L);
          }
        }
        if (__any_sync(kFull, u)) {  // labels back to roots for the next row
          __syncwarp();
          if (f) Lr = lfind(s, L);
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
    const std::uint32_t qu = __shfl_up_sync(kFull, tu, 1), ql = __shfl_up_sync(kFull, tl, 1), qr = __shfl_up_sync(kFull, tr, 1);
    if (flags & 1u) {  // lane - 1 is in the same run and unites its own targets
      if (tu == qu || tu == ql || tu == qr) tu = kNone;
      if (tl == qu || tl == ql || tl == qr) tl = kNone;
      if (tr == qu || tr == ql || tr == qr) tr = kNone;
    }
    __syncthreads();
    if (tu != kNone) lunite_halve(s, mine, tu);
    if (tl != kNone) lunite_halve(s, mine, tl);
    if (tr != kNone) lunite_halve(s, mine, tr);
    __syncthreads();
    // Label nodes resolve their roots (read-only finds; each writes only its own node, a root).
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      if ((freshbits >> r) & 1u) {
        const int i = rowof(r) * kTB + lane;
        const std::uint32_t k0 = s[i];
        const std::uint32_t rt = lfind(s, k0);
        if (rt != k0) s[i] = rt;
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
        if (pat[r]) v = key_of(2 * tbx0 + static_cast<int>(root[r] & 63u), 2 * tby0 + static_cast<int>(root[r] >> 6), g);
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
            const unsigned K = k == 0 ? 0xAAAAAAAAu : k == 1 ? 0xCCCCCCCCu : k == 2 ? 0xF0F0F0F0u : k == 3 ? 0xFF00FF00u : 0xFFFF0000u;
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
__global__ void __launch_bounds__(96) border2_kernel(const std::uint8_t* m, std::uint32_t* P, Geo g, std::uint32_t* rc) {
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
__global__ void __launch_bounds__(128) flatten2_kernel(std::uint32_t* P, Geo g) {
  grid_dependency_wait();
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int tbx0 = blockIdx.x * kTB;
  const int tbx1 = min(tbx0 + kTB, g.bw) - 1;
  for (int tby0 = blockIdx.y * kTB; tby0 < g.bh; tby0 += gridDim.y * kTB) {
    const int tby1 = min(tby0 + kTB, g.bh) - 1;
    int bx, by;
    if (w == 0) bx = tbx0 + lane, by = tby0;
    else if (w == 1) bx = tbx0 + lane, by = tby1;
    else if (w == 2) bx = tbx0, by = tby0 + lane;
    else bx = tbx1, by = tby0 + lane;
    if (bx > tbx1 || by > tby1) continue;
    const long long b = static_cast<long long>(by) * g.bw + bx;
    const std::uint32_t p = __ldcg(P + b);
    if (p == kNone) continue;
    const std::uint32_t r = find_ro<2>(P, p, g);
    if (r != p) {
      __stcg(P + b, r);
      __stcg(P + node_of<2>(p, g), r);
    }
  }
}

// ---- numbering ----------------------------------------------------------------------------------
//
// compress_count: every node -> its root; per chunk of a node row, the roots whose key lies in
// the node row's first / second pixel row are counted (packed in 16-bit halves). An exclusive scan
// (CUB) over (pixel row, chunk) gives each chunk its first number; assign ranks the roots inside
// the chunk with a block scan in row order, writes number | kHigh (| kDone when the component's
// statistics are final) into the root, and initialises or copies the statistics record.

constexpr int kNumThreads = 256, kNumItems = 4, kChunk = kNumThreads * kNumItems;
constexpr std::uint32_t kDone = 0x40000000u;

template <int B>
__global__ void __launch_bounds__(kNumThreads) compress_count_kernel(std::uint32_t* P, Geo g, int nchunks, std::uint32_t* counts) {
  using Reduce = cub::BlockReduce<std::uint32_t, kNumThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    std::uint32_t c = 0;
#pragma unroll
    for (int j = 0; j < kNumItems; ++j) {
      const int bx = blockIdx.x * kChunk + j * kNumThreads + threadIdx.x;
      if (bx >= g.bw) continue;
      const std::uint32_t n = static_cast<std::uint32_t>(by * g.bw + bx);
      const std::uint32_t p = P[n];
      if (p == kNone) continue;
      const std::uint32_t r = find_ro<B>(P, p, g);
      if (r != p) P[n] = r;
      else if (node_of<B>(p, g) == n) c += (B == 2 && static_cast<int>(p >> g.shift) != B * by) ? 0x10000u : 1u;
    }
    const std::uint32_t total = Reduce(tmp).Sum(c);
    if (threadIdx.x == 0) {
      const long long y = static_cast<long long>(by) * B;
      counts[y * nchunks + blockIdx.x] = total & 0xFFFFu;
      if (B == 2 && y + 1 < g.H) counts[(y + 1) * nchunks + blockIdx.x] = total >> 16;
    }
    __syncthreads();
  }
}

__device__ __forceinline__ RawComponentStats empty_stats() {
  RawComponentStats s;
  s.area = 0;
  s.left = s.top = 0xFFFFFFFFu;
  s.right = s.bottom = 0;
  s.reserved = 0;
  s.sum_x = s.sum_y = 0;
  return s;
}

template <int B, bool Local>
__global__ void __launch_bounds__(kNumThreads) assign_kernel(std::uint32_t* P, const uint4* S, Geo g, int nchunks,
                                                             const std::uint32_t* offsets, RawComponentStats* st,
                                                             std::uint64_t cap) {
  using Scan = cub::BlockScan<std::uint32_t, kNumThreads>;
  __shared__ typename Scan::TempStorage tmp;
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    std::uint32_t f[kNumItems], c = 0;
#pragma unroll
    for (int j = 0; j < kNumItems; ++j) {
      // blocked: thread t owns nodes 4t..4t+3, so the block scan ranks them in row order
      const int bx = blockIdx.x * kChunk + threadIdx.x * kNumItems + j;
      f[j] = 0;
      if (bx < g.bw) {
        const std::uint32_t n = static_cast<std::uint32_t>(by * g.bw + bx);
        const std::uint32_t p = P[n];
        if (p != kNone && !(p & kHigh) && node_of<B>(p, g) == n)
          f[j] = (B == 2 && static_cast<int>(p >> g.shift) != B * by) ? 0x10000u : 1u;
      }
      c += f[j];
    }
    std::uint32_t before;
    Scan(tmp).ExclusiveSum(c, before);
    const long long y = static_cast<long long>(by) * B;
    std::uint32_t next0 = offsets[y * nchunks + blockIdx.x] + (before & 0xFFFFu) + 1;
    std::uint32_t next1 = (B == 2 && y + 1 < g.H) ? offsets[(y + 1) * nchunks + blockIdx.x] + (before >> 16) + 1 : 0;
#pragma unroll
    for (int j = 0; j < kNumItems; ++j) {
      if (!f[j]) continue;
      const int bx = blockIdx.x * kChunk + threadIdx.x * kNumItems + j;
      const std::uint32_t n = static_cast<std::uint32_t>(by * g.bw + bx);
      const std::uint32_t num = f[j] == 1u ? next0++ : next1++;
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
    __syncthreads();
  }
}

// tile_merge on 2x2 blocks: no compress pass. After flatten2 a node's parent is its tile-local
// root, whose parent is the root, so roots are the nodes that hold their own key. The tile pass
// counted roots per (pixel row, tile column) and border2 subtracted the linked ones; after the
// scan, a warp takes one block row of one tile, ranks its roots of each pixel row with a ballot
// and writes the number (and the statistics record, as assign_kernel).
template <bool Local>
__global__ void __launch_bounds__(256) assign2_kernel(std::uint32_t* P, const uint4* S, Geo g, const std::uint32_t* offsets,
                                                      RawComponentStats* st, std::uint64_t cap) {
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
    const std::uint32_t num = offsets[y * gridDim.x + blockIdx.x] + __popc((bottom ? rb : rt) & ((1u << lane) - 1u)) + 1;
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

// tile_merge on pixels (4-connectivity), as assign2: after flatten1 the roots are the pixels that
// hold their own key; tile4 counted roots per (pixel row, tile column) and border4 subtracted the
// linked ones. A warp takes one row of one tile and ranks its roots with a ballot.
__global__ void __launch_bounds__(256) assign1_kernel(std::uint32_t* P, Geo g, const std::uint32_t* offsets,
                                                      RawComponentStats* st, std::uint64_t cap) {
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

__global__ void total_kernel(const std::uint32_t* counts, const std::uint32_t* offsets, std::size_t n, std::uint32_t* d_count) {
  grid_dependency_wait();
  *d_count = n ? offsets[n - 1] + counts[n - 1] : 0;
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

__global__ void __launch_bounds__(32 * kMergeWarps) merge_stats_kernel(const std::uint32_t* P, const uint4* S,
                                                                       const std::uint32_t* xlist, const std::uint32_t* xcount,
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
      const std::uint32_t mnx = __reduce_min_sync(peers, v.w & 0xFFu), mxx = __reduce_max_sync(peers, (v.w >> 8) & 0xFFu);
      const std::uint32_t mxy = __reduce_max_sync(peers, (v.w >> 16) & 0xFFu), mny = __reduce_min_sync(peers, v.w >> 24);
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
          stats_add(st[num - 1], area, sx + static_cast<std::uint64_t>(area) * X0, sy + static_cast<std::uint64_t>(area) * Y0,
                    X0 + mnx, X0 + mxx, Y0 + mny, Y0 + mxy);
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

// ---- label image, 2x2 blocks, vectorised --------------------------------------------------------
//
// For W % 4 == 0 with a 4-byte aligned mask (pointer and stride) and a 16-byte aligned label
// image: a thread takes two adjacent blocks (one 8-byte node load), their labels (one more hop
// for non-roots), reads each of the two mask rows as one 32-bit word and writes 4 labels with
// one streaming 16-byte store. Statistics are not touched (they are complete before this pass on
// the tile_merge path; the other paths use final_kernel).
__device__ __forceinline__ std::uint32_t label_of(const std::uint32_t* P, std::uint32_t p, const Geo& g) {
  if (p == kNone) return 0;
  std::uint32_t w = p;
  while (!(w & kHigh)) w = __ldg(P + node_of<2>(w, g));  // at most two hops
  return w & ~(kHigh | kDone);
}

__global__ void __launch_bounds__(256) labels2_kernel(const std::uint8_t* m, const std::uint32_t* P, std::uint32_t* labels,
                                                      Geo g) {
  grid_dependency_wait();
  const int q = blockIdx.x * 256 + threadIdx.x;  // blocks 2q, 2q + 1 of a block row
  if (q >= g.bw / 2) return;
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    const uint2 pp = __ldg(reinterpret_cast<const uint2*>(P + static_cast<long long>(by) * g.bw) + q);
    const std::uint32_t l0 = label_of(P, pp.x, g), l1 = label_of(P, pp.y, g);
#pragma unroll
    for (int dy = 0; dy < 2; ++dy) {
      const int y = 2 * by + dy;
      if (y >= g.H) break;
      const std::uint32_t mw = __ldg(reinterpret_cast<const std::uint32_t*>(m + static_cast<long long>(y) * g.mstride) + q);
      const uint4 o = make_uint4((mw & 0xFFu) ? l0 : 0u, (mw & 0xFF00u) ? l0 : 0u, (mw & 0xFF0000u) ? l1 : 0u, (mw >> 24) ? l1 : 0u);
      __stcs(reinterpret_cast<uint4*>(labels + static_cast<long long>(y) * g.W) + q, o);
    }
  }
}

// ---- final labels + statistics ------------------------------------------------------------------

struct Run {
  std::uint32_t lab = 0, area = 0, sxr = 0, syr = 0;
  std::uint32_t mnx = 0xFFFFFFFFu, mxx = 0, mny = 0xFFFFFFFFu, mxy = 0;
};

__device__ void flush_global(RawComponentStats* st, const Run& r, std::uint64_t xbase, std::uint64_t ybase) {
  RawComponentStats& s = st[r.lab - 1];
  atomicAdd(&s.area, r.area);
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_x),
            static_cast<unsigned long long>(r.sxr + static_cast<std::uint64_t>(r.area) * xbase));
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_y),
            static_cast<unsigned long long>(r.syr + static_cast<std::uint64_t>(r.area) * ybase));
  // Fire-and-forget reductions (results unused): cheaper than reading first for small labels.
  atomicMin(&s.left, r.mnx);
  atomicMax(&s.right, r.mxx);
  atomicMin(&s.top, r.mny);
  atomicMax(&s.bottom, r.mxy);
}

template <int B, int K>
__global__ void __launch_bounds__(256) final_kernel(const std::uint8_t* m, const std::uint32_t* P, std::uint32_t* labels,
                                                    Geo g, RawComponentStats* st, std::uint64_t cap) {
  __shared__ struct {
    std::uint32_t lab, area, mnx, mxx, mny, mxy;
  } sh;
  __shared__ unsigned long long sh_sx, sh_sy;
  const int lane = threadIdx.x & 31;
  const int block_bx0 = blockIdx.x * 256 * K;
  const std::uint32_t xbase = static_cast<std::uint32_t>(block_bx0 * B);
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    const std::uint32_t ybase = static_cast<std::uint32_t>(by * B);
    Run run;
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const int bx = block_bx0 + j * 256 + threadIdx.x;
      if (bx >= g.bw) break;
      const long long b = static_cast<long long>(by) * g.bw + bx;
      const std::uint32_t p = P[b];
      std::uint32_t lab = 0;
      if (p != kNone) {
        std::uint32_t w = p;
        while (!(w & kHigh)) w = __ldg(P + node_of<B>(w, g));  // one hop, two on the tile_merge 2x2 path
        lab = w & (B == 2 ? ~(kHigh | kDone) : ~kHigh);
      }
#pragma unroll
      for (int dy = 0; dy < B; ++dy) {
        const int y = by * B + dy;
        if (y >= g.H) break;
#pragma unroll
        for (int dx = 0; dx < B; ++dx) {
          const int x = bx * B + dx;
          if (x >= g.W) break;
          const bool f = lab && m[static_cast<long long>(y) * g.mstride + x];
          labels[static_cast<long long>(y) * g.W + x] = f ? lab : 0;
          if (st && f) {
            if (lab != run.lab) {
              if (run.lab && run.lab <= cap) flush_global(st, run, xbase, ybase);
              run = Run{};
              run.lab = lab;
            }
            ++run.area;
            run.sxr += static_cast<std::uint32_t>(x) - xbase;
            run.syr += static_cast<std::uint32_t>(dy);
            run.mnx = min(run.mnx, static_cast<std::uint32_t>(x));
            run.mxx = max(run.mxx, static_cast<std::uint32_t>(x));
            run.mny = min(run.mny, static_cast<std::uint32_t>(y));
            run.mxy = max(run.mxy, static_cast<std::uint32_t>(y));
          }
        }
      }
    }
    if (st) {  // block-uniform
      if (!__syncthreads_or(run.lab != 0)) continue;  // nothing of this row needs atomics
      if (threadIdx.x == 0) {
        sh.lab = run.lab;
        sh.area = sh.mxx = sh.mxy = 0;
        sh.mnx = sh.mny = 0xFFFFFFFFu;
        sh_sx = sh_sy = 0;
      }
      __syncthreads();
      const std::uint32_t dominant = sh.lab;
      const unsigned peers = __match_any_sync(kFull, run.lab);
      if (run.lab && run.lab <= cap) {
        Run w;
        w.lab = run.lab;
        w.area = __reduce_add_sync(peers, run.area);
        w.sxr = __reduce_add_sync(peers, run.sxr);
        w.syr = __reduce_add_sync(peers, run.syr);
        w.mnx = __reduce_min_sync(peers, run.mnx);
        w.mxx = __reduce_max_sync(peers, run.mxx);
        w.mny = __reduce_min_sync(peers, run.mny);
        w.mxy = __reduce_max_sync(peers, run.mxy);
        if (lane == __ffs(peers) - 1) {
          if (w.lab == dominant) {
            atomicAdd(&sh.area, w.area);
            atomicAdd(&sh_sx, static_cast<unsigned long long>(w.sxr));
            atomicAdd(&sh_sy, static_cast<unsigned long long>(w.syr));
            atomicMin(&sh.mnx, w.mnx);
            atomicMax(&sh.mxx, w.mxx);
            atomicMin(&sh.mny, w.mny);
            atomicMax(&sh.mxy, w.mxy);
          } else {
            flush_global(st, w, xbase, ybase);
          }
        }
      }
      __syncthreads();
      if (threadIdx.x == 0 && dominant && dominant <= cap) {
        RawComponentStats& s = st[dominant - 1];
        atomicAdd(&s.area, sh.area);
        atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_x),
                  static_cast<unsigned long long>(sh_sx + static_cast<std::uint64_t>(sh.area) * xbase));
        atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_y),
                  static_cast<unsigned long long>(sh_sy + static_cast<std::uint64_t>(sh.area) * ybase));
        if (sh.mnx < __ldcg(&s.left)) atomicMin(&s.left, sh.mnx);
        if (sh.mxx > __ldcg(&s.right)) atomicMax(&s.right, sh.mxx);
        if (sh.mny < __ldcg(&s.top)) atomicMin(&s.top, sh.mny);
        if (sh.mxy > __ldcg(&s.bottom)) atomicMax(&s.bottom, sh.mxy);
      }
      __syncthreads();
    }
  }
}

// ---- dispatch -----------------------------------------------------------------------------------

constexpr int kMaxGridY = 65535;

struct Plan {
  Geo g{};
  int B = 2;
  LabelAlgorithm algorithm = LabelAlgorithm::block_union_find;
  int conn = 8;
  bool local2 = false;  // tile_merge on 2x2 blocks (8-connectivity)
  bool local1 = false;  // tile_merge on pixels (4-connectivity)
  std::size_t nodes = 0;
  int nchunks = 0;
  std::size_t ncounts = 0;
  std::size_t scan_bytes = 0;
  // temp layout
  std::size_t ntiles = 0;  // local2: tiles of 32x32 blocks
  std::size_t off_P = 0, off_S = 0, off_xlist = 0, off_xcount = 0, off_counts = 0, off_offsets = 0, off_scan = 0, total = 0;
};

std::size_t align256(std::size_t v) { return (v + 255) & ~std::size_t{255}; }

/// Keys are (y << shift) | x with shift = ceil(log2 W); one call takes the rows whose keys stay
/// below 2^31.
int key_shift(std::int64_t W) {
  int shift = 0;
  while ((std::int64_t{1} << shift) < W) ++shift;
  return shift;
}
std::int64_t rows_per_call(std::int64_t W) { return (std::int64_t{1} << 31) >> key_shift(W); }

Plan make_plan(std::int64_t W, std::int64_t H, std::int64_t mstride, const LabelOptions& o) {
  if (o.connectivity != 4 && o.connectivity != 8)
    throw InputError("label: connectivity must be 4 or 8, not " + std::to_string(o.connectivity));
  if (W <= 0 || H <= 0) throw InputError("label: empty image");
  const int shift = key_shift(W);
  if (H > rows_per_call(W))
    throw InputError("label: " + std::to_string(W) + "x" + std::to_string(H) +
                     " is too large for the CUDA backend (height * next_pow2(width) must be <= 2^31)");
  Plan p;
  p.conn = o.connectivity;
  p.algorithm = o.algorithm == LabelAlgorithm::automatic ? automatic_algorithm(W, H, o.connectivity) : o.algorithm;
  if (p.algorithm != LabelAlgorithm::block_union_find && p.algorithm != LabelAlgorithm::tile_merge)
    throw BackendError("labeling algorithm '" + std::string(to_string(p.algorithm)) +
                       "' is not available on the cuda backend");
  p.B = p.conn == 8 ? 2 : 1;
  p.local2 = p.conn == 8 && p.algorithm == LabelAlgorithm::tile_merge;
  p.local1 = p.conn == 4 && p.algorithm == LabelAlgorithm::tile_merge;
  p.g.W = static_cast<int>(W);
  p.g.H = static_cast<int>(H);
  p.g.mstride = mstride;
  p.g.shift = shift;
  p.g.bw = static_cast<int>((W + p.B - 1) / p.B);
  p.g.bh = static_cast<int>((H + p.B - 1) / p.B);
  p.nodes = static_cast<std::size_t>(p.g.bw) * static_cast<std::size_t>(p.g.bh);
  p.nchunks = (p.g.bw + kChunk - 1) / kChunk;
  // counts per (pixel row, chunk of kChunk nodes); local2, local1: per (pixel row, tile column)
  const int count_cols = p.local2 ? (p.g.bw + kTB - 1) / kTB : p.local1 ? (p.g.W + kTile - 1) / kTile : p.nchunks;
  p.ncounts = static_cast<std::size_t>(count_cols) * static_cast<std::size_t>(H);
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, p.scan_bytes, static_cast<std::uint32_t*>(nullptr),
                                                  static_cast<std::uint32_t*>(nullptr), p.ncounts));
  p.off_P = 0;
  p.off_S = align256(p.off_P + p.nodes * 4);
  if (p.local2)
    p.ntiles = static_cast<std::size_t>((p.g.bw + kTB - 1) / kTB) * static_cast<std::size_t>((p.g.bh + kTB - 1) / kTB);
  p.off_xlist = align256(p.off_S + (p.local2 ? p.nodes * sizeof(uint4) : 0));
  p.off_xcount = align256(p.off_xlist + p.ntiles * kXCap * 4);
  p.off_counts = align256(p.off_xcount + p.ntiles * 4);
  p.off_offsets = align256(p.off_counts + p.ncounts * 4);
  p.off_scan = align256(p.off_offsets + p.ncounts * 4);
  p.total = align256(p.off_scan + p.scan_bytes);
  return p;
}

// Whether the current device may run this unit's kernels as programmatic dependents: compute
// capability 9.0 or later, and kernels compiled for a virtual architecture >= 9.0 (an older one,
// e.g. -DCMAKE_CUDA_ARCHITECTURES=80 JIT-compiled for a Hopper, has no grid_dependency_wait, so
// its kernels must be launched in plain stream order). Cached per device.
bool programmatic_launch_ok(const void* kernel_of_this_unit) {
  static std::atomic<signed char> known[64] = {};  // per device: 0 unknown, 1 no, 2 yes
  return runs_as_sm90(kernel_of_this_unit, known);
}

// Launch with programmatic stream serialisation where allowed (see grid_dependency_wait).
template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t s, Args... args) {
  if (!programmatic_launch_ok(reinterpret_cast<const void*>(kernel))) {
    kernel<<<grid, block, 0, s>>>(static_cast<Params>(args)...);
    WINNOW_CUDA_CHECK_LAUNCH();
    return;
  }
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  WINNOW_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, static_cast<Params>(args)...));
}

// Everything up to and including the numbering (N in *d_count). With st (capacity cap), the
// statistics records of labels <= cap are initialised, or written in full where final already.
void run_core(const Plan& p, void* d_temp, const std::uint8_t* d_mask, std::uint32_t* d_count, RawComponentStats* st,
              std::uint64_t cap, cudaStream_t s) {
  auto* base = static_cast<char*>(d_temp);
  auto* P = reinterpret_cast<std::uint32_t*>(base + p.off_P);
  auto* S = reinterpret_cast<uint4*>(base + p.off_S);
  auto* counts = reinterpret_cast<std::uint32_t*>(base + p.off_counts);
  auto* offsets = reinterpret_cast<std::uint32_t*>(base + p.off_offsets);
  auto* xlist = reinterpret_cast<std::uint32_t*>(base + p.off_xlist);
  auto* xcount = reinterpret_cast<std::uint32_t*>(base + p.off_xcount);
  if (!cap) st = nullptr;
  const Geo g = p.g;
  const dim3 nb(128);
  const dim3 ng((g.bw + 127) / 128, std::min(g.bh, kMaxGridY));
  const bool local_stats = p.local2 && st;
  if (p.local2) {
    const dim3 tg((g.bw + kTB - 1) / kTB, std::min((g.bh + kTB - 1) / kTB, kMaxGridY));
    if (local_stats) local2_kernel<true><<<tg, dim3(kTB, 8), 0, s>>>(d_mask, P, S, xlist, xcount, counts, g);
    else local2_kernel<false><<<tg, dim3(kTB, 8), 0, s>>>(d_mask, P, S, xlist, xcount, counts, g);
    WINNOW_CUDA_CHECK_LAUNCH();
    launch_dependent(border2_kernel, tg, dim3(96), s, d_mask, P, g, counts);
    WINNOW_CUDA_CHECK_LAUNCH();
    launch_dependent(flatten2_kernel, tg, dim3(128), s, P, g);
    WINNOW_CUDA_CHECK_LAUNCH();
  } else if (p.local1) {
    const dim3 tg((g.W + kTile - 1) / kTile, std::min((g.H + kTile - 1) / kTile, kMaxGridY));
    tile4_kernel<<<tg, dim3(kTile, 8), 0, s>>>(d_mask, P, g, counts);
    WINNOW_CUDA_CHECK_LAUNCH();
    border4_kernel<<<tg, 64, 0, s>>>(P, g, counts);
    WINNOW_CUDA_CHECK_LAUNCH();
    flatten1_kernel<<<tg, 128, 0, s>>>(P, g);
    WINNOW_CUDA_CHECK_LAUNCH();
  } else if (p.B == 2) {
    init_kernel<2><<<ng, nb, 0, s>>>(d_mask, P, g);
    WINNOW_CUDA_CHECK_LAUNCH();
    merge8_kernel<<<ng, nb, 0, s>>>(d_mask, P, g);
    WINNOW_CUDA_CHECK_LAUNCH();
  } else {
    init_kernel<1><<<ng, nb, 0, s>>>(d_mask, P, g);
    WINNOW_CUDA_CHECK_LAUNCH();
    merge4_kernel<<<ng, nb, 0, s>>>(d_mask, P, g);
    WINNOW_CUDA_CHECK_LAUNCH();
  }
  const dim3 cg(p.nchunks, std::min(g.bh, kMaxGridY));
  if (!p.local2 && !p.local1) {  // local2 and local1 counted their roots in the tile and border passes
    if (p.B == 2) compress_count_kernel<2><<<cg, kNumThreads, 0, s>>>(P, g, p.nchunks, counts);
    else compress_count_kernel<1><<<cg, kNumThreads, 0, s>>>(P, g, p.nchunks, counts);
    WINNOW_CUDA_CHECK_LAUNCH();
  }
  std::size_t scan_bytes = p.scan_bytes;
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(base + p.off_scan, scan_bytes, counts, offsets, p.ncounts, s));
  if (p.local2) launch_dependent(total_kernel, dim3(1), dim3(1), s, counts, offsets, p.ncounts, d_count);
  else total_kernel<<<1, 1, 0, s>>>(counts, offsets, p.ncounts, d_count);
  WINNOW_CUDA_CHECK_LAUNCH();
  if (p.local2) {
    const dim3 ag((g.bw + kTB - 1) / kTB, std::min((g.bh + 7) / 8, kMaxGridY));
    if (local_stats) launch_dependent(assign2_kernel<true>, ag, dim3(kTB, 8), s, P, S, g, offsets, st, cap);
    else launch_dependent(assign2_kernel<false>, ag, dim3(kTB, 8), s, P, S, g, offsets, st, cap);
  } else if (p.local1) {
    const dim3 ag((g.W + kTile - 1) / kTile, std::min((g.H + 7) / 8, kMaxGridY));
    assign1_kernel<<<ag, dim3(kTile, 8), 0, s>>>(P, g, offsets, st, cap);
  } else if (p.B == 2) assign_kernel<2, false><<<cg, kNumThreads, 0, s>>>(P, S, g, p.nchunks, offsets, st, cap);
  else assign_kernel<1, false><<<cg, kNumThreads, 0, s>>>(P, S, g, p.nchunks, offsets, st, cap);
  WINNOW_CUDA_CHECK_LAUNCH();
  if (local_stats) {  // components that cross tiles: add their tile-local parts
    const int ntx = (g.bw + kTB - 1) / kTB;
    const dim3 mg((ntx + kMergeWarps - 1) / kMergeWarps, std::min((g.bh + kTB - 1) / kTB, kMaxGridY));
    launch_dependent(merge_stats_kernel, mg, dim3(32 * kMergeWarps), s, P, S, xlist, xcount, g, ntx, st, cap);
    WINNOW_CUDA_CHECK_LAUNCH();
  }
}

// Labels (and statistics of labels <= cap when d_stats, whose records run_core prepared).
void run_final(const Plan& p, void* d_temp, const std::uint8_t* d_mask, std::uint32_t* d_labels,
               RawComponentStats* d_stats, std::uint64_t cap, cudaStream_t s) {
  auto* P = reinterpret_cast<const std::uint32_t*>(static_cast<const char*>(d_temp) + p.off_P);
  const Geo g = p.g;
  if (!cap) d_stats = nullptr;
  if (p.local2) d_stats = nullptr;  // complete after run_core (assign + merge_stats)
  const bool vec = p.B == 2 && g.W % 4 == 0 && g.mstride % 4 == 0 &&
                   ((reinterpret_cast<std::uintptr_t>(d_mask) & 3u) | (reinterpret_cast<std::uintptr_t>(d_labels) & 15u)) == 0;
  if (vec && !d_stats) {
    const dim3 lg((g.bw / 2 + 255) / 256, std::min(g.bh, kMaxGridY));
    if (p.local2) launch_dependent(labels2_kernel, lg, dim3(256), s, d_mask, P, d_labels, g);
    else labels2_kernel<<<lg, 256, 0, s>>>(d_mask, P, d_labels, g);
  } else if (p.B == 2) {
    constexpr int K = 4;
    const dim3 fg_((g.bw + 256 * K - 1) / (256 * K), std::min(g.bh, kMaxGridY));
    final_kernel<2, K><<<fg_, 256, 0, s>>>(d_mask, P, d_labels, g, d_stats, cap);
  } else {
    constexpr int K = 8;
    const dim3 fg_((g.bw + 256 * K - 1) / (256 * K), std::min(g.bh, kMaxGridY));
    final_kernel<1, K><<<fg_, 256, 0, s>>>(d_mask, P, d_labels, g, d_stats, cap);
  }
  WINNOW_CUDA_CHECK_LAUNCH();
}

}  // namespace

LabelAlgorithm automatic_algorithm(std::int64_t, std::int64_t, int connectivity) {
  (void)connectivity;  // tile_merge beats block_union_find at both connectivities (bench/RESULTS.md)
  return LabelAlgorithm::tile_merge;
}

namespace {
/// One device call on an image within rows_per_call; statistics in image rows offset by `top`.
std::uint64_t label_once(const LabelRequest& req, std::int64_t top, std::vector<ComponentSums>* stats) {
  const std::int64_t W = req.mask.width, H = req.mask.height;
  if (stats) stats->clear();
  if (W <= 0 || H <= 0) return 0;
  LabelOptions o;
  o.connectivity = req.connectivity;
  o.algorithm = req.algorithm;
  const Plan p = make_plan(W, H, W, o);
  cudaStream_t s = nullptr;
  const auto n = static_cast<std::size_t>(W * H);
  DeviceBuffer<std::uint8_t> d_mask(n, s);
  DeviceBuffer<std::uint32_t> d_labels(n, s);
  DeviceBuffer<char> d_temp(p.total, s);
  DeviceBuffer<std::uint32_t> d_count(1, s);
  WINNOW_CUDA_CHECK(cudaMemcpy2DAsync(d_mask.get(), W, req.mask.data, req.mask.stride, W, H, cudaMemcpyHostToDevice, s));
  run_core(p, d_temp.get(), d_mask.get(), d_count.get(), nullptr, 0, s);
  std::uint32_t count = 0;
  WINNOW_CUDA_CHECK(cudaMemcpyAsync(&count, d_count.get(), 4, cudaMemcpyDeviceToHost, s));
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  DeviceBuffer<RawComponentStats> d_stats(stats && count ? count : 0, s);
  // With statistics the numbering pass runs again, now sized: it initialises (or fills) the records.
  if (d_stats.size()) run_core(p, d_temp.get(), d_mask.get(), d_count.get(), d_stats.get(), d_stats.size(), s);
  run_final(p, d_temp.get(), d_mask.get(), d_labels.get(), d_stats.get(), d_stats.size(), s);
  WINNOW_CUDA_CHECK(cudaMemcpy2DAsync(req.labels.data, req.labels.stride * 4, d_labels.get(), W * 4, W * 4, H,
                                      cudaMemcpyDeviceToHost, s));
  if (stats && count) {
    std::vector<RawComponentStats> raw(count);
    WINNOW_CUDA_CHECK(cudaMemcpyAsync(raw.data(), d_stats.get(), count * sizeof(RawComponentStats),
                                      cudaMemcpyDeviceToHost, s));
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
    stats->resize(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      const RawComponentStats& r = raw[i];
      ComponentSums& m = (*stats)[i];
      m.area = r.area;
      m.sum_x = r.sum_x;
      m.sum_y = r.sum_y + static_cast<std::uint64_t>(top) * r.area;
      m.left = r.left, m.right = r.right;
      m.top = r.top + top, m.bottom = r.bottom + top;
    }
  }
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  return count;
}
}  // namespace

std::uint64_t label(const LabelRequest& req, std::vector<ComponentStats>* stats, std::int64_t band_rows) {
  const std::int64_t W = req.mask.width, H = req.mask.height;
  if (stats) stats->clear();
  if (W <= 0 || H <= 0) return 0;
  const std::int64_t max_rows = rows_per_call(W);
  if (max_rows < 1)
    throw InputError("label: a width of " + std::to_string(W) + " is too large for the CUDA backend");
  band_rows = band_rows > 0 ? std::min(band_rows, max_rows) : max_rows;
  if (H > band_rows)  // beyond one call's keys: bands, merged on the host (cpu/label_bands.cpp)
    return label_in_bands(req, stats, band_rows, [](const LabelRequest& band, std::int64_t top,
                                                    std::vector<ComponentSums>* band_stats) {
      return label_once(band, top, band_stats);
    });
  std::vector<ComponentSums> parts;
  const std::uint64_t count = label_once(req, 0, stats ? &parts : nullptr);
  if (stats) {
    stats->resize(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) (*stats)[i] = to_component_stats(parts[i]);
  }
  return count;
}

}  // namespace winnow::detail::cuda

namespace winnow::cuda {

void label(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_mask, std::int64_t width, std::int64_t height,
           std::int64_t mask_stride, std::uint32_t* d_labels, std::uint32_t* d_count, RawComponentStats* d_stats,
           std::uint64_t stats_capacity, const LabelOptions& options, cudaStream_t stream) {
  if (options.min_area > 1)
    throw InputError("winnow::cuda::label: min_area needs the count on the host; use winnow::label");
  if (mask_stride < width) throw InputError("winnow::cuda::label: mask stride smaller than the width");
  const detail::cuda::Plan p = detail::cuda::make_plan(width, height, mask_stride, options);
  if (!d_temp) {
    temp_bytes = p.total;
    return;
  }
  if (temp_bytes < p.total) throw InputError("winnow::cuda::label: temporary storage too small");
  detail::cuda::run_core(p, d_temp, d_mask, d_count, d_stats, stats_capacity, stream);
  detail::cuda::run_final(p, d_temp, d_mask, d_labels, d_stats, stats_capacity, stream);
}

}  // namespace winnow::cuda
