#pragma once
// Device building blocks of CUDA image labeling, shared by its algorithms (block_union_find.cu,
// tile_merge4.cu, tile_merge8.cu) and the numbering passes (numbering.cuh):
//
// Keys. A node's value is a key (y << shift) | x of a foreground pixel, shift = ceil(log2 W), so
// keys order exactly like raster indices and decode to their node with shifts. A node is a pixel
// (B = 1, 4-connectivity) or a 2x2 block (B = 2, 8-connectivity: all foreground pixels of a block
// are 8-connected). A block's own key is its first foreground pixel in raster order, and unions
// link the larger root key under the smaller (union_find.cuh), so every component's root is the
// node holding its raster-first pixel. After numbering, a root holds number | kHigh (| kDone when
// its statistics are final).
//
// The forest in global memory (ImageForest): unite_counted for the tile algorithms, which keep a
// count of roots per (pixel row, tile column). flatten_kernel<B> points the linked local roots of
// every tile at their roots after the border pass.
#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda/dependent_launch.cuh"
#include "label/cuda/union_find.cuh"
#include "winnow/cuda/label.hpp"

namespace winnow::detail::cuda {
namespace {

using winnow::cuda::RawComponentStats;
constexpr std::uint32_t kHigh = 0x80000000u;  // a root's number (keys stay below 2^31)
constexpr std::uint32_t kDone = 0x40000000u;  // ... whose statistics record is complete
/// Tile side of both tile_merge algorithms, in nodes: 32 pixels (4-connectivity) or 32 2x2
/// blocks = 64 pixels (8-connectivity). A tile row is one warp (ballots).
constexpr int kTileNodes = 32;

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

/// An image's forest in global memory: key k lies in node node_of<B>(k). Loads bypass L1
/// (__ldcg: other blocks store meanwhile), and so do halving stores (__stcg). Entry is
/// const std::uint32_t for the read-only finds.
template <int B, class Entry = std::uint32_t>
struct ImageForest {
  using key_type = std::uint32_t;
  Entry* P;
  const Geo& g;
  __device__ __forceinline__ Entry* entry(std::uint32_t k) const { return P + node_of<B>(k, g); }
  __device__ __forceinline__ static std::uint32_t load(const std::uint32_t* e) { return __ldcg(e); }
  __device__ __forceinline__ static void lower(std::uint32_t* e, std::uint32_t ancestor) { __stcg(e, ancestor); }
  __device__ __forceinline__ static std::uint32_t link(std::uint32_t* e, std::uint32_t root) {
    return atomicMin(e, root);
  }
};

// unite for tile_merge: a root that is linked under another stops being a root, so the count of
// roots of its (pixel row, tile column) drops by one. Exactly one link succeeds per former root
// (afterwards its node no longer holds its own key). Tiles are 1 << TileShift pixels wide.
template <int B, int TileShift>
__device__ void unite_counted(std::uint32_t* P, std::uint32_t a, std::uint32_t b, const Geo& g, std::uint32_t* rc,
                              int ntx) {
  unite(ImageForest<B>{P, g}, a, b, [&](std::uint32_t root, std::uint32_t) {
    atomicSub(rc + static_cast<std::size_t>(root >> g.shift) * ntx + ((root & ((1u << g.shift) - 1u)) >> TileShift),
              1u);
  });
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
    const std::uint32_t r = find_root_read_only(ImageForest<B, const std::uint32_t>{P, g}, p);
    if (r != p) {
      __stcg(P + n, r);
      __stcg(P + node_of<B>(p, g), r);
    }
  }
}

}  // namespace
}  // namespace winnow::detail::cuda
