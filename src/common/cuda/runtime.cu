// Device discovery for the run-time backend choice.
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>

#include "common/cuda/runtime.hpp"

namespace winnow::detail::cuda {

int device_count() {
  static int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();  // clear the sticky "no device" error
      return 0;
    }
    return n;
  }();
  return count;
}

namespace {
std::atomic<bool> started{false};
}
void note_device_started() { started.store(true, std::memory_order_relaxed); }
bool device_started() { return started.load(std::memory_order_relaxed); }

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  for (int i = 0; i < device_count(); ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    out.push_back({i, p.name, p.totalGlobalMem, p.major, p.minor, p.multiProcessorCount});
  }
  return out;
}

}  // namespace winnow::detail::cuda
