// single_pass stable look-back policies that the library may adopt (kern::LookbackPolicy through
// the library's launcher src/compact/cuda/compact_lookback.cuh): the closest candidates of the sweep (longer
// post-publish sleep, 512- and 1024-thread tiles) and CUB's own look-back as the control, on
// several element types, value and index outputs, unaligned inputs and many tiles.
// Oracle: std::copy_if on the host.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "common/gpu_guard.hpp"
#include "compact/cuda/compact_lookback.cuh"
#include "winnow/compact.hpp"

namespace {

namespace wc = winnow::detail::cuda;
namespace kern = winnow::detail::cuda::kern;

template <int T, int V, int LB, int D0>
using Pol = kern::LookbackPolicy<T, V, true, LB, D0, 0, true>;

template <class Policy, class T>
void check_values(std::uint64_t n, double keep, std::size_t skew) {
  std::mt19937_64 rng(n * 31 + skew);
  std::vector<T> h(n + skew);
  for (auto& x : h) x = static_cast<T>(rng());
  const T thr = static_cast<T>((1.0 - keep) * static_cast<double>(static_cast<T>(~T{})));
  std::vector<T> want;
  std::copy_if(h.begin() + static_cast<std::ptrdiff_t>(skew), h.end(), std::back_inserter(want),
               [&](T x) { return x > thr; });
  using Src = kern::PredSource<T>;
  using Sink = kern::ValueSink<kern::Storage<sizeof(T)>>;
  using L = wc::StableLookback<Policy, Src, Sink>;
  T *in = nullptr, *out = nullptr;
  std::uint64_t* count = nullptr;
  void* temp = nullptr;
  ASSERT_EQ(cudaMalloc(&in, h.size() * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, (n + 1) * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&count, sizeof(std::uint64_t)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&temp, L::temp_bytes(n)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(in, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(out, 0xA5, (n + 1) * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMemset(count, 0xA5, sizeof(std::uint64_t)), cudaSuccess);
  ASSERT_EQ(cudaMemset(temp, 0x5A, L::temp_bytes(n)), cudaSuccess);
  const T* src_in = in + skew;
  const Src src{src_in, winnow::where(winnow::CompareOp::greater, thr),
                reinterpret_cast<std::uintptr_t>(src_in) % 16 == 0};
  const Sink sink{reinterpret_cast<kern::Storage<sizeof(T)>*>(out)};
  for (int rep = 0; rep < 2; ++rep) L::launch(src, sink, n, count, temp, nullptr);  // second: reused temp
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::uint64_t k = 0;
  ASSERT_EQ(cudaMemcpy(&k, count, sizeof k, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(k, want.size()) << "n=" << n << " keep=" << keep << " skew=" << skew;
  std::vector<T> got(k + 1);
  ASSERT_EQ(cudaMemcpy(got.data(), out, (k + 1) * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  for (std::uint64_t i = 0; i < k; ++i) ASSERT_EQ(got[i], want[i]) << "at " << i << " n=" << n << " keep=" << keep;
  T poison;
  std::memset(&poison, 0xA5, sizeof poison);
  EXPECT_EQ(got[k], poison) << "wrote past the count";
  cudaFree(in);
  cudaFree(out);
  cudaFree(count);
  cudaFree(temp);
}

template <class Policy, class T>
void sweep_values() {
  constexpr std::uint64_t tile = Policy::template tile<sizeof(T)>;
  for (std::uint64_t n :
       {std::uint64_t{1}, std::uint64_t{1000}, tile - 1, tile + 1, 5 * tile + 7, (std::uint64_t{1} << 23) + 13}) {
    for (double keep : {0.01, 0.5, 0.99}) {
      for (std::size_t skew : {std::size_t{0}, std::size_t{1}}) {
        check_values<Policy, T>(n, keep, skew);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

/// Index form over a flag stencil (the other Source and Sink kinds).
template <class Policy>
void check_flag_indices(std::uint64_t n) {
  std::mt19937_64 rng(n);
  std::vector<std::uint8_t> flags(n);
  for (auto& f : flags) f = (rng() % 3 == 0) ? static_cast<std::uint8_t>(1 + rng() % 255) : 0;
  std::vector<std::uint32_t> want;
  for (std::uint64_t i = 0; i < n; ++i)
    if (flags[i]) want.push_back(static_cast<std::uint32_t>(i));
  using Src = kern::FlagSource<std::uint8_t>;
  using Sink = kern::IndexSink<std::uint32_t>;
  using L = wc::StableLookback<Policy, Src, Sink>;
  std::uint8_t *in = nullptr, *fl = nullptr;
  std::uint32_t* out = nullptr;
  std::uint64_t* count = nullptr;
  void* temp = nullptr;
  ASSERT_EQ(cudaMalloc(&in, n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&fl, n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, (n + 1) * sizeof(std::uint32_t)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&count, sizeof(std::uint64_t)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&temp, L::temp_bytes(n)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(fl, flags.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(out, 0xA5, (n + 1) * sizeof(std::uint32_t)), cudaSuccess);
  const Src src{in, fl, true};
  const Sink sink{out};
  L::launch(src, sink, n, count, temp, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::uint64_t k = 0;
  ASSERT_EQ(cudaMemcpy(&k, count, sizeof k, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(k, want.size());
  std::vector<std::uint32_t> got(k);
  ASSERT_EQ(cudaMemcpy(got.data(), out, k * sizeof(std::uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, want);
  cudaFree(in);
  cudaFree(fl);
  cudaFree(out);
  cudaFree(count);
  cudaFree(temp);
}

using Sleep2000_512x16 = Pol<512, 4, 1, 2000>;
using Sleep1000_1024x16 = Pol<1024, 4, 1, 1000>;
using CubControl256x16 = Pol<256, 4, 0, 0>;

TEST(CompactLookbackPolicy, single_pass_candidates_int32) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  sweep_values<Sleep2000_512x16, std::uint32_t>();
  sweep_values<Sleep1000_1024x16, std::uint32_t>();
  sweep_values<CubControl256x16, std::uint32_t>();
}
TEST(CompactLookbackPolicy, single_pass_candidates_other_types) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  sweep_values<Sleep2000_512x16, std::uint8_t>();
  sweep_values<Sleep2000_512x16, std::uint64_t>();
}
TEST(CompactLookbackPolicy, single_pass_candidates_flag_indices) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  for (std::uint64_t n : {std::uint64_t{7}, std::uint64_t{100003}, (std::uint64_t{1} << 24) + 5})
    check_flag_indices<Sleep2000_512x16>(n);
}

}  // namespace
