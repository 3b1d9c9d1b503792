// Connected-component labeling of 2D images for Python (winnow.label). Host arrays through the
// host API winnow::label_into (any backend; labels written into the caller's array, statistics
// on request); CUDA arrays through the device API winnow::cuda::label on the caller's stream,
// into labels, count and temporary storage the Python layer allocated with the caller's library.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string_view.h>

#include <optional>

#include "arrays.hpp"
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

/// Returns (count, stats): stats None, or (int64 [N, 5] area, left, top, width, height;
/// float64 [N, 2] centroid x, y) of labels 1..N.
nb::tuple label_host(const Array& mask, const OutArray& labels, int connectivity, std::uint64_t min_area,
                     bool want_stats, std::string_view backend) {
  check_mask(mask, false);
  check_labels(mask, labels, false);
  LabelOptions options{.connectivity = connectivity, .min_area = min_area, .want_stats = want_stats,
                       .backend = backend_from(backend)};
  const std::int64_t width = mask.shape(1), height = mask.shape(0);
  ImageView<const std::uint8_t> in(static_cast<const std::uint8_t*>(mask.data()), width, height, row_stride(mask));
  ImageView<std::uint32_t> out(static_cast<std::uint32_t*>(labels.data()), width, height, width);
  Labeling result;
  {
    nb::gil_scoped_release unlocked;
    result = label_into(in, out, options);
  }
  if (!want_stats) return nb::make_tuple(result.count, nb::none());
  const std::size_t n = result.stats.size();
  std::vector<std::int64_t> boxes(n * 5);
  std::vector<double> centroids(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    const ComponentStats& s = result.stats[i];
    const std::int64_t row[5] = {static_cast<std::int64_t>(s.area), s.left, s.top, s.width, s.height};
    std::copy(row, row + 5, boxes.begin() + i * 5);
    centroids[i * 2] = s.cx;
    centroids[i * 2 + 1] = s.cy;
  }
  return nb::make_tuple(result.count, nb::make_tuple(to_numpy(std::move(boxes), {n, 5}),
                                                     to_numpy(std::move(centroids), {n, 2})));
}

/// CUDA arrays: labels into `out`, N into count[0]; returns the temporary bytes (sizes only
/// when temp is None).
std::size_t label_device(const std::optional<OutArray>& temp, const Array& mask, const OutArray& labels,
                         const OutArray& count, int connectivity, std::uintptr_t stream) {
  check_mask(mask, true);
  check_labels(mask, labels, true);
  require_device(count, true, "count");
  require_integer_bytes(count, 4, "count");
  if (count.size() != 1) throw nb::value_error("count: expected one element");
#if WINNOW_HAVE_CUDA
  void* d_temp = nullptr;
  std::size_t temp_bytes = 0;
  if (temp) {
    require_device(*temp, true, "temp");
    d_temp = temp->data();
    temp_bytes = temp->nbytes();
  }
  const LabelOptions options{.connectivity = connectivity, .want_stats = false};
  nb::gil_scoped_release unlocked;
  cuda::label(d_temp, temp_bytes, static_cast<const std::uint8_t*>(mask.data()), mask.shape(1), mask.shape(0),
              row_stride(mask), static_cast<std::uint32_t*>(labels.data()), static_cast<std::uint32_t*>(count.data()),
              nullptr, 0, options, stream_from(stream));
  return temp_bytes;
#else
  (void)temp, (void)connectivity, (void)stream;
  throw BackendError("CUDA arrays need the CUDA backend, which this build does not have");
#endif
}

}  // namespace

void bind_label(nb::module_& m) {
  m.def("label_host", &label_host, nb::arg("a"), nb::arg("out"), nb::arg("connectivity"), nb::arg("min_area"),
        nb::arg("want_stats"), nb::arg("backend"),
        "Labels the non-zero pixels of a into out (uint32); returns (count, stats or None).");
  m.def("label_device", &label_device, nb::arg("temp").none(), nb::arg("a"), nb::arg("out"), nb::arg("count"),
        nb::arg("connectivity"), nb::arg("stream"),
        "CUDA arrays: labels into out, the count into count[0], on the stream; returns the temporary bytes.");
}

}  // namespace winnow::python
