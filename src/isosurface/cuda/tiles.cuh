#pragma once
// The CUDA isosurface's tiles: how the key passes cut the info bytes (a warp per tile, a
// classification piece, 8 bytes per lane), where a tile's outputs start and end in the exclusive
// scan of the piece sums, and the one-thread kernel that reads the totals. Part of
// src/isosurface/cuda/isosurface.cu, which alone includes it.
#include <cstdint>
#include <limits>

#include "isosurface/cuda/plan.cuh"

namespace winnow::detail::cuda {
namespace {

// Tiles are pieces of rows of IsosurfaceTuning::kTileVoxels voxels (a classification piece each),
// a warp each, 8 voxels (8 info bytes, one 8-byte load) per lane.
/// Blocks of Tuning::kTileVoxels for `tiles` tiles at kTilesPerWarp tiles per warp.
template <int kTilesPerWarp>
unsigned blocks_for(unsigned tiles) {
  constexpr unsigned kPerBlock = Tuning::kTileVoxels / 32 * kTilesPerWarp;
  return (tiles + kPerBlock - 1) / kPerBlock;
}
template <int kTilesPerWarp>
__device__ __forceinline__ unsigned first_tile_of_warp() {
  return (blockIdx.x * (Tuning::kTileVoxels / 32) + threadIdx.x / 32) * kTilesPerWarp;
}

/// The bytes of tile `tile` that lane `lane` owns: info[first .. first + count).
struct LaneBytes {
  std::uint64_t first;   ///< voxel index v of the lane's first voxel
  int count;             ///< 0..8
  std::int64_t x, y, z;  ///< the first voxel's coordinates
};
__device__ __forceinline__ LaneBytes lane_bytes(const Slab& s, unsigned tile, int lane) {
  const unsigned row = tile / s.pieces_per_row, chunk = tile - row * s.pieces_per_row;
  const unsigned layer = row / static_cast<unsigned>(s.grid.ny);
  LaneBytes b;
  b.x = static_cast<std::int64_t>(chunk) * Tuning::kTileVoxels + lane * 8;
  b.y = row - layer * static_cast<unsigned>(s.grid.ny);
  b.z = s.z0 + layer;
  const std::int64_t left = s.grid.nx - b.x;  // voxels of the row from the lane's first on
  b.count = left <= 0 ? 0 : left >= 8 ? 8 : static_cast<int>(left);
  b.first = static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(s.grid.nx) + static_cast<std::uint64_t>(b.x);
  return b;
}
/// The lane's 8 bytes, byte i in bits 8 i .. 8 i + 7 (0 past the row's end): one 8-byte load when
/// aligned (rows of a multiple of 8 voxels, temporary storage 8-byte aligned), else byte by byte.
__device__ __forceinline__ unsigned long long load_bytes(const std::uint8_t* info, const LaneBytes& b) {
  if (b.count == 8 && reinterpret_cast<std::uintptr_t>(info + b.first) % 8 == 0)
    return *reinterpret_cast<const unsigned long long*>(info + b.first);
  unsigned long long w = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i)
    if (i < b.count) w |= static_cast<unsigned long long>(info[b.first + i]) << (8 * i);
  return w;
}
__device__ __forceinline__ unsigned byte_of(unsigned long long w, int i) {
  return static_cast<unsigned>(w >> (8 * i)) & 0xffu;
}
/// Vertices (owner mask bits) and triangles (high nibbles) of 8 info bytes.
__device__ __forceinline__ unsigned vertices_of(unsigned long long w) { return __popcll(w & 0x0707070707070707ull); }
__device__ __forceinline__ unsigned triangles_of(unsigned long long w) {
  const unsigned long long t = (w >> 4) & 0x0f0f0f0f0f0f0f0full;
  return __dp4a(static_cast<unsigned>(t), 0x01010101u, __dp4a(static_cast<unsigned>(t >> 32), 0x01010101u, 0u));
}

/// The exclusive scan's offsets at the start and the end of tile `tile` (one piece: tiles and
/// pieces are numbered alike).
struct TileRange {
  Sums begin, end;
};
__device__ __forceinline__ TileRange tile_range(const Sums* offsets, unsigned tile) {
  return {offsets[tile], offsets[tile + 1]};
}

/// Exclusive prefix of `value` over the warp's lanes.
__device__ __forceinline__ unsigned warp_exclusive_sum(unsigned value, int lane) {
  unsigned inclusive = value;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const unsigned other = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += other;
  }
  return inclusive - value;
}

/// The slab's own totals (the offsets at the first extra tile) out; fits = both within capacity.
__global__ void totals_kernel(const Sums* offsets, unsigned own_pieces, std::uint64_t vertex_capacity,
                              std::uint64_t triangle_capacity, std::uint64_t* d_totals, std::uint64_t* h_totals,
                              int* fits) {
  const Sums own = offsets[own_pieces];
  d_totals[0] = own.vertices;
  d_totals[1] = own.triangles;
  if (h_totals != nullptr) {
    reinterpret_cast<volatile std::uint64_t*>(h_totals)[0] = own.vertices;
    reinterpret_cast<volatile std::uint64_t*>(h_totals)[1] = own.triangles;
  }
  *fits = own.vertices <= vertex_capacity && own.triangles <= triangle_capacity &&
          own.vertices <= std::numeric_limits<std::uint32_t>::max();
}

__global__ void zero_totals_kernel(std::uint64_t* d_totals, std::uint64_t* h_totals) {
  d_totals[0] = d_totals[1] = 0;
  if (h_totals != nullptr)
    reinterpret_cast<volatile std::uint64_t*>(h_totals)[0] = 0,
                              reinterpret_cast<volatile std::uint64_t*>(h_totals)[1] = 0;
}

}  // namespace
}  // namespace winnow::detail::cuda
