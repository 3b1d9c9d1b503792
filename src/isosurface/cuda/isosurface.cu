// Marching cubes on a CUDA device: the same welded, oriented mesh as the CPU backend, bit for bit.
//
// What is computed is fixed by winnow/isosurface.hpp and the per-voxel rules of
// isosurface/cell.hpp (shared with the CPU backend): vertex k belongs to the k-th owned slot in
// raster order of the owning voxels, triangle k to the k-th triangle in raster order of the
// cells. Both numberings are prefix sums of small per-voxel counts (0..3 vertices, 0..5
// triangles), i.e. stream expansions, done the way the HistoPyramid capability does them
// (src/histopyramid/cuda/histopyramid.cu): by output range, with the counts never stored. The
// passes, one header each, launched from here:
//
//   classify  (classify.cuh) a warp per 256-voxel piece of a row (8 voxels per lane), marching
//             layers of z: rows become "above" bits kept in shared memory for the rows around;
//             most lanes see uniform bits and store zeros, the others take their cases and
//             crossings from the bits; one byte per voxel: owner mask and triangle count; and
//             per piece (pieces follow raster order) the sums of its vertex and triangle counts,
//             a warp reduction (16 bytes per piece);
//   top       an exclusive scan of the piece sums (cub::DeviceScan), whose end holds the totals;
//             a one-thread kernel copies them out (device, and host-mapped memory) and decides
//             whether the outputs have room;
//   keys      (keys.cuh) one pass over the bytes (a warp per tile, which is a piece: 8 voxels per
//             lane, a warp scan; tiles.cuh): it leaves per voxel its first vertex's number (4
//             bytes per voxel: how a triangle finds the vertex of an edge owned by another voxel),
//             writes each vertex's key (voxel, slot) into its output slot and each triangle's key
//             (cell, rank) into its slot; tiles with nothing to number leave at once; a tile's keys
//             are written by the warp together, output t by lane t % 32;
//   dense     (outputs.cuh) one thread per output reads its key and computes the output in
//             place: positions, normals and values (double arithmetic, gradients), and triangles
//             (the cell's table entry, three vertex numbers). A surface touches a voxel or two
//             per warp, so doing this work in the voxel passes would run warps with one lane in
//             32 busy.
// The volume is read about once by the classification and again only around the surface; the
// bytes are read twice (keys, triangles); every output is written twice (key, value). Launch shapes:
// IsosurfaceTuning (plan.cuh); what each choice was measured against: bench/results/isosurface.md.
//
// Why not a descent of a stored pyramid per output key (HP5): a triangle needs the numbers of up
// to three vertices owned by other voxels, which a key descent cannot give without a second
// structure; the per-voxel vertex numbers give them in one load, and by-output-range traversal
// reads nothing per key. Cost: O(n) work and the 5 bytes per voxel of temporary storage.
//
// Slabs (the host API): a volume larger than the device takes, or options.max_slab_voxels, is cut
// into slabs of z. A slab [z0, z1) owns the vertices of its voxel layers and the cells whose
// origin lies in them; it also numbers the vertices of layer z1 (the next slab's first layer,
// "extra" here) without writing them, so its last cell layer can index them: vertex order is
// raster order, so those numbers are exactly the ones the next slab gives them. Each slab's
// device buffer also holds one layer below (gradients read it) and two above (owner masks and
// gradients). Slabs are extracted one after the other, each copied out before the next: the
// mesh never has to fit on the device. Without slabs the host API counts, reads the totals,
// allocates, extracts.
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/cuda/arch.cuh"
#include "common/cuda/check.cuh"
#include "common/cuda/staging.cuh"
#include "isosurface/backends.hpp"
#include "isosurface/cuda/classify.cuh"
#include "isosurface/cuda/keys.cuh"
#include "isosurface/cuda/outputs.cuh"
#include "isosurface/cuda/plan.cuh"
#include "isosurface/cuda/tiles.cuh"
#include "winnow/cuda/isosurface.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cuda {
namespace {

/// Counts (and, where the totals fit `out`, extracts) one slab whose voxels are in `f`. With
/// `counted`, `temp` already holds this slab's count (classification, tile offsets) and only the
/// totals and the extraction run: the extraction kernels read it and write none of it.
template <class T>
void run_slab(const DeviceField<T>& f, const Classifier<T>& classify, const Slab& s, char* temp, const Layout& l,
              const winnow::cuda::DeviceMesh& out, std::uint64_t index_base, std::uint64_t* d_totals,
              std::uint64_t* h_totals, cudaStream_t stream, bool extract, bool counted = false) {
  auto* sums = reinterpret_cast<Sums*>(temp + l.at_sums);
  auto* offsets = reinterpret_cast<Sums*>(temp + l.at_offsets);
  auto* fits = reinterpret_cast<int*>(temp + l.at_fits);
  auto* first = reinterpret_cast<std::uint32_t*>(temp + l.at_first);
  auto* info = reinterpret_cast<std::uint8_t*>(temp + l.at_masks);
  if (!counted) {  // with `counted`, the classification and the piece offsets are in temp already
    if (s.pieces != 0) {
      const std::int64_t layers = s.z1 - s.z0 + (s.extra_voxels != 0 ? 1 : 0);
      const dim3 columns(32, Tuning::kRowsPerBlock);
      const std::uint64_t column_blocks =
          static_cast<std::uint64_t>((s.grid.nx + kPieceX - 1) / kPieceX) *
          static_cast<std::uint64_t>((s.grid.ny + Tuning::kRowsPerBlock - 1) / Tuning::kRowsPerBlock);
      if (column_blocks >= static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
        throw InputError("isosurface: a slice of " + std::to_string(s.grid.nx) + " x " + std::to_string(s.grid.ny) +
                         " voxels is too large for one grid");
      const dim3 blocks(static_cast<unsigned>(column_blocks),
                        static_cast<unsigned>(std::min<std::int64_t>(
                            65535, (layers + Tuning::kLayersPerBlock - 1) / Tuning::kLayersPerBlock)));
      classify_kernel<T><<<blocks, columns, 0, stream>>>(f, classify, s, layers, info, sums);
      WINNOW_CUDA_CHECK_LAUNCH();
    } else {
      WINNOW_CUDA_CHECK(cudaMemsetAsync(sums, 0, sizeof(Sums), stream));
    }
    std::size_t scan_bytes = l.scan_bytes;
    WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(temp + l.at_scan, scan_bytes, sums, offsets, AddSums{}, Sums{0, 0},
                                                     static_cast<int>(s.pieces + 1), stream));
  }
  totals_kernel<<<1, 1, 0, stream>>>(offsets, s.own_pieces, extract ? out.vertex_capacity : 0,
                                     extract ? out.triangle_capacity : 0, d_totals, h_totals, fits);
  WINNOW_CUDA_CHECK_LAUNCH();
  if (!extract || s.pieces == 0) return;
  keys_kernel<<<blocks_for<Tuning::kKeyTilesPerWarp>(s.pieces), Tuning::kTileVoxels, 0, stream>>>(s, info, offsets,
                                                                                                  fits, first, out);
  WINNOW_CUDA_CHECK_LAUNCH();
  if (s.own_pieces == 0) return;
  // The dense passes: enough blocks to fill the device, each looping over the outputs.
  const unsigned dense_blocks = std::min<unsigned>(
      s.own_pieces, static_cast<unsigned>(multiprocessor_count()) * Tuning::kDenseBlocksPerMultiprocessor);
  vertex_kernel<T><<<dense_blocks, Tuning::kTileVoxels, 0, stream>>>(f, s, offsets, fits, out);
  WINNOW_CUDA_CHECK_LAUNCH();
  triangle_kernel<T>
      <<<dense_blocks, Tuning::kTileVoxels, 0, stream>>>(f, classify, s, info, offsets, fits, first, index_base, out);
  WINNOW_CUDA_CHECK_LAUNCH();
}

template <class T>
iso::Grid grid_of(const VolumeView<const T>& v, const IsosurfaceOptions& o) {
  return iso::Grid{v.nx, v.ny, v.nz, v.sx, v.sy, v.sz, o.origin[0], o.origin[1], o.origin[2]};
}

// ---- host API --------------------------------------------------------------------------------

/// Voxels per slab: the option, else what a quarter of the free device memory holds at the
/// slab's cost per voxel (the volume's bytes, 5 bytes of temporary storage, and room for a dense
/// mesh), capped so one slab's vertex numbers stay 32-bit.
std::int64_t slab_voxels_for(const IsosurfaceOptions& o, std::size_t voxel_bytes) {
  std::int64_t cap = std::int64_t{1} << 30;
  if (o.max_slab_voxels > 0) cap = std::min(cap, o.max_slab_voxels);
  std::size_t free_bytes = 0, total_bytes = 0;
  WINNOW_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t per_voxel = voxel_bytes + 5 + 24;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(cap, static_cast<std::int64_t>(free_bytes / 4 / per_voxel)));
}

template <class T>
void copy_layers(T* d_dst, VolumeView<const T> v, std::int64_t z_begin, std::int64_t z_end, cudaStream_t stream) {
  const std::size_t row_bytes = static_cast<std::size_t>(v.nx) * sizeof(T);
  if (v.slice_stride == v.row_stride * v.ny) {  // the layers are one run of rows
    copy_to_device(d_dst, row_bytes, v.data + z_begin * v.slice_stride,
                   static_cast<std::size_t>(v.row_stride) * sizeof(T), row_bytes,
                   static_cast<std::size_t>((z_end - z_begin) * v.ny), stream);
    return;
  }
  for (std::int64_t z = z_begin; z < z_end; ++z)
    copy_to_device(d_dst + (z - z_begin) * v.nx * v.ny, row_bytes, v.data + z * v.slice_stride,
                   static_cast<std::size_t>(v.row_stride) * sizeof(T), row_bytes, static_cast<std::size_t>(v.ny),
                   stream);
}

template <class U>
void append_from_device(std::vector<U>& to, std::size_t at, const void* d_from, std::size_t count,
                        cudaStream_t stream) {
  if (count == 0) return;
  copy_to_host(to.data() + at, count * sizeof(U), d_from, count * sizeof(U), count * sizeof(U), 1, stream);
}

}  // namespace

template <class T>
void isosurface(VolumeView<const T> volume, double level, const IsosurfaceOptions& options, Mesh& mesh) {
  cudaStream_t stream = cudaStreamPerThread;
  const iso::Grid grid = grid_of(volume, options);
  const std::int64_t layer = volume.nx * volume.ny;
  const std::int64_t slab_layers =
      std::max<std::int64_t>(1, slab_voxels_for(options, sizeof(T)) / std::max<std::int64_t>(layer, 1));
  const bool one_pass = slab_layers >= volume.nz;
  // Device buffers for the largest slab: its layers plus one below and two above.
  const std::int64_t buffer_layers = std::min<std::int64_t>(volume.nz, slab_layers + 3);
  DeviceBuffer<T> d_volume(static_cast<std::size_t>(buffer_layers * layer), stream);
  DeviceBuffer<std::uint64_t> d_totals(2, stream);
  std::uint64_t h_totals[2] = {0, 0};  // 16 bytes copied back per slab (no pinned allocation per call)

  // One-pass meshes know their vertex total before the triangles are written, so their indices
  // are 32-bit whenever they can be; slabbed ones write 64-bit indices and narrow at the end.
  const Classifier<T> classify = make_classifier<T>(level);
  std::vector<std::array<std::uint64_t, 3>> wide;
  std::uint64_t vertex_base = 0, triangle_base = 0;
  for (std::int64_t z0 = 0; z0 < volume.nz; z0 += slab_layers) {
    const std::int64_t z1 = std::min(volume.nz, z0 + slab_layers);
    const std::int64_t zb0 = std::max<std::int64_t>(0, z0 - 1), zb1 = std::min(volume.nz, z1 + 2);
    copy_layers(d_volume.get(), volume, zb0, zb1, stream);
    const DeviceField<T> f{d_volume.get(), volume.nx, layer, zb0};
    const Slab s = make_slab(grid, z0, z1, level, options);
    const Layout l = layout_for(s);
    DeviceBuffer<char> d_temp(l.bytes, stream);
    run_slab(f, classify, s, d_temp.get(), l, winnow::cuda::DeviceMesh{}, 0, d_totals.get(), nullptr, stream, false);
    WINNOW_CUDA_CHECK(cudaMemcpyAsync(h_totals, d_totals.get(), sizeof h_totals, cudaMemcpyDeviceToHost, stream));
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::uint64_t vertices = h_totals[0], triangles = h_totals[1];
    if (vertices > std::numeric_limits<std::uint32_t>::max())
      throw Error("isosurface: more than 2^32 - 1 vertices in one slab; set max_slab_voxels lower");
    const bool narrow = one_pass && vertices <= std::numeric_limits<std::uint32_t>::max();
    DeviceBuffer<float> d_vertices(3 * vertices, stream), d_normals(options.normals ? 3 * vertices : 0, stream),
        d_values(options.values ? vertices : 0, stream);
    DeviceBuffer<std::uint64_t> d_keys(options.vertex_keys ? vertices : 0, stream);
    DeviceBuffer<std::uint32_t> d_triangles(narrow ? 3 * triangles : 0, stream);
    DeviceBuffer<std::uint64_t> d_triangles64(narrow ? 0 : 3 * triangles, stream);
    winnow::cuda::DeviceMesh out;
    out.d_vertices = d_vertices.get(), out.d_normals = d_normals.get(), out.d_values = d_values.get();
    out.d_vertex_keys = options.vertex_keys ? d_keys.get() : nullptr;
    out.d_triangles = d_triangles.get(), out.d_triangles64 = narrow ? nullptr : d_triangles64.get();
    out.vertex_capacity = vertices, out.triangle_capacity = triangles;
    run_slab(f, classify, s, d_temp.get(), l, out, vertex_base, d_totals.get(), nullptr, stream, true);
    mesh.vertices.resize(vertex_base + vertices);
    append_from_device(mesh.vertices, vertex_base, d_vertices.get(), vertices, stream);
    if (options.normals) {
      mesh.normals.resize(vertex_base + vertices);
      append_from_device(mesh.normals, vertex_base, d_normals.get(), vertices, stream);
    }
    if (options.values) {
      mesh.values.resize(vertex_base + vertices);
      append_from_device(mesh.values, vertex_base, d_values.get(), vertices, stream);
    }
    if (options.vertex_keys) {
      mesh.vertex_keys.resize(vertex_base + vertices);
      append_from_device(mesh.vertex_keys, vertex_base, d_keys.get(), vertices, stream);
    }
    if (narrow) {
      mesh.triangles.resize(triangles);
      append_from_device(mesh.triangles, 0, d_triangles.get(), triangles, stream);
    } else {
      wide.resize(triangle_base + triangles);
      append_from_device(wide, triangle_base, d_triangles64.get(), triangles, stream);
    }
    vertex_base += vertices, triangle_base += triangles;
    if (options.progress)
      options.progress(2 * static_cast<std::uint64_t>(z1), 2 * static_cast<std::uint64_t>(volume.nz));
  }
  if (!one_pass) {
    if (vertex_base > std::numeric_limits<std::uint32_t>::max()) {
      mesh.triangles64 = std::move(wide);
    } else {
      mesh.triangles.resize(wide.size());
      for (std::size_t i = 0; i < wide.size(); ++i)
        mesh.triangles[i] = {static_cast<std::uint32_t>(wide[i][0]), static_cast<std::uint32_t>(wide[i][1]),
                             static_cast<std::uint32_t>(wide[i][2])};
    }
  }
}

#define WINNOW_INSTANTIATE(T) template void isosurface<T>(VolumeView<const T>, double, const IsosurfaceOptions&, Mesh&);
WINNOW_ISOSURFACE_TYPES(WINNOW_INSTANTIATE)
#undef WINNOW_INSTANTIATE

}  // namespace winnow::detail::cuda

namespace winnow::cuda {

namespace {
/// isosurface() and isosurface_extract(): the latter (`counted`) finds the count in d_temp.
template <class T>
void run_isosurface(void* d_temp, std::size_t& temp_bytes, VolumeView<const T> volume, double level,
                    const IsosurfaceOptions& options, const DeviceMesh& out, std::uint64_t* d_totals,
                    cudaStream_t stream, std::uint64_t* h_totals, bool counted) {
  namespace d = winnow::detail::cuda;
  if (volume.empty()) throw InputError("isosurface: the volume is empty");
  if (level != level) throw InputError("isosurface: the level is NaN");
  if (volume.row_stride < volume.nx || volume.slice_stride < volume.row_stride * volume.ny)
    throw InputError("isosurface: the volume's strides do not hold its rows and slices");
  if (volume.nx < 2 || volume.ny < 2 || volume.nz < 2) {  // no cells: no surface (as on the CPU)
    if (d_temp == nullptr) {
      temp_bytes = 1;
      return;
    }
    if (d_totals == nullptr) throw InputError("isosurface: d_totals is null");
    d::zero_totals_kernel<<<1, 1, 0, stream>>>(d_totals, h_totals);
    WINNOW_CUDA_CHECK_LAUNCH();
    return;
  }
  const d::Slab s = d::make_slab(d::grid_of(volume, options), 0, volume.nz, level, options);
  const d::Layout l = d::layout_for(s);
  if (d_temp == nullptr) {
    temp_bytes = l.bytes;
    return;
  }
  if (temp_bytes < l.bytes)
    throw InputError("isosurface: temporary storage of " + std::to_string(temp_bytes) + " bytes, " +
                     std::to_string(l.bytes) + " needed");
  if (d_totals == nullptr) throw InputError("isosurface: d_totals is null");
  const bool extract = out.vertex_capacity != 0 || out.triangle_capacity != 0;
  if (extract &&
      (out.d_vertices == nullptr || (options.normals && out.d_normals == nullptr) ||
       (options.values && out.d_values == nullptr) || (options.vertex_keys && out.d_vertex_keys == nullptr) ||
       (out.d_triangles == nullptr && out.d_triangles64 == nullptr)))
    throw InputError("isosurface: an output the options ask for is null");
  const d::DeviceField<T> f{volume.data, volume.row_stride, volume.slice_stride, 0};
  // The parts are laid out from a 256-byte boundary (wide loads and stores, CUB's scan).
  char* const base = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(d_temp) + 255) & ~std::uintptr_t{255});
  d::run_slab(f, d::make_classifier<T>(level), s, base, l, out, 0, d_totals, h_totals, stream, extract, counted);
}
}  // namespace

template <class T>
void isosurface(void* d_temp, std::size_t& temp_bytes, VolumeView<const T> volume, double level,
                const IsosurfaceOptions& options, const DeviceMesh& out, std::uint64_t* d_totals, cudaStream_t stream,
                std::uint64_t* h_totals) {
  run_isosurface(d_temp, temp_bytes, volume, level, options, out, d_totals, stream, h_totals, false);
}

template <class T>
void isosurface_extract(void* d_temp, std::size_t temp_bytes, VolumeView<const T> volume, double level,
                        const IsosurfaceOptions& options, const DeviceMesh& out, std::uint64_t* d_totals,
                        cudaStream_t stream, std::uint64_t* h_totals) {
  if (d_temp == nullptr) throw InputError("isosurface_extract: d_temp is null (it holds the count)");
  run_isosurface(d_temp, temp_bytes, volume, level, options, out, d_totals, stream, h_totals, true);
}

#define WINNOW_INSTANTIATE(T)                                                                                    \
  template void isosurface<T>(void*, std::size_t&, VolumeView<const T>, double, const IsosurfaceOptions&,        \
                              const DeviceMesh&, std::uint64_t*, cudaStream_t, std::uint64_t*);                  \
  template void isosurface_extract<T>(void*, std::size_t, VolumeView<const T>, double, const IsosurfaceOptions&, \
                                      const DeviceMesh&, std::uint64_t*, cudaStream_t, std::uint64_t*);
WINNOW_ISOSURFACE_TYPES(WINNOW_INSTANTIATE)
#undef WINNOW_INSTANTIATE

}  // namespace winnow::cuda
