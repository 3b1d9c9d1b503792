// Statistics of label arrays for Python (winnow.statistics): the library's label_statistics
// (winnow/label_statistics.hpp) of host arrays, its device API (winnow/cuda/label_statistics.hpp)
// of CUDA arrays on the caller's stream, as cc3d.statistics' arrays (Cc3dArrays) plus the exact
// coordinate sums and, with an intensity image, each label's sum, mean, minimum and maximum; and
// the survivor rule of min_area and largest_k (surviving_labels), which the Python layer applies
// to device labelings; and a chunk's label summary on a device (chunk_label_summary_device, the
// device statistics with first voxels: winnow.dask's CuPy chunks; chunks.cpp has the host one). The Python layer checks
// types and layouts and wraps the arrays (winnow/statistics.py); the library checks the labels (InputError:
// ValueError).
#include "statistics.hpp"

#include <nanobind/stl/optional.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "device_calls.hpp"
#include "winnow/error.hpp"
#include "winnow/label_statistics.hpp"
#if WINNOW_HAVE_CUDA
#include "winnow/cuda/label_statistics.hpp"
#endif

namespace winnow::python {

// ---------------------------------------------------------------------------------------------
// cc3d's arrays

Cc3dArrays::Cc3dArrays(std::size_t m, std::size_t ndim, std::uint64_t voxels, std::int64_t side) : m_(m), ndim_(ndim) {
  count_bytes_ = voxels < (std::uint64_t{1} << 32) ? 4 : 8;
  box_bytes_ = side <= 0xFFFF ? 2 : side <= 0xFFFFFFFFll ? 4 : 8;
  if (count_bytes_ == 4) counts32_ = HostBuffer<std::uint32_t>(m);
  else counts64_ = HostBuffer<std::uint64_t>(m);
  const std::size_t box_values = m * 2 * ndim;
  if (box_bytes_ == 2) boxes16_ = HostBuffer<std::uint16_t>(box_values);
  else if (box_bytes_ == 4) boxes32_ = HostBuffer<std::uint32_t>(box_values);
  else boxes64_ = HostBuffer<std::uint64_t>(box_values);
  centroids_ = HostBuffer<double>(m * ndim);
}

namespace {
template <class B>
void write_box_end(B* row, std::size_t ndim, bool upper, bool empty, const std::array<std::int64_t, 3>& at) {
  for (std::size_t a = 0; a < ndim; ++a) {
    const std::size_t axis = ndim - 1 - a;  // array axis a is the library's axis ndim - 1 - a (x is last)
    if (upper) row[2 * a + 1] = empty ? B{0} : static_cast<B>(at[axis]);
    else row[2 * a] = empty ? std::numeric_limits<B>::max() : static_cast<B>(at[axis]);
  }
}
}  // namespace

void Cc3dArrays::set_count(std::size_t label, std::uint64_t count) {
  if (count_bytes_ == 4) counts32_[label] = static_cast<std::uint32_t>(count);
  else counts64_[label] = count;
}

void Cc3dArrays::set_box_end(std::size_t label, bool upper, const std::array<std::int64_t, 3>& at, bool empty) {
  const std::size_t row = label * 2 * ndim_;
  if (box_bytes_ == 2) write_box_end(boxes16_.data() + row, ndim_, upper, empty, at);
  else if (box_bytes_ == 4) write_box_end(boxes32_.data() + row, ndim_, upper, empty, at);
  else write_box_end(boxes64_.data() + row, ndim_, upper, empty, at);
}

void Cc3dArrays::set_centroid(std::size_t label, const std::array<double, 3>& centroid, bool empty) {
  for (std::size_t a = 0; a < ndim_; ++a)
    centroids_[label * ndim_ + a] = empty ? std::numeric_limits<double>::quiet_NaN() : centroid[ndim_ - 1 - a];
}

void Cc3dArrays::set(std::size_t label, std::uint64_t count, const std::array<std::int64_t, 3>& lower,
                     const std::array<std::int64_t, 3>& upper, const std::array<double, 3>& centroid) {
  const bool empty = count == 0;
  set_count(label, count);
  set_box_end(label, false, lower, empty);
  set_box_end(label, true, upper, empty);
  set_centroid(label, centroid, empty);
}

nb::tuple Cc3dArrays::release() {
  nb::object counts = count_bytes_ == 4 ? nb::cast(to_numpy(std::move(counts32_), {m_}))
                                        : nb::cast(to_numpy(std::move(counts64_), {m_}));
  nb::object boxes = box_bytes_ == 2   ? nb::cast(to_numpy(std::move(boxes16_), {m_, 2 * ndim_}))
                     : box_bytes_ == 4 ? nb::cast(to_numpy(std::move(boxes32_), {m_, 2 * ndim_}))
                                       : nb::cast(to_numpy(std::move(boxes64_), {m_, 2 * ndim_}));
  return nb::make_tuple(counts, boxes, nb::cast(to_numpy(std::move(centroids_), {m_, ndim_})));
}

std::int64_t largest_side(std::int64_t nx, std::int64_t ny, std::int64_t nz) { return std::max({nx, ny, nz}); }

namespace {

/// The raw statistics dict of cc3d's arrays (released here) and, unless None, the exact
/// coordinate sums.
nb::dict raw_dict(Cc3dArrays& arrays, nb::object coordinate_sums) {
  const nb::tuple cc3d = arrays.release();
  nb::dict out;
  out["voxel_counts"] = cc3d[0];
  out["bounding_boxes"] = cc3d[1];
  out["centroids"] = cc3d[2];
  if (!coordinate_sums.is_none()) out["coordinate_sums"] = coordinate_sums;
  return out;
}

/// cc3d's arrays of LabelStatistics, in a dict (the Python layer's raw form): voxel_counts,
/// bounding_boxes, centroids, and with `want_sums` coordinate_sums (uint64 [M, ndim], array-axis
/// order: the exact sums, for callers that add the statistics of pieces, such as chunks).
nb::dict statistics_dict(const LabelStatistics& s, std::size_t ndim, std::uint64_t voxels, std::int64_t side,
                         bool want_sums) {
  const std::size_t m = s.labels();
  Cc3dArrays arrays(m, ndim, voxels, side);
  std::vector<std::uint64_t> sums(want_sums ? m * ndim : 0);
  {
    nb::gil_scoped_release unlocked;
    const auto rows = static_cast<std::int64_t>(m);
#pragma omp parallel for schedule(static) if (rows > (1 << 16))
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const LabelRecord& record = s.records[i];
      const double n = static_cast<double>(record.voxels);
      const std::array<double, 3> centroid = {static_cast<double>(record.sums[0]) / n,
                                              static_cast<double>(record.sums[1]) / n,
                                              static_cast<double>(record.sums[2]) / n};
      arrays.set(i, record.voxels, record.lower, record.upper, centroid);
      if (want_sums)
        for (std::size_t a = 0; a < ndim; ++a) sums[i * ndim + a] = record.sums[ndim - 1 - a];
    }
  }
  return raw_dict(arrays, want_sums ? nb::object(nb::cast(to_numpy(std::move(sums), {m, ndim}))) : nb::none());
}

/// The intensity columns: sums (int64, uint64 or float64), means (float64; NaN without voxels),
/// minima and maxima (the values' dtype).
template <class V, class S>
void add_intensity(nb::dict& out, const S& s) {
  const std::size_t m = s.labels();
  std::vector<double> means(m);
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint64_t n = s.records[i].voxels;
    means[i] = n ? static_cast<double>(s.sum[i]) / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
  }
  auto sum = s.sum;
  auto minimum = s.minimum, maximum = s.maximum;
  out["intensity_sum"] = to_numpy(std::move(sum), {m});
  out["intensity_mean"] = to_numpy(std::move(means), {m});
  out["intensity_min"] = to_numpy(std::move(minimum), {m});
  out["intensity_max"] = to_numpy(std::move(maximum), {m});
}

/// Host labels [z, y, x] (a 2D array is one slice; `ndim` says which), any integer dtype, with an
/// optional intensity array of the same shape: the raw statistics dict of labels 0..M-1 (M:
/// `labels_count`, or the largest label + 1 when 0; 1 with `background_only`).
nb::dict label_statistics_host(const Array& labels, std::optional<Array> intensity, std::size_t ndim,
                               std::uint64_t labels_count, bool background_only, bool coordinate_sums) {
  require_device(labels, false, "labels");
  const LabelStatisticsOptions options{.labels = labels_count, .background_only = background_only};
  const auto nz = static_cast<std::int64_t>(labels.shape(0)), ny = static_cast<std::int64_t>(labels.shape(1)),
             nx = static_cast<std::int64_t>(labels.shape(2));
  const std::uint64_t voxels = static_cast<std::uint64_t>(nx * ny * nz);
  const std::int64_t side = ndim == 3 ? largest_side(nx, ny, nz) : largest_side(nx, ny, 1);
  return with_integer_type(labels.dtype(), "labels", [&](auto l) -> nb::dict {
    using L = decltype(l);
    const VolumeView<const L> view = host_volume<L>(labels, "labels");
    if (!intensity) {
      LabelStatistics s;
      {
        nb::gil_scoped_release unlocked;
        s = label_statistics(view, options);
      }
      return statistics_dict(s, ndim, voxels, side, coordinate_sums);
    }
    require_device(*intensity, false, "intensity");
    return with_numeric_type(*intensity, true, "intensity", [&](auto v) -> nb::dict {
      using V = decltype(v);
      const VolumeView<const V> values = host_volume<V>(*intensity, "intensity");
      LabelIntensityStatistics<V> s;
      {
        nb::gil_scoped_release unlocked;
        s = label_statistics(view, values, options);
      }
      nb::dict out = statistics_dict(s, ndim, voxels, side, coordinate_sums);
      add_intensity<V>(out, s);
      return out;
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Device arrays

/// A device array [z, y, x] (a 2D one is one slice) as a volume view of T.
template <class T>
VolumeView<const T> device_volume(const DeviceArray& a, const char* what) {
  const std::size_t d = a.ndim();
  if (d != 2 && d != 3) throw nb::value_error((std::string(what) + ": expected 2 or 3 dimensions").c_str());
  const std::int64_t nz = d == 3 ? a.shape[0] : 1, ny = a.shape[d - 2], nx = a.shape[d - 1];
  if (nx > 1 && a.strides[d - 1] != 1)
    throw nb::value_error((std::string(what) + ": expected the last axis adjacent in memory").c_str());
  const std::int64_t rs = ny > 1 ? a.strides[d - 2] : nx, ss = d == 3 && nz > 1 ? a.strides[0] : rs * ny;
  if (rs < 0 || ss < 0) throw nb::value_error((std::string(what) + ": expected non-negative strides").c_str());
  return VolumeView<const T>(a.data<const T>(), nx, ny, nz, rs, ss);
}

#if WINNOW_HAVE_CUDA
/// Unsigned of a width: the device API reads labels as unsigned bits.
template <class F>
decltype(auto) with_unsigned_labels(const DeviceArray& a, F&& f) {
  if (a.kind != 'u' && a.kind != 'i' && a.kind != 'b') throw nb::type_error("labels: expected an integer dtype");
  switch (a.itemsize) {
    case 1: return f(std::uint8_t{});
    case 2: return f(std::uint16_t{});
    case 4: return f(std::uint32_t{});
    case 8: return f(std::uint64_t{});
  }
  throw nb::type_error("labels: expected integers of 8, 16, 32 or 64 bits");
}

constexpr std::size_t align16(std::size_t bytes) { return (bytes + 15) / 16 * 16; }

/// The device statistics of labels 0..rows-1 in one block of device memory: the device API's
/// columns (x, y, z order), each label's first voxel on request, and the intensity columns;
/// copied to the host whole when `read_whole` (else the caller reads the columns it needs). A
/// label of M or more is refused here (InputError), after the call's work.
struct DeviceColumns {
  std::size_t rows = 0;
  std::size_t voxels_at = 0, first_at = 0, lower_at = 0, upper_at = 0, sums_at = 0, sum_at = 0, min_at = 0, max_at = 0;
  const std::uint8_t* device = nullptr;  // the block on the device
  HostBuffer<std::uint8_t> host;         // its copy, when read whole

  template <class T>
  const T* at(std::size_t offset) const {
    return reinterpret_cast<const T*>(host.data() + offset);
  }
  const std::uint64_t* voxels() const { return at<std::uint64_t>(voxels_at); }
  const std::uint64_t* first() const { return at<std::uint64_t>(first_at); }
  const std::int64_t* lower() const { return at<std::int64_t>(lower_at); }
  const std::int64_t* upper() const { return at<std::int64_t>(upper_at); }
  const std::uint64_t* sums() const { return at<std::uint64_t>(sums_at); }
};

template <class L, class V, bool kIntensity>
DeviceColumns device_statistics(DeviceCall& call, const DeviceArray& labels, const DeviceArray* intensity,
                                std::uint64_t m, bool background_only, bool is_signed, bool want_first,
                                bool read_whole = true) {
  const VolumeView<const L> view = device_volume<L>(labels, "labels");
  VolumeView<const V> values;
  if constexpr (kIntensity) {
    values = device_volume<V>(*intensity, "intensity");
    if (values.nx != view.nx || values.ny != view.ny || values.nz != view.nz)
      throw nb::value_error("intensity: expected the shape of labels");
  }
  DeviceColumns c;
  const std::size_t rows = c.rows = background_only ? 1 : m;
  // One block of device memory for every output, one copy back.
  c.voxels_at = 0;
  c.first_at = align16(c.voxels_at + rows * 8);
  c.lower_at = align16(c.first_at + (want_first ? rows * 8 : 0));
  c.upper_at = align16(c.lower_at + rows * 24);
  c.sums_at = align16(c.upper_at + rows * 24);
  c.sum_at = align16(c.sums_at + rows * 24);
  c.min_at = align16(c.sum_at + (kIntensity ? rows * 8 : 0));
  c.max_at = align16(c.min_at + (kIntensity ? rows * sizeof(V) : 0));
  const std::size_t beyond_at = align16(c.max_at + (kIntensity ? rows * sizeof(V) : 0)), total = beyond_at + 16;
  auto* base = static_cast<std::uint8_t*>(call.records(total));
  c.device = base;
  cuda::DeviceLabelStatistics out;
  out.d_voxels = reinterpret_cast<std::uint64_t*>(base + c.voxels_at);
  if (want_first) out.d_first = reinterpret_cast<std::uint64_t*>(base + c.first_at);
  out.d_lower = reinterpret_cast<std::int64_t*>(base + c.lower_at);
  out.d_upper = reinterpret_cast<std::int64_t*>(base + c.upper_at);
  out.d_sums = reinterpret_cast<std::uint64_t*>(base + c.sums_at);
  out.d_beyond = reinterpret_cast<std::uint64_t*>(base + beyond_at);
  std::size_t temp_bytes = 0;
  if constexpr (kIntensity) {
    out.d_intensity_sum = base + c.sum_at;
    out.d_minimum = base + c.min_at;
    out.d_maximum = base + c.max_at;
    cuda::label_statistics(nullptr, temp_bytes, view, values, m, background_only, out, call.stream());
    cuda::label_statistics(call.scratch(temp_bytes), temp_bytes, view, values, m, background_only, out, call.stream());
  } else {
    cuda::label_statistics(nullptr, temp_bytes, view, m, background_only, out, call.stream());
    cuda::label_statistics(call.scratch(temp_bytes), temp_bytes, view, m, background_only, out, call.stream());
  }
  std::uint64_t beyond[2];
  if (read_whole) {
    c.host = HostBuffer<std::uint8_t>(total);
    call.copy_to_host(c.host.data(), base, total);
    std::memcpy(beyond, c.host.data() + beyond_at, 16);
  } else {
    call.copy_to_host(beyond, base + beyond_at, 16);
  }
  if (beyond[0]) {
    const bool negative = is_signed && (beyond[1] >> (sizeof(L) * 8 - 1)) != 0;
    throw InputError(negative ? std::string("labels: expected non-negative labels")
                              : "labels: label " + std::to_string(beyond[1]) + " is not below the number of labels, " +
                                    std::to_string(m));
  }
  return c;
}

/// Fills `arrays` (rows c.rows) and, when `sums` has rows, the coordinate sums (array-axis order)
/// from device columns, a column at a time through the call's pinned blocks, each block converted
/// (OpenMP) while the next one copies: no intermediate copy of the rows.
void read_device_columns(DeviceCall& call, const DeviceColumns& c, std::size_t ndim, Cc3dArrays& arrays,
                         HostBuffer<std::uint64_t>& sums) {
  HostBuffer<std::uint64_t> voxels(c.rows);
  auto each = [&](std::size_t at, std::size_t row_bytes, auto&& convert) {
    call.read_in_blocks(
        c.device + at, c.rows * row_bytes, row_bytes, [&](const void* host, std::size_t offset, std::size_t bytes) {
          const auto before = static_cast<std::int64_t>(offset / row_bytes),
                     count = static_cast<std::int64_t>(bytes / row_bytes);
#pragma omp parallel for schedule(static) if (count > (1 << 14))
          for (std::int64_t i = 0; i < count; ++i)
            convert(static_cast<std::size_t>(before + i), static_cast<const std::uint8_t*>(host) + i * row_bytes);
        });
  };
  each(c.voxels_at, 8, [&](std::size_t i, const std::uint8_t* row) {
    std::memcpy(&voxels[i], row, 8);
    arrays.set_count(i, voxels[i]);
  });
  for (const bool upper : {false, true})
    each(upper ? c.upper_at : c.lower_at, 24, [&](std::size_t i, const std::uint8_t* row) {
      std::array<std::int64_t, 3> at;
      std::memcpy(at.data(), row, 24);
      arrays.set_box_end(i, upper, at, voxels[i] == 0);
    });
  each(c.sums_at, 24, [&](std::size_t i, const std::uint8_t* row) {
    std::array<std::uint64_t, 3> sum;
    std::memcpy(sum.data(), row, 24);
    const double n = static_cast<double>(voxels[i]);
    arrays.set_centroid(
        i, {static_cast<double>(sum[0]) / n, static_cast<double>(sum[1]) / n, static_cast<double>(sum[2]) / n},
        voxels[i] == 0);
    if (sums.size())
      for (std::size_t a = 0; a < ndim; ++a) sums[i * ndim + a] = sum[ndim - 1 - a];
  });
}

/// The host API's form of device columns with intensity (LabelStatistics and the intensity
/// columns), from columns read whole.
template <class V>
struct HostColumns {
  LabelStatistics base;
  std::vector<IntensitySum<V>> sum;
  std::vector<V> minimum, maximum;
};

template <class V>
HostColumns<V> host_columns(const DeviceColumns& c) {
  HostColumns<V> h;
  const std::size_t rows = c.rows;
  h.base.records.resize(rows);
  const std::uint64_t* voxels = c.voxels();
  const std::int64_t *lower = c.lower(), *upper = c.upper();
  const std::uint64_t* sums = c.sums();
#pragma omp parallel for schedule(static) if (rows > (1 << 16))
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(rows); ++r) {
    const auto i = static_cast<std::size_t>(r);
    LabelRecord& record = h.base.records[i];
    record.voxels = voxels[i];
    for (int d = 0; d < 3; ++d)
      record.lower[d] = lower[i * 3 + d], record.upper[d] = upper[i * 3 + d], record.sums[d] = sums[i * 3 + d];
  }
  h.sum.resize(rows);
  h.minimum.resize(rows);
  h.maximum.resize(rows);
  std::memcpy(h.sum.data(), c.host.data() + c.sum_at, rows * 8);
  std::memcpy(h.minimum.data(), c.host.data() + c.min_at, rows * sizeof(V));
  std::memcpy(h.maximum.data(), c.host.data() + c.max_at, rows * sizeof(V));
  return h;
}
#endif

/// Device labels (CuPy, PyTorch), any integer dtype, 2D or 3D, with an optional intensity array:
/// the raw statistics dict of labels 0..M-1 as label_statistics_host gives it, computed on the
/// device on the array's stream (M: `labels_count`, which the Python layer reads with a reduction;
/// 1 with `background_only`). Waits for the stream.
nb::dict label_statistics_device(const DeviceArray& labels, std::optional<DeviceArray> intensity,
                                 std::uint64_t labels_count, bool background_only, bool coordinate_sums) {
#if WINNOW_HAVE_CUDA
  if (labels_count == 0 && !background_only) throw nb::value_error("labels_count: expected at least 1");
  const std::size_t ndim = labels.ndim();
  const std::int64_t nz = ndim == 3 ? labels.shape[0] : 1, ny = labels.shape[ndim - 2], nx = labels.shape[ndim - 1];
  const auto voxels = static_cast<std::uint64_t>(nx * ny * nz);
  const std::int64_t side = ndim == 3 ? largest_side(nx, ny, nz) : largest_side(nx, ny, 1);
  const bool is_signed = labels.kind == 'i';
  return with_unsigned_labels(labels, [&](auto l) -> nb::dict {
    using L = decltype(l);
    if (!intensity) {
      std::optional<Cc3dArrays> arrays;
      HostBuffer<std::uint64_t> sums;
      {
        nb::gil_scoped_release unlocked;
        DeviceCall call(labels.device, labels.stream);
        const DeviceColumns c = device_statistics<L, std::uint8_t, false>(call, labels, nullptr, labels_count,
                                                                          background_only, is_signed, false, false);
        arrays.emplace(c.rows, ndim, voxels, side);
        if (coordinate_sums) sums = HostBuffer<std::uint64_t>(c.rows * ndim);
        read_device_columns(call, c, ndim, *arrays, sums);
      }
      const std::size_t m = arrays->rows();
      return raw_dict(*arrays,
                      coordinate_sums ? nb::object(nb::cast(to_numpy(std::move(sums), {m, ndim}))) : nb::none());
    }
    return with_numeric_type(intensity->dtype(), true, "intensity", [&](auto v) -> nb::dict {
      using V = decltype(v);
      HostColumns<V> c;
      {
        nb::gil_scoped_release unlocked;
        DeviceCall call(labels.device, labels.stream);
        c = host_columns<V>(
            device_statistics<L, V, true>(call, labels, &*intensity, labels_count, background_only, is_signed, false));
      }
      nb::dict out = statistics_dict(c.base, ndim, voxels, side, coordinate_sums);
      LabelIntensityStatistics<V> s;
      static_cast<LabelStatistics&>(s) = std::move(c.base);
      s.sum = std::move(c.sum);
      s.minimum = std::move(c.minimum);
      s.maximum = std::move(c.maximum);
      add_intensity<V>(out, s);
      return out;
    });
  });
#else
  (void)labels, (void)intensity, (void)labels_count, (void)background_only, (void)coordinate_sums;
  throw BackendError("CUDA arrays need the CUDA backend, which this build does not have");
#endif
}

/// chunk_label_summary (winnow/label_chunks.hpp) of a chunk's labels on a device (32- or 64-bit,
/// [z, y, x]), from the device statistics with first voxels, on the array's stream: the same
/// tuple as the host binding (first int64 [N + 1] with first[0] = -1; voxels uint64 or None;
/// lower, upper int64 [N + 1, 3] and sums uint64 [N + 1, 3], axes z, y, x, or None), and the
/// same refusals (a label beyond the count, labels not numbered in raster order of their first
/// voxels, a label of 1..count missing). Waits for the stream.
nb::tuple chunk_label_summary_device(const DeviceArray& labels, std::uint64_t count, bool counts, bool boxes_and_sums) {
#if WINNOW_HAVE_CUDA
  if (labels.ndim() != 3) throw nb::value_error("labels: expected 3 dimensions");
  if ((labels.kind != 'u' && labels.kind != 'i') || (labels.itemsize != 4 && labels.itemsize != 8))
    throw nb::type_error("labels: expected 32- or 64-bit integer labels");
  if (count > static_cast<std::uint64_t>(labels.size()))
    throw InputError("chunk_label_summary: count " + std::to_string(count) + " exceeds the chunk's " +
                     std::to_string(labels.size()) + " voxels");
  const std::size_t rows = static_cast<std::size_t>(count) + 1;
  HostBuffer<std::int64_t> first(rows), lower, upper;
  HostBuffer<std::uint64_t> voxels, sums;
  const bool want_voxels = counts || boxes_and_sums;
  if (want_voxels) voxels = HostBuffer<std::uint64_t>(rows);
  if (boxes_and_sums) {
    lower = HostBuffer<std::int64_t>(rows * 3), upper = HostBuffer<std::int64_t>(rows * 3);
    sums = HostBuffer<std::uint64_t>(rows * 3);
  }
  {
    nb::gil_scoped_release unlocked;
    DeviceCall call(labels.device, labels.stream);
    const DeviceColumns c = with_unsigned_labels(labels, [&](auto l) {
      using L = decltype(l);
      return device_statistics<L, std::uint8_t, false>(call, labels, nullptr, rows, false, labels.kind == 'i', true);
    });
    // Labels numbered in raster order of their first voxels have increasing first voxels.
    const std::uint64_t* at = c.first();
    first[0] = -1;
    for (std::size_t k = 1; k < rows; ++k) {
      if (at[k] == std::numeric_limits<std::uint64_t>::max())
        throw InputError("chunk_label_summary: labels 1.." + std::to_string(count) + " expected, label " +
                         std::to_string(k) + " is missing");
      if (k > 1 && at[k] < at[k - 1])
        throw InputError("chunk_label_summary: label " + std::to_string(k) + " comes before label " +
                         std::to_string(k - 1) + " (labels not numbered in raster order of their first voxels)");
      first[k] = static_cast<std::int64_t>(at[k]);
    }
    if (want_voxels) std::memcpy(voxels.data(), c.voxels(), rows * 8);
    if (boxes_and_sums) {
      const std::int64_t *low = c.lower(), *high = c.upper();
      const std::uint64_t* sum = c.sums();
#pragma omp parallel for schedule(static) if (rows > (1 << 16))
      for (std::int64_t r = 0; r < static_cast<std::int64_t>(rows); ++r)
        for (std::size_t d = 0; d < 3; ++d) {  // device columns x, y, z; the summary's z, y, x
          const std::size_t to = static_cast<std::size_t>(r) * 3 + d, from = static_cast<std::size_t>(r) * 3 + 2 - d;
          lower[to] = low[from], upper[to] = high[from], sums[to] = sum[from];
        }
    }
  }
  nb::object voxels_out = want_voxels ? nb::object(nb::cast(to_numpy(std::move(voxels), {rows}))) : nb::none();
  if (!boxes_and_sums)
    return nb::make_tuple(to_numpy(std::move(first), {rows}), voxels_out, nb::none(), nb::none(), nb::none());
  return nb::make_tuple(to_numpy(std::move(first), {rows}), voxels_out, to_numpy(std::move(lower), {rows, 3}),
                        to_numpy(std::move(upper), {rows, 3}), to_numpy(std::move(sums), {rows, 3}));
#else
  (void)labels, (void)count, (void)counts, (void)boxes_and_sums;
  throw BackendError("CUDA arrays need the CUDA backend, which this build does not have");
#endif
}

/// The survivor rule over sizes[0..N] (sizes[0], the background's, ignored): (map [N + 1] of
/// old label -> new label, 0 removed, as uint32 below 2^32 labels, else uint64; the number kept).
nb::tuple surviving_labels_of(const nb::ndarray<const std::uint64_t, nb::ndim<1>, nb::c_contig>& sizes,
                              std::uint64_t min_area, std::uint64_t largest_k) {
  std::vector<std::uint64_t> map;
  std::uint64_t kept = 0;
  const std::span<const std::uint64_t> view(sizes.data(), sizes.shape(0));
  {
    nb::gil_scoped_release unlocked;
    kept = surviving_labels(view, min_area, largest_k, map);
  }
  const std::size_t n = map.size();
  if (n < (std::uint64_t{1} << 32)) {
    std::vector<std::uint32_t> narrow(map.begin(), map.end());
    return nb::make_tuple(to_numpy(std::move(narrow), {n}), kept);
  }
  return nb::make_tuple(to_numpy(std::move(map), {n}), kept);
}

}  // namespace

void bind_statistics(nb::module_& m) {
  m.def("label_statistics_host", &label_statistics_host, nb::arg("labels"), nb::arg("intensity").none(),
        nb::arg("ndim"), nb::arg("labels_count"), nb::arg("background_only"), nb::arg("coordinate_sums") = false,
        "Statistics of a host label volume [z, y, x] (a 2D array as one slice; ndim says which) and an optional "
        "intensity array: a dict of voxel_counts, bounding_boxes (cc3d's array form), centroids, with "
        "coordinate_sums the exact sums of the voxels' indices (uint64 [M, ndim]), and with intensity "
        "intensity_sum, intensity_mean, intensity_min, intensity_max; labels 0..M-1 (M: labels_count, or the "
        "largest label + 1 when 0; 1 with background_only).");
  m.def("label_statistics_device", &label_statistics_device, nb::arg("labels"), nb::arg("intensity").none(),
        nb::arg("labels_count"), nb::arg("background_only"), nb::arg("coordinate_sums") = false,
        "label_statistics_host of device arrays (DeviceArray), computed on the device on the array's stream; "
        "labels_count (M) is required. Waits for the stream.");
  m.def("chunk_label_summary_device", &chunk_label_summary_device, nb::arg("labels"), nb::arg("count"),
        nb::arg("counts"), nb::arg("boxes_and_sums"),
        "chunk_label_summary of a chunk's labels on a device (DeviceArray), computed on the device on the array's "
        "stream: the same tuple of host arrays. Waits for the stream.");
  m.def("surviving_labels", &surviving_labels_of, nb::arg("sizes"), nb::arg("min_area"), nb::arg("largest_k"),
        "The survivor rule of min_area then largest_k over sizes[1..N]: (map old label -> new label, number kept).");
}

}  // namespace winnow::python
