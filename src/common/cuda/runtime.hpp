#pragma once
// Host-side view of the CUDA runtime helpers in runtime.cu (compiled only with CUDA).
#include <string>
#include <vector>

#include "winnow/backend.hpp"

namespace winnow::detail::cuda {
/// Number of devices that answer; 0 on any error (no driver, no device). Cached after the first call.
int device_count();
std::vector<DeviceInfo> devices();
/// Whether a winnow call has started the device in this process (created its context): the
/// fixed cost of a first CUDA call, which the `automatic` backend choice weighs.
bool device_started();
void note_device_started();
}  // namespace winnow::detail::cuda
