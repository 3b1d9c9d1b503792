// Isosurfaces for Python (winnow.marching_cubes). Host volumes over winnow::isosurface (any
// backend, any strides): the mesh leaves as NumPy arrays that own the library's vectors. CUDA
// volumes over the device API (winnow/cuda/isosurface.hpp) on the caller's stream, on pointers,
// into outputs the Python layer allocated with the caller's library: a first call counts and
// returns the totals, a second one extracts from that count. The Python layer turns the
// library's x, y, z order into scikit-image's array-index order.
#include "winnow/isosurface.hpp"

#include <nanobind/stl/array.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <bit>

#include "arrays.hpp"
#include "device_calls.hpp"
#include "winnow/error.hpp"
#if WINNOW_HAVE_CUDA
#include "winnow/cuda/isosurface.hpp"
#endif

namespace winnow::python {
namespace {

/// Flattens a vector of fixed-size rows into the scalars NumPy reads as [rows, N].
template <class T, std::size_t N>
std::vector<T> flatten(std::vector<std::array<T, N>>&& rows) {
  std::vector<T> flat(rows.size() * N);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < N; ++j) flat[i * N + j] = rows[i][j];
  std::vector<std::array<T, N>>().swap(rows);
  return flat;
}

/// Calls f(T{}) with T the volume's element type, one of those the library instantiates.
template <class F>
decltype(auto) with_mesh_type(const Array& volume, F&& f) {
  const auto dt = volume.dtype();
  if (dt == nb::dtype<std::uint8_t>()) return f(std::uint8_t{});
  if (dt == nb::dtype<std::uint16_t>()) return f(std::uint16_t{});
  if (dt == nb::dtype<std::int16_t>()) return f(std::int16_t{});
  if (dt == nb::dtype<float>()) return f(float{});
  if (dt == nb::dtype<double>()) return f(double{});
  throw nb::type_error("volume: expected dtype uint8, uint16, int16, float32 or float64");
}

/// The volume [z, y, x] as the library's view with its spacing. The library takes any row and
/// slice strides, but x adjacent and strides non-negative (the Python layer copies otherwise).
template <class T>
VolumeView<const T> mesh_view(const Array& volume, double sx, double sy, double sz) {
  const auto nz = static_cast<std::int64_t>(volume.shape(0)), ny = static_cast<std::int64_t>(volume.shape(1)),
             nx = static_cast<std::int64_t>(volume.shape(2));
  if (nx > 1 && volume.stride(2) != 1) throw nb::value_error("volume: expected x (the last axis) adjacent in memory");
  const std::int64_t rs = ny > 1 ? volume.stride(1) : nx, ss = nz > 1 ? volume.stride(0) : rs * ny;
  if (rs < 0 || ss < 0) throw nb::value_error("volume: expected non-negative strides");
  VolumeView<const T> view(static_cast<const T*>(volume.data()), nx, ny, nz, rs, ss);
  view.sx = sx, view.sy = sy, view.sz = sz;
  return view;
}

/// Returns (vertices float32 [V, 3] x, y, z; triangles uint32 or uint64 [F, 3]; normals float32
/// [V, 3] x, y, z; values float32 [V]).
nb::tuple isosurface_host(const Array& volume, double level, double sx, double sy, double sz, bool flip,
                          std::string_view backend) {
  require_device(volume, false, "volume");
  require_ndim(volume, 3, "volume");
  const IsosurfaceOptions options{.normals = true, .values = true, .flip = flip, .backend = backend_from(backend)};
  auto run = [&](auto t) {
    using T = decltype(t);
    const VolumeView<const T> view = mesh_view<T>(volume, sx, sy, sz);
    Mesh mesh;
    std::vector<float> vertices, normals;
    std::vector<std::uint32_t> triangles;
    std::vector<std::uint64_t> triangles64;
    {
      nb::gil_scoped_release unlocked;
      mesh = isosurface(view, level, options);
      vertices = flatten(std::move(mesh.vertices));
      normals = flatten(std::move(mesh.normals));
      triangles = flatten(std::move(mesh.triangles));
      triangles64 = flatten(std::move(mesh.triangles64));
    }
    const std::size_t v = vertices.size() / 3;
    nb::object faces = triangles64.empty() ? nb::cast(to_numpy(std::move(triangles), {triangles.size() / 3, 3}))
                                           : nb::cast(to_numpy(std::move(triangles64), {triangles64.size() / 3, 3}));
    return nb::make_tuple(to_numpy(std::move(vertices), {v, 3}), faces, to_numpy(std::move(normals), {v, 3}),
                          to_numpy(std::move(mesh.values), {v}));
  };
  return with_mesh_type(volume, run);
}

/// A piece of a larger host volume (winnow::isosurface_piece): `volume` [z, y, x] holds the voxels
/// from `origin` (x, y, z in the whole volume of `shape` voxels) on, the piece [lo, hi) and two
/// voxels of context around it. Returns (vertices xyz, normals xyz, values, vertex keys, triangles
/// [F, 3] as MeshPiece::triangles).
nb::tuple isosurface_piece_host(const Array& volume, double level, double sx, double sy, double sz,
                                std::array<std::int64_t, 3> origin, std::array<std::int64_t, 3> lo,
                                std::array<std::int64_t, 3> hi, std::array<std::int64_t, 3> shape) {
  require_device(volume, false, "volume");
  require_ndim(volume, 3, "volume");
  const IsosurfaceOptions options{.normals = true, .values = true, .backend = Backend::cpu};
  auto run = [&](auto t) {
    using T = decltype(t);
    const VolumeView<const T> view = mesh_view<T>(volume, sx, sy, sz);
    MeshPiece piece;
    std::vector<float> vertices, normals;
    std::vector<std::uint64_t> triangles;
    {
      nb::gil_scoped_release unlocked;
      piece = isosurface_piece(view, origin, lo, hi, shape, level, options);
      vertices = flatten(std::move(piece.vertices));
      normals = flatten(std::move(piece.normals));
      triangles = flatten(std::move(piece.triangles));
    }
    const std::size_t v = vertices.size() / 3, f = triangles.size() / 3;
    return nb::make_tuple(to_numpy(std::move(vertices), {v, 3}), to_numpy(std::move(normals), {v, 3}),
                          to_numpy(std::move(piece.values), {v}), to_numpy(std::move(piece.vertex_keys), {v}),
                          to_numpy(std::move(triangles), {f, 3}));
  };
  return with_mesh_type(volume, run);
}

/// winnow::join_mesh_pieces over host arrays: `bounds` three int64 arrays (x, y, z), per piece its
/// uint64 vertex keys and triangles (MeshPiece::triangles), and a uint64 array of as many indices
/// to fill.
void join_mesh_pieces_host(const std::vector<nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig>>& bounds,
                           const std::vector<nb::ndarray<const std::uint64_t, nb::c_contig>>& vertex_keys,
                           const std::vector<nb::ndarray<const std::uint64_t, nb::c_contig>>& triangles,
                           const std::vector<nb::ndarray<std::uint64_t, nb::c_contig>>& indices) {
  if (bounds.size() != 3) throw nb::value_error("bounds: expected three arrays (x, y, z)");
  std::array<std::vector<std::int64_t>, 3> b;
  for (int a = 0; a < 3; ++a) b[a].assign(bounds[a].data(), bounds[a].data() + bounds[a].size());
  std::vector<std::span<const std::uint64_t>> vk, tk;
  std::vector<std::span<std::uint64_t>> out;
  for (const auto& k : vertex_keys) vk.emplace_back(k.data(), k.size());
  for (const auto& k : triangles) tk.emplace_back(k.data(), k.size());
  for (const auto& i : indices) out.emplace_back(i.data(), i.size());
  nb::gil_scoped_release unlocked;
  join_mesh_pieces(b, vk, tk, out);
}

// CUDA volumes, by pointer (the Python layer has checked them and reads pointers without DLPack;
// see compact.cpp), in two calls with the caller's library allocating the mesh in between: the
// count (classification, tile sums, scan) into the (device, stream)'s mesh storage, its totals
// brought to the host (one 16-byte copy and a wait: the outputs' sizes need them), then the
// extraction from that count (winnow::cuda::isosurface_extract), counting again only when the
// storage has served another count since.

/// A device volume [z, y, x] of the element type `kind` / `itemsize` (strides in elements, x
/// adjacent, non-negative) with its spacing, and the key of its count.
struct DeviceVolume {
  std::uintptr_t data;
  std::string_view kind;
  std::size_t itemsize;
  std::int64_t nx, ny, nz, row_stride, slice_stride;
  double level, sx, sy, sz;

  [[nodiscard]] MeshCountKey key() const {
    auto bits = [](double value) { return std::bit_cast<std::uint64_t>(value); };
    auto word = [](std::int64_t value) { return static_cast<std::uint64_t>(value); };
    const std::uint64_t type = static_cast<std::uint64_t>(kind.empty() ? 0 : kind[0]) << 8 | itemsize;
    return {data,        type,     word(nx), word(ny), word(nz), word(row_stride), word(slice_stride),
            bits(level), bits(sx), bits(sy), bits(sz)};
  }
};

#if WINNOW_HAVE_CUDA
/// Calls f(view) with the volume as the library's device view of its element type.
template <class F>
void with_device_view(const DeviceVolume& v, F&& f) {
  const nb::dlpack::dtype dt = dtype_of(v.kind, v.itemsize);
  auto run = [&](auto t) {
    using T = decltype(t);
    if (v.row_stride < 0 || v.slice_stride < 0) throw nb::value_error("volume: expected non-negative strides");
    VolumeView<const T> view(reinterpret_cast<const T*>(v.data), v.nx, v.ny, v.nz, v.row_stride, v.slice_stride);
    view.sx = v.sx, view.sy = v.sy, view.sz = v.sz;
    f(view);
  };
  if (dt == nb::dtype<std::uint8_t>()) return run(std::uint8_t{});
  if (dt == nb::dtype<std::uint16_t>()) return run(std::uint16_t{});
  if (dt == nb::dtype<std::int16_t>()) return run(std::int16_t{});
  if (dt == nb::dtype<float>()) return run(float{});
  if (dt == nb::dtype<double>()) return run(double{});
  throw nb::type_error("volume: expected dtype uint8, uint16, int16, float32 or float64");
}

IsosurfaceOptions device_options() { return IsosurfaceOptions{.normals = true, .values = true, .flip = false}; }

/// Counts `v` into the mesh storage of `call` (its temporary storage sized by the library).
void count_mesh(DeviceCall& call, const DeviceVolume& v) {
  const IsosurfaceOptions options = device_options();
  with_device_view(v, [&](auto view) {
    std::size_t temp_bytes = 0;
    cuda::isosurface(nullptr, temp_bytes, view, v.level, options, {}, nullptr, call.stream());
    void* d_temp = call.mesh_scratch(temp_bytes);
    call.mesh_count_key() = {};  // cleared until the count is queued
    cuda::isosurface(d_temp, temp_bytes, view, v.level, options, {}, static_cast<std::uint64_t*>(call.count()),
                     call.stream());
    call.mesh_count_key() = v.key();
  });
}
#else
[[noreturn]] void no_cuda() { throw BackendError("CUDA arrays need the CUDA backend, which this build does not have"); }
#endif

DeviceVolume device_volume(std::uintptr_t data, std::string_view kind, std::size_t itemsize, std::int64_t nx,
                           std::int64_t ny, std::int64_t nz, std::int64_t row_stride, std::int64_t slice_stride,
                           double level, double sx, double sy, double sz) {
  return DeviceVolume{data, kind, itemsize, nx, ny, nz, row_stride, slice_stride, level, sx, sy, sz};
}

/// Returns (vertices, triangles): the totals of the mesh, waiting for the stream.
nb::tuple isosurface_count_device(std::uintptr_t volume, std::string_view kind, std::size_t itemsize, std::int64_t nx,
                                  std::int64_t ny, std::int64_t nz, std::int64_t row_stride, std::int64_t slice_stride,
                                  double level, double sx, double sy, double sz, int device, std::uintptr_t stream) {
  const DeviceVolume v = device_volume(volume, kind, itemsize, nx, ny, nz, row_stride, slice_stride, level, sx, sy, sz);
#if WINNOW_HAVE_CUDA
  std::array<std::uint64_t, 2> totals{};
  {
    nb::gil_scoped_release unlocked;
    DeviceCall call(device, stream);
    count_mesh(call, v);
    totals = call.read_totals();
  }
  return nb::make_tuple(totals[0], totals[1]);
#else
  (void)v, (void)device, (void)stream;
  no_cuda();
#endif
}

/// The mesh of the volume counted by isosurface_count_device into outputs of exactly its totals
/// (vertices, normals float32 [V, 3] x, y, z; values float32 [V]; triangles [F, 3] of 32-bit
/// indices, 64-bit when `wide`), on the stream, no wait.
void isosurface_extract_device(std::uintptr_t volume, std::string_view kind, std::size_t itemsize, std::int64_t nx,
                               std::int64_t ny, std::int64_t nz, std::int64_t row_stride, std::int64_t slice_stride,
                               double level, double sx, double sy, double sz, std::uintptr_t vertices,
                               std::uintptr_t triangles, bool wide, std::uintptr_t normals, std::uintptr_t values,
                               std::uint64_t vertex_total, std::uint64_t triangle_total, int device,
                               std::uintptr_t stream, std::uintptr_t keys, std::int64_t ox, std::int64_t oy,
                               std::int64_t oz) {
  const DeviceVolume v = device_volume(volume, kind, itemsize, nx, ny, nz, row_stride, slice_stride, level, sx, sy, sz);
#if WINNOW_HAVE_CUDA
  if (vertex_total == 0 && triangle_total == 0) return;  // nothing to write
  cuda::DeviceMesh out;
  out.d_vertices = reinterpret_cast<float*>(vertices);
  out.d_normals = reinterpret_cast<float*>(normals);
  out.d_values = reinterpret_cast<float*>(values);
  if (wide) {
    out.d_triangles64 = reinterpret_cast<std::uint64_t*>(triangles);
  } else {
    out.d_triangles = reinterpret_cast<std::uint32_t*>(triangles);
  }
  out.d_vertex_keys = reinterpret_cast<std::uint64_t*>(keys);  // 0: not asked for
  out.vertex_capacity = vertex_total, out.triangle_capacity = triangle_total;
  nb::gil_scoped_release unlocked;
  DeviceCall call(device, stream);
  if (call.mesh_count_key() != v.key()) count_mesh(call, v);  // another count took the storage since
  IsosurfaceOptions options = device_options();
  options.origin = {ox, oy, oz};  // positions only: the count does not depend on it
  options.vertex_keys = keys != 0;
  with_device_view(v, [&](auto view) {
    std::size_t temp_bytes = 0;
    cuda::isosurface(nullptr, temp_bytes, view, v.level, options, {}, nullptr, call.stream());
    cuda::isosurface_extract(call.mesh_scratch(temp_bytes), temp_bytes, view, v.level, options, out,
                             static_cast<std::uint64_t*>(call.count()), call.stream());
  });
#else
  (void)v, (void)vertices, (void)triangles, (void)wide, (void)normals, (void)values, (void)vertex_total,
      (void)triangle_total, (void)device, (void)stream, (void)keys, (void)ox, (void)oy, (void)oz;
  no_cuda();
#endif
}

}  // namespace

void bind_isosurface(nb::module_& m) {
  m.def("isosurface_host", &isosurface_host, nb::arg("volume"), nb::arg("level"), nb::arg("sx"), nb::arg("sy"),
        nb::arg("sz"), nb::arg("flip"), nb::arg("backend"),
        "Marching cubes of a host volume [z, y, x]; returns (vertices xyz, triangles, normals xyz, values).");
  m.def("isosurface_piece_host", &isosurface_piece_host, nb::arg("volume"), nb::arg("level"), nb::arg("sx"),
        nb::arg("sy"), nb::arg("sz"), nb::arg("origin"), nb::arg("lo"), nb::arg("hi"), nb::arg("shape"),
        "The piece [lo, hi) of a whole volume's mesh from a host view [z, y, x] at `origin` (x, y, z): (vertices "
        "xyz, normals xyz, values, vertex keys, triangles).");
  m.def("join_mesh_pieces_host", &join_mesh_pieces_host, nb::arg("bounds"), nb::arg("vertex_keys"),
        nb::arg("triangles"), nb::arg("indices"),
        "winnow::join_mesh_pieces: each piece's triangles as vertex indices of the joined mesh.");
  m.def("isosurface_count_device", &isosurface_count_device, nb::arg("volume"), nb::arg("kind"), nb::arg("itemsize"),
        nb::arg("nx"), nb::arg("ny"), nb::arg("nz"), nb::arg("row_stride"), nb::arg("slice_stride"), nb::arg("level"),
        nb::arg("sx"), nb::arg("sy"), nb::arg("sz"), nb::arg("device"), nb::arg("stream"),
        "CUDA pointer (checked by the caller): counts the isosurface of the volume [z, y, x] (strides in elements) "
        "on the stream and returns (vertices, triangles), waiting for the stream.");
  m.def("isosurface_extract_device", &isosurface_extract_device, nb::arg("volume"), nb::arg("kind"),
        nb::arg("itemsize"), nb::arg("nx"), nb::arg("ny"), nb::arg("nz"), nb::arg("row_stride"),
        nb::arg("slice_stride"), nb::arg("level"), nb::arg("sx"), nb::arg("sy"), nb::arg("sz"), nb::arg("vertices"),
        nb::arg("triangles"), nb::arg("wide"), nb::arg("normals"), nb::arg("values"), nb::arg("vertex_total"),
        nb::arg("triangle_total"), nb::arg("device"), nb::arg("stream"), nb::arg("keys") = 0, nb::arg("ox") = 0,
        nb::arg("oy") = 0, nb::arg("oz") = 0,
        "CUDA pointers: the mesh counted by isosurface_count_device (x, y, z order) into outputs of its totals, "
        "on the stream; no wait.");
}

}  // namespace winnow::python
