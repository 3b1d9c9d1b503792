// Labeling in chunks for Python (winnow.dask): the per-chunk pieces of label_chunks.hpp on host
// arrays, and the OpenMP thread count of the calling thread (a chunked labeling runs many chunk
// labelings at once, one per worker thread, each on a few threads instead of every core).
// - chunk_label_summary: first voxels, counts and (on request) boxes and exact coordinate sums of
//   a chunk's labels [z, y, x] (uint32 or uint64), as NumPy arrays indexed by label.
// - chunk_border_pairs: the distinct label pairs that touch across two chunks' facing borders.
// - relabel_chunk: a chunk's final labels through its table, into an array the caller allocated.
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <omp.h>

#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "winnow/label_chunks.hpp"

namespace winnow::python {
namespace {

/// A host array as a volume view (volume_view's layout checks, after the device check): read-only
/// from an Array, writable (T not const) from an OutArray.
template <class T, class A>
VolumeView<T> host_chunk(const A& a, const char* what) {
  require_device(a, false, what);
  return volume_view<T>(a, what);
}

bool is_unsigned_or_signed(const Array& a) {
  const auto code = a.dtype().code;
  return code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt) ||
         code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int);
}

/// Calls f(L{}) with L the label type of `labels`: 32- or 64-bit integers (read unsigned).
template <class F>
decltype(auto) with_label_type(const Array& labels, const char* what, F&& f) {
  if (is_unsigned_or_signed(labels)) {
    if (labels.itemsize() == 4) return f(std::uint32_t{});
    if (labels.itemsize() == 8) return f(std::uint64_t{});
  }
  throw nb::type_error((std::string(what) + ": expected 32- or 64-bit integer labels").c_str());
}

/// Returns (first int64 [N + 1], voxels uint64 [N + 1] or None, lower int64 [N + 1, 3] or None,
/// upper, sums uint64 [N + 1, 3] or None), row 0 the background's, axes z, y, x.
nb::tuple chunk_label_summary(const Array& labels, std::uint64_t count, bool counts, bool boxes_and_sums) {
  ChunkLabelSummary s = with_label_type(labels, "labels", [&](auto t) {
    using L = decltype(t);
    const VolumeView<const L> view = host_chunk<const L>(labels, "labels");
    nb::gil_scoped_release unlocked;
    return winnow::chunk_label_summary(view, count, {.counts = counts, .boxes_and_sums = boxes_and_sums});
  });
  const std::size_t rows = static_cast<std::size_t>(s.count) + 1;
  if (!boxes_and_sums) {
    nb::object voxels = counts ? nb::object(nb::cast(to_numpy(std::move(s.voxels), {rows}))) : nb::none();
    return nb::make_tuple(to_numpy(std::move(s.first), {rows}), voxels, nb::none(), nb::none(), nb::none());
  }
  return nb::make_tuple(to_numpy(std::move(s.first), {rows}), to_numpy(std::move(s.voxels), {rows}),
                        to_numpy(std::move(s.lower), {rows, 3}), to_numpy(std::move(s.upper), {rows, 3}),
                        to_numpy(std::move(s.sums), {rows, 3}));
}

/// Returns the distinct pairs (near label, far label) as uint64 [P, 2], sorted.
nb::ndarray<nb::numpy, std::uint64_t> chunk_border_pairs(const Array& near, const Array& far,
                                                         std::optional<Array> near_values,
                                                         std::optional<Array> far_values, std::array<bool, 3> across,
                                                         int connectivity) {
  if (near.dtype() != far.dtype()) throw nb::type_error("far: expected the dtype of near");
  if (near_values.has_value() != far_values.has_value())
    throw nb::value_error("near_values, far_values: expected both or neither");
  const ChunkBorder border{.across = {across[0], across[1], across[2]}, .connectivity = connectivity};
  std::vector<std::uint64_t> pairs = with_label_type(near, "near", [&](auto t) {
    using L = decltype(t);
    const VolumeView<const L> a = host_chunk<const L>(near, "near"), b = host_chunk<const L>(far, "far");
    auto run = [&](auto v) {
      using V = decltype(v);
      VolumeView<const V> va, vb;
      if (near_values) {
        if (near_values->itemsize() != sizeof(V) || far_values->itemsize() != sizeof(V))
          throw nb::type_error("near_values, far_values: expected one dtype width");
        va = host_chunk<const V>(*near_values, "near_values"), vb = host_chunk<const V>(*far_values, "far_values");
      }
      nb::gil_scoped_release unlocked;
      return winnow::chunk_border_pairs(a, b, va, vb, border);
    };
    switch (near_values ? near_values->itemsize() : 1) {
      case 1: return run(std::uint8_t{});
      case 2: return run(std::uint16_t{});
      case 4: return run(std::uint32_t{});
      case 8: return run(std::uint64_t{});
    }
    throw nb::type_error("near_values: expected elements of 1, 2, 4 or 8 bytes");
  });
  const std::size_t n = pairs.size() / 2;
  return to_numpy(std::move(pairs), {n, 2});
}

/// out = table[labels]: labels [z, y, x] (32- or 64-bit integers), table [N] (32- or 64-bit,
/// contiguous), out [z, y, x] of the labels' size and the table's width; all host memory.
void relabel_chunk(const Array& labels, const Array& table, const OutArray& out) {
  require_device(table, false, "table");
  require_ndim(table, 1, "table");
  require_c_contiguous(table, "table");
  with_label_type(labels, "labels", [&](auto l) {
    using L = decltype(l);
    const VolumeView<const L> in = host_chunk<const L>(labels, "labels");
    auto run = [&](auto e) {
      using T = decltype(e);
      require_integer_bytes(out, sizeof(T), "out");
      const VolumeView<T> to = host_chunk<T>(out, "out");
      const std::span<const T> entries(static_cast<const T*>(table.data()), table.shape(0));
      nb::gil_scoped_release unlocked;
      winnow::relabel_chunk(in, entries, to);
    };
    if (is_unsigned_or_signed(table) && table.itemsize() == 4) return run(std::uint32_t{});
    if (is_unsigned_or_signed(table) && table.itemsize() == 8) return run(std::uint64_t{});
    throw nb::type_error("table: expected 32- or 64-bit integers");
  });
}

/// Sets the OpenMP thread count of the calling thread's later parallel regions (winnow's CPU
/// work on that thread); returns the previous count.
int set_cpu_threads_of_calling_thread(int threads) {
  if (threads < 1) throw nb::value_error("threads: expected a positive count");
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  return before;
}

}  // namespace

void bind_chunks(nb::module_& m) {
  m.def("chunk_label_summary", &chunk_label_summary, nb::arg("labels"), nb::arg("count"), nb::arg("counts"),
        nb::arg("boxes_and_sums"),
        "Per label 0..count of a chunk's labels [z, y, x]: (first voxel's flat index, voxels, lower zyx, upper zyx, "
        "coordinate sums zyx); voxels None unless counts or boxes_and_sums, the last three None unless "
        "boxes_and_sums.");
  m.def("chunk_border_pairs", &chunk_border_pairs, nb::arg("near"), nb::arg("far"), nb::arg("near_values").none(),
        nb::arg("far_values").none(), nb::arg("across"), nb::arg("connectivity"),
        "The distinct (near, far) label pairs of touching voxels of two facing chunk borders [z, y, x], as uint64 "
        "[P, 2]; across: the axes (z, y, x) along which the chunks are neighbours.");
  m.def("relabel_chunk", &relabel_chunk, nb::arg("labels"), nb::arg("table"), nb::arg("out"),
        "out = table[labels] for a chunk's labels [z, y, x] (32- or 64-bit integers) and its table (32- or 64-bit), "
        "out of the labels' size and the table's width; a label without an entry raises ValueError.");
  m.def("set_cpu_threads_of_calling_thread", &set_cpu_threads_of_calling_thread, nb::arg("threads"),
        "Sets the OpenMP thread count of the calling thread's later CPU work; returns the previous count.");
}

}  // namespace winnow::python
