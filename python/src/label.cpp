// Connected-component labeling for Python (winnow.label, winnow.statistics).
// - Binary 2D masks: host arrays through winnow::label_into (any backend; labels written into the
//   caller's array, statistics on request), CUDA arrays through winnow::cuda::label (statistics
//   on request too, their records brought to the host).
// - Volumes and multi-label images (a 2D image is a volume of one slice): host arrays through
//   winnow::label(VolumeView), whose label volume becomes the NumPy result without a copy; CUDA
//   arrays through winnow::cuda::label_volume. Signed integers are read as the unsigned type of
//   their width (equal values stay equal, zero stays zero).
// - statistics_host: cc3d.statistics' sums over any integer label array, one pass, exact integers.
// Device calls run on the caller's stream, into labels the Python layer allocated with the
// caller's library, with temporary storage and count kept per (device, stream) by the extension.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string_view.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>

#include "arrays.hpp"
#include "device_calls.hpp"
#include "winnow/error.hpp"
#include "winnow/label.hpp"
#if WINNOW_HAVE_CUDA
#include "winnow/cuda/label.hpp"
#endif

namespace winnow::python {
namespace {

/// The mask's rows: 2-D, bytes, pixels adjacent in a row, rows at a non-negative stride.
void check_mask(const Array& mask, bool cuda) {
  require_device(mask, cuda, "a");
  require_ndim(mask, 2, "a");
  require_byte_mask(mask, "a");
  if (mask.shape(1) > 1 && mask.stride(1) != 1)
    throw nb::value_error("a: expected the pixels of a row adjacent in memory");
  if (mask.shape(0) > 1 && mask.stride(0) < static_cast<std::int64_t>(mask.shape(1)))
    throw nb::value_error("a: expected rows at a stride of at least the width");
}

void check_labels(const Array& mask, const OutArray& labels, bool cuda) {
  require_device(labels, cuda, "out");
  require_integer_bytes(labels, 4, "out");
  if (labels.ndim() != 2 || labels.shape(0) != mask.shape(0) || labels.shape(1) != mask.shape(1))
    throw nb::value_error("out: expected the shape of a");
  require_c_contiguous(labels, "out");
}

std::int64_t row_stride(const Array& mask) {
  return mask.shape(0) > 1 ? mask.stride(0) : static_cast<std::int64_t>(mask.shape(1));
}

/// The image labeling's statistics of labels 1..N as (int64 [N, 5] area, left, top, width,
/// height; float64 [N, 2] centroid x, y): what the Python layer reads, from either backend.
nb::tuple image_stats_rows(const std::vector<ComponentStats>& stats) {
  const std::size_t n = stats.size();
  std::vector<std::int64_t> boxes(n * 5);
  std::vector<double> centroids(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    const ComponentStats& s = stats[i];
    const std::int64_t row[5] = {static_cast<std::int64_t>(s.area), s.left, s.top, s.width, s.height};
    std::copy(row, row + 5, boxes.begin() + i * 5);
    centroids[i * 2] = s.cx;
    centroids[i * 2 + 1] = s.cy;
  }
  return nb::make_tuple(to_numpy(std::move(boxes), {n, 5}), to_numpy(std::move(centroids), {n, 2}));
}

/// The volume labeling's statistics of labels 1..N as (int64 [N, 7] voxels, x, y, z, width,
/// height, depth; float64 [N, 3] centroid x, y, z), from either backend.
nb::tuple volume_stats_rows(const std::vector<VolumeComponentStats>& stats) {
  const std::size_t n = stats.size();
  std::vector<std::int64_t> boxes(n * 7);
  std::vector<double> centroids(n * 3);
  for (std::size_t i = 0; i < n; ++i) {
    const VolumeComponentStats& s = stats[i];
    const std::int64_t row[7] = {static_cast<std::int64_t>(s.voxels), s.x, s.y, s.z, s.width, s.height, s.depth};
    std::copy(row, row + 7, boxes.begin() + i * 7);
    centroids[i * 3] = s.cx, centroids[i * 3 + 1] = s.cy, centroids[i * 3 + 2] = s.cz;
  }
  return nb::make_tuple(to_numpy(std::move(boxes), {n, 7}), to_numpy(std::move(centroids), {n, 3}));
}

/// Returns (count, stats): stats None, or (int64 [N, 5] area, left, top, width, height;
/// float64 [N, 2] centroid x, y) of labels 1..N.
nb::tuple label_host(const Array& mask, const OutArray& labels, int connectivity, std::uint64_t min_area,
                     std::uint64_t largest_k, bool want_stats, std::string_view backend) {
  check_mask(mask, false);
  check_labels(mask, labels, false);
  LabelOptions options{.connectivity = connectivity, .largest_k = largest_k, .min_area = min_area,
                       .want_stats = want_stats, .backend = backend_from(backend)};
  const std::int64_t width = mask.shape(1), height = mask.shape(0);
  ImageView<const std::uint8_t> in(static_cast<const std::uint8_t*>(mask.data()), width, height, row_stride(mask));
  ImageView<std::uint32_t> out(static_cast<std::uint32_t*>(labels.data()), width, height, width);
  Labeling result;
  {
    nb::gil_scoped_release unlocked;
    result = label_into(in, out, options);
  }
  if (!want_stats) return nb::make_tuple(result.count, nb::none());
  return nb::make_tuple(result.count, image_stats_rows(result.stats));
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
template <class F>
decltype(auto) with_unsigned_of_width(const Array& a, const char* what, F&& f) {
  return with_unsigned_of_width(a.dtype(), a.itemsize(), what, std::forward<F>(f));
}

/// A volume [z, y, x] with x adjacent and non-negative strides (the Python layer copies otherwise).
template <class T, class A>
VolumeView<const T> volume_view(const A& a, const char* what) {
  if (a.ndim() != 3) throw nb::value_error((std::string(what) + ": expected 3 dimensions").c_str());
  const auto nz = static_cast<std::int64_t>(a.shape(0)), ny = static_cast<std::int64_t>(a.shape(1)),
             nx = static_cast<std::int64_t>(a.shape(2));
  if (nx > 1 && a.stride(2) != 1)
    throw nb::value_error((std::string(what) + ": expected x (the last axis) adjacent in memory").c_str());
  const std::int64_t rs = ny > 1 ? a.stride(1) : nx, ss = nz > 1 ? a.stride(0) : rs * ny;
  if (rs < 0 || ss < 0) throw nb::value_error((std::string(what) + ": expected non-negative strides").c_str());
  return VolumeView<const T>(static_cast<const T*>(a.data()), nx, ny, nz, rs, ss);
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

/// Host volumes [z, y, x]: returns (labels uint32 or uint64 [z, y, x], count, stats), stats None or
/// (int64 [N, 7] voxels, x, y, z, width, height, depth; float64 [N, 3] centroid x, y, z) of labels 1..N.
nb::tuple label_volume_host(const Array& volume, int connectivity, bool multilabel, std::uint64_t min_area,
                            std::uint64_t largest_k, bool want_stats, bool wide, std::string_view backend) {
  require_device(volume, false, "a");
  const LabelOptions options{.connectivity = connectivity, .multilabel = multilabel, .largest_k = largest_k,
                             .min_area = min_area, .want_stats = want_stats, .wide_labels = wide,
                             .backend = backend_from(backend)};
  VolumeLabeling result = with_unsigned_of_width(volume, "a", [&](auto t) {
    using T = decltype(t);
    const VolumeView<const T> view = volume_view<T>(volume, "a");
    nb::gil_scoped_release unlocked;
    return label(view, options);
  });
  // Exactly one of the two is filled (64-bit when asked for or when the count needs it).
  nb::object labels = result.labels64.empty() && !(wide && result.labels.empty())
                          ? owning_numpy(std::move(result.labels))
                          : owning_numpy(std::move(result.labels64));
  if (!want_stats) return nb::make_tuple(labels, result.count, nb::none());
  return nb::make_tuple(labels, result.count, volume_stats_rows(result.stats));
}

/// cc3d.statistics' sums of a label volume [z, y, x] (any integer dtype; a 2D image is one slice):
/// returns (counts uint64 [M], lower int64 [M, 3], upper int64 [M, 3] inclusive, centroids
/// float64 [M, 3]), axes in array-index order (z, y, x), M = the largest label + 1 (1 when
/// background_only: the background's alone). A label without voxels has count 0, lower > upper.
nb::tuple statistics_host(const Array& labels, bool background_only) {
  require_device(labels, false, "labels");
  const auto code = labels.dtype().code;
  if (code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int)) {
    with_unsigned_of_width(labels, "labels", [&](auto t) {
      using T = decltype(t);
      using Signed = std::make_signed_t<T>;
      const VolumeView<const T> view = volume_view<T>(labels, "labels");
      for (std::int64_t z = 0; z < view.nz; ++z)
        for (std::int64_t y = 0; y < view.ny; ++y) {
          const T* row = view.row(y, z);
          for (std::int64_t x = 0; x < view.nx; ++x)
            if (static_cast<Signed>(row[x]) < 0) throw nb::value_error("labels: expected non-negative labels");
        }
      return 0;
    });
  }
  struct Sums {
    std::uint64_t count = 0, sum[3] = {0, 0, 0};
    std::int64_t lower[3] = {INT64_MAX, INT64_MAX, INT64_MAX}, upper[3] = {-1, -1, -1};
  };
  std::vector<Sums> sums;
  with_unsigned_of_width(labels, "labels", [&](auto t) {
    using T = decltype(t);
    const VolumeView<const T> view = volume_view<T>(labels, "labels");
    nb::gil_scoped_release unlocked;
    T largest = 0;
    if (!background_only)
      for (std::int64_t z = 0; z < view.nz; ++z)
        for (std::int64_t y = 0; y < view.ny; ++y) {
          const T* row = view.row(y, z);
          for (std::int64_t x = 0; x < view.nx; ++x) largest = std::max(largest, row[x]);
        }
    if (static_cast<std::uint64_t>(largest) >= static_cast<std::uint64_t>(view.size()) + (1u << 20))
      throw InputError("labels: the largest label " + std::to_string(largest) +
                       " exceeds the number of voxels (expected labels 0..N as labeling gives them)");
    sums.resize(static_cast<std::size_t>(largest) + 1);
    for (std::int64_t z = 0; z < view.nz; ++z)
      for (std::int64_t y = 0; y < view.ny; ++y) {
        const T* row = view.row(y, z);
        for (std::int64_t x = 0; x < view.nx; ++x) {
          if (background_only && row[x] != 0) continue;
          Sums& s = sums[row[x]];
          const std::int64_t at[3] = {z, y, x};
          ++s.count;
          for (int d = 0; d < 3; ++d) {
            s.sum[d] += static_cast<std::uint64_t>(at[d]);
            s.lower[d] = std::min(s.lower[d], at[d]);
            s.upper[d] = std::max(s.upper[d], at[d]);
          }
        }
      }
    return 0;
  });
  const std::size_t m = sums.size();
  std::vector<std::uint64_t> counts(m);
  std::vector<std::int64_t> lower(m * 3), upper(m * 3);
  std::vector<double> centroids(m * 3);
  for (std::size_t i = 0; i < m; ++i) {
    counts[i] = sums[i].count;
    for (int d = 0; d < 3; ++d) {
      lower[i * 3 + d] = sums[i].lower[d];
      upper[i * 3 + d] = sums[i].upper[d];
      centroids[i * 3 + d] = sums[i].count ? static_cast<double>(sums[i].sum[d]) / static_cast<double>(sums[i].count)
                                           : std::numeric_limits<double>::quiet_NaN();
    }
  }
  return nb::make_tuple(to_numpy(std::move(counts), {m}), to_numpy(std::move(lower), {m, 3}),
                        to_numpy(std::move(upper), {m, 3}), to_numpy(std::move(centroids), {m, 3}));
}

// CUDA arrays, by pointer (the Python layer has checked them and reads pointers without
// DLPack; see compact.cpp): one call each, the temporary storage and the count kept per
// (device, stream) by the extension (device_calls.hpp). N comes back (a small copy and a wait
// for the stream) only when `read_count` asks: winnow.label needs it for return_N and the
// filters, not for the labels alone. The *_statistics variants also bring the per-component
// records of the device API to the host (N records: N is read anyway).

#if WINNOW_HAVE_CUDA
/// Records the stream's storage holds at first (grown to N when a labeling has more).
constexpr std::uint64_t kFirstRecords = std::uint64_t{1} << 16;

/// The records of labels 1..N of a labeling on the call's stream: `run(d_records, capacity)`
/// enqueues the labeling (N into call.count()). N is unknown before it ends, so the labeling
/// writes into the stream's record storage as it is; when N exceeds it (the first time a stream
/// sees that many components), the storage grows and the labeling runs again.
template <class Raw, class Run>
std::vector<Raw> labeling_records(DeviceCall& call, std::uint64_t voxels, Run&& run) {
  const std::uint64_t first = std::clamp<std::uint64_t>(voxels, 1, kFirstRecords);
  auto* d_records = static_cast<Raw*>(call.records(first * sizeof(Raw)));
  const std::uint64_t capacity = call.records_bytes() / sizeof(Raw);
  run(d_records, capacity);
  const std::uint64_t n = *call.read_count(true, 4);
  if (n > capacity) {
    d_records = static_cast<Raw*>(call.records(n * sizeof(Raw)));
    run(d_records, n);
  }
  std::vector<Raw> records(n);
  call.copy_to_host(records.data(), d_records, n * sizeof(Raw));
  return records;
}

/// The device labelings' common body: `label(d_temp, temp_bytes, d_count, d_records, capacity)`
/// calls the device API (with no storage it sizes it); N or None (read_count), or with `stats`
/// N always and the records of labels 1..N, each converted by `convert`, in *stats.
template <class Raw, class Stats, class Label, class Convert>
std::optional<std::uint64_t> label_on_device(DeviceCall& call, std::uint64_t voxels, bool read_count,
                                             std::vector<Stats>* stats, Label label, Convert convert) {
  std::size_t temp_bytes = 0;
  label(nullptr, temp_bytes, nullptr, nullptr, 0);
  void* d_temp = call.scratch(temp_bytes);
  auto run = [&](Raw* d_records, std::uint64_t capacity) {
    label(d_temp, temp_bytes, static_cast<std::uint32_t*>(call.count()), d_records, capacity);
  };
  if (!stats) {
    run(nullptr, 0);
    return call.read_count(read_count, 4);
  }
  const auto records = labeling_records<Raw>(call, voxels, run);
  stats->resize(records.size());
  std::transform(records.begin(), records.end(), stats->begin(), convert);
  return records.size();
}
#endif

/// CUDA volumes [z, y, x] of unsigned integers of `itemsize` bytes (contiguous): 32-bit labels
/// (contiguous) into `labels`; returns N or None. With `stats`, N always, and the statistics of
/// labels 1..N into *stats.
std::optional<std::uint64_t> run_label_volume_device(std::uintptr_t volume, std::size_t itemsize, std::int64_t nx,
                                                     std::int64_t ny, std::int64_t nz, std::uintptr_t labels,
                                                     int connectivity, bool multilabel, int device,
                                                     std::uintptr_t stream, bool read_count,
                                                     std::vector<VolumeComponentStats>* stats) {
#if WINNOW_HAVE_CUDA
  const cuda::DeviceLabelOptions options{.connectivity = connectivity, .multilabel = multilabel};
  return with_unsigned_of_width(dtype_of("u", itemsize), itemsize, "a", [&](auto t) -> std::optional<std::uint64_t> {
    using T = decltype(t);
    const VolumeView<const T> d_volume(reinterpret_cast<const T*>(volume), nx, ny, nz);
    auto* d_labels = reinterpret_cast<std::uint32_t*>(labels);
    nb::gil_scoped_release unlocked;
    DeviceCall call(device, stream);
    return label_on_device<cuda::RawVolumeComponentStats>(
        call, static_cast<std::uint64_t>(nx) * static_cast<std::uint64_t>(ny) * static_cast<std::uint64_t>(nz), read_count,
        stats,
        [&](void* d_temp, std::size_t& temp_bytes, std::uint32_t* d_count, cuda::RawVolumeComponentStats* d_records,
            std::uint64_t capacity) {
          cuda::label_volume(d_temp, temp_bytes, d_volume, d_labels, d_count, d_records, capacity, options,
                             call.stream());
        },
        cuda::to_volume_component_stats);
  });
#else
  (void)volume, (void)itemsize, (void)nx, (void)ny, (void)nz, (void)labels, (void)connectivity, (void)multilabel,
      (void)device, (void)stream, (void)read_count, (void)stats;
  throw BackendError("CUDA arrays need the CUDA backend, which this build does not have");
#endif
}

std::optional<std::uint64_t> label_volume_device(std::uintptr_t volume, std::size_t itemsize, std::int64_t nx,
                                                 std::int64_t ny, std::int64_t nz, std::uintptr_t labels,
                                                 int connectivity, bool multilabel, int device, std::uintptr_t stream,
                                                 bool read_count) {
  return run_label_volume_device(volume, itemsize, nx, ny, nz, labels, connectivity, multilabel, device, stream,
                                 read_count, nullptr);
}

/// label_volume_device with statistics: returns (N, stats as label_volume_host's).
nb::tuple label_volume_device_statistics(std::uintptr_t volume, std::size_t itemsize, std::int64_t nx,
                                         std::int64_t ny, std::int64_t nz, std::uintptr_t labels, int connectivity,
                                         bool multilabel, int device, std::uintptr_t stream) {
  std::vector<VolumeComponentStats> stats;
  const auto n = run_label_volume_device(volume, itemsize, nx, ny, nz, labels, connectivity, multilabel, device,
                                         stream, true, &stats);
  return nb::make_tuple(*n, volume_stats_rows(stats));
}

/// CUDA masks (bytes, width x height, rows `row_stride` bytes apart): labels (contiguous, 32-bit)
/// into `labels`; returns N or None. With `stats`, N always, and the statistics of labels 1..N.
std::optional<std::uint64_t> run_label_device(std::uintptr_t mask, std::int64_t width, std::int64_t height,
                                              std::int64_t row_stride, std::uintptr_t labels, int connectivity,
                                              int device, std::uintptr_t stream, bool read_count,
                                              std::vector<ComponentStats>* stats) {
#if WINNOW_HAVE_CUDA
  const cuda::DeviceLabelOptions options{.connectivity = connectivity};
  const ImageView<const std::uint8_t> d_mask(reinterpret_cast<const std::uint8_t*>(mask), width, height, row_stride);
  auto* d_labels = reinterpret_cast<std::uint32_t*>(labels);
  nb::gil_scoped_release unlocked;
  DeviceCall call(device, stream);
  return label_on_device<cuda::RawComponentStats>(
      call, static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(height), read_count, stats,
      [&](void* d_temp, std::size_t& temp_bytes, std::uint32_t* d_count, cuda::RawComponentStats* d_records,
          std::uint64_t capacity) {
        cuda::label(d_temp, temp_bytes, d_mask, d_labels, d_count, d_records, capacity, options, call.stream());
      },
      cuda::to_component_stats);
#else
  (void)mask, (void)width, (void)height, (void)row_stride, (void)labels, (void)connectivity, (void)device,
      (void)stream, (void)read_count, (void)stats;
  throw BackendError("CUDA arrays need the CUDA backend, which this build does not have");
#endif
}

std::optional<std::uint64_t> label_device(std::uintptr_t mask, std::int64_t width, std::int64_t height,
                                          std::int64_t row_stride, std::uintptr_t labels, int connectivity, int device,
                                          std::uintptr_t stream, bool read_count) {
  return run_label_device(mask, width, height, row_stride, labels, connectivity, device, stream, read_count, nullptr);
}

/// label_device with statistics: returns (N, stats as label_host's).
nb::tuple label_device_statistics(std::uintptr_t mask, std::int64_t width, std::int64_t height,
                                  std::int64_t row_stride, std::uintptr_t labels, int connectivity, int device,
                                  std::uintptr_t stream) {
  std::vector<ComponentStats> stats;
  const auto n = run_label_device(mask, width, height, row_stride, labels, connectivity, device, stream, true, &stats);
  return nb::make_tuple(*n, image_stats_rows(stats));
}

}  // namespace

void bind_label(nb::module_& m) {
  m.def("label_host", &label_host, nb::arg("a"), nb::arg("out"), nb::arg("connectivity"), nb::arg("min_area"),
        nb::arg("largest_k"), nb::arg("want_stats"), nb::arg("backend"),
        "Labels the non-zero pixels of a into out (uint32); returns (count, stats or None).");
  m.def("label_device", &label_device, nb::arg("a"), nb::arg("width"), nb::arg("height"), nb::arg("row_stride"),
        nb::arg("out"), nb::arg("connectivity"), nb::arg("device"), nb::arg("stream"), nb::arg("read_count"),
        "CUDA pointers (checked by the caller): labels of the byte mask a into out (32-bit) on the stream; returns "
        "N (waiting for the stream) when read_count, else None.");
  m.def("label_device_statistics", &label_device_statistics, nb::arg("a"), nb::arg("width"), nb::arg("height"),
        nb::arg("row_stride"), nb::arg("out"), nb::arg("connectivity"), nb::arg("device"), nb::arg("stream"),
        "label_device, also computing the statistics of labels 1..N on the device; returns (N, stats as "
        "label_host's), waiting for the stream.");
  m.def("label_volume_host", &label_volume_host, nb::arg("a"), nb::arg("connectivity"), nb::arg("multilabel"),
        nb::arg("min_area"), nb::arg("largest_k"), nb::arg("want_stats"), nb::arg("wide"), nb::arg("backend"),
        "Labels a host volume [z, y, x] of integers; returns (labels uint32 or uint64, count, stats or None).");
  m.def("label_volume_device", &label_volume_device, nb::arg("a"), nb::arg("itemsize"), nb::arg("nx"),
        nb::arg("ny"), nb::arg("nz"), nb::arg("out"), nb::arg("connectivity"), nb::arg("multilabel"),
        nb::arg("device"), nb::arg("stream"), nb::arg("read_count"),
        "CUDA pointers: labels of the contiguous volume a [z, y, x] (unsigned, itemsize bytes) into out (32-bit); "
        "returns N when read_count, else None.");
  m.def("label_volume_device_statistics", &label_volume_device_statistics, nb::arg("a"), nb::arg("itemsize"),
        nb::arg("nx"), nb::arg("ny"), nb::arg("nz"), nb::arg("out"), nb::arg("connectivity"), nb::arg("multilabel"),
        nb::arg("device"), nb::arg("stream"),
        "label_volume_device, also computing the statistics of labels 1..N on the device; returns (N, stats as "
        "label_volume_host's), waiting for the stream.");
  m.def("statistics_host", &statistics_host, nb::arg("labels"), nb::arg("background_only"),
        "Per-label (counts, lower zyx, upper zyx, centroids zyx) of a host label volume [z, y, x].");
}

}  // namespace winnow::python
