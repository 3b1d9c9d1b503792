#pragma once
// The expansion tests' own reference: the counts, their exclusive prefix sum written out here,
// and the (element, rank) every output key must hold. Shared by the host-API tests
// (test_histopyramid.cpp, CPU and CUDA) and the device-API tests (test_histopyramid_device.cu).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace winnow::test {

/// Sizes around the pyramid's thread runs (32 counts), tiles (8192 counts, 32768 bits; the CPU's
/// 65536), window of 4096 outputs, and the top's chunk of 16384 tiles.
inline const std::vector<std::uint64_t>& expand_sizes() {
  static const std::vector<std::uint64_t> sizes = {1,
                                                   2,
                                                   3,
                                                   4,
                                                   5,
                                                   31,
                                                   32,
                                                   33,
                                                   255,
                                                   256,
                                                   257,
                                                   1023,
                                                   1024,
                                                   1025,
                                                   4095,
                                                   4096,
                                                   4097,
                                                   65535,
                                                   65537,
                                                   (1u << 20) + 1,
                                                   (1u << 24) + 3};
  return sizes;
}

/// n counts, uniform in 0..k (k = 0: all zero), from a fixed seed.
inline std::vector<std::uint8_t> random_counts(std::uint64_t n, unsigned k, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + n * 31 + k);
  std::uniform_int_distribution<unsigned> d(0, k);
  std::vector<std::uint8_t> c(n);
  for (auto& x : c) x = static_cast<std::uint8_t>(d(rng));
  return c;
}

/// Checks min(total, capacity) outputs against the prefix sum of `counts`; `ranks` may be empty
/// (not checked). Stops at the first mismatch.
template <class Element>
::testing::AssertionResult expansion_matches(const std::vector<std::uint8_t>& counts, std::uint64_t capacity,
                                             const std::vector<Element>& elements,
                                             const std::vector<std::uint8_t>& ranks) {
  std::uint64_t key = 0;  // the exclusive prefix sum of counts[0..i)
  for (std::uint64_t i = 0; i < counts.size() && key < capacity; ++i) {
    for (unsigned r = 0; r < counts[i] && key < capacity; ++r, ++key) {
      if (elements[key] != static_cast<Element>(i))
        return ::testing::AssertionFailure() << "key " << key << ": element " << +elements[key] << ", expected " << i;
      if (!ranks.empty() && ranks[key] != r)
        return ::testing::AssertionFailure() << "key " << key << ": rank " << +ranks[key] << ", expected " << r;
    }
  }
  return ::testing::AssertionSuccess();
}

inline std::uint64_t sum_of(const std::vector<std::uint8_t>& counts) {
  std::uint64_t s = 0;
  for (auto c : counts) s += c;
  return s;
}

/// The (size, k) cases of the matrix whose outputs stay under ~2^25 (host memory and time).
inline bool affordable(std::uint64_t n, unsigned k) { return n * k / 2 <= (std::uint64_t{1} << 25); }

}  // namespace winnow::test
