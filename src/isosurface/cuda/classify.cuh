#pragma once
// The CUDA isosurface's first pass: every voxel of a slab classified against the level, and per
// voxel one byte: which of its +x, +y, +z edges are crossed (its vertices) and how many
// triangles its cell has. Part of src/isosurface/cuda/isosurface.cu, which alone includes it.
#include <cstdint>

#include "isosurface/cuda/plan.cuh"
#include "isosurface/cuda/tiles.cuh"  // vertices_of, triangles_of: a lane's 8 info bytes counted

namespace winnow::detail::cuda {
namespace {

// A block is 8 warps; warp w owns the piece x0 .. x0 + 255 of row y0 + w, 8 voxels per lane, and
// marches Tuning::kLayersPerBlock layers of z. Per layer each row of the block, and the halo row
// y0 + 8, is loaded once and becomes, per lane, 9 bits of "above" for x .. x + 8 (its 8 voxels and
// the next one, from the next lane by a shuffle; lane 31 reads the voxel beyond the piece), 0
// beyond the volume. Three planes of these rotate in shared memory (z and z + 1 read while z + 2
// is written: one barrier per layer). A voxel's vertices are the crossings of its +x, +y and +z
// edges and its cell spans +x, +y and +z, so a lane needs the rows y and y + 1 of the layers z and
// z + 1 alone. It then decides its 8 voxels with bit operations:
//   uniform   the rows at z, z + 1 and y, y + 1 all below or all above: no edge crossed, no
//             cell cut, the 8 bytes are 0 (most lanes);
//   bits      otherwise: each voxel's cell case is 8 bits picked from 4 words, its crossings
//             the differences of neighbouring bits, its triangle count the table's.
// The pass is bound by the instructions it issues, not by memory (ncu of a 4-voxel version on the
// 512^3 gyroid: SMs 74 % busy, DRAM 23 %), so 8 voxels a lane share each layer's index arithmetic,
// barrier, stores and the piece's reductions, where 4 did before (bench/results/isosurface.md).
constexpr int kPlaneRows = IsosurfaceTuning::kRowsPerBlock + 1;  // with the halo row y0 + 8
constexpr int kPieceX = IsosurfaceTuning::kPieceVoxels;          // voxels of a row per warp
constexpr int kLaneVoxels = IsosurfaceTuning::kVoxelsPerLane;
static_assert(kLaneVoxels == 8, "a lane's info bytes are one 64-bit word");

/// A lane's 8 voxels as aligned loads (16 bytes at most each).
template <class T>
struct alignas(kLaneVoxels * sizeof(T) < 16 ? kLaneVoxels * sizeof(T) : 16) LaneVoxels {
  T v[kLaneVoxels];
};

/// The next lane's voxel v (lane 31 gets its own, which the caller replaces).
template <class T>
__device__ __forceinline__ T next_lane_voxel(T v) {
  if constexpr (sizeof(T) <= 4) {
    std::uint32_t w = 0;
    __builtin_memcpy(&w, &v, sizeof(T));
    w = __shfl_down_sync(0xffffffffu, w, 1);
    __builtin_memcpy(&v, &w, sizeof(T));
    return v;
  } else {
    return __shfl_down_sync(0xffffffffu, v, 1);
  }
}

/// A lane's bits of one row: bit k (k = 0..8) for voxel x + k above (bit 8: the next lane's first
/// voxel), 0 beyond the volume; `row` points at the row (only read when `row_inside`), x is the
/// lane's first voxel; `vector`: rows are aligned for LaneVoxels loads. All lanes of the warp call
/// it (a shuffle).
template <class T>
__device__ __forceinline__ unsigned lane_row_bits(const T* row, bool row_inside, std::int64_t x, std::int64_t nx,
                                                  bool vector, const Classifier<T>& classify, int lane) {
  T v[kLaneVoxels + 1] = {};
  if (row_inside) {
    if (vector && x + kLaneVoxels <= nx) {
      const LaneVoxels<T> eight = *reinterpret_cast<const LaneVoxels<T>*>(row + x);
#pragma unroll
      for (int j = 0; j < kLaneVoxels; ++j) v[j] = eight.v[j];
    } else {
#pragma unroll
      for (int j = 0; j < kLaneVoxels; ++j) v[j] = x + j < nx ? row[x + j] : T{};
    }
  }
  v[kLaneVoxels] = next_lane_voxel(v[0]);
  if (lane == 31) {  // the voxel just past the warp's piece
    const std::int64_t hx = x + kLaneVoxels;
    v[kLaneVoxels] = row_inside && hx < nx ? row[hx] : T{};
  }
  if (!row_inside) return 0;
  unsigned above = 0;
#pragma unroll
  for (int j = 0; j <= kLaneVoxels; ++j) above |= static_cast<unsigned>(classify.above(v[j])) << j;
  const std::int64_t left = nx - x;  // voxels of the row from x on
  return left > kLaneVoxels ? above : left <= 0 ? 0u : above & ((1u << left) - 1u);
}

/// Spreads the 8 low bits of n to bit 0 of each byte (bit j to bit 8 j).
__device__ __forceinline__ unsigned long long spread_to_bytes(unsigned n) {
  const unsigned lo = (n & 0xfu) * 0x00204081u & 0x01010101u, hi = (n >> 4 & 0xfu) * 0x00204081u & 0x01010101u;
  return static_cast<unsigned long long>(hi) << 32 | lo;
}

/// Triangle counts by a cell's corners taken in x pairs: index bits (0, 1) = corners 0, 1 (the
/// voxel and its +x neighbour), (2, 3) = corners 3, 2 (row y + 1), (4, 5) = corners 4, 5 (layer
/// z + 1), (6, 7) = corners 7, 6: the order in which a lane's row bits give them.
struct PairCounts {
  std::uint8_t count[256];
};
constexpr PairCounts make_pair_counts() {
  PairCounts p{};
  for (unsigned i = 0; i < 256; ++i) {
    const unsigned cell_case = (i & 0x33u) | ((i >> 1) & 0x44u) | ((i << 1) & 0x88u);  // swap bits 2-3 and 6-7
    p.count[i] = iso::kCaseTable.triangle_count[cell_case];
  }
  return p;
}
__device__ PairCounts g_pair_counts = make_pair_counts();

/// info[v] (owner mask | triangle count << 4) of every voxel of the slab's layers [z0, z1] (the
/// extra layer included), and sums[p] the vertex and triangle counts of piece p (a warp's voxels of
/// a row: pieces follow raster order), sums[pieces] = 0 so that the exclusive scan of the sums
/// ends on the totals; the scheme is described above.
template <class T>
__global__ void __launch_bounds__(32 * Tuning::kRowsPerBlock, 4)
    classify_kernel(DeviceField<T> f, Classifier<T> classify, Slab s, std::int64_t layers, std::uint8_t* info,
                    Sums* sums) {
  __shared__ std::uint16_t planes[3][kPlaneRows][32];
  const int lane = threadIdx.x, warp = threadIdx.y;
  const std::int64_t nx = s.grid.nx, ny = s.grid.ny, nz = s.grid.nz;
  const std::uint64_t x_blocks = s.pieces_per_row;
  const std::uint64_t piece_column = blockIdx.x % x_blocks;
  const std::int64_t x0 = static_cast<std::int64_t>(piece_column) * kPieceX;
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) sums[s.pieces] = Sums{0, 0};
  const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.x / x_blocks) * Tuning::kRowsPerBlock;
  const std::int64_t x = x0 + kLaneVoxels * lane, y = y0 + warp;
  // The rows this warp loads: its own, and for warp 0 the halo row y0 + 8.
  const std::int64_t halo_y = y0 + Tuning::kRowsPerBlock;
  const bool own_row = y < ny, halo_row_inside = halo_y < ny;
  const T* own_base = f.data + y * f.row_stride;
  const T* halo_base = f.data + halo_y * f.row_stride;
  // Aligned vector loads when every row starts on an 8-voxel boundary.
  const bool vector = reinterpret_cast<std::uintptr_t>(f.data) % alignof(LaneVoxels<T>) == 0 &&
                      f.row_stride % kLaneVoxels == 0 && f.slice_stride % kLaneVoxels == 0;
  const auto load_plane = [&](std::int64_t z, std::int64_t layer, int slot) {  // layer: z's offset
    const bool z_inside = z < nz;
    planes[slot][warp][lane] =
        static_cast<std::uint16_t>(lane_row_bits(own_base + layer, z_inside && own_row, x, nx, vector, classify, lane));
    if (warp == 0)
      planes[slot][Tuning::kRowsPerBlock][lane] = static_cast<std::uint16_t>(
          lane_row_bits(halo_base + layer, z_inside && halo_row_inside, x, nx, vector, classify, lane));
  };
  const bool y_edge = y + 1 < ny;
  const bool aligned = nx % kLaneVoxels == 0 && reinterpret_cast<std::uintptr_t>(info) % 8 == 0;  // one 8-byte store
  const std::uint64_t layer_voxels = static_cast<std::uint64_t>(nx) * static_cast<std::uint64_t>(ny);
  const std::uint64_t column =
      static_cast<std::uint64_t>(y) * static_cast<std::uint64_t>(nx) + static_cast<std::uint64_t>(x);
  // Voxels x .. x + 7 whose +x edge (and cell) stays inside the volume.
  const unsigned x_edges = x + kLaneVoxels < nx ? 0xffu : x + 1 >= nx ? 0u : (1u << (nx - 1 - x)) - 1u;
  // The piece's entry of layer z is sums[piece + z_offset * pieces_per_layer].
  Sums* const piece_sums = sums + static_cast<std::uint64_t>(y) * x_blocks + piece_column;
  const std::uint64_t pieces_per_layer = static_cast<std::uint64_t>(ny) * x_blocks;
  // Chunks of layers: blockIdx.y, then every gridDim.y-th (the grid's y is at most 65535).
  for (std::int64_t chunk = blockIdx.y; chunk * Tuning::kLayersPerBlock < layers; chunk += gridDim.y) {
    const std::int64_t zbegin = s.z0 + chunk * Tuning::kLayersPerBlock;
    const std::int64_t zend = std::min<std::int64_t>(zbegin + Tuning::kLayersPerBlock, s.z0 + layers);
    __syncthreads();                                             // the previous chunk's last reads are done
    std::int64_t layer = (zbegin - f.z_first) * f.slice_stride;  // of layer z
    load_plane(zbegin, layer, 0);
    std::uint64_t v = static_cast<std::uint64_t>(zbegin - s.z0) * layer_voxels + column;
    Sums* piece = piece_sums + static_cast<std::uint64_t>(zbegin - s.z0) * pieces_per_layer;
    int slot = 0;  // planes[slot] holds layer z
    for (std::int64_t z = zbegin; z < zend; ++z, v += layer_voxels, piece += pieces_per_layer) {
      const int above = slot == 2 ? 0 : slot + 1;
      // Three slots: z + 1 goes where z - 2 was, which no warp reads any more (a slower warp is at
      // most one layer behind, reading z - 1 and z).
      load_plane(z + 1, layer += f.slice_stride, above);
      __syncthreads();
      const unsigned here = planes[slot][warp][lane], y_plus = planes[slot][warp + 1][lane];
      const unsigned z_plus = planes[above][warp][lane], zy_plus = planes[above][warp + 1][lane];
      slot = above;
      if (!own_row) continue;
      const bool z_edge = z + 1 < nz;
      unsigned long long bytes = 0;  // voxel j's info in byte j
      // Bits 0..8: the lane's voxels and the next one along x.
      const unsigned any = here | y_plus | z_plus | zy_plus, all = here & y_plus & z_plus & zy_plus;
      if (any != 0 && all != 0x1ffu) {
        const unsigned x_cross = (here ^ (here >> 1)) & x_edges;
        const unsigned y_cross = y_edge ? (here ^ y_plus) & 0xffu : 0u, z_cross = z_edge ? (here ^ z_plus) & 0xffu : 0u;
        bytes = spread_to_bytes(x_cross) | spread_to_bytes(y_cross) << 1 | spread_to_bytes(z_cross) << 2;
        if (z < s.z1 && y_edge && z_edge) {
#pragma unroll
          for (int j = 0; j < kLaneVoxels; ++j) {
            const unsigned pairs =
                ((here >> j) & 3u) | ((y_plus >> j) & 3u) << 2 | ((z_plus >> j) & 3u) << 4 | ((zy_plus >> j) & 3u) << 6;
            if ((x_edges >> j) & 1u)
              bytes |= static_cast<unsigned long long>(g_pair_counts.count[pairs]) << (8 * j + 4);
          }
        }
      }
      if (aligned && x + kLaneVoxels <= nx) {
        *reinterpret_cast<unsigned long long*>(info + v) = bytes;
      } else {
#pragma unroll
        for (int j = 0; j < kLaneVoxels; ++j)
          if (x + j < nx) info[v + j] = static_cast<std::uint8_t>(bytes >> (8 * j));
      }
      // The piece's counts: owner bits and triangle nibbles summed over the warp (the bytes past
      // the row's end are 0).
      const unsigned vertices = __reduce_add_sync(0xffffffffu, vertices_of(bytes));
      const unsigned triangles = __reduce_add_sync(0xffffffffu, triangles_of(bytes));
      if (lane == 0) *piece = Sums{vertices, triangles};
    }
  }
}

}  // namespace
}  // namespace winnow::detail::cuda
