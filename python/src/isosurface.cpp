// Isosurfaces for Python (winnow.marching_cubes) over winnow::isosurface (host volumes, any
// backend, any strides): the mesh leaves as NumPy arrays that own the library's vectors. The
// Python layer turns the library's x, y, z order into scikit-image's array-index order.
#include <nanobind/stl/string_view.h>

#include <array>

#include "arrays.hpp"
#include "winnow/isosurface.hpp"

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

/// Returns (vertices float32 [V, 3] x, y, z; triangles uint32 or uint64 [F, 3]; normals float32
/// [V, 3] x, y, z; values float32 [V]).
nb::tuple isosurface_host(const Array& volume, double level, double sx, double sy, double sz, bool flip,
                          bool allow_degenerate, std::string_view backend) {
  require_device(volume, false, "volume");
  require_ndim(volume, 3, "volume");
  const auto dt = volume.dtype();
  const IsosurfaceOptions options{.normals = true, .values = true, .flip = flip, .allow_degenerate = allow_degenerate,
                                  .backend = backend_from(backend)};
  auto run = [&](auto t) {
    using T = decltype(t);
    const auto nz = static_cast<std::int64_t>(volume.shape(0)), ny = static_cast<std::int64_t>(volume.shape(1)),
               nx = static_cast<std::int64_t>(volume.shape(2));
    // The library takes any row and slice strides, but x adjacent (the Python layer copies otherwise).
    if (nx > 1 && volume.stride(2) != 1) throw nb::value_error("volume: expected x (the last axis) adjacent in memory");
    const std::int64_t rs = ny > 1 ? volume.stride(1) : nx, ss = nz > 1 ? volume.stride(0) : rs * ny;
    VolumeView<const T> view(static_cast<const T*>(volume.data()), nx, ny, nz, rs, ss);
    view.sx = sx, view.sy = sy, view.sz = sz;
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
  if (dt == nb::dtype<std::uint8_t>()) return run(std::uint8_t{});
  if (dt == nb::dtype<std::uint16_t>()) return run(std::uint16_t{});
  if (dt == nb::dtype<std::int16_t>()) return run(std::int16_t{});
  if (dt == nb::dtype<float>()) return run(float{});
  if (dt == nb::dtype<double>()) return run(double{});
  throw nb::type_error("volume: expected dtype uint8, uint16, int16, float32 or float64");
}

}  // namespace

void bind_isosurface(nb::module_& m) {
  m.def("isosurface_host", &isosurface_host, nb::arg("volume"), nb::arg("level"), nb::arg("sx"), nb::arg("sy"),
        nb::arg("sz"), nb::arg("flip"), nb::arg("allow_degenerate"), nb::arg("backend"),
        "Marching cubes of a host volume [z, y, x]; returns (vertices xyz, triangles, normals xyz, values).");
}

}  // namespace winnow::python
