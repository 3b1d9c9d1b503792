// Stream expansion through the device API (winnow/cuda/histopyramid.hpp): the CUB-style sizing
// call, 64- and 32-bit elements, ranks or none, a capacity below the total, counts at an
// unaligned address, the total in device memory and in host-mapped memory, no host
// synchronisation (the calls are captured into a CUDA graph), and more than 2^32 counts when the
// GPU has the memory. Outputs are poisoned first; the reference is common/expand_oracle.hpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/expand_oracle.hpp"
#include "common/gpu_guard.hpp"
#include "winnow/cuda/histopyramid.hpp"
#include "winnow/error.hpp"

namespace {

using winnow::test::expansion_matches;
using winnow::test::random_counts;
using winnow::test::sum_of;

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

using winnow::test::Dev;

// Runs one expansion on `stream`, counts placed `shift` bytes past an aligned address, and checks
// it. Synchronises only after the call.
template <class Element>
void expand_and_check(const std::vector<std::uint8_t>& counts, std::uint64_t capacity, bool with_ranks,
                      std::size_t shift, cudaStream_t stream, const std::string& what) {
  const std::uint64_t n = counts.size();
  Dev<std::uint8_t> d_counts(n + shift);
  Dev<Element> d_element(capacity);
  Dev<std::uint8_t> d_rank(capacity);
  Dev<std::uint64_t> d_total(1);
  ASSERT_TRUE(d_counts.p && d_element.p && d_rank.p && d_total.p) << what;
  if (n) CUDA_OK(cudaMemcpy(d_counts.p + shift, counts.data(), n, cudaMemcpyHostToDevice));
  d_element.poison();
  d_rank.poison();
  d_total.poison();
  std::uint64_t* h_total = nullptr;
  CUDA_OK(cudaHostAlloc(reinterpret_cast<void**>(&h_total), sizeof(std::uint64_t), cudaHostAllocMapped));
  *h_total = ~std::uint64_t{0};
  CUDA_OK(cudaDeviceSynchronize());
  std::size_t bytes = 0;
  winnow::cuda::histopyramid_expand(nullptr, bytes, d_counts.p + shift, n, d_element.p, with_ranks ? d_rank.p : nullptr,
                                    d_total.p, capacity, stream, h_total);
  ASSERT_GT(bytes, 0u) << what;
  Dev<unsigned char> temp(bytes);
  winnow::cuda::histopyramid_expand(temp.p, bytes, d_counts.p + shift, n, d_element.p, with_ranks ? d_rank.p : nullptr,
                                    d_total.p, capacity, stream, h_total);
  CUDA_OK(cudaStreamSynchronize(stream));
  const std::uint64_t want = sum_of(counts);
  EXPECT_EQ(*h_total, want) << what << ": host-mapped total";
  CUDA_OK(cudaFreeHost(h_total));
  ASSERT_EQ(d_total.download(1)[0], want) << what;
  const auto elements = d_element.download(capacity);
  const auto ranks = with_ranks ? d_rank.download(capacity) : std::vector<std::uint8_t>{};
  ASSERT_TRUE(expansion_matches(counts, capacity, elements, ranks)) << what;
  const Element poison = static_cast<Element>(0xA5A5A5A5A5A5A5A5ull);
  for (std::uint64_t k = want; k < capacity; ++k) ASSERT_EQ(elements[k], poison) << what << ": key " << k;
  if (!with_ranks) {
    const auto untouched = d_rank.download(capacity);
    for (std::uint64_t k = 0; k < capacity; ++k) ASSERT_EQ(untouched[k], 0xA5) << what << ": rank " << k;
  }
}

class ExpandDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!winnow::test::gpu_ready()) WINNOW_GPU_MISSING("no CUDA device answers");
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream_ = nullptr;
};

TEST_F(ExpandDevice, RandomCountsAtEverySize) {
  for (unsigned k : {1u, 2u, 5u, 255u}) {
    for (std::uint64_t n : winnow::test::expand_sizes()) {
      if (!winnow::test::affordable(n, k)) continue;
      const auto counts = random_counts(n, k, 4);
      const std::uint64_t total = sum_of(counts);
      const std::string what = "n=" + std::to_string(n) + " k=" + std::to_string(k);
      expand_and_check<std::uint64_t>(counts, total + 5, true, 0, stream_, what + " u64");
      if (HasFatalFailure()) return;
      expand_and_check<std::uint32_t>(counts, total, false, 3, stream_, what + " u32 unaligned");
      if (HasFatalFailure()) return;
    }
  }
}

TEST_F(ExpandDevice, CapacityAndEmpty) {
  const auto counts = random_counts(70001, 5, 5);
  const std::uint64_t total = sum_of(counts);
  for (std::uint64_t capacity : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4097}, total / 2, total - 1}) {
    expand_and_check<std::uint64_t>(counts, capacity, true, 0, stream_, "capacity " + std::to_string(capacity));
    if (HasFatalFailure()) return;
  }
  expand_and_check<std::uint64_t>({}, 3, true, 0, stream_, "empty");
}

TEST_F(ExpandDevice, ThirtyTwoBitElementsRefusedPast2Pow32) {
  std::size_t bytes = 0;
  std::uint32_t* none = nullptr;
  EXPECT_THROW(winnow::cuda::histopyramid_expand(nullptr, bytes, nullptr, (std::uint64_t{1} << 32) + 1, none, nullptr,
                                                 nullptr, 0, nullptr),
               winnow::InputError);
}

// A synchronising call inside stream capture fails the capture: the expansion must only enqueue.
TEST_F(ExpandDevice, CapturedIntoAGraph) {
  const auto counts = random_counts(100000, 5, 6);
  const std::uint64_t total = sum_of(counts);
  Dev<std::uint8_t> d_counts(counts.size());
  Dev<std::uint64_t> d_element(total), d_total(1);
  Dev<std::uint8_t> d_rank(total);
  CUDA_OK(cudaMemcpy(d_counts.p, counts.data(), counts.size(), cudaMemcpyHostToDevice));
  std::size_t bytes = 0;
  winnow::cuda::histopyramid_expand(nullptr, bytes, d_counts.p, counts.size(), d_element.p, d_rank.p, d_total.p, total,
                                    stream_);
  Dev<unsigned char> temp(bytes);
  d_element.poison();
  CUDA_OK(cudaDeviceSynchronize());
  cudaGraph_t graph = nullptr;
  CUDA_OK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
  winnow::cuda::histopyramid_expand(temp.p, bytes, d_counts.p, counts.size(), d_element.p, d_rank.p, d_total.p, total,
                                    stream_);
  CUDA_OK(cudaStreamEndCapture(stream_, &graph));
  cudaGraphExec_t exec = nullptr;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_OK(cudaGraphLaunch(exec, stream_));
  CUDA_OK(cudaStreamSynchronize(stream_));
  CUDA_OK(cudaGraphExecDestroy(exec));
  CUDA_OK(cudaGraphDestroy(graph));
  ASSERT_EQ(d_total.download(1)[0], total);
  EXPECT_TRUE(expansion_matches(counts, total, d_element.download(total), d_rank.download(total)));
}

__global__ void sparse_counts(std::uint8_t* c, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    c[i] = i % 4099 == 7 ? static_cast<std::uint8_t>(1 + (i / 4099) % 3) : 0;
}

TEST_F(ExpandDevice, MoreThan2Pow32Counts) {
  const std::uint64_t n = (std::uint64_t{1} << 32) + 1000;
  std::size_t free_b = 0, total_b = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < n + (std::uint64_t{1} << 30)) GTEST_SKIP() << "needs ~5 GiB of free GPU memory";
  std::vector<std::uint64_t> want_element;
  std::vector<std::uint8_t> want_rank;
  for (std::uint64_t i = 7; i < n; i += 4099)
    for (unsigned r = 0; r < 1 + (i / 4099) % 3; ++r) want_element.push_back(i), want_rank.push_back(r);
  const std::uint64_t total = want_element.size();
  Dev<std::uint8_t> d_counts(n), d_rank(total);
  Dev<std::uint64_t> d_element(total), d_total(1);
  ASSERT_TRUE(d_counts.p && d_rank.p && d_element.p);
  sparse_counts<<<4096, 256>>>(d_counts.p, n);
  CUDA_OK(cudaGetLastError());
  std::size_t bytes = 0;
  winnow::cuda::histopyramid_expand(nullptr, bytes, d_counts.p, n, d_element.p, d_rank.p, d_total.p, total, nullptr);
  Dev<unsigned char> temp(bytes);
  winnow::cuda::histopyramid_expand(temp.p, bytes, d_counts.p, n, d_element.p, d_rank.p, d_total.p, total, nullptr);
  CUDA_OK(cudaDeviceSynchronize());
  ASSERT_EQ(d_total.download(1)[0], total);
  EXPECT_EQ(d_element.download(total), want_element);
  EXPECT_EQ(d_rank.download(total), want_rank);
}

}  // namespace
