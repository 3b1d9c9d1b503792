// The extension module winnow._winnow: the library's errors as Python exceptions (InputError ->
// ValueError, BackendError and other winnow errors -> RuntimeError), the devices, and the
// capabilities' functions (one source file each). The public API is the Python layer in
// python/winnow/, which checks arguments, chooses host or device forms and allocates outputs.
#include <nanobind/stl/string.h>

#include "arrays.hpp"
#include "device_calls.hpp"
#include "winnow/error.hpp"

namespace winnow::python {
namespace {

nb::list devices() {
  nb::list out;
  for (const DeviceInfo& d : cuda_devices()) {
    nb::dict info;
    info["index"] = d.index;
    info["name"] = d.name;
    info["total_memory_bytes"] = d.total_memory_bytes;
    info["compute_capability"] = nb::make_tuple(d.compute_major, d.compute_minor);
    info["multiprocessors"] = d.multiprocessors;
    out.append(info);
  }
  return out;
}

}  // namespace

}  // namespace winnow::python

NB_MODULE(_winnow, m) {
  namespace nb = nanobind;
  using namespace winnow::python;
  m.doc() = "winnow's C++ library; use the package winnow, which checks arguments and allocates outputs.";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const winnow::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const winnow::Error& e) {  // BackendError and the rest
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  m.def("devices", &devices, "The CUDA devices that answer: a list of dicts (empty without CUDA).");
  m.def("cuda_compiled_in", &winnow::cuda_compiled_in, "True when this build has the CUDA backend.");
  m.def("cuda_available", &winnow::cuda_available, "True when the CUDA backend is compiled in and a device answers.");
  m.def(
      "release_device_calls", &release_device_calls,
      "Frees the temporary storage kept per (device, stream) by the device functions (the package calls it at exit).");
  bind_arrays(m);
  bind_compact(m);
  bind_label(m);
  bind_statistics(m);
  bind_voxels(m);
  bind_puzzle(m);
  bind_isosurface(m);
  bind_chunks(m);
  bind_io(m);
}
