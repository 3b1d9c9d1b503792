#pragma once
// Shared pieces of the extension module: the array type every function takes (any dtype, device
// and layout, read through DLPack without a copy), checks that name the argument at fault,
// dispatch on the element type, and NumPy results that own the library's vectors (no copy).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "winnow/backend.hpp"
#include "winnow/image.hpp"
#include "winnow/volume.hpp"

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace winnow::python {

namespace nb = nanobind;

/// Any array: NumPy, CuPy, PyTorch ... (read-only ones too); checked by the functions below.
using Array = nb::ndarray<nb::ro>;
/// An array the function writes (outputs allocated by the Python layer, in the caller's library).
using OutArray = nb::ndarray<>;

bool on_cuda(const Array& a);
bool on_cuda(const OutArray& a);
/// TypeError unless `a` lives where `cuda` says (host memory or a CUDA device).
void require_device(const Array& a, bool cuda, const char* what);
void require_device(const OutArray& a, bool cuda, const char* what);
/// ValueError unless `a` has `ndim` dimensions.
void require_ndim(const Array& a, std::size_t ndim, const char* what);
/// ValueError unless the elements of `a` are adjacent in C order.
void require_c_contiguous(const Array& a, const char* what);
void require_c_contiguous(const OutArray& a, const char* what);
/// TypeError unless `a` holds bool or uint8 (one byte, zero or not).
void require_byte_mask(const Array& a, const char* what);
/// TypeError unless `a` holds integers of `bytes` bytes (signed or not: a count or label that
/// fits either; PyTorch has no unsigned 32- and 64-bit tensors everywhere).
void require_integer_bytes(const OutArray& a, std::size_t bytes, const char* what);

/// A CUDA array by pointer, as the Python layer describes it after its checks (DLPack exporters in
/// CuPy and PyTorch do stream bookkeeping in Python on each export, which costs more than small
/// kernels): its first element, NumPy's dtype kind ('b', 'i', 'u', 'f') and item size, shape and
/// strides in elements (C order: the last axis fastest), and the device and stream the call runs
/// on (the caller's current stream, as a raw handle). winnow._winnow.DeviceArray in Python.
struct DeviceArray {
  std::uintptr_t pointer = 0;
  char kind = 'u';
  std::size_t itemsize = 1;
  std::vector<std::int64_t> shape, strides;
  int device = 0;
  std::uintptr_t stream = 0;

  [[nodiscard]] std::size_t ndim() const { return shape.size(); }
  [[nodiscard]] std::int64_t size() const;
  [[nodiscard]] bool c_contiguous() const;
  [[nodiscard]] nb::dlpack::dtype dtype() const;
  template <class T>
  [[nodiscard]] T* data() const {
    return reinterpret_cast<T*>(pointer);
  }
};

/// "auto", "cpu" or "cuda" (InputError otherwise, a ValueError in Python).
Backend backend_from(std::string_view name);
cudaStream_t stream_from(std::uintptr_t handle);

/// Calls f(T{}) with T the precompiled type of the element's size: flagged compaction moves bytes.
template <class F>
decltype(auto) with_element_size(std::size_t bytes, const char* what, F&& f) {
  switch (bytes) {
    case 1: return f(std::uint8_t{});
    case 2: return f(std::uint16_t{});
    case 4: return f(std::uint32_t{});
    case 8: return f(std::uint64_t{});
    case 16: return f(RgbaF32{});
  }
  throw nb::type_error((std::string(what) + ": expected elements of 1, 2, 4, 8 or 16 bytes").c_str());
}

/// The element type the Python layer names by NumPy's kind character ('b', 'i', 'u', 'f') and
/// size in bytes (device calls take pointers, not arrays).
nb::dlpack::dtype dtype_of(std::string_view kind, std::size_t itemsize);

/// Calls f(T{}) with T the element type `dt`, one of the listed numeric types.
template <class F>
decltype(auto) with_numeric_type(nb::dlpack::dtype dt, bool allow_small_signed, const char* what, F&& f) {
  if (dt == nb::dtype<std::uint8_t>()) return f(std::uint8_t{});
  if (dt == nb::dtype<std::uint16_t>()) return f(std::uint16_t{});
  if (dt == nb::dtype<std::int32_t>()) return f(std::int32_t{});
  if (dt == nb::dtype<std::uint32_t>()) return f(std::uint32_t{});
  if (dt == nb::dtype<float>()) return f(float{});
  if (dt == nb::dtype<std::int64_t>()) return f(std::int64_t{});
  if (dt == nb::dtype<std::uint64_t>()) return f(std::uint64_t{});
  if (dt == nb::dtype<double>()) return f(double{});
  if (allow_small_signed) {
    if (dt == nb::dtype<std::int8_t>()) return f(std::int8_t{});
    if (dt == nb::dtype<std::int16_t>()) return f(std::int16_t{});
  }
  throw nb::type_error((std::string(what) +
                        ": expected dtype uint8, uint16, int32, uint32, float32, int64, "
                        "uint64 or float64" +
                        (allow_small_signed ? ", int8 or int16" : ""))
                           .c_str());
}

template <class F>
decltype(auto) with_numeric_type(const Array& a, bool allow_small_signed, const char* what, F&& f) {
  return with_numeric_type(a.dtype(), allow_small_signed, what, std::forward<F>(f));
}

/// A volume [z, y, x] with x adjacent and non-negative strides, as a view of T (const T for a
/// read-only Array, T for an OutArray the function writes); the Python layer copies other layouts
/// first (ValueError naming `what` otherwise).
template <class T, class A>
VolumeView<T> volume_view(const A& a, const char* what) {
  if (a.ndim() != 3)
    throw nb::value_error((std::string(what) + ": expected 3 dimensions, got " + std::to_string(a.ndim())).c_str());
  const auto nz = static_cast<std::int64_t>(a.shape(0)), ny = static_cast<std::int64_t>(a.shape(1)),
             nx = static_cast<std::int64_t>(a.shape(2));
  if (nx > 1 && a.stride(2) != 1)
    throw nb::value_error((std::string(what) + ": expected x (the last axis) adjacent in memory").c_str());
  // A dimension of one element may report any stride; give it the one a contiguous volume has.
  const std::int64_t rs = ny > 1 ? a.stride(1) : nx, ss = nz > 1 ? a.stride(0) : rs * ny;
  if (rs < 0 || ss < 0) throw nb::value_error((std::string(what) + ": expected non-negative strides").c_str());
  return VolumeView<T>(static_cast<T*>(a.data()), nx, ny, nz, rs, ss);
}

/// A host volume [z, y, x] as a read-only view (volume_view's checks).
template <class T>
VolumeView<const T> host_volume(const Array& a, const char* what) {
  return volume_view<const T>(a, what);
}

/// Calls f(T{}) with T the integer type (signed or not) of the elements' dtype; bool is uint8.
template <class F>
decltype(auto) with_integer_type(nb::dlpack::dtype dt, const char* what, F&& f) {
  const auto code = dt.code;
  const bool is_signed = code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int);
  const bool integer = is_signed || code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt) ||
                       code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bool);
  if (integer) switch (dt.bits) {
      case 8: return is_signed ? f(std::int8_t{}) : f(std::uint8_t{});
      case 16: return is_signed ? f(std::int16_t{}) : f(std::uint16_t{});
      case 32: return is_signed ? f(std::int32_t{}) : f(std::uint32_t{});
      case 64: return is_signed ? f(std::int64_t{}) : f(std::uint64_t{});
    }
  throw nb::type_error((std::string(what) + ": expected an integer dtype").c_str());
}

/// Host memory for a result that every element of is written before it is read: allocated
/// without being zeroed (a large result's pages are first touched by the threads that fill it).
template <class T>
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t n) : data_(new T[n]), size_(n) {}  // default-initialised: not zeroed
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  [[nodiscard]] std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  T* release() { return data_.release(); }

 private:
  std::unique_ptr<T[]> data_;
  std::size_t size_ = 0;
};

/// A NumPy array that owns `values` (no copy), of the given shape.
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(HostBuffer<T>&& values, std::initializer_list<std::size_t> shape) {
  T* owned = values.release();
  nb::capsule release(owned, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return nb::ndarray<nb::numpy, T>(owned, shape.size(), shape.begin(), release);
}

/// A NumPy array that owns `values` (moved, not copied), of the given shape.
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T>&& values, std::initializer_list<std::size_t> shape) {
  auto* owner = new std::vector<T>(std::move(values));
  nb::capsule release(owner, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(owner->data(), shape.size(), shape.begin(), release);
}

void bind_arrays(nb::module_& m);
void bind_compact(nb::module_& m);
void bind_statistics(nb::module_& m);
void bind_io(nb::module_& m);
void bind_label(nb::module_& m);
void bind_voxels(nb::module_& m);
void bind_puzzle(nb::module_& m);
void bind_isosurface(nb::module_& m);
void bind_chunks(nb::module_& m);  // labeling in chunks (winnow.dask)

}  // namespace winnow::python
