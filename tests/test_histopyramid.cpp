// Stream expansion through the host API (winnow/histopyramid.hpp) on every backend (CUDA skips
// without a device): random counts 0..k for k in {1, 2, 5, 255} at sizes around the pyramid's
// run, tile and window boundaries, all zero, all k, a capacity below the total, 32- and 64-bit
// elements, with and without ranks; every output against the prefix-sum reference of
// common/expand_oracle.hpp, outputs past the capacity poisoned and checked untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/expand_oracle.hpp"
#include "common/gpu_guard.hpp"
#include "winnow/error.hpp"
#include "winnow/histopyramid.hpp"

namespace {

using winnow::Backend;
using winnow::test::expansion_matches;
using winnow::test::random_counts;
using winnow::test::sum_of;

class Expand : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::cuda && !winnow::test::gpu_ready()) WINNOW_GPU_MISSING("no CUDA device answers");
  }
  winnow::ExpandOptions options() const { return winnow::ExpandOptions{GetParam()}; }

  // Expands into `capacity` 64-bit (or 32-bit) elements and ranks poisoned beforehand; checks the
  // returned total, every written output, and that nothing at or past the total was touched.
  template <class Element>
  void check(const std::vector<std::uint8_t>& counts, std::uint64_t capacity, bool with_ranks,
             const std::string& what) {
    const std::uint64_t want = sum_of(counts);
    constexpr Element kPoison = static_cast<Element>(0xA5A5A5A5A5A5A5A5ull);
    std::vector<Element> elements(capacity, kPoison);
    std::vector<std::uint8_t> ranks(with_ranks ? capacity : 0, 0xA5);
    const std::uint64_t total = winnow::expand(counts, std::span<Element>(elements), ranks, options());
    ASSERT_EQ(total, want) << what;
    ASSERT_TRUE(expansion_matches(counts, capacity, elements, ranks)) << what;
    for (std::uint64_t k = want; k < capacity; ++k) {
      ASSERT_EQ(elements[k], kPoison) << what << ": key " << k << " past the total was written";
      if (with_ranks) ASSERT_EQ(ranks[k], 0xA5) << what << ": rank " << k << " past the total was written";
    }
  }
};

TEST_P(Expand, RandomCountsAtEverySize) {
  for (unsigned k : {1u, 2u, 5u, 255u}) {
    for (std::uint64_t n : winnow::test::expand_sizes()) {
      if (!winnow::test::affordable(n, k)) continue;
      const auto counts = random_counts(n, k, 1);
      const std::uint64_t total = sum_of(counts);
      const std::string what = "n=" + std::to_string(n) + " k=" + std::to_string(k);
      check<std::uint64_t>(counts, total + 7, true, what + " u64");  // room to spare: must stay poisoned
      if (HasFatalFailure()) return;
      if (n <= 65537 || k <= 2) {  // 32-bit elements, no ranks: the other output form
        check<std::uint32_t>(counts, total, false, what + " u32");
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(Expand, AllZeroAndAllK) {
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{33}, std::uint64_t{8193}, std::uint64_t{65537},
                          std::uint64_t{(1u << 20) + 1}}) {
    check<std::uint64_t>(std::vector<std::uint8_t>(n, 0), 16, true, "zero n=" + std::to_string(n));
    if (HasFatalFailure()) return;
    for (unsigned k : {1u, 5u, 255u}) {
      if (!winnow::test::affordable(n, k)) continue;
      const std::vector<std::uint8_t> counts(n, static_cast<std::uint8_t>(k));
      check<std::uint64_t>(counts, n * k, true, "all " + std::to_string(k) + " n=" + std::to_string(n));
      if (HasFatalFailure()) return;
    }
  }
}

// Sparse counts (most zero, the rest 1..4: marching cubes' shape), so a tile's few outputs
// come from scattered elements.
TEST_P(Expand, SparseCounts) {
  for (std::uint64_t n : {std::uint64_t{4097}, std::uint64_t{(1u << 20) + 1}, std::uint64_t{(1u << 24) + 3}}) {
    auto counts = random_counts(n, 39, 2);
    for (auto& c : counts) c = c >= 36 ? static_cast<std::uint8_t>(c - 35) : 0;
    check<std::uint64_t>(counts, sum_of(counts), true, "sparse n=" + std::to_string(n));
    if (HasFatalFailure()) return;
  }
}

// Fewer outputs than the total: exactly the first `capacity` keys are written, the total is still
// the whole sum.
TEST_P(Expand, CapacityBelowTotal) {
  const auto counts = random_counts(100003, 5, 3);
  const std::uint64_t total = sum_of(counts);
  for (std::uint64_t capacity : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4095}, total / 3, total - 1}) {
    check<std::uint64_t>(counts, capacity, true, "capacity " + std::to_string(capacity));
    if (HasFatalFailure()) return;
  }
}

TEST_P(Expand, EmptyInput) {
  std::vector<std::uint64_t> elements(4, 7);
  EXPECT_EQ(winnow::expand({}, std::span<std::uint64_t>(elements), {}, options()), 0u);
  EXPECT_EQ(elements, std::vector<std::uint64_t>(4, 7));
}

TEST_P(Expand, RanksOfAnotherLengthAreRefused) {
  const std::vector<std::uint8_t> counts = {1, 2, 3};
  std::vector<std::uint64_t> elements(6);
  std::vector<std::uint8_t> ranks(5);
  EXPECT_THROW(winnow::expand(counts, std::span<std::uint64_t>(elements), ranks, options()), winnow::InputError);
}

INSTANTIATE_TEST_SUITE_P(Backends, Expand, ::testing::Values(Backend::cpu, Backend::cuda),
                         [](const auto& info) { return std::string(winnow::to_string(info.param)); });

}  // namespace
