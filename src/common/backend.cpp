// Run-time backend choice. The CUDA side lives in cuda/runtime.cu beside this file and is linked only when
// compiled in; these declarations are its whole interface.
#include "winnow/backend.hpp"

#include <cstdlib>
#include <string>

#include "common/backend.hpp"
#include "common/cuda/runtime.hpp"
#include "winnow/error.hpp"

namespace winnow {

std::string_view to_string(Backend b) {
  switch (b) {
    case Backend::automatic: return "auto";
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
  }
  return "?";
}

Backend parse_backend(std::string_view name) {
  if (name == "auto" || name == "automatic") return Backend::automatic;
  if (name == "cpu") return Backend::cpu;
  if (name == "cuda" || name == "gpu") return Backend::cuda;
  throw InputError("unknown backend '" + std::string(name) + "' (expected auto, cpu or cuda)");
}

bool cuda_compiled_in() {
#ifdef WINNOW_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool cuda_available() {
#ifdef WINNOW_HAVE_CUDA
  return detail::cuda::device_count() > 0;
#else
  return false;
#endif
}

std::vector<DeviceInfo> cuda_devices() {
#ifdef WINNOW_HAVE_CUDA
  return detail::cuda::devices();
#else
  return {};
#endif
}

Backend detail::requested_backend(Backend requested) {
  if (requested == Backend::automatic) {
    if (const char* env = std::getenv("WINNOW_BACKEND"); env && *env) return parse_backend(env);
  }
  return requested;
}

Backend resolve_backend(Backend requested) {
  requested = detail::requested_backend(requested);
  if (requested == Backend::automatic) return cuda_available() ? Backend::cuda : Backend::cpu;
  if (requested == Backend::cuda && !cuda_available()) {
    throw BackendError(cuda_compiled_in() ? "backend 'cuda' requested but no CUDA device answers"
                                          : "backend 'cuda' requested but this build has no CUDA support");
  }
  return requested;
}

}  // namespace winnow
