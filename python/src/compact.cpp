// Stream compaction for Python: winnow.compact (a[mask]), winnow.select (fused predicate) and
// winnow.flatnonzero. Host arrays go through the host API (winnow/compact.hpp, any backend);
// CUDA arrays through the device API (winnow/cuda/compact.hpp) on the caller's stream, into the
// output the caller's array library allocated (the Python layer), with the workspace and count
// of the (device, stream) kept by the extension (device_calls.hpp).
#include "winnow/compact.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <span>
#include <type_traits>

#include "arrays.hpp"
#include "device_calls.hpp"
#include "winnow/error.hpp"
#if WINNOW_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <vector>

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
std::size_t with_nonzero_predicate(nb::dlpack::dtype dt, std::size_t itemsize, F&& f) {
  if (dt == nb::dtype<float>()) return f(float{}, where(CompareOp::not_equal, 0.0f));
  if (dt == nb::dtype<double>()) return f(double{}, where(CompareOp::not_equal, 0.0));
  const auto code = dt.code;
  if (code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int) &&
      code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt) &&
      code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bool))
    throw nb::type_error("a: expected a bool, integer, float32 or float64 array");
  return with_element_size(itemsize, "a", [&](auto t) -> std::size_t {
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

std::size_t compact_host(const Array& a, const Array& mask, const OutArray& out, bool stable,
                         std::string_view backend) {
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

/// Writes min(found, out's length) indices (out may be shorter than a: a caller that counted
/// first passes a result of the exact size); returns the number found.
std::size_t flatnonzero_host(const Array& a, const OutArray& out, std::string_view backend) {
  require_device(a, false, "a");
  require_device(out, false, "out");
  require_ndim(a, 1, "a");
  require_c_contiguous(a, "a");
  require_c_contiguous(out, "out");
  if (out.ndim() != 1 || out.itemsize() != sizeof(std::uint64_t))
    throw nb::value_error("out: expected a 1-D array of 64-bit integers");
  const CompactOptions options = options_for(true, backend);
  return with_nonzero_predicate(a.dtype(), a.itemsize(), [&](auto t, const Predicate& pred) {
    using T = decltype(t);
    std::span<const T> in(static_cast<const T*>(a.data()), a.size());
    std::span<std::uint64_t> indices(static_cast<std::uint64_t*>(out.data()), out.size());
    nb::gil_scoped_release unlocked;
    return compact_indices(in, pred, indices, options);
  });
}

// ---------------------------------------------------------------------------------------------
// CUDA arrays, by pointer: the Python layer has checked them (device, dtype, length, a
// C-contiguous input and output) and reads pointers without DLPack, whose exporters in CuPy
// and PyTorch do stream bookkeeping in Python on every call. One call each: the workspace of
// the (device, stream) serves it, and the count comes back (one small copy and a wait for the
// stream) when `read_count` asks for it; it always does from winnow.compact & co., where the
// output's length is the count.

#if !WINNOW_HAVE_CUDA
[[noreturn]] void no_cuda() { throw BackendError("CUDA arrays need the CUDA backend, which this build does not have"); }
#endif

template <class T>
const T* device_pointer(std::uintptr_t address) {
  return reinterpret_cast<const T*>(address);
}

std::optional<std::uint64_t> compact_device(std::uintptr_t a, std::uintptr_t mask, std::uintptr_t out, std::uint64_t n,
                                            std::size_t itemsize, bool stable, int device, std::uintptr_t stream,
                                            bool read_count) {
#if WINNOW_HAVE_CUDA
  const CompactOptions options = options_for(stable, "cuda");
  return with_element_size(itemsize, "a", [&](auto e) {
    using T = decltype(e);
    nb::gil_scoped_release unlocked;
    DeviceCall call(device, stream);
    cuda::compact_flagged(call.compaction(), device_pointer<T>(a), device_pointer<std::uint8_t>(mask), n,
                          const_cast<T*>(device_pointer<T>(out)), static_cast<std::uint64_t*>(call.count()), options,
                          call.stream());
    return call.read_count(read_count, 8);
  });
#else
  (void)a, (void)mask, (void)out, (void)n, (void)itemsize, (void)stable, (void)device, (void)stream, (void)read_count;
  no_cuda();
#endif
}

std::optional<std::uint64_t> select_device(std::uintptr_t a, std::string_view kind, std::size_t itemsize, int op,
                                           const nb::object& threshold, std::uintptr_t out, std::uint64_t n,
                                           bool stable, int device, std::uintptr_t stream, bool read_count) {
#if WINNOW_HAVE_CUDA
  const CompactOptions options = options_for(stable, "cuda");
  return with_numeric_type(dtype_of(kind, itemsize), false, "a", [&](auto e) {
    using T = decltype(e);
    const Predicate pred = value_predicate<T>(op, threshold);
    nb::gil_scoped_release unlocked;
    DeviceCall call(device, stream);
    cuda::compact(call.compaction(), device_pointer<T>(a), n, const_cast<T*>(device_pointer<T>(out)),
                  static_cast<std::uint64_t*>(call.count()), pred, options, call.stream());
    return call.read_count(read_count, 8);
  });
#else
  (void)a, (void)kind, (void)itemsize, (void)op, (void)threshold, (void)out, (void)n, (void)stable, (void)device,
      (void)stream, (void)read_count;
  no_cuda();
#endif
}

/// The non-zero bytes of a device mask (n bytes), on the host: what winnow.compact counts to
/// allocate its result at its size. Waits for the stream.
std::uint64_t count_flagged_device(std::uintptr_t mask, std::uint64_t n, int device, std::uintptr_t stream) {
#if WINNOW_HAVE_CUDA
  nb::gil_scoped_release unlocked;
  DeviceCall call(device, stream);
  cuda::count_flagged(device_pointer<std::uint8_t>(mask), n, static_cast<std::uint64_t*>(call.count()), call.stream());
  return *call.read_count(true, 8);
#else
  (void)mask, (void)n, (void)device, (void)stream;
  no_cuda();
#endif
}

std::optional<std::uint64_t> flatnonzero_device(std::uintptr_t a, std::string_view kind, std::size_t itemsize,
                                                std::uintptr_t out, std::uint64_t n, int device, std::uintptr_t stream,
                                                bool read_count) {
#if WINNOW_HAVE_CUDA
  const CompactOptions options = options_for(true, "cuda");
  std::optional<std::uint64_t> kept;
  with_nonzero_predicate(dtype_of(kind, itemsize), itemsize, [&](auto e, const Predicate& pred) -> std::size_t {
    using T = decltype(e);
    nb::gil_scoped_release unlocked;
    DeviceCall call(device, stream);
    cuda::compact_indices<T, std::uint64_t>(call.compaction(), device_pointer<T>(a), n,
                                            reinterpret_cast<std::uint64_t*>(out),
                                            static_cast<std::uint64_t*>(call.count()), pred, options, call.stream());
    kept = call.read_count(read_count, 8);
    return 0;
  });
  return kept;
#else
  (void)a, (void)kind, (void)itemsize, (void)out, (void)n, (void)device, (void)stream, (void)read_count;
  no_cuda();
#endif
}

/// For bench/python_flagged.py: the C++ device API's flagged compaction of the same arrays
/// winnow.compact is given, timed from C++ (no Python in the loop): `repetitions` calls, each the
/// call plus the count read back (a wait for the stream, as every caller needs the count), as
/// wall milliseconds per call, and the CUDA-event time of the call alone.
nb::tuple time_compact_flagged_device(const DeviceArray& a, const DeviceArray& mask, const DeviceArray& out,
                                      int repetitions) {
#if WINNOW_HAVE_CUDA
  if (!a.c_contiguous() || !mask.c_contiguous() || !out.c_contiguous() || mask.itemsize != 1 ||
      mask.size() != a.size() || out.size() < a.size() || out.itemsize != a.itemsize)
    throw nb::value_error("expected contiguous a, a byte mask of its size and an out of its dtype and size");
  const auto n = static_cast<std::uint64_t>(a.size());
  std::vector<double> wall, device;
  with_element_size(a.itemsize, "a", [&](auto e) {
    using T = decltype(e);
    nb::gil_scoped_release unlocked;
    DeviceCall call(a.device, a.stream);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    const CompactOptions options = options_for(true, "cuda");
    for (int r = 0; r < repetitions; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      cudaEventRecord(start, call.stream());
      cuda::compact_flagged(call.compaction(), a.data<const T>(), mask.data<const std::uint8_t>(), n, out.data<T>(),
                            static_cast<std::uint64_t*>(call.count()), options, call.stream());
      cudaEventRecord(stop, call.stream());
      (void)call.read_count(true, 8);
      wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      device.push_back(ms);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return 0;
  });
  return nb::make_tuple(wall, device);
#else
  (void)a, (void)mask, (void)out, (void)repetitions;
  throw BackendError("CUDA arrays need the CUDA backend, which this build does not have");
#endif
}

}  // namespace

void bind_compact(nb::module_& m) {
  m.def("_time_compact_flagged_device", &time_compact_flagged_device, nb::arg("a"), nb::arg("mask"), nb::arg("out"),
        nb::arg("repetitions"),
        "Benchmark helper: the C++ device API's flagged compaction timed from C++ (wall ms per call with the count "
        "read back, and CUDA-event ms of the call).");
  m.def("compact_host", &compact_host, nb::arg("a"), nb::arg("mask"), nb::arg("out"), nb::arg("stable"),
        nb::arg("backend"), "Writes a[mask != 0] to out; returns the number kept.");
  m.def("select_host", &select_host, nb::arg("a"), nb::arg("op"), nb::arg("threshold"), nb::arg("out"),
        nb::arg("stable"), nb::arg("backend"),
        "Writes the x of a with x <op> threshold to out; returns the number kept.");
  m.def("flatnonzero_host", &flatnonzero_host, nb::arg("a"), nb::arg("out"), nb::arg("backend"),
        "Writes the indices of the non-zero elements of a to out (uint64; the first len(out) of them when out is "
        "shorter); returns their number.");
  m.def("compact_device", &compact_device, nb::arg("a"), nb::arg("mask"), nb::arg("out"), nb::arg("n"),
        nb::arg("itemsize"), nb::arg("stable"), nb::arg("device"), nb::arg("stream"), nb::arg("read_count"),
        "CUDA pointers (checked by the caller): a[mask != 0] into out on the stream; returns the number kept "
        "(waiting for the stream) when read_count, else None.");
  m.def("select_device", &select_device, nb::arg("a"), nb::arg("kind"), nb::arg("itemsize"), nb::arg("op"),
        nb::arg("threshold"), nb::arg("out"), nb::arg("n"), nb::arg("stable"), nb::arg("device"), nb::arg("stream"),
        nb::arg("read_count"),
        "CUDA pointers: the x of a (NumPy kind and itemsize) with x <op> threshold into out; returns their number "
        "when read_count, else None.");
  m.def("flatnonzero_device", &flatnonzero_device, nb::arg("a"), nb::arg("kind"), nb::arg("itemsize"), nb::arg("out"),
        nb::arg("n"), nb::arg("device"), nb::arg("stream"), nb::arg("read_count"),
        "CUDA pointers: the indices of the non-zero elements into out (uint64); returns their number when "
        "read_count, else None.");
  m.def("count_flagged_device", &count_flagged_device, nb::arg("mask"), nb::arg("n"), nb::arg("device"),
        nb::arg("stream"), "CUDA pointer: the number of non-zero bytes of a mask of n bytes (waits for the stream).");
}

}  // namespace winnow::python
