#pragma once
// The CUDA isosurface's dense passes: one thread per output reads the key its key pass left in
// the output slot and computes the output in place -- a vertex's position, normal and value, a
// triangle's three vertex numbers. Part of src/isosurface/cuda/isosurface.cu, which alone
// includes it.
#include <cstdint>

#include "isosurface/cuda/plan.cuh"
#include "winnow/cuda/isosurface.hpp"

namespace winnow::detail::cuda {
namespace {

/// The global-memory copy of the case table: cells index it by their own case, which
/// __constant__ memory would serialise across a warp; L1 serves divergent loads.
__device__ iso::CaseTable g_table = iso::kCaseTable;

/// The case of the cell at l, a cell of the volume (its +x, +y, +z neighbours exist: every
/// triangle's cell is one).
template <class T>
__device__ __forceinline__ unsigned cell_case_at(const DeviceField<T>& f, const Classifier<T>& classify,
                                                 const Locus& l) {
  const T* p = f.data + (l.z - f.z_first) * f.slice_stride + l.y * f.row_stride + l.x;
  const std::int64_t rs = f.row_stride, ss = f.slice_stride;
  const T v[8] = {p[0], p[1], p[rs + 1], p[rs], p[ss], p[ss + 1], p[ss + rs + 1], p[ss + rs]};
  unsigned c = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) c |= static_cast<unsigned>(classify.above(v[i])) << i;
  return c;
}

/// Dense: vertex k's position, normal and value from its key.
template <class T>
__global__ void __launch_bounds__(Tuning::kTileVoxels)
    vertex_kernel(DeviceField<T> f, Slab s, const Sums* offsets, const int* fits, winnow::cuda::DeviceMesh out) {
  if (*fits == 0) return;
  const std::uint64_t count = offsets[s.own_pieces].vertices;
  for (std::uint64_t k = blockIdx.x * std::uint64_t{Tuning::kTileVoxels} + threadIdx.x; k < count;
       k += std::uint64_t{gridDim.x} * Tuning::kTileVoxels) {
    const uint3 key = reinterpret_cast<const uint3*>(out.d_vertices + 3 * k)[0];
    float position[3], value, normal[3];
    iso::vertex_attributes(f, s.grid, s.level, key.x & 0x3fffffffu, key.y, key.z, static_cast<int>(key.x >> 30),
                           s.normals, s.flip, position, value, normal);
    out.d_vertices[3 * k] = position[0], out.d_vertices[3 * k + 1] = position[1],
                       out.d_vertices[3 * k + 2] = position[2];
    if (s.normals)
      out.d_normals[3 * k] = normal[0], out.d_normals[3 * k + 1] = normal[1], out.d_normals[3 * k + 2] = normal[2];
    if (s.values) out.d_values[k] = value;
    if (out.d_vertex_keys != nullptr)
      out.d_vertex_keys[k] = ((static_cast<std::uint64_t>(key.z) * static_cast<std::uint64_t>(s.grid.ny) + key.y) *
                                  static_cast<std::uint64_t>(s.grid.nx) +
                              (key.x & 0x3fffffffu)) *
                                 3 +
                             (key.x >> 30);
  }
}

/// Dense: triangle k's vertex numbers (index_base + the slab-local ones) from its key.
template <class T>
__global__ void __launch_bounds__(Tuning::kTileVoxels)
    triangle_kernel(DeviceField<T> f, Classifier<T> classify, Slab s, const std::uint8_t* info, const Sums* offsets,
                    const int* fits, const std::uint32_t* first_vertex, std::uint64_t index_base,
                    winnow::cuda::DeviceMesh out) {
  if (*fits == 0) return;
  const std::uint64_t count = offsets[s.own_pieces].triangles;
  const std::uint64_t nx = static_cast<std::uint64_t>(s.grid.nx), nxy = nx * static_cast<std::uint64_t>(s.grid.ny);
  const bool wide = out.d_triangles64 != nullptr;
  for (std::uint64_t k = blockIdx.x * std::uint64_t{Tuning::kTileVoxels} + threadIdx.x; k < count;
       k += std::uint64_t{gridDim.x} * Tuning::kTileVoxels) {
    const unsigned* key = wide ? reinterpret_cast<const unsigned*>(out.d_triangles64 + 3 * k) : out.d_triangles + 3 * k;
    Locus l;
    l.x = key[0], l.y = key[1], l.z = key[2] >> 3;
    const int rank = static_cast<int>(key[2] & 7u);
    l.valid = true;
    l.v = (static_cast<std::uint64_t>(l.z - s.z0) * static_cast<std::uint64_t>(s.grid.ny) +
           static_cast<std::uint64_t>(l.y)) *
              nx +
          static_cast<std::uint64_t>(l.x);
    int edge[3];
    iso::cell_triangle(g_table, cell_case_at(f, classify, l), rank, s.flip, edge);
    std::uint64_t index[3];
#pragma unroll
    for (int j = 0; j < 3; ++j) {
      const iso::VertexHome h = iso::vertex_home(g_table, edge[j]);
      const std::uint64_t owner = l.v + static_cast<std::uint64_t>(h.dz) * nxy + static_cast<std::uint64_t>(h.dy) * nx +
                                  static_cast<std::uint64_t>(h.dx);
      index[j] =
          index_base + first_vertex[owner] + static_cast<std::uint64_t>(iso::rank_in_voxel(info[owner] & 7u, h.slot));
    }
    if (wide) {
      out.d_triangles64[3 * k] = index[0], out.d_triangles64[3 * k + 1] = index[1],
                            out.d_triangles64[3 * k + 2] = index[2];
    } else {
      out.d_triangles[3 * k] = static_cast<std::uint32_t>(index[0]);
      out.d_triangles[3 * k + 1] = static_cast<std::uint32_t>(index[1]);
      out.d_triangles[3 * k + 2] = static_cast<std::uint32_t>(index[2]);
    }
  }
}

}  // namespace
}  // namespace winnow::detail::cuda
