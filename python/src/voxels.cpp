// Voxel compaction for Python (winnow.voxels): the coordinates ([z, y, x], NumPy's index order)
// and values of the voxels of a host volume above or below a level, or non-zero, through
// winnow::compact_voxels (any backend; rows and slices at any stride); of a CUDA volume, the
// raster indices of the kept voxels through winnow::cuda::voxel_indices on the caller's stream,
// which the Python layer turns into coordinates and values with the caller's array library.
#include "winnow/voxels.hpp"

#include <nanobind/stl/string_view.h>

#include "arrays.hpp"
#include "device_calls.hpp"
#include "winnow/error.hpp"
#if WINNOW_HAVE_CUDA
#include "winnow/cuda/voxels.hpp"
#endif

namespace winnow::python {
namespace {

VoxelSelection selection_of(double level, std::string_view mode) {
  VoxelSelection selection{.level = level};
  if (mode == "above") selection.mode = VoxelMode::above;
  else if (mode == "below") selection.mode = VoxelMode::below;
  else if (mode == "nonzero") selection.mode = VoxelMode::nonzero;
  else throw nb::value_error("mode: expected 'above', 'below' or 'nonzero'");
  return selection;
}

nb::tuple voxels_host(const Array& volume, double level, std::string_view mode, std::string_view backend) {
  require_device(volume, false, "volume");
  require_ndim(volume, 3, "volume");
  if (volume.shape(2) > 1 && volume.stride(2) != 1)
    throw nb::value_error("volume: expected x (the last axis) adjacent in memory");
  const VoxelSelection selection = selection_of(level, mode);
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

/// CUDA volumes (contiguous, any shape: read as a stream in C order) of the compaction's value
/// types: the raster indices of the kept voxels into `out` (int64, room for every voxel), on the
/// volume's stream; returns their number (waiting for the stream).
std::uint64_t voxel_indices_device(const DeviceArray& volume, const DeviceArray& out, double level,
                                   std::string_view mode) {
#if WINNOW_HAVE_CUDA
  const VoxelSelection selection = selection_of(level, mode);
  if (!volume.c_contiguous()) throw nb::value_error("volume: expected a C-contiguous array");
  if (out.itemsize != 8 || (out.kind != 'i' && out.kind != 'u') || out.size() < volume.size() || !out.c_contiguous())
    throw nb::value_error("out: expected 64-bit integers, room for every voxel");
  const auto n = static_cast<std::uint64_t>(volume.size());
  return with_numeric_type(volume.dtype(), false, "volume", [&](auto t) -> std::uint64_t {
    using T = decltype(t);
    nb::gil_scoped_release unlocked;
    DeviceCall call(volume.device, volume.stream);
    cuda::voxel_indices<T>(call.compaction(), volume.data<const T>(), n, selection, out.data<std::uint64_t>(),
                           static_cast<std::uint64_t*>(call.count()), call.stream());
    return *call.read_count(true, 8);
  });
#else
  (void)volume, (void)out, (void)level, (void)mode;
  throw BackendError("CUDA arrays need the CUDA backend, which this build does not have");
#endif
}

}  // namespace

void bind_voxels(nb::module_& m) {
  m.def("voxel_indices_device", &voxel_indices_device, nb::arg("volume"), nb::arg("out"), nb::arg("level"),
        nb::arg("mode"),
        "CUDA volumes (DeviceArray, C-contiguous): the raster indices of the voxels kept into out (int64); returns "
        "their number, waiting for the stream.");
  m.def("voxels_host", &voxels_host, nb::arg("volume"), nb::arg("level"), nb::arg("mode"), nb::arg("backend"),
        "Returns (coordinates int64 [K, 3] as z, y, x; values [K]) of the voxels kept, in raster order.");
}

}  // namespace winnow::python
