#pragma once
// The CUDA isosurface's key passes: each vertex's key (its voxel and slot) and each triangle's key
// (its cell and rank) written into the output slot the tile scan gives it, and per voxel the
// number of its first vertex. Part of src/isosurface/cuda/isosurface.cu, which alone includes it.
#include <cstdint>

#include "isosurface/cuda/tiles.cuh"
#include "winnow/cuda/isosurface.hpp"

namespace winnow::detail::cuda {
namespace {

// The vertex and triangle passes are two kernels each. A pass over the voxels (one thread per
// voxel, most of them idle: a surface touches a few voxels per warp) only scans and writes each
// output's key -- its voxel or cell and its rank -- into the output slot itself; a dense pass (one
// thread per output) then reads the key and computes the output in place. The expensive work
// (interpolation and gradients in double, the cell's triangles) so runs on full warps.

/// Vertex key in a vertex's 12 bytes: x | slot << 30, y, z.
__device__ __forceinline__ void put_vertex_key(float* at, std::int64_t x, std::int64_t y, std::int64_t z, int slot) {
  reinterpret_cast<uint3*>(at)[0] = make_uint3(static_cast<unsigned>(x) | static_cast<unsigned>(slot) << 30,
                                               static_cast<unsigned>(y), static_cast<unsigned>(z));
}
/// Triangle key in a triangle's first 12 bytes: x, y, z << 3 | rank in its cell.
__device__ __forceinline__ void put_triangle_key(void* at, std::int64_t x, std::int64_t y, std::int64_t z, int rank) {
  unsigned* p = static_cast<unsigned*>(at);
  p[0] = static_cast<unsigned>(x), p[1] = static_cast<unsigned>(y), p[2] = static_cast<unsigned>(z) << 3 | rank;
}

/// The lane (0..31) whose range of a warp-wide count holds output t of the tile: the first lane
/// whose inclusive prefix exceeds t (lanes with nothing have no range). All lanes call it.
__device__ __forceinline__ int owner_lane(unsigned inclusive, unsigned t) {
  int lane = 0;
#pragma unroll
  for (int step = 16; step >= 1; step /= 2)
    if (__shfl_sync(0xffffffffu, inclusive, lane + step - 1) <= t) lane += step;
  return lane;
}
__device__ __forceinline__ unsigned long long shfl_u64(unsigned long long v, int from) {
  const unsigned lo = __shfl_sync(0xffffffffu, static_cast<unsigned>(v), from);
  const unsigned hi = __shfl_sync(0xffffffffu, static_cast<unsigned>(v >> 32), from);
  return static_cast<unsigned long long>(hi) << 32 | lo;
}

/// Where output t of a tile lies: the lane whose voxels hold it, the voxel (0..7) among that lane's
/// and t's rank among the voxel's outputs; `count(byte)` is a voxel's number of outputs. All lanes
/// call it (shuffles); for t past the tile's total the result is meaningless and skipped.
struct TileOutput {
  int lane, voxel;
  unsigned rank;
  unsigned long long bytes;  ///< the owner lane's 8 bytes
};
template <class Count>
__device__ __forceinline__ TileOutput locate_output(unsigned long long bytes, unsigned exclusive, unsigned inclusive,
                                                    unsigned t, Count count) {
  TileOutput o;
  o.lane = owner_lane(inclusive, t);
  o.bytes = shfl_u64(bytes, o.lane);
  unsigned local = t - __shfl_sync(0xffffffffu, exclusive, o.lane);
  o.voxel = 0, o.rank = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const unsigned c = count(byte_of(o.bytes, i));
    if (local < c) {
      o.voxel = i, o.rank = local;
      local = 0xffffffffu;  // found: no later voxel matches
    } else {
      local -= c;
    }
  }
  return o;
}

// The key passes write each tile's outputs warp-cooperatively: output t of the tile goes to lane
// t % 32, which finds its voxel (the owner lane by a search over the lanes' prefix sums, then the
// voxel among that lane's 8 bytes), so a warp's stores are consecutive keys rather than
// scattered 12-byte pieces.

/// Numbers tile `tile`'s vertices (a warp, `bytes` its lanes' info bytes): for every voxel that
/// owns one (extra layer too), its first vertex's slab-local number; for the own layers, each
/// vertex's key in its output slot.
__device__ __forceinline__ void write_vertex_keys(const Slab& s, const LaneBytes& b, unsigned long long bytes,
                                                  const TileRange& range, int lane, std::uint32_t* first_vertex,
                                                  float* d_vertices) {
  const unsigned mine = vertices_of(bytes), exclusive = warp_exclusive_sum(mine, lane), inclusive = exclusive + mine;
  // First vertex numbers, each lane its own voxels, only those that own vertices (the variants
  // tried are in bench/results/isosurface.md).
  std::uint64_t k = range.begin.vertices + exclusive;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const unsigned mask = byte_of(bytes, i) & 7u;
    if (mask == 0) continue;
    first_vertex[b.first + i] = static_cast<std::uint32_t>(k);
    k += __popc(mask);
  }
  if (b.z >= s.z1) return;  // the extra layer: numbered here, written by the next slab (uniform: one row)
  const std::int64_t tile_x = b.x - lane * 8;
  const unsigned total = static_cast<unsigned>(range.end.vertices - range.begin.vertices);
  for (unsigned base = 0; base < total; base += 32) {
    const unsigned t = base + lane;
    const TileOutput o = locate_output(bytes, exclusive, inclusive, t, [](unsigned v) { return __popc(v & 7u); });
    if (t >= total) continue;
    unsigned mask = byte_of(o.bytes, o.voxel) & 7u;  // the voxel's vertices: drop the lower ones
    for (unsigned r = 0; r < o.rank; ++r) mask &= mask - 1;
    put_vertex_key(d_vertices + 3 * (range.begin.vertices + t), tile_x + o.lane * 8 + o.voxel, b.y, b.z,
                   __ffs(mask) - 1);
  }
}

/// Numbers an own tile's triangles (a warp): each triangle's key (its cell, its rank) in its
/// output slot.
__device__ __forceinline__ void write_triangle_keys(const LaneBytes& b, unsigned long long bytes,
                                                    const TileRange& range, int lane,
                                                    const winnow::cuda::DeviceMesh& out) {
  const unsigned mine = triangles_of(bytes), exclusive = warp_exclusive_sum(mine, lane), inclusive = exclusive + mine;
  const std::int64_t tile_x = b.x - lane * 8;
  const unsigned total = static_cast<unsigned>(range.end.triangles - range.begin.triangles);
  for (unsigned base = 0; base < total; base += 32) {
    const unsigned t = base + lane;
    const TileOutput o = locate_output(bytes, exclusive, inclusive, t, [](unsigned v) { return v >> 4; });
    if (t >= total) continue;
    const std::uint64_t k = range.begin.triangles + t;
    void* at = out.d_triangles64 != nullptr ? static_cast<void*>(out.d_triangles64 + 3 * k)
                                            : static_cast<void*>(out.d_triangles + 3 * k);
    put_triangle_key(at, tile_x + o.lane * 8 + o.voxel, b.y, b.z, static_cast<int>(o.rank));
  }
}

/// Both key passes in one, a warp per tile: the vertices of every tile (extra layer too), the
/// triangles of the own tiles. The tile's offsets and bytes are read once for both, and tiles with
/// nothing to number (most, away from the surface) or no room leave at once, the whole warp.
__global__ void __launch_bounds__(Tuning::kTileVoxels)
    keys_kernel(Slab s, const std::uint8_t* info, const Sums* offsets, const int* fits, std::uint32_t* first_vertex,
                winnow::cuda::DeviceMesh out) {
  const unsigned tile = first_tile_of_warp<Tuning::kKeyTilesPerWarp>();
  const int lane = threadIdx.x % 32;
  if (tile >= s.pieces || *fits == 0) return;
  const TileRange range = tile_range(offsets, tile);
  const bool vertices = range.end.vertices != range.begin.vertices;
  const bool triangles = tile < s.own_pieces && range.end.triangles != range.begin.triangles;
  if (!vertices && !triangles) return;
  const LaneBytes b = lane_bytes(s, tile, lane);
  const unsigned long long bytes = load_bytes(info, b);
  if (vertices) write_vertex_keys(s, b, bytes, range, lane, first_vertex, out.d_vertices);
  if (triangles) write_triangle_keys(b, bytes, range, lane, out);
}

}  // namespace
}  // namespace winnow::detail::cuda
