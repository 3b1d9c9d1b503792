#pragma once
// Every CUDA runtime call and launch goes through these: a failure throws BackendError naming
// the call, file and line.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "winnow/error.hpp"

namespace winnow::detail::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line) {
  throw BackendError(std::string("CUDA error in ") + what + " (" + file + ":" + std::to_string(line) +
                     "): " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

}  // namespace winnow::detail::cuda

#define WINNOW_CUDA_CHECK(call)                                                                                       \
  do {                                                                                                                \
    cudaError_t winnow_err_ = (call);                                                                                 \
    if (winnow_err_ != cudaSuccess) ::winnow::detail::cuda::throw_cuda_error(winnow_err_, #call, __FILE__, __LINE__); \
  } while (0)

/// After a <<<...>>> launch: catches bad configurations at once (asynchronous faults surface at
/// the next synchronising call, which is checked too).
#define WINNOW_CUDA_CHECK_LAUNCH() WINNOW_CUDA_CHECK(cudaGetLastError())

namespace winnow::detail::cuda {

/// Owning device allocation (stream-ordered free when given a stream).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count, cudaStream_t stream = nullptr) : size_(count), stream_(stream) {
    if (count) WINNOW_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&ptr_), count * sizeof(T), stream));
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
      stream_ = o.stream_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  void reset() {
    if (ptr_) (void)cudaFreeAsync(ptr_, stream_);  // destructor path: never throws
    ptr_ = nullptr;
    size_ = 0;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace winnow::detail::cuda
