#pragma once
// A device buffer for the CUDA tests: allocated with the test's size (at least one element, so a
// zero-size call still gets a valid pointer), filled and read back with checked copies, poisoned
// with 0xA5 bytes so that an element the code under test does not write cannot pass.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace winnow::test {

template <class T>
struct Dev {
  T* p = nullptr;
  std::size_t n = 0;
  explicit Dev(std::size_t count) : n(count) {
    if (cudaMalloc(&p, std::max<std::size_t>(count, 1) * sizeof(T)) != cudaSuccess) p = nullptr;
  }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  void upload(const std::vector<T>& v) {
    ASSERT_EQ(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<T> download(std::size_t count, std::size_t from = 0) const {
    std::vector<T> v(count);
    if (count) EXPECT_EQ(cudaMemcpy(v.data(), p + from, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }
  // Synchronised: the calls under test may run in non-blocking streams, unordered with this memset.
  void poison() {
    ASSERT_EQ(cudaMemset(p, 0xA5, std::max<std::size_t>(n, 1) * sizeof(T)), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
};

}  // namespace winnow::test
