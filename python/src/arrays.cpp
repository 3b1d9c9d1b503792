// The argument checks shared by the extension's functions, and the device array's description
// (see arrays.hpp).
#include "arrays.hpp"

#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

namespace winnow::python {

namespace {
template <class A>
bool is_cuda(const A& a) {
  return a.device_type() == nb::device::cuda::value;
}
template <class A>
void check_device(const A& a, bool cuda, const char* what) {
  if (is_cuda(a) == cuda) return;
  if (!cuda && a.device_type() != nb::device::cpu::value)
    throw nb::type_error((std::string(what) + ": expected an array in host memory or on a CUDA device").c_str());
  throw nb::type_error((std::string(what) + (cuda ? ": expected an array on the CUDA device of the other arguments"
                                                  : ": expected an array in host memory, like the other arguments"))
                           .c_str());
}
template <class A>
void check_c_contiguous(const A& a, const char* what) {
  std::int64_t expected = 1;
  for (std::size_t d = a.ndim(); d-- > 0;) {
    if (a.shape(d) > 1 && a.stride(d) != expected)
      throw nb::value_error((std::string(what) + ": expected a C-contiguous array").c_str());
    expected *= static_cast<std::int64_t>(a.shape(d));
  }
}
}  // namespace

bool on_cuda(const Array& a) { return is_cuda(a); }
bool on_cuda(const OutArray& a) { return is_cuda(a); }
void require_device(const Array& a, bool cuda, const char* what) { check_device(a, cuda, what); }
void require_device(const OutArray& a, bool cuda, const char* what) { check_device(a, cuda, what); }

void require_c_contiguous(const Array& a, const char* what) { check_c_contiguous(a, what); }
void require_c_contiguous(const OutArray& a, const char* what) { check_c_contiguous(a, what); }

void require_ndim(const Array& a, std::size_t ndim, const char* what) {
  if (a.ndim() != ndim)
    throw nb::value_error(
        (std::string(what) + ": expected " + std::to_string(ndim) + " dimensions, got " + std::to_string(a.ndim()))
            .c_str());
}

void require_byte_mask(const Array& a, const char* what) {
  const auto dt = a.dtype();
  if (dt != nb::dtype<bool>() && dt != nb::dtype<std::uint8_t>())
    throw nb::type_error((std::string(what) + ": expected dtype bool or uint8").c_str());
}

void require_integer_bytes(const OutArray& a, std::size_t bytes, const char* what) {
  const auto code = a.dtype().code;
  if ((code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int) &&
       code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt)) ||
      a.itemsize() != bytes)
    throw nb::type_error((std::string(what) + ": expected " + std::to_string(bytes * 8) + "-bit integers").c_str());
}

nb::dlpack::dtype dtype_of(std::string_view kind, std::size_t itemsize) {
  nb::dlpack::dtype_code code;
  switch (kind.size() == 1 ? kind[0] : '?') {
    case 'b': code = nb::dlpack::dtype_code::Bool; break;
    case 'i': code = nb::dlpack::dtype_code::Int; break;
    case 'u': code = nb::dlpack::dtype_code::UInt; break;
    case 'f': code = nb::dlpack::dtype_code::Float; break;
    default: throw nb::type_error("a: expected a bool, integer or floating-point dtype");
  }
  return nb::dlpack::dtype{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(itemsize * 8), 1};
}

Backend backend_from(std::string_view name) { return parse_backend(name); }

cudaStream_t stream_from(std::uintptr_t handle) { return reinterpret_cast<cudaStream_t>(handle); }

std::int64_t DeviceArray::size() const {
  std::int64_t n = 1;
  for (const std::int64_t s : shape) n *= s;
  return n;
}

bool DeviceArray::c_contiguous() const {
  std::int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

nb::dlpack::dtype DeviceArray::dtype() const { return dtype_of(std::string_view(&kind, 1), itemsize); }

void bind_arrays(nb::module_& m) {
  nb::class_<DeviceArray>(m, "DeviceArray",
                          "A CUDA array by pointer: its first element, dtype kind and item size, shape, strides in "
                          "elements, and the device and stream of the call.")
      .def(
          "__init__",
          [](DeviceArray* self, std::uintptr_t pointer, std::string_view kind, std::size_t itemsize,
             std::vector<std::int64_t> shape, std::vector<std::int64_t> strides, int device, std::uintptr_t stream) {
            if (kind.size() != 1) throw nb::value_error("kind: expected one character");
            if (strides.size() != shape.size()) throw nb::value_error("strides: expected one per axis");
            new (self) DeviceArray{pointer, kind[0], itemsize, std::move(shape), std::move(strides), device, stream};
          },
          nb::arg("pointer"), nb::arg("kind"), nb::arg("itemsize"), nb::arg("shape"), nb::arg("strides"),
          nb::arg("device"), nb::arg("stream"))
      .def_ro("pointer", &DeviceArray::pointer)
      .def_ro("itemsize", &DeviceArray::itemsize)
      .def_ro("shape", &DeviceArray::shape)
      .def_ro("strides", &DeviceArray::strides)
      .def_ro("device", &DeviceArray::device)
      .def_ro("stream", &DeviceArray::stream);
}

}  // namespace winnow::python
