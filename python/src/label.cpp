// Connected-component labeling for Python (winnow.label). The options travel as the library's
// LabelOptions (bound as winnow._winnow.LabelOptions), device arrays as DeviceArray views; the
// library's front end validates them (InputError: ValueError in Python).
// - Binary 2D masks: host arrays through winnow::label_into (any backend; labels written into the
//   caller's array), CUDA arrays through winnow::cuda::label.
// - Volumes and multi-label images (a 2D image is a volume of one slice): host arrays through
//   winnow::label(VolumeView), whose label volume becomes the NumPy result without a copy; CUDA
//   arrays through winnow::cuda::label_volume. Signed integers are read as the unsigned type of
//   their width (equal values stay equal, zero stays zero).
// With `want_stats`, the statistics of labels 1..N come back as cc3d.statistics' arrays
// (statistics.hpp: counts, boxes, centroids) with a row 0 left for the background, which the
// Python layer fills from label_statistics of the labels (after its own filtering of device
// labelings). Device calls run on the caller's stream, into labels the Python layer allocated
// with the caller's library, with temporary storage and count kept per (device, stream) by the
// extension (device_calls.hpp).
#include "winnow/label.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "arrays.hpp"
#include "device_calls.hpp"
#include "statistics.hpp"
#include "winnow/error.hpp"
#if WINNOW_HAVE_CUDA
#include "winnow/cuda/label.hpp"
#endif

namespace winnow::python {
namespace {

void check_labels(const Array& mask, const OutArray& labels) {
  require_device(labels, false, "out");
  require_integer_bytes(labels, 4, "out");
  if (labels.ndim() != 2 || labels.shape(0) != mask.shape(0) || labels.shape(1) != mask.shape(1))
    throw nb::value_error("out: expected the shape of a");
  require_c_contiguous(labels, "out");
}

/// Calls f(T{}) with T the unsigned type of the integer (or bool) elements' width.
template <class F>
decltype(auto) with_unsigned_of_width(nb::dlpack::dtype dt, std::size_t itemsize, const char* what, F&& f) {
  const auto code = dt.code;
  const bool integer = code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int) ||
                       code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt) ||
                       code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bool);
  if (integer) switch (itemsize) {
      case 1: return f(std::uint8_t{});
      case 2: return f(std::uint16_t{});
      case 4: return f(std::uint32_t{});
      case 8: return f(std::uint64_t{});
    }
  throw nb::type_error((std::string(what) + ": expected bool or integers of 8, 16, 32 or 64 bits").c_str());
}

/// cc3d's arrays for components 1..n, row 0 (the background's) already written empty.
Cc3dArrays component_arrays(std::size_t n, std::size_t ndim, std::uint64_t voxels, std::int64_t side) {
  Cc3dArrays arrays(n + 1, ndim, voxels, side);
  arrays.set(0, 0, {}, {}, {});
  return arrays;
}

/// fill(i) for i in 0..count-1, on OpenMP threads when there are many (rows are independent).
template <class Fill>
void fill_rows(std::int64_t count, Fill&& fill) {
#pragma omp parallel for schedule(static) if (count > (1 << 14))
  for (std::int64_t i = 0; i < count; ++i) fill(static_cast<std::size_t>(i));
}

/// Rows 1..n of cc3d's arrays from per-component records (`fill(arrays, i)` fills component
/// i + 1); row 0 stays empty for the background.
template <class Fill>
nb::tuple cc3d_rows(std::size_t n, std::size_t ndim, std::uint64_t voxels, std::int64_t side, Fill&& fill) {
  Cc3dArrays arrays = component_arrays(n, ndim, voxels, side);
  {
    nb::gil_scoped_release unlocked;
    fill_rows(static_cast<std::int64_t>(n), [&](std::size_t i) { fill(arrays, i); });
  }
  return arrays.release();
}

nb::tuple image_rows(const std::vector<ComponentStats>& stats, std::int64_t width, std::int64_t height) {
  return cc3d_rows(
      stats.size(), 2, static_cast<std::uint64_t>(width * height), largest_side(width, height, 1),
      [&](Cc3dArrays& a, std::size_t i) {
        const ComponentStats& s = stats[i];
        a.set(i + 1, s.area, {s.left, s.top, 0}, {s.left + s.width - 1, s.top + s.height - 1, 0}, {s.cx, s.cy, 0});
      });
}

nb::tuple volume_rows(const std::vector<VolumeComponentStats>& stats, std::size_t ndim, std::int64_t nx,
                      std::int64_t ny, std::int64_t nz) {
  return cc3d_rows(stats.size(), ndim, static_cast<std::uint64_t>(nx * ny * nz),
                   ndim == 3 ? largest_side(nx, ny, nz) : largest_side(nx, ny, 1), [&](Cc3dArrays& a, std::size_t i) {
                     const VolumeComponentStats& s = stats[i];
                     a.set(i + 1, s.voxels, {s.x, s.y, s.z}, {s.x + s.width - 1, s.y + s.height - 1, s.z + s.depth - 1},
                           {s.cx, s.cy, s.cz});
                   });
}

/// A NumPy array [height, width] that owns the library's label image (moved, not copied).
nb::object owning_numpy(Image<std::uint32_t>&& image) {
  auto* owner = new Image<std::uint32_t>(std::move(image));
  nb::capsule release(owner, [](void* p) noexcept { delete static_cast<Image<std::uint32_t>*>(p); });
  const std::size_t shape[2] = {static_cast<std::size_t>(owner->height()), static_cast<std::size_t>(owner->width())};
  return nb::cast(nb::ndarray<nb::numpy, std::uint32_t>(owner->data(), 2, shape, release));
}

/// Host images [height, width] (pixels adjacent, rows at any stride of at least the width), binary
/// or multi-label (options.multilabel), of integers or bool: byte images are labelled into `out`
/// (uint32, C-contiguous, required for them), 16-, 32- and 64-bit ones into a new label image.
/// Returns (labels: out or the new array, N, cc3d's arrays of labels 1..N or None).
nb::tuple label_image_host(const Array& image, std::optional<OutArray> out, const LabelOptions& options) {
  require_device(image, false, "a");
  require_ndim(image, 2, "a");
  const std::int64_t width = image.shape(1), height = image.shape(0);
  if (width > 1 && image.stride(1) != 1) throw nb::value_error("a: expected the pixels of a row adjacent in memory");
  const std::int64_t stride = height > 1 ? image.stride(0) : width;
  if (stride < width) throw nb::value_error("a: expected rows at a stride of at least the width");
  Labeling result;
  nb::object labels;
  if (image.itemsize() == 1) {
    if (!out) throw nb::value_error("out: required for a byte image");
    check_labels(image, *out);
    ImageView<const std::uint8_t> in(static_cast<const std::uint8_t*>(image.data()), width, height, stride);
    ImageView<std::uint32_t> into(static_cast<std::uint32_t*>(out->data()), width, height, width);
    {
      nb::gil_scoped_release unlocked;
      result = label_into(in, into, options);
    }
    labels = nb::cast(*out);
  } else {
    result = with_unsigned_of_width(image.dtype(), image.itemsize(), "a", [&](auto t) -> Labeling {
      using T = decltype(t);
      if constexpr (sizeof(T) == 1) {
        return {};  // bytes: above
      } else {
        ImageView<const T> in(static_cast<const T*>(image.data()), width, height, stride);
        nb::gil_scoped_release unlocked;
        return label(in, options);
      }
    });
    labels = owning_numpy(std::move(result.labels));
  }
  if (!options.want_stats) return nb::make_tuple(labels, result.count, nb::none());
  return nb::make_tuple(labels, result.count, image_rows(result.stats, width, height));
}

/// A NumPy array [z, y, x] that owns the library's label volume (moved, not copied).
template <class T>
nb::object owning_numpy(Volume<T>&& volume) {
  auto* owner = new Volume<T>(std::move(volume));
  nb::capsule release(owner, [](void* p) noexcept { delete static_cast<Volume<T>*>(p); });
  const std::size_t shape[3] = {static_cast<std::size_t>(owner->nz()), static_cast<std::size_t>(owner->ny()),
                                static_cast<std::size_t>(owner->nx())};
  return nb::cast(nb::ndarray<nb::numpy, T>(owner->data(), 3, shape, release));
}

/// Host volumes [z, y, x]: returns (labels uint32 or uint64 [z, y, x], N, cc3d's arrays of labels
/// 1..N or None). With `out` (32-bit integers, the volume's shape, x adjacent; fewer than 2^32
/// voxels and not wide) the labels are written there and out comes back.
nb::tuple label_volume_host(const Array& volume, std::optional<OutArray> out, const LabelOptions& asked, bool wide) {
  require_device(volume, false, "a");
  LabelOptions options = asked;
  options.wide_labels = wide;
  const std::int64_t nx = volume.shape(2), ny = volume.shape(1), nz = volume.shape(0);
  VolumeView<std::uint32_t> into;
  if (out) {
    require_device(*out, false, "out");
    require_integer_bytes(*out, 4, "out");
    into = volume_view<std::uint32_t>(*out, "out");
    if (into.nx != nx || into.ny != ny || into.nz != nz) throw nb::value_error("out: expected the shape of a");
  }
  VolumeLabeling result = with_unsigned_of_width(volume.dtype(), volume.itemsize(), "a", [&](auto t) {
    using T = decltype(t);
    const VolumeView<const T> view = host_volume<T>(volume, "a");
    if (out) {
      nb::gil_scoped_release unlocked;
      return label_into(view, into, options);
    }
    nb::gil_scoped_release unlocked;
    return label(view, options);
  });
  // Exactly one of the two is filled (64-bit when asked for or when the count needs it).
  nb::object labels = out ? nb::cast(*out)
                      : result.labels64.empty() && !(wide && result.labels.empty())
                          ? owning_numpy(std::move(result.labels))
                          : owning_numpy(std::move(result.labels64));
  if (!options.want_stats) return nb::make_tuple(labels, result.count, nb::none());
  return nb::make_tuple(labels, result.count, volume_rows(result.stats, 3, nx, ny, nz));
}

// CUDA arrays, as DeviceArray views (the Python layer has checked them and reads pointers without
// DLPack; see arrays.hpp): one call each, the temporary storage and the count kept per (device,
// stream) by the extension (device_calls.hpp). N comes back (a small copy and a wait for the
// stream) only when `read_count` asks: winnow.label needs it for return_N and the filters, not for
// the labels alone. With options.want_stats the per-component records of the device API come to
// the host too (N records: N is read anyway). The device API filters nothing: min_area and
// largest_k are the Python layer's, on the device, by the library's survivor rule.

#if WINNOW_HAVE_CUDA
/// Records the stream's storage holds at first (grown to N when a labeling has more).
constexpr std::uint64_t kFirstRecords = std::uint64_t{1} << 16;

/// The records of labels 1..N of a labeling on the call's stream, left in device memory:
/// `run(d_records, capacity)` enqueues the labeling (N into call.count()). N is unknown before it
/// ends, so the labeling writes into the stream's record storage as it is; when N exceeds it (the
/// first time a stream sees that many components), the storage grows and the labeling runs again.
/// Returns (the records, N).
template <class Raw, class Run>
std::pair<const Raw*, std::uint64_t> labeling_records(DeviceCall& call, std::uint64_t voxels, Run&& run) {
  const std::uint64_t first = std::clamp<std::uint64_t>(voxels, 1, kFirstRecords);
  auto* d_records = static_cast<Raw*>(call.records(first * sizeof(Raw)));
  const std::uint64_t capacity = call.records_bytes() / sizeof(Raw);
  run(d_records, capacity);
  const std::uint64_t n = *call.read_count(true, 4);
  if (n > capacity) {
    d_records = static_cast<Raw*>(call.records(n * sizeof(Raw)));
    run(d_records, n);
  }
  return {d_records, n};
}

/// The device labelings' common body: `label(d_temp, temp_bytes, d_count, d_records, capacity)`
/// calls the device API (with no storage it sizes it). Returns N or None (read_count), or with
/// `records` N always and the device records of labels 1..N in *records.
template <class Raw, class Label>
std::optional<std::uint64_t> label_on_device(DeviceCall& call, std::uint64_t voxels, bool read_count,
                                             const Raw** records, Label label) {
  std::size_t temp_bytes = 0;
  label(nullptr, temp_bytes, nullptr, nullptr, 0);
  void* d_temp = call.scratch(temp_bytes);
  auto run = [&](Raw* d_records, std::uint64_t capacity) {
    label(d_temp, temp_bytes, static_cast<std::uint32_t*>(call.count()), d_records, capacity);
  };
  if (!records) {
    run(nullptr, 0);
    return call.read_count(read_count, 4);
  }
  const auto [d_records, n] = labeling_records<Raw>(call, voxels, run);
  *records = d_records;
  return n;
}

/// cc3d's rows 0..N of the device records of labels 1..N: read through the call's pinned blocks
/// and converted a block at a time (OpenMP) while the next block copies; `set(arrays, label,
/// record)` writes row `label`. Row 0 stays empty for the background.
template <class Raw, class Set>
Cc3dArrays device_rows(DeviceCall& call, const Raw* d_records, std::uint64_t n, std::size_t ndim, std::uint64_t voxels,
                       std::int64_t side, Set&& set) {
  Cc3dArrays arrays = component_arrays(n, ndim, voxels, side);
  call.read_in_blocks(d_records, n * sizeof(Raw), sizeof(Raw),
                      [&](const void* host, std::size_t offset, std::size_t bytes) {
                        const auto* records = static_cast<const Raw*>(host);
                        const std::size_t before = offset / sizeof(Raw);
                        fill_rows(static_cast<std::int64_t>(bytes / sizeof(Raw)),
                                  [&](std::size_t i) { set(arrays, before + i + 1, records[i]); });
                      });
  return arrays;
}

/// What the device API honours of the caller's options: connectivity, multilabel and algorithm.
cuda::DeviceLabelOptions device_options(const LabelOptions& options) {
  return cuda::DeviceLabelOptions{
      .connectivity = options.connectivity, .multilabel = options.multilabel, .algorithm = options.algorithm};
}

void check_device_labels(const DeviceArray& labels, const DeviceArray& like) {
  if ((labels.kind != 'i' && labels.kind != 'u') || labels.itemsize != 4)
    throw nb::type_error("out: expected 32-bit integers");
  if (labels.shape != like.shape) throw nb::value_error("out: expected the shape of a");
  if (!labels.c_contiguous()) throw nb::value_error("out: expected a C-contiguous array");
}
#endif

/// CUDA volumes [z, y, x] (2D: one slice; contiguous) of unsigned integers: 32-bit labels
/// (contiguous) into `out`; returns (N or None, cc3d's arrays of labels 1..N or None).
nb::tuple label_volume_device(const DeviceArray& volume, const DeviceArray& out, const LabelOptions& options,
                              bool read_count) {
#if WINNOW_HAVE_CUDA
  check_device_labels(out, volume);
  if (!volume.c_contiguous()) throw nb::value_error("a: expected a C-contiguous array");
  const std::size_t ndim = volume.ndim();
  if (ndim != 2 && ndim != 3) throw nb::value_error("a: expected 2 or 3 dimensions");
  const std::int64_t nz = ndim == 3 ? volume.shape[0] : 1, ny = volume.shape[ndim - 2], nx = volume.shape[ndim - 1];
  cuda::DeviceLabelOptions honoured = device_options(options);
  if (ndim == 2)  // an image through the volume path, as the host API labels a multi-label image: 4 is 6, 8 is 26
    honoured.connectivity = resolve_connectivity(options.connectivity, 2) == 4 ? 6 : 26;
  const std::int64_t side = ndim == 3 ? largest_side(nx, ny, nz) : largest_side(nx, ny, 1);
  std::optional<Cc3dArrays> rows;
  const auto n = with_unsigned_of_width(volume.dtype(), volume.itemsize, "a", [&](auto t) {
    using T = decltype(t);
    using Raw = cuda::RawVolumeComponentStats;
    const VolumeView<const T> d_volume(volume.data<const T>(), nx, ny, nz);
    auto* d_labels = out.data<std::uint32_t>();
    nb::gil_scoped_release unlocked;
    DeviceCall call(volume.device, volume.stream);
    const Raw* d_records = nullptr;
    const auto count = label_on_device<Raw>(
        call, static_cast<std::uint64_t>(volume.size()), read_count, options.want_stats ? &d_records : nullptr,
        [&](void* d_temp, std::size_t& temp_bytes, std::uint32_t* d_count, Raw* d_stats, std::uint64_t capacity) {
          cuda::label_volume(d_temp, temp_bytes, d_volume, d_labels, d_count, d_stats, capacity, honoured,
                             call.stream());
        });
    if (options.want_stats)
      rows.emplace(device_rows(call, d_records, *count, ndim, static_cast<std::uint64_t>(nx * ny * nz), side,
                               [](Cc3dArrays& a, std::size_t label, const Raw& r) {
                                 const double voxels = static_cast<double>(r.voxels);
                                 a.set(label, r.voxels, {r.min_x, r.min_y, r.min_z}, {r.max_x, r.max_y, r.max_z},
                                       {static_cast<double>(r.sum_x) / voxels, static_cast<double>(r.sum_y) / voxels,
                                        static_cast<double>(r.sum_z) / voxels});
                               }));
    return count;
  });
  if (!rows) return nb::make_tuple(n, nb::none());
  return nb::make_tuple(n, rows->release());
#else
  (void)volume, (void)out, (void)options, (void)read_count;
  throw BackendError("CUDA arrays need the CUDA backend, which this build does not have");
#endif
}

/// CUDA masks [height, width] of bytes (pixels adjacent, rows at any stride of at least the
/// width): 32-bit labels (contiguous) into `out`; returns (N or None, cc3d's arrays or None).
nb::tuple label_image_device(const DeviceArray& mask, const DeviceArray& out, const LabelOptions& options,
                             bool read_count) {
#if WINNOW_HAVE_CUDA
  check_device_labels(out, mask);
  if (mask.ndim() != 2 || mask.itemsize != 1) throw nb::type_error("a: expected a 2D array of bytes");
  const std::int64_t height = mask.shape[0], width = mask.shape[1];
  if (width > 1 && mask.strides[1] != 1) throw nb::value_error("a: expected the pixels of a row adjacent in memory");
  const std::int64_t row_stride = height > 1 ? mask.strides[0] : width;
  if (row_stride < width) throw nb::value_error("a: expected rows at a stride of at least the width");
  const cuda::DeviceLabelOptions honoured = device_options(options);
  std::optional<Cc3dArrays> rows;
  std::optional<std::uint64_t> n;
  {
    using Raw = cuda::RawComponentStats;
    const ImageView<const std::uint8_t> d_mask(mask.data<const std::uint8_t>(), width, height, row_stride);
    auto* d_labels = out.data<std::uint32_t>();
    nb::gil_scoped_release unlocked;
    DeviceCall call(mask.device, mask.stream);
    const Raw* d_records = nullptr;
    n = label_on_device<Raw>(
        call, static_cast<std::uint64_t>(width * height), read_count, options.want_stats ? &d_records : nullptr,
        [&](void* d_temp, std::size_t& temp_bytes, std::uint32_t* d_count, Raw* d_stats, std::uint64_t capacity) {
          cuda::label(d_temp, temp_bytes, d_mask, d_labels, d_count, d_stats, capacity, honoured, call.stream());
        });
    if (options.want_stats)
      rows.emplace(device_rows(call, d_records, *n, 2, static_cast<std::uint64_t>(width * height),
                               largest_side(width, height, 1), [](Cc3dArrays& a, std::size_t label, const Raw& r) {
                                 const double area = static_cast<double>(r.area);
                                 a.set(label, r.area, {r.left, r.top, 0}, {r.right, r.bottom, 0},
                                       {static_cast<double>(r.sum_x) / area, static_cast<double>(r.sum_y) / area, 0});
                               }));
  }
  if (!rows) return nb::make_tuple(n, nb::none());
  return nb::make_tuple(n, rows->release());
#else
  (void)mask, (void)out, (void)options, (void)read_count;
  throw BackendError("CUDA arrays need the CUDA backend, which this build does not have");
#endif
}

}  // namespace

void bind_label(nb::module_& m) {
  nb::class_<LabelOptions>(m, "LabelOptions",
                           "winnow::LabelOptions: connectivity (0: the densest), multilabel, min_area, largest_k, "
                           "want_stats and backend ('auto', 'cpu' or 'cuda'); validated by the library "
                           "(winnow::resolve_connectivity for the connectivity).")
      .def(
          "__init__",
          [](LabelOptions* self, int connectivity, bool multilabel, std::uint64_t min_area, std::uint64_t largest_k,
             bool want_stats, std::string_view backend) {
            new (self) LabelOptions{.connectivity = connectivity,
                                    .multilabel = multilabel,
                                    .largest_k = largest_k,
                                    .min_area = min_area,
                                    .want_stats = want_stats,
                                    .backend = backend_from(backend)};
          },
          nb::kw_only(), nb::arg("connectivity") = 0, nb::arg("multilabel") = false, nb::arg("min_area") = 0,
          nb::arg("largest_k") = 0, nb::arg("want_stats") = false, nb::arg("backend") = "auto")
      .def_rw("connectivity", &LabelOptions::connectivity)
      .def_rw("multilabel", &LabelOptions::multilabel)
      .def_rw("min_area", &LabelOptions::min_area)
      .def_rw("largest_k", &LabelOptions::largest_k)
      .def_rw("want_stats", &LabelOptions::want_stats)
      .def_prop_rw(
          "backend", [](const LabelOptions& o) { return std::string(to_string(o.backend)); },
          [](LabelOptions& o, std::string_view name) { o.backend = backend_from(name); });
  m.def("label_image_host", &label_image_host, nb::arg("a"), nb::arg("out").none(), nb::arg("options"),
        "Labels a host image [height, width] (binary or multi-label): byte images into out (32-bit), others into a "
        "new uint32 array; returns (labels, N, cc3d's arrays of labels 1..N with an empty row 0, or None).");
  m.def("label_volume_host", &label_volume_host, nb::arg("a"), nb::arg("out").none(), nb::arg("options"),
        nb::arg("wide"),
        "Labels a host volume [z, y, x] of integers, into out (32-bit, x adjacent, fewer than 2^32 voxels) when "
        "given; returns (labels uint32 or uint64, N, cc3d's arrays or None).");
  m.def("label_image_device", &label_image_device, nb::arg("a"), nb::arg("out"), nb::arg("options"),
        nb::arg("read_count"),
        "Labels the device byte mask a into out (32-bit) on its stream; returns (N (waiting for the stream) when "
        "read_count or options.want_stats, else None; cc3d's arrays or None). min_area and largest_k are not "
        "applied.");
  m.def("label_volume_device", &label_volume_device, nb::arg("a"), nb::arg("out"), nb::arg("options"),
        nb::arg("read_count"),
        "Labels the contiguous device volume a [z, y, x] (or image) of unsigned integers into out (32-bit); returns "
        "as label_image_device.");
}

}  // namespace winnow::python
