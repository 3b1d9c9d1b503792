// Isosurfaces for Python (winnow.marching_cubes). Host volumes over winnow::isosurface (any
// backend, any strides): the mesh leaves as NumPy arrays that own the library's vectors. CUDA
// volumes over the device API winnow::cuda::isosurface on the caller's stream, into outputs the
// Python layer allocated with the caller's library: a first call with no outputs writes the
// totals, a second one the mesh. The Python layer turns the library's x, y, z order into
// scikit-image's array-index order.
#include <nanobind/stl/string_view.h>

#include <nanobind/stl/optional.h>

#include <array>
#include <optional>

#include "arrays.hpp"
#include "winnow/error.hpp"
#include "winnow/isosurface.hpp"
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
                          bool allow_degenerate, std::string_view backend) {
  require_device(volume, false, "volume");
  require_ndim(volume, 3, "volume");
  const IsosurfaceOptions options{.normals = true, .values = true, .flip = flip, .allow_degenerate = allow_degenerate,
                                  .backend = backend_from(backend)};
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

/// The device outputs' pointers and capacities (null / 0: sizing call).
struct MeshOutputs {
  float *vertices, *normals, *values;
  std::uint32_t* triangles;
  std::uint64_t* triangles64;
  std::uint64_t vertex_capacity, triangle_capacity;
};

/// A float32 device output of `rows` x `columns` (None: capacity 0), checked; its pointer.
float* float_output(const std::optional<OutArray>& a, std::size_t columns, const char* what) {
  if (!a) return nullptr;
  require_device(*a, true, what);
  if (a->dtype() != nb::dtype<float>()) throw nb::type_error((std::string(what) + ": expected float32").c_str());
  if (a->ndim() != (columns == 1 ? 1u : 2u) || (columns > 1 && a->shape(1) != columns))
    throw nb::value_error((std::string(what) + ": expected " + std::to_string(columns) + " columns").c_str());
  require_c_contiguous(*a, what);
  return static_cast<float*>(a->data());
}

/// CUDA volumes [z, y, x]: the totals (vertices, triangles) into totals[0..1] (uint64); the mesh
/// (vertices and normals x, y, z; triangles as 32-bit indices, or 64-bit when `triangles` holds
/// 64-bit integers; values) only when every output is given and both totals fit. Returns the
/// temporary bytes (sizes only when temp is None). On the stream; no host synchronisation.
std::size_t isosurface_device(const std::optional<OutArray>& temp, const Array& volume, double level, double sx,
                              double sy, double sz, bool flip, bool allow_degenerate,
                              const std::optional<OutArray>& vertices, const std::optional<OutArray>& triangles,
                              const std::optional<OutArray>& normals, const std::optional<OutArray>& values,
                              const OutArray& totals, std::uintptr_t stream) {
  require_device(volume, true, "volume");
  require_ndim(volume, 3, "volume");
  require_device(totals, true, "totals");
  require_integer_bytes(totals, 8, "totals");
  if (totals.size() != 2) throw nb::value_error("totals: expected two elements");
  const bool outputs = vertices && triangles && normals && values;
  MeshOutputs mesh_out{};
  if (outputs) {
    mesh_out.vertices = float_output(vertices, 3, "vertices");
    mesh_out.normals = float_output(normals, 3, "normals");
    mesh_out.values = float_output(values, 1, "values");
    require_device(*triangles, true, "triangles");
    if (triangles->ndim() != 2 || triangles->shape(1) != 3) throw nb::value_error("triangles: expected 3 columns");
    require_c_contiguous(*triangles, "triangles");
    if (triangles->itemsize() == 8) {
      require_integer_bytes(*triangles, 8, "triangles");
      mesh_out.triangles64 = static_cast<std::uint64_t*>(triangles->data());
    } else {
      require_integer_bytes(*triangles, 4, "triangles");
      mesh_out.triangles = static_cast<std::uint32_t*>(triangles->data());
    }
    if (normals->shape(0) != vertices->shape(0) || values->shape(0) != vertices->shape(0))
      throw nb::value_error("normals, values: expected one row per vertex");
    mesh_out.vertex_capacity = vertices->shape(0);
    mesh_out.triangle_capacity = triangles->shape(0);
  }
#if WINNOW_HAVE_CUDA
  const Temp t = temp_from(temp);
  void* d_temp = t.data;
  std::size_t temp_bytes = t.bytes;
  const IsosurfaceOptions options{.normals = true, .values = true, .flip = flip, .allow_degenerate = allow_degenerate};
  cuda::DeviceMesh out;
  out.d_vertices = mesh_out.vertices, out.d_normals = mesh_out.normals, out.d_values = mesh_out.values;
  out.d_triangles = mesh_out.triangles, out.d_triangles64 = mesh_out.triangles64;
  out.vertex_capacity = mesh_out.vertex_capacity, out.triangle_capacity = mesh_out.triangle_capacity;
  with_mesh_type(volume, [&](auto t) {
    using T = decltype(t);
    const VolumeView<const T> view = mesh_view<T>(volume, sx, sy, sz);
    nb::gil_scoped_release unlocked;
    cuda::isosurface(d_temp, temp_bytes, view, level, options, out, static_cast<std::uint64_t*>(totals.data()),
                     stream_from(stream));
    return 0;
  });
  return temp_bytes;
#else
  (void)temp, (void)level, (void)sx, (void)sy, (void)sz, (void)flip, (void)allow_degenerate, (void)stream;
  throw BackendError("CUDA arrays need the CUDA backend, which this build does not have");
#endif
}

}  // namespace

void bind_isosurface(nb::module_& m) {
  m.def("isosurface_host", &isosurface_host, nb::arg("volume"), nb::arg("level"), nb::arg("sx"), nb::arg("sy"),
        nb::arg("sz"), nb::arg("flip"), nb::arg("allow_degenerate"), nb::arg("backend"),
        "Marching cubes of a host volume [z, y, x]; returns (vertices xyz, triangles, normals xyz, values).");
  m.def("isosurface_device", &isosurface_device, nb::arg("temp").none(), nb::arg("volume"), nb::arg("level"),
        nb::arg("sx"), nb::arg("sy"), nb::arg("sz"), nb::arg("flip"), nb::arg("allow_degenerate"),
        nb::arg("vertices").none(), nb::arg("triangles").none(), nb::arg("normals").none(), nb::arg("values").none(),
        nb::arg("totals"), nb::arg("stream"),
        "CUDA volumes [z, y, x]: the totals into totals[0..1] and, when the outputs are given and large enough, "
        "the mesh (x, y, z order), on the stream; returns the temporary bytes.");
}

}  // namespace winnow::python
