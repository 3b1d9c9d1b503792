#pragma once
// Device building blocks of CUDA labeling, shared by its algorithms (block_union_find.cu,
// tile_merge4.cu, tile_merge8.cu) and the numbering passes (numbering.cuh):
//
// Keys. A node's value is a key (y << shift) | x of a foreground pixel, shift = ceil(log2 W), so
// keys order exactly like raster indices and decode to their node with shifts. A node is a pixel
// (B = 1, 4-connectivity) or a 2x2 block (B = 2, 8-connectivity: all foreground pixels of a block
// are 8-connected). A block's own key is its first foreground pixel in raster order, and unions
// link the larger root key under the smaller (atomicMin), so every component's root is the node
// holding its raster-first pixel. After numbering, a root holds number | kHigh (| kDone when its
// statistics are final).
//
// Union-find on global memory: find with path halving, a read-only find for passes where every
// thread writes only roots, unite by atomicMin (unite_linking, which reports the root it linked), and
// unite_counted for the tile algorithms, which keep a count of roots per (pixel row, tile column). flatten_kernel<B> points the linked local
// roots of every tile at their roots after the border pass.
#include <cuda_runtime.h>

#include <cstdint>

#include "winnow/cuda/label.hpp"

namespace winnow::detail::cuda {
namespace {

using winnow::cuda::RawComponentStats;
constexpr std::uint32_t kNone = 0xFFFFFFFFu;  // background node
constexpr std::uint32_t kHigh = 0x80000000u;  // a root's number (keys stay below 2^31)
constexpr std::uint32_t kDone = 0x40000000u;  // ... whose statistics record is complete
constexpr unsigned kFull = 0xFFFFFFFFu;
/// Tile side of both tile_merge algorithms, in nodes: 32 pixels (4-connectivity) or 32 2x2
/// blocks = 64 pixels (8-connectivity). A tile row is one warp (ballots).
constexpr int kTileNodes = 32;

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

// Unites the sets of keys a and b: links the larger root under the smaller by atomicMin, retrying
// when another thread linked that root first; calls linked(root) for the root it linked (which
// stops being a root), nothing when a and b were already in one set.
template <int B, class Linked>
__device__ __forceinline__ void unite_linking(std::uint32_t* P, std::uint32_t a, std::uint32_t b, const Geo& g,
                                              Linked&& linked) {
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
      linked(b);
      return;
    }
    b = old;
  }
}

template <int B>
__device__ void unite(std::uint32_t* P, std::uint32_t a, std::uint32_t b, const Geo& g) {
  unite_linking<B>(P, a, b, g, [](std::uint32_t) {});
}

// unite for tile_merge: a root that is linked under another stops being a root, so the count of
// roots of its (pixel row, tile column) drops by one. Exactly one link succeeds per former root
// (afterwards its node no longer holds its own key). Tiles are 1 << TileShift pixels wide.
template <int B, int TileShift>
__device__ void unite_counted(std::uint32_t* P, std::uint32_t a, std::uint32_t b, const Geo& g, std::uint32_t* rc, int ntx) {
  unite_linking<B>(P, a, b, g, [&](std::uint32_t root) {
    atomicSub(rc + static_cast<std::size_t>(root >> g.shift) * ntx + ((root & ((1u << g.shift) - 1u)) >> TileShift), 1u);
  });
}

// Shared-memory union-find entries are read and written by several threads of a block at once
// (finds, path halving, links, pointer jumping). Every store there writes an ancestor (a smaller
// key or index) over a descendant, so it is done as an atomicMin: it never raises an entry that a
// concurrent link lowered further, and loads racing with it are not data races in the CUDA memory
// model (volatile loads are relaxed; compute-sanitizer racecheck counts a load against a plain or
// relaxed store of another thread, not against an atomic, bench/results/label.md).
template <class T>
__device__ __forceinline__ void lower_to(T* entry, T ancestor) {
  atomicMin(entry, ancestor);
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

// After the border pass of a tile algorithm the forest is final. Every local root that was linked
// has a node on its tile's perimeter; pointing those local roots (and the perimeter nodes)
// straight at their roots keeps the later passes at one or two hops per node -- without it every
// node of a tile walks its local root's whole chain across tiles. Every store writes a root, so
// concurrent read-only finds see either the old parent or the root. One thread block of 4 warps
// per tile column (top row, bottom row, left column, right column), tile rows in a grid-stride loop.
template <int B>
__global__ void __launch_bounds__(128) flatten_kernel(std::uint32_t* P, Geo g) {
  grid_dependency_wait();
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int tx0 = blockIdx.x * kTileNodes, tx1 = min(tx0 + kTileNodes, g.bw) - 1;
  for (int ty0 = blockIdx.y * kTileNodes; ty0 < g.bh; ty0 += gridDim.y * kTileNodes) {
    const int ty1 = min(ty0 + kTileNodes, g.bh) - 1;
    int x, y;
    if (w == 0) x = tx0 + lane, y = ty0;
    else if (w == 1) x = tx0 + lane, y = ty1;
    else if (w == 2) x = tx0, y = ty0 + lane;
    else x = tx1, y = ty0 + lane;
    if (x > tx1 || y > ty1) continue;
    const long long n = static_cast<long long>(y) * g.bw + x;
    const std::uint32_t p = __ldcg(P + n);
    if (p == kNone) continue;
    const std::uint32_t r = find_ro<B>(P, p, g);
    if (r != p) {
      __stcg(P + n, r);
      __stcg(P + node_of<B>(p, g), r);
    }
  }
}

}  // namespace
}  // namespace winnow::detail::cuda
