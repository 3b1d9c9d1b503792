// Stream compaction for Python: winnow.compact (a[mask]), winnow.select (fused predicate) and
// winnow.flatnonzero. Host arrays go through the host API (winnow/compact.hpp, any backend);
// CUDA arrays through the device API (winnow/cuda/compact.hpp) on the caller's stream, with the
// output, the count and the temporary storage allocated by the caller's array library (the
// Python layer): each device function sizes its temporary storage when `temp` is None, and
// runs when it is given, returning the bytes it needs either way.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string_view.h>

#include <optional>
#include <span>
#include <type_traits>

#include "arrays.hpp"
#include "winnow/compact.hpp"
#include "winnow/error.hpp"
#if WINNOW_HAVE_CUDA
#include "winnow/cuda/compact.hpp"
#endif

namespace winnow::python {
namespace {

CompactOptions options_for(bool stable, std::string_view backend) {
  return CompactOptions{.order = stable ? Order::stable : Order::any, .backend = backend_from(backend)};
}

/// Checks shared by every form: `a` 1-D and C-contiguous where `cuda` says, `out` likewise with room for all.
void check_input_output(const Array& a, const OutArray& out, bool cuda, std::size_t out_itemsize) {
  require_device(a, cuda, "a");
  require_device(out, cuda, "out");
  require_ndim(a, 1, "a");
  require_c_contiguous(a, "a");
  require_c_contiguous(out, "out");
  if (out.ndim() != 1 || out.size() < a.size() || out.itemsize() != out_itemsize)
    throw nb::value_error("out: expected a 1-D array with room for every element of a, of the expected dtype");
}

void check_mask(const Array& a, const Array& mask, bool cuda) {
  require_device(mask, cuda, "mask");
  require_ndim(mask, 1, "mask");
  require_c_contiguous(mask, "mask");
  require_byte_mask(mask, "mask");
  if (mask.size() != a.size()) throw nb::value_error("mask: expected the length of a");
}

/// The typed predicate `x <op> threshold` with the threshold converted to T (the Python layer
/// has made an integer threshold exact and in range).
template <class T>
Predicate value_predicate(int op, const nb::object& threshold) {
  if (op < 0 || op > static_cast<int>(CompareOp::not_equal)) throw nb::value_error("op: unknown comparison");
  T value;
  if constexpr (std::is_integral_v<T>) {
    value = nb::cast<T>(threshold);
  } else {
    value = static_cast<T>(nb::cast<double>(threshold));
  }
  return where(static_cast<CompareOp>(op), value);
}

/// Calls f(T{}, predicate) for "is non-zero": a float compares with 0 by value (so -0.0 is
/// zero, as in NumPy), any other element of 1-8 bytes (bool, integers) by its bytes.
template <class F>
std::size_t with_nonzero_predicate(const Array& a, F&& f) {
  if (a.dtype() == nb::dtype<float>()) return f(float{}, where(CompareOp::not_equal, 0.0f));
  if (a.dtype() == nb::dtype<double>()) return f(double{}, where(CompareOp::not_equal, 0.0));
  const auto code = a.dtype().code;
  if (code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int) &&
      code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt) &&
      code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bool))
    throw nb::type_error("a: expected a bool, integer, float32 or float64 array");
  return with_element_size(a.itemsize(), "a", [&](auto t) -> std::size_t {
    using T = decltype(t);
    if constexpr (sizeof(T) > 8) {
      throw nb::type_error("a: expected elements of at most 8 bytes");
    } else {
      return f(t, nonzero());
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Host arrays: each returns the number kept.

std::size_t compact_host(const Array& a, const Array& mask, const OutArray& out, bool stable, std::string_view backend) {
  check_input_output(a, out, false, a.itemsize());
  check_mask(a, mask, false);
  const CompactOptions options = options_for(stable, backend);
  return with_element_size(a.itemsize(), "a", [&](auto t) {
    using T = decltype(t);
    const std::size_t n = a.size();
    std::span<const T> in(static_cast<const T*>(a.data()), n);
    std::span<const std::uint8_t> flags(static_cast<const std::uint8_t*>(mask.data()), n);
    std::span<T> kept(static_cast<T*>(out.data()), n);
    nb::gil_scoped_release unlocked;
    return compact_flagged(in, flags, kept, options);
  });
}

std::size_t select_host(const Array& a, int op, const nb::object& threshold, const OutArray& out, bool stable,
                        std::string_view backend) {
  check_input_output(a, out, false, a.itemsize());
  const CompactOptions options = options_for(stable, backend);
  return with_numeric_type(a, false, "a", [&](auto t) {
    using T = decltype(t);
    const Predicate pred = value_predicate<T>(op, threshold);
    std::span<const T> in(static_cast<const T*>(a.data()), a.size());
    std::span<T> kept(static_cast<T*>(out.data()), a.size());
    nb::gil_scoped_release unlocked;
    return compact(in, kept, pred, options);
  });
}

std::size_t flatnonzero_host(const Array& a, const OutArray& out, std::string_view backend) {
  check_input_output(a, out, false, sizeof(std::uint64_t));
  const CompactOptions options = options_for(true, backend);
  return with_nonzero_predicate(a, [&](auto t, const Predicate& pred) {
    using T = decltype(t);
    std::span<const T> in(static_cast<const T*>(a.data()), a.size());
    std::span<std::uint64_t> indices(static_cast<std::uint64_t*>(out.data()), a.size());
    nb::gil_scoped_release unlocked;
    return compact_indices(in, pred, indices, options);
  });
}

// ---------------------------------------------------------------------------------------------
// CUDA arrays: each returns the temporary bytes it needs, and runs only when `temp` is given.

#if WINNOW_HAVE_CUDA
std::uint64_t* count_from(const OutArray& count) {
  require_device(count, true, "count");
  require_integer_bytes(count, 8, "count");
  if (count.size() != 1) throw nb::value_error("count: expected one element");
  return static_cast<std::uint64_t*>(count.data());
}
#else
[[noreturn]] void no_cuda() { throw BackendError("CUDA arrays need the CUDA backend, which this build does not have"); }
#endif

std::size_t compact_device(const std::optional<OutArray>& temp, const Array& a, const Array& mask,
                           const OutArray& out, const OutArray& count, bool stable, std::uintptr_t stream) {
  check_input_output(a, out, true, a.itemsize());
  check_mask(a, mask, true);
#if WINNOW_HAVE_CUDA
  Temp t = temp_from(temp);
  std::uint64_t* d_count = count_from(count);
  const CompactOptions options = options_for(stable, "cuda");
  with_element_size(a.itemsize(), "a", [&](auto e) {
    using T = decltype(e);
    nb::gil_scoped_release unlocked;
    cuda::compact_flagged(t.data, t.bytes, static_cast<const T*>(a.data()), static_cast<const std::uint8_t*>(mask.data()),
                          a.size(), static_cast<T*>(out.data()), d_count, options, stream_from(stream));
    return 0;
  });
  return t.bytes;
#else
  (void)temp, (void)count, (void)stable, (void)stream;
  no_cuda();
#endif
}

std::size_t select_device(const std::optional<OutArray>& temp, const Array& a, int op, const nb::object& threshold,
                          const OutArray& out, const OutArray& count, bool stable, std::uintptr_t stream) {
  check_input_output(a, out, true, a.itemsize());
#if WINNOW_HAVE_CUDA
  Temp t = temp_from(temp);
  std::uint64_t* d_count = count_from(count);
  const CompactOptions options = options_for(stable, "cuda");
  with_numeric_type(a, false, "a", [&](auto e) {
    using T = decltype(e);
    const Predicate pred = value_predicate<T>(op, threshold);
    nb::gil_scoped_release unlocked;
    cuda::compact(t.data, t.bytes, static_cast<const T*>(a.data()), a.size(), static_cast<T*>(out.data()), d_count,
                  pred, options, stream_from(stream));
    return 0;
  });
  return t.bytes;
#else
  (void)temp, (void)op, (void)threshold, (void)count, (void)stable, (void)stream;
  no_cuda();
#endif
}

std::size_t flatnonzero_device(const std::optional<OutArray>& temp, const Array& a, const OutArray& out,
                               const OutArray& count, std::uintptr_t stream) {
  check_input_output(a, out, true, sizeof(std::uint64_t));
#if WINNOW_HAVE_CUDA
  Temp t = temp_from(temp);
  std::uint64_t* d_count = count_from(count);
  const CompactOptions options = options_for(true, "cuda");
  with_nonzero_predicate(a, [&](auto e, const Predicate& pred) -> std::size_t {
    using T = decltype(e);
    nb::gil_scoped_release unlocked;
    cuda::compact_indices<T, std::uint64_t>(t.data, t.bytes, static_cast<const T*>(a.data()), a.size(),
                                            static_cast<std::uint64_t*>(out.data()), d_count, pred, options,
                                            stream_from(stream));
    return 0;
  });
  return t.bytes;
#else
  (void)temp, (void)count, (void)stream;
  no_cuda();
#endif
}

}  // namespace

void bind_compact(nb::module_& m) {
  m.def("compact_host", &compact_host, nb::arg("a"), nb::arg("mask"), nb::arg("out"), nb::arg("stable"),
        nb::arg("backend"), "Writes a[mask != 0] to out; returns the number kept.");
  m.def("select_host", &select_host, nb::arg("a"), nb::arg("op"), nb::arg("threshold"), nb::arg("out"),
        nb::arg("stable"), nb::arg("backend"), "Writes the x of a with x <op> threshold to out; returns the number kept.");
  m.def("flatnonzero_host", &flatnonzero_host, nb::arg("a"), nb::arg("out"), nb::arg("backend"),
        "Writes the indices of the non-zero elements of a to out (uint64); returns their number.");
  m.def("compact_device", &compact_device, nb::arg("temp").none(), nb::arg("a"), nb::arg("mask"), nb::arg("out"),
        nb::arg("count"), nb::arg("stable"), nb::arg("stream"),
        "CUDA arrays: a[mask != 0] into out, the number into count[0], on the stream; returns the temporary bytes.");
  m.def("select_device", &select_device, nb::arg("temp").none(), nb::arg("a"), nb::arg("op"), nb::arg("threshold"),
        nb::arg("out"), nb::arg("count"), nb::arg("stable"), nb::arg("stream"),
        "CUDA arrays: the x of a with x <op> threshold into out, their number into count[0]; returns the temporary bytes.");
  m.def("flatnonzero_device", &flatnonzero_device, nb::arg("temp").none(), nb::arg("a"), nb::arg("out"),
        nb::arg("count"), nb::arg("stream"),
        "CUDA arrays: the indices of the non-zero elements into out, their number into count[0]; returns the temporary bytes.");
}

}  // namespace winnow::python
