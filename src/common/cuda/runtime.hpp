#pragma once
// Host-side view of the CUDA runtime helpers in runtime.cu (compiled only with CUDA).
#include <string>
#include <vector>

#include "winnow/backend.hpp"

namespace winnow::detail::cuda {
/// Number of devices that answer; 0 on any error (no driver, no device). Cached after the first call.
int device_count();
std::vector<DeviceInfo> devices();
}  // namespace winnow::detail::cuda
