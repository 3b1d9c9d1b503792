#pragma once
/// @file cuda/isosurface.hpp
/// Device API of isosurface extraction (winnow/isosurface.hpp says what it computes and the output
/// contract, which holds here too: the same mesh as the host API, bit for bit) for CUDA users:
/// a volume already in device memory, device output arrays, a stream, no host synchronisation.
/// Needs no CUDA header.
///
/// Sizing the outputs: the totals (vertices, triangles) are written to d_totals[0..1] (and to
/// h_totals, host memory the device can write, e.g. cudaHostAlloc(..., cudaHostAllocMapped), by the
/// time the stream reaches the end of the call). The mesh is written only when both totals fit
/// the capacities of `out`; otherwise nothing is written but the totals. So: call with zero
/// capacities, wait on an event, read h_totals, allocate, call again (or size the outputs once from
/// an earlier frame and call once per frame).
///
/// Temporary storage, CUB style (d_temp == nullptr: only temp_bytes is set): about 5 bytes per
/// voxel (a vertex index and an owner mask per voxel) plus 32 bytes per 128 voxels.
///
/// `volume.data` is a device pointer; any strides; spacing from the view. `options.backend`,
/// `options.max_slab_voxels` and `options.progress` are ignored (one pass over the whole volume). Triangles go to
/// d_triangles (32-bit indices) when the vertex total is below 2^32, else to d_triangles64.
#include <cstddef>
#include <cstdint>

#include "winnow/isosurface.hpp"

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace winnow::cuda {

/// Where the mesh goes (device memory): 3 floats per vertex (and per normal), 1 per value, 3
/// indices per triangle. d_normals / d_values are needed only when the options ask for them.
struct DeviceMesh {
  float* d_vertices = nullptr;
  float* d_normals = nullptr;
  float* d_values = nullptr;
  std::uint32_t* d_triangles = nullptr;
  std::uint64_t* d_triangles64 = nullptr;
  std::uint64_t* d_vertex_keys = nullptr;  ///< needed with options.vertex_keys (Mesh::vertex_keys' meaning)
  std::uint64_t vertex_capacity = 0, triangle_capacity = 0;
};

/// Instantiated for std::uint8_t, std::uint16_t, std::int16_t, float, double.
template <class T>
void isosurface(void* d_temp, std::size_t& temp_bytes, VolumeView<const T> volume, double level,
                const IsosurfaceOptions& options, const DeviceMesh& out, std::uint64_t* d_totals, cudaStream_t stream,
                std::uint64_t* h_totals = nullptr);

/// The extraction alone, after a sizing call (zero capacities) of isosurface() on the same
/// stream with the same d_temp, volume, level and options, d_temp untouched since: d_temp still
/// holds that call's classification and tile offsets, so the volume is not classified and
/// counted again (what the sizing call spent is not spent twice). Writes the totals and, where
/// they fit `out`, the mesh, as isosurface() does; may be repeated (the extraction reads d_temp
/// and writes none of it).
template <class T>
void isosurface_extract(void* d_temp, std::size_t temp_bytes, VolumeView<const T> volume, double level,
                        const IsosurfaceOptions& options, const DeviceMesh& out, std::uint64_t* d_totals,
                        cudaStream_t stream, std::uint64_t* h_totals = nullptr);

}  // namespace winnow::cuda
