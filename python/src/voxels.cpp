// Voxel compaction for Python (winnow.voxels): the coordinates ([z, y, x], NumPy's index order)
// and values of the voxels of a host volume above or below a level, or non-zero, through
// winnow::compact_voxels (any backend; rows and slices at any stride).
#include <nanobind/stl/string_view.h>

#include "arrays.hpp"
#include "winnow/voxels.hpp"

namespace winnow::python {
namespace {

nb::tuple voxels_host(const Array& volume, double level, std::string_view mode, std::string_view backend) {
  require_device(volume, false, "volume");
  require_ndim(volume, 3, "volume");
  if (volume.shape(2) > 1 && volume.stride(2) != 1) throw nb::value_error("volume: expected x (the last axis) adjacent in memory");
  VoxelSelection selection{.level = level};
  if (mode == "above") selection.mode = VoxelMode::above;
  else if (mode == "below") selection.mode = VoxelMode::below;
  else if (mode == "nonzero") selection.mode = VoxelMode::nonzero;
  else throw nb::value_error("mode: expected 'above', 'below' or 'nonzero'");
  const VoxelOptions options{.backend = backend_from(backend)};
  return with_numeric_type(volume, true, "volume", [&](auto t) {
    using T = decltype(t);
    const auto nz = static_cast<std::int64_t>(volume.shape(0)), ny = static_cast<std::int64_t>(volume.shape(1)),
               nx = static_cast<std::int64_t>(volume.shape(2));
    // A dimension of one element may report any stride; give it the one a contiguous volume has.
    const std::int64_t rs = ny > 1 ? volume.stride(1) : nx, ss = nz > 1 ? volume.stride(0) : rs * ny;
    if (rs < 0 || ss < 0) throw nb::value_error("volume: expected non-negative strides");
    VolumeView<const T> view(static_cast<const T*>(volume.data()), nx, ny, nz, rs, ss);
    Voxels<T> kept;
    std::vector<std::int64_t> coordinates;
    {
      nb::gil_scoped_release unlocked;
      kept = compact_voxels(view, selection, options);
      coordinates.resize(kept.positions.size() * 3);
      for (std::size_t i = 0; i < kept.positions.size(); ++i) {
        coordinates[i * 3] = kept.positions[i].z;
        coordinates[i * 3 + 1] = kept.positions[i].y;
        coordinates[i * 3 + 2] = kept.positions[i].x;
      }
    }
    const std::size_t k = kept.values.size();
    return nb::make_tuple(to_numpy(std::move(coordinates), {k, 3}), to_numpy(std::move(kept.values), {k}));
  });
}

}  // namespace

void bind_voxels(nb::module_& m) {
  m.def("voxels_host", &voxels_host, nb::arg("volume"), nb::arg("level"), nb::arg("mode"), nb::arg("backend"),
        "Returns (coordinates int64 [K, 3] as z, y, x; values [K]) of the voxels kept, in raster order.");
}

}  // namespace winnow::python
