// Device API of stream compaction (winnow/cuda/compact.hpp): temporary-storage sizing call,
// DeviceAllocator overload, flagged and index forms, count in device memory, no host
// synchronisation (checked by capturing the calls into a CUDA graph), poisoned outputs, random
// data, and n > 2^32 when the GPU has the memory.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/compact_oracle.hpp"
#include "common/device_buffer.cuh"
#include "common/gpu_guard.hpp"
#include "winnow/compact.hpp"
#include "winnow/cuda/compact.hpp"
#include "winnow/error.hpp"

namespace {

using winnow::CompactAlgorithm;
using winnow::CompactOptions;
using winnow::Order;

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

using winnow::test::Dev;

struct Variant {
  CompactAlgorithm algorithm;
  Order order;
};
const Variant kVariants[] = {
    {CompactAlgorithm::automatic, Order::stable},    {CompactAlgorithm::single_pass, Order::stable},
    {CompactAlgorithm::single_pass, Order::any},     {CompactAlgorithm::block_ballot, Order::stable},
    {CompactAlgorithm::block_ballot, Order::any},    {CompactAlgorithm::group_scan, Order::stable},
    {CompactAlgorithm::histopyramid, Order::stable},
};
std::string name(const Variant& v) {
  return std::string(winnow::to_string(v.algorithm)) + (v.order == Order::stable ? "/stable" : "/any");
}

const std::uint64_t kSizes[] = {0,    1,    31,   32,   33,   1000, 1023, 1024, 1025,   2047,
                                2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193, 100000, (1u << 20) + 7};

template <class T>
void expect_same(std::vector<T> got, std::vector<T> want, Order order, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  if (order == Order::any) {
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
  }
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << what << " at " << i;
}

// Random int32 in [0, 1000) and thresholds for ~0%, 1%, 50%, 99%, 100% kept.
TEST(CompactDevice, ValuesIndicesSizingCallAllVariants) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::mt19937_64 rng(7);
  for (std::uint64_t n : kSizes) {
    std::vector<std::int32_t> h(n);
    for (auto& x : h) x = static_cast<std::int32_t>(rng() % 1000);
    Dev<std::int32_t> d_in(n), d_out(n);
    Dev<std::uint32_t> d_idx32(n);
    Dev<std::uint64_t> d_idx64(n), d_count(1);
    d_in.upload(h);
    for (int t : {1000, 989, 499, 9, -1}) {
      std::vector<std::int32_t> want;
      std::vector<std::uint64_t> want_idx;
      for (std::uint64_t i = 0; i < n; ++i)
        if (h[i] > t) {
          want.push_back(h[i]);
          want_idx.push_back(i);
        }
      const auto pred = winnow::where(winnow::CompareOp::greater, std::int32_t{t});
      for (const Variant& v : kVariants) {
        const std::string what = name(v) + " n=" + std::to_string(n) + " t=" + std::to_string(t);
        CompactOptions o;
        o.algorithm = v.algorithm;
        o.order = v.order;
        std::size_t bytes = 0;
        winnow::cuda::compact<std::int32_t>(nullptr, bytes, d_in.p, n, d_out.p, d_count.p, pred, o, nullptr);
        ASSERT_GT(bytes, 0u) << what;
        Dev<unsigned char> temp(bytes);
        d_out.poison();
        d_count.poison();
        winnow::cuda::compact<std::int32_t>(temp.p, bytes, d_in.p, n, d_out.p, d_count.p, pred, o, nullptr);
        const std::uint64_t k = d_count.download(1)[0];
        ASSERT_EQ(k, want.size()) << what;
        expect_same(d_out.download(k), want, v.order, what);

        std::size_t ib = 0;
        winnow::cuda::compact_indices<std::int32_t, std::uint64_t>(nullptr, ib, d_in.p, n, d_idx64.p, d_count.p, pred,
                                                                   o, nullptr);
        Dev<unsigned char> itemp(ib);
        d_idx64.poison();
        d_count.poison();
        winnow::cuda::compact_indices<std::int32_t, std::uint64_t>(itemp.p, ib, d_in.p, n, d_idx64.p, d_count.p, pred,
                                                                   o, nullptr);
        ASSERT_EQ(d_count.download(1)[0], want.size()) << what;
        expect_same(d_idx64.download(want.size()), want_idx, v.order, what + " idx64");
        d_idx32.poison();
        std::size_t ib32 = 0;
        winnow::cuda::compact_indices<std::int32_t, std::uint32_t>(nullptr, ib32, d_in.p, n, d_idx32.p, d_count.p, pred,
                                                                   o, nullptr);
        Dev<unsigned char> itemp32(ib32);
        d_count.poison();
        winnow::cuda::compact_indices<std::int32_t, std::uint32_t>(itemp32.p, ib32, d_in.p, n, d_idx32.p, d_count.p,
                                                                   pred, o, nullptr);
        ASSERT_EQ(d_count.download(1)[0], want.size()) << what;
        std::vector<std::uint32_t> want32(want_idx.begin(), want_idx.end());
        expect_same(d_idx32.download(want.size()), want32, v.order, what + " idx32");
      }
    }
  }
}

// Every element size, unaligned inputs (the scalar-load path), a 2^24 + 7 run.
template <class T>
std::vector<T> random_values(std::uint64_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, winnow::Rgba8>)
      x = winnow::Rgba8{static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng()),
                        static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng())};
    else if constexpr (std::is_same_v<T, winnow::RgbaF32>)
      x = winnow::RgbaF32{float(rng() % 256), float(rng() % 256), float(rng() % 256), float(rng() % 256)};
    else x = static_cast<T>(rng() % 200);
  }
  return v;
}
// The predicate each element type is compacted by, and the test's own reading of it
// (common/compact_oracle.hpp), never winnow::matches, which the kernels call themselves.
template <class T>
winnow::Predicate pred_for() {
  if constexpr (std::is_same_v<T, winnow::Rgba8> || std::is_same_v<T, winnow::RgbaF32>)
    return winnow::where_luminance(winnow::CompareOp::greater, 100.0);
  else return winnow::where(winnow::CompareOp::less, static_cast<T>(90));
}
template <class T>
bool keep_ref(const T& x) {
  using winnow::test::compare_ref;
  if constexpr (std::is_same_v<T, winnow::Rgba8>)
    return compare_ref(winnow::CompareOp::greater, winnow::test::luma_milli_ref(x), 100000u);
  else if constexpr (std::is_same_v<T, winnow::RgbaF32>)
    return compare_ref(winnow::CompareOp::greater, winnow::test::float_luma_ref(x), 100.0f);
  else return compare_ref(winnow::CompareOp::less, x, static_cast<T>(90));
}

/// offset: elements before the input (1: an unaligned input); out_offset: likewise for the output
/// (1: an output that is not 16-byte aligned, the unordered ring kernel's scalar store path).
template <class T>
void check_type(std::uint64_t n, std::uint64_t offset, std::uint64_t out_offset = 0) {
  std::mt19937_64 rng(n + offset);
  std::vector<T> h = random_values<T>(n + offset, rng);
  const winnow::Predicate pred = pred_for<T>();
  std::vector<T> want;
  for (std::uint64_t i = offset; i < n + offset; ++i)
    if (keep_ref(h[i])) want.push_back(h[i]);
  Dev<T> d_in(n + offset), d_out_all(n + out_offset);
  T* const d_out = d_out_all.p + out_offset;
  Dev<std::uint64_t> d_count(1);
  d_in.upload(h);
  for (const Variant& v : kVariants) {
    if (n > (1u << 22) && v.algorithm != CompactAlgorithm::single_pass) continue;
    CompactOptions o;
    o.algorithm = v.algorithm;
    o.order = v.order;
    std::size_t bytes = 0;
    winnow::cuda::compact<T>(nullptr, bytes, d_in.p + offset, n, d_out, d_count.p, pred, o, nullptr);
    Dev<unsigned char> temp(bytes);
    d_out_all.poison();
    d_count.poison();
    winnow::cuda::compact<T>(temp.p, bytes, d_in.p + offset, n, d_out, d_count.p, pred, o, nullptr);
    const std::uint64_t k = d_count.download(1)[0];
    ASSERT_EQ(k, want.size()) << name(v) << " size " << sizeof(T) << " n " << n;
    auto all = d_out_all.download(n + out_offset);
    for (std::uint64_t i = k + out_offset; i < n + out_offset; ++i)  // nothing written past the kept elements
      ASSERT_EQ(reinterpret_cast<const unsigned char*>(&all[i])[0], 0xA5)
          << name(v) << " wrote past the count at " << i;
    if (out_offset)
      ASSERT_EQ(reinterpret_cast<const unsigned char*>(&all[0])[0], 0xA5) << name(v) << " wrote before out";
    std::vector<T> got(all.begin() + static_cast<std::ptrdiff_t>(out_offset),
                       all.begin() + static_cast<std::ptrdiff_t>(out_offset + k));
    if (v.order == Order::stable) {
      for (std::size_t i = 0; i < k; ++i) ASSERT_TRUE(got[i] == want[i]) << name(v) << " at " << i;
    } else {
      auto key = [](const T& a) {
        std::array<unsigned char, sizeof(T)> b;
        std::memcpy(b.data(), &a, sizeof(T));
        return b;
      };
      std::vector<std::array<unsigned char, sizeof(T)>> a, b;
      for (auto& x : got) a.push_back(key(x));
      for (auto& x : want) b.push_back(key(x));
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      ASSERT_TRUE(a == b) << name(v);
    }
  }
}

TEST(CompactDevice, EveryElementSizeAlignedAndUnaligned) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  for (std::uint64_t n : {std::uint64_t{33}, std::uint64_t{5000}, std::uint64_t{(1u << 20) + 7}})
    for (std::uint64_t off : {0, 1}) {
      check_type<std::uint8_t>(n, off);
      check_type<std::uint16_t>(n, off);
      check_type<float>(n, off);
      check_type<winnow::Rgba8>(n, off);
      check_type<double>(n, off);
      check_type<winnow::RgbaF32>(n, off);
    }
}

// Outputs that are not 16-byte aligned: the unordered ring kernel stores element by element
// there, and 16-byte vectors (shifted to the output's alignment) otherwise.
TEST(CompactDevice, UnalignedOutput) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  for (std::uint64_t n : {std::uint64_t{33}, std::uint64_t{70001}, std::uint64_t{(1u << 20) + 7}})
    for (std::uint64_t out_off : {1, 3}) {
      check_type<std::uint8_t>(n, 0, out_off);
      check_type<std::uint16_t>(n, 0, out_off);
      check_type<float>(n, 0, out_off);
      check_type<double>(n, 0, out_off);
      check_type<winnow::RgbaF32>(n, 0, out_off);
    }
}

TEST(CompactDevice, Large2Pow24Plus7) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  check_type<std::int32_t>((1u << 24) + 7, 0);
  check_type<std::uint8_t>((1u << 24) + 7, 0);
}

// Unordered inputs of 16 MiB and more run the ring kernel (sm_90+): every element size, with the
// comparison loops (arithmetic types) and the general predicate (pixels by luminance), a partial
// last tile and a trailing part vector.
TEST(CompactDevice, RingEveryElementSize) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  constexpr std::uint64_t kBytes = std::uint64_t{16} << 20;
  check_type<std::uint8_t>(kBytes + 7, 0);
  check_type<std::uint16_t>(kBytes / 2 + 5, 0);
  check_type<float>(kBytes / 4 + 3, 0);
  check_type<winnow::Rgba8>(kBytes / 4 + 1001, 0);
  check_type<double>(kBytes / 8 + 1, 0);
  check_type<std::uint64_t>(kBytes / 8 + 4097, 0);
  check_type<winnow::RgbaF32>(kBytes / 16 + 3, 0);
}

// The ring kernel runs one tile loop per comparison operator: each of them, float with NaNs.
TEST(CompactDevice, RingEveryComparison) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const std::uint64_t n = (std::uint64_t{1} << 22) + 3;  // 16 MiB of floats and a part vector
  std::mt19937_64 rng(5);
  std::vector<float> h(n);
  for (auto& x : h) x = (rng() % 97 == 0) ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(rng() % 1000);
  Dev<float> d_in(n), d_out(n);
  Dev<std::uint64_t> d_count(1);
  d_in.upload(h);
  for (winnow::CompareOp op : {winnow::CompareOp::greater, winnow::CompareOp::greater_equal, winnow::CompareOp::less,
                               winnow::CompareOp::less_equal, winnow::CompareOp::equal, winnow::CompareOp::not_equal}) {
    const auto pred = winnow::where(op, 500.0f);
    std::vector<std::uint32_t> want;  // bit patterns (NaN != NaN)
    for (float x : h)
      if (winnow::test::compare_ref(op, x, 500.0f)) want.push_back(std::bit_cast<std::uint32_t>(x));
    CompactOptions o;
    o.order = Order::any;
    std::size_t bytes = 0;
    winnow::cuda::compact<float>(nullptr, bytes, d_in.p, n, d_out.p, d_count.p, pred, o, nullptr);
    Dev<unsigned char> temp(bytes);
    d_out.poison();
    d_count.poison();
    winnow::cuda::compact<float>(temp.p, bytes, d_in.p, n, d_out.p, d_count.p, pred, o, nullptr);
    const std::uint64_t k = d_count.download(1)[0];
    ASSERT_EQ(k, want.size()) << static_cast<int>(op);
    std::vector<std::uint32_t> got;
    for (float x : d_out.download(k)) got.push_back(std::bit_cast<std::uint32_t>(x));
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    ASSERT_TRUE(got == want) << static_cast<int>(op);
  }
}

// Unordered indices over many tiles per block (the ring kernel's persistent blocks), as a set.
TEST(CompactDevice, UnorderedIndicesManyTiles) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const std::uint64_t n = (std::uint64_t{1} << 24) + 7;
  std::mt19937_64 rng(11);
  std::vector<std::int32_t> h(n);
  for (auto& x : h) x = static_cast<std::int32_t>(rng() % 1000);
  Dev<std::int32_t> d_in(n);
  Dev<std::uint64_t> d_idx(n), d_count(1);
  Dev<std::uint32_t> d_idx32(n);
  d_in.upload(h);
  for (int t : {990, 500, 5}) {
    const auto pred = winnow::where(winnow::CompareOp::greater, std::int32_t{t});
    std::vector<std::uint64_t> want;
    for (std::uint64_t i = 0; i < n; ++i)
      if (h[i] > t) want.push_back(i);
    CompactOptions o;
    o.order = Order::any;
    std::size_t bytes = 0;
    winnow::cuda::compact_indices<std::int32_t, std::uint64_t>(nullptr, bytes, d_in.p, n, d_idx.p, d_count.p, pred, o,
                                                               nullptr);
    Dev<unsigned char> temp(bytes);
    d_idx.poison();
    d_count.poison();
    winnow::cuda::compact_indices<std::int32_t, std::uint64_t>(temp.p, bytes, d_in.p, n, d_idx.p, d_count.p, pred, o,
                                                               nullptr);
    ASSERT_EQ(d_count.download(1)[0], want.size()) << t;
    auto got = d_idx.download(want.size());
    std::sort(got.begin(), got.end());
    ASSERT_TRUE(got == want) << t;
    d_idx32.poison();
    d_count.poison();
    winnow::cuda::compact_indices<std::int32_t, std::uint32_t>(temp.p, bytes, d_in.p, n, d_idx32.p, d_count.p, pred, o,
                                                               nullptr);
    ASSERT_EQ(d_count.download(1)[0], want.size()) << t;
    auto got32 = d_idx32.download(want.size());
    std::sort(got32.begin(), got32.end());
    ASSERT_TRUE(std::equal(got32.begin(), got32.end(), want.begin())) << t;
  }
}

TEST(CompactDevice, FlaggedValuesAndIndices) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::mt19937_64 rng(11);
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{4097}, std::uint64_t{(1u << 20) + 7}}) {
    std::vector<double> h(n);
    std::vector<std::uint8_t> f(n);
    for (auto& x : h) x = static_cast<double>(rng() % 100000) * 0.5;
    for (auto& x : f) x = (rng() % 3 == 0) ? static_cast<std::uint8_t>(1 + rng() % 255) : 0;
    std::vector<double> want;
    std::vector<std::uint32_t> want_idx;
    for (std::uint64_t i = 0; i < n; ++i)
      if (f[i]) {
        want.push_back(h[i]);
        want_idx.push_back(static_cast<std::uint32_t>(i));
      }
    Dev<double> d_in(n), d_out(n);
    Dev<std::uint8_t> d_f(n);
    Dev<std::uint32_t> d_idx(n);
    Dev<std::uint64_t> d_count(1);
    d_in.upload(h);
    d_f.upload(f);
    for (const Variant& v : kVariants) {
      CompactOptions o;
      o.algorithm = v.algorithm;
      o.order = v.order;
      std::size_t bytes = 0;
      winnow::cuda::compact_flagged<double>(nullptr, bytes, d_in.p, d_f.p, n, d_out.p, d_count.p, o, nullptr);
      Dev<unsigned char> temp(bytes);
      d_out.poison();
      d_count.poison();
      winnow::cuda::compact_flagged<double>(temp.p, bytes, d_in.p, d_f.p, n, d_out.p, d_count.p, o, nullptr);
      ASSERT_EQ(d_count.download(1)[0], want.size()) << name(v);
      expect_same(d_out.download(want.size()), want, v.order, name(v) + " flagged");

      std::size_t ib = 0;
      winnow::cuda::compact_flagged_indices(nullptr, ib, d_f.p, n, d_idx.p, d_count.p, o, nullptr);
      Dev<unsigned char> itemp(ib);
      d_idx.poison();
      d_count.poison();
      winnow::cuda::compact_flagged_indices(itemp.p, ib, d_f.p, n, d_idx.p, d_count.p, o, nullptr);
      ASSERT_EQ(d_count.download(1)[0], want.size()) << name(v);
      expect_same(d_idx.download(want.size()), want_idx, v.order, name(v) + " flagged indices");
    }
  }
}

TEST(CompactDevice, CountFlaggedIsTheHostCount) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::mt19937_64 rng(21);
  const std::uint64_t most = (1u << 20) + 77;
  std::vector<std::uint8_t> flags(most + 16);
  for (auto& f : flags) f = (rng() % 3 == 0) ? static_cast<std::uint8_t>(rng() % 255 + 1) : 0;  // any non-zero value
  Dev<std::uint8_t> d_flags(flags.size());
  d_flags.upload(flags);
  Dev<std::uint64_t> d_count(1);
  for (const std::uint64_t offset : {0u, 1u, 7u, 15u})
    for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{15}, std::uint64_t{16},
                                  std::uint64_t{17}, std::uint64_t{4099}, most}) {
      d_count.poison();
      winnow::cuda::count_flagged(d_flags.p + offset, n, d_count.p, nullptr);
      const auto want = static_cast<std::uint64_t>(
          std::count_if(flags.begin() + offset, flags.begin() + offset + n, [](std::uint8_t f) { return f != 0; }));
      ASSERT_EQ(d_count.download(1)[0], want) << "offset " << offset << ", n " << n;
    }
  EXPECT_THROW(winnow::cuda::count_flagged(d_flags.p, 10, nullptr, nullptr), winnow::InputError);
}

class CountingAllocator : public winnow::cuda::DeviceAllocator {
 public:
  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    void* p = nullptr;
    if (cudaMallocAsync(&p, bytes, stream) != cudaSuccess) return nullptr;
    ++allocations;
    last_bytes = bytes;
    return p;
  }
  void deallocate(void* p, std::size_t bytes, cudaStream_t stream) override {
    EXPECT_EQ(bytes, last_bytes);
    ++releases;
    cudaFreeAsync(p, stream);
  }
  int allocations = 0, releases = 0;
  std::size_t last_bytes = 0;
};

TEST(CompactDevice, DeviceAllocatorOverloads) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const std::uint64_t n = 300000;
  std::mt19937_64 rng(3);
  std::vector<float> h(n);
  for (auto& x : h) x = static_cast<float>(rng() % 1000) / 10.0f;
  std::vector<std::uint8_t> f(n);
  for (auto& x : f) x = rng() % 2;
  const auto pred = winnow::where(winnow::CompareOp::greater_equal, 50.0f);
  std::vector<float> want, want_f;
  std::vector<std::uint64_t> want_idx;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (h[i] >= 50.0f) {
      want.push_back(h[i]);
      want_idx.push_back(i);
    }
    if (f[i]) want_f.push_back(h[i]);
  }
  Dev<float> d_in(n), d_out(n);
  Dev<std::uint8_t> d_f(n);
  Dev<std::uint64_t> d_idx(n), d_count(1);
  d_in.upload(h);
  d_f.upload(f);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CountingAllocator alloc;
  for (const Variant& v : kVariants) {
    CompactOptions o;
    o.algorithm = v.algorithm;
    o.order = v.order;
    d_out.poison();
    d_count.poison();
    winnow::cuda::compact<float>(alloc, d_in.p, n, d_out.p, d_count.p, pred, o, s);
    CUDA_OK(cudaStreamSynchronize(s));
    ASSERT_EQ(d_count.download(1)[0], want.size()) << name(v);
    expect_same(d_out.download(want.size()), want, v.order, name(v) + " alloc");
    d_idx.poison();
    d_count.poison();
    winnow::cuda::compact_indices<float, std::uint64_t>(alloc, d_in.p, n, d_idx.p, d_count.p, pred, o, s);
    CUDA_OK(cudaStreamSynchronize(s));
    ASSERT_EQ(d_count.download(1)[0], want_idx.size()) << name(v) << " indices";
    expect_same(d_idx.download(want.size()), want_idx, v.order, name(v) + " alloc idx");
    d_out.poison();
    d_count.poison();
    winnow::cuda::compact_flagged<float>(alloc, d_in.p, d_f.p, n, d_out.p, d_count.p, o, s);
    CUDA_OK(cudaStreamSynchronize(s));
    ASSERT_EQ(d_count.download(1)[0], want_f.size()) << name(v) << " flagged";
    expect_same(d_out.download(want_f.size()), want_f, v.order, name(v) + " alloc flagged");
  }
  EXPECT_EQ(alloc.allocations, 3 * static_cast<int>(std::size(kVariants)));
  EXPECT_EQ(alloc.releases, alloc.allocations);
  CUDA_OK(cudaStreamDestroy(s));
}

// A synchronising call inside stream capture fails the capture: every algorithm must enqueue
// only stream-ordered work, so it can be captured into a graph and replayed.
TEST(CompactDevice, NoHostSynchronisationGraphCapture) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const std::uint64_t n = (1u << 20) + 7;
  std::mt19937_64 rng(5);
  std::vector<std::uint16_t> h(n);
  for (auto& x : h) x = static_cast<std::uint16_t>(rng());
  const auto pred = winnow::where(winnow::CompareOp::greater, std::uint16_t{60000});
  std::vector<std::uint16_t> want;
  for (auto x : h)
    if (x > 60000) want.push_back(x);
  Dev<std::uint16_t> d_in(n), d_out(n);
  Dev<std::uint64_t> d_count(1);
  d_in.upload(h);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (const Variant& v : kVariants) {
    CompactOptions o;
    o.algorithm = v.algorithm;
    o.order = v.order;
    std::size_t bytes = 0;
    winnow::cuda::compact<std::uint16_t>(nullptr, bytes, d_in.p, n, d_out.p, d_count.p, pred, o, s);
    Dev<unsigned char> temp(bytes);
    cudaGraph_t graph;
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    winnow::cuda::compact<std::uint16_t>(temp.p, bytes, d_in.p, n, d_out.p, d_count.p, pred, o, s);
    CUDA_OK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec;
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 2; ++rep) {  // each replay writes its own results over fresh poison
      d_out.poison();
      d_count.poison();
      CUDA_OK(cudaGraphLaunch(exec, s));
      CUDA_OK(cudaStreamSynchronize(s));
      ASSERT_EQ(d_count.download(1)[0], want.size()) << name(v) << " replay " << rep;
      expect_same(d_out.download(want.size()), want, v.order, name(v) + " graph replay " + std::to_string(rep));
    }
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
  }
  CUDA_OK(cudaStreamDestroy(s));
}

TEST(CompactDevice, TooLittleTemporaryStorageThrows) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  Dev<std::int32_t> d_in(100000), d_out(100000);
  Dev<std::uint64_t> d_count(1);
  Dev<unsigned char> temp(16);
  std::size_t bytes = 16;
  CompactOptions o;
  o.algorithm = CompactAlgorithm::block_ballot;
  EXPECT_THROW(winnow::cuda::compact<std::int32_t>(temp.p, bytes, d_in.p, 100000, d_out.p, d_count.p, winnow::nonzero(),
                                                   o, nullptr),
               winnow::Error);
}

// n > 2^32 uint8 elements: in[i] = i % 251, keep x > 200, so out[j] = 201 + j % 50 and the
// index of out[j] is (j / 50) * 251 + 201 + j % 50. Checked on the device.
__global__ void fill_mod251(std::uint8_t* p, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    p[i] = static_cast<std::uint8_t>(i % 251);
}
__global__ void check_mod251(const std::uint8_t* out, const std::uint64_t* idx, std::uint64_t k,
                             unsigned long long* bad) {
  for (std::uint64_t j = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; j < k;
       j += std::uint64_t{gridDim.x} * blockDim.x) {
    if (out && out[j] != 201 + j % 50) atomicAdd(bad, 1ull);
    if (idx && idx[j] != (j / 50) * 251 + 201 + j % 50) atomicAdd(bad, 1ull);
  }
}

TEST(CompactDevice, MoreThan2Pow32Elements) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const std::uint64_t n = (std::uint64_t{1} << 32) + 1000;
  std::size_t free_b = 0, total_b = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < 3 * n + (std::uint64_t{1} << 30)) GTEST_SKIP() << "needs ~13 GiB of free GPU memory";
  std::uint64_t want = (n / 251) * 50;
  for (std::uint64_t r = (n / 251) * 251; r < n; ++r)
    if (r % 251 > 200) ++want;
  Dev<std::uint8_t> d_in(n), d_out(n);
  Dev<std::uint64_t> d_count(1);
  Dev<unsigned long long> d_bad(1);
  ASSERT_NE(d_in.p, nullptr);
  ASSERT_NE(d_out.p, nullptr);
  fill_mod251<<<4096, 256>>>(d_in.p, n);
  CUDA_OK(cudaGetLastError());
  const auto pred = winnow::where(winnow::CompareOp::greater, std::uint8_t{200});
  for (CompactAlgorithm a : {CompactAlgorithm::single_pass, CompactAlgorithm::block_ballot,
                             CompactAlgorithm::histopyramid, CompactAlgorithm::group_scan}) {
    CompactOptions o;
    o.algorithm = a;
    std::size_t bytes = 0;
    winnow::cuda::compact<std::uint8_t>(nullptr, bytes, d_in.p, n, d_out.p, d_count.p, pred, o, nullptr);
    Dev<unsigned char> temp(bytes);
    CUDA_OK(cudaMemset(d_out.p, 0, n));
    d_count.poison();
    winnow::cuda::compact<std::uint8_t>(temp.p, bytes, d_in.p, n, d_out.p, d_count.p, pred, o, nullptr);
    ASSERT_EQ(d_count.download(1)[0], want) << winnow::to_string(a);
    CUDA_OK(cudaMemset(d_bad.p, 0, 8));
    check_mod251<<<4096, 256>>>(d_out.p, nullptr, want, d_bad.p);
    ASSERT_EQ(d_bad.download(1)[0], 0u) << winnow::to_string(a);
  }
  if (free_b > 3 * n + 8 * want + (std::uint64_t{2} << 30)) {
    Dev<std::uint64_t> d_idx(want);
    ASSERT_NE(d_idx.p, nullptr);
    CompactOptions o;
    std::size_t bytes = 0;
    winnow::cuda::compact_indices<std::uint8_t, std::uint64_t>(nullptr, bytes, d_in.p, n, d_idx.p, d_count.p, pred, o,
                                                               nullptr);
    Dev<unsigned char> temp(bytes);
    d_count.poison();
    winnow::cuda::compact_indices<std::uint8_t, std::uint64_t>(temp.p, bytes, d_in.p, n, d_idx.p, d_count.p, pred, o,
                                                               nullptr);
    ASSERT_EQ(d_count.download(1)[0], want);
    CUDA_OK(cudaMemset(d_bad.p, 0, 8));
    check_mod251<<<4096, 256>>>(nullptr, d_idx.p, want, d_bad.p);
    ASSERT_EQ(d_bad.download(1)[0], 0u);
  }
}

}  // namespace

// CompactWorkspace: calls issued back to back on one stream with no synchronisation between
// them (each kernel zeroes the words the next call takes), with sizes that shrink and grow (the
// workspace reallocates), both orders, every form, aligned and unaligned inputs, n = 0; then a
// captured call replayed twice between eager calls. Every result against std::copy_if.
TEST(CompactDevice, WorkspaceBackToBackCallsAndCapture) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::mt19937_64 rng(21);
  const std::uint64_t max_n = (1u << 22) + 3;
  std::vector<std::int32_t> h(max_n + 1);
  for (auto& x : h) x = static_cast<std::int32_t>(rng() % 100000);
  std::vector<std::uint8_t> f(max_n);
  for (auto& x : f) x = (rng() % 4 == 0) ? 1 : 0;
  Dev<std::int32_t> d_in(max_n + 1);
  Dev<std::uint8_t> d_f(max_n);
  d_in.upload(h);
  d_f.upload(f);

  enum class Form { values, indices, flagged, flagged_indices };
  struct Call {
    std::uint64_t n;
    Order order;
    Form form;
    std::uint64_t offset;  // 1: unaligned input
    std::int32_t threshold;
  };
  const Call calls[] = {
      {(1u << 21) + 5, Order::stable, Form::values, 0, 99000},
      {(1u << 21) + 5, Order::stable, Form::values, 0, 50000},
      {(1u << 21) + 5, Order::stable, Form::values, 0, 1000},
      {5000, Order::stable, Form::values, 0, 30000},
      {max_n, Order::stable, Form::values, 0, 70000},
      {(1u << 20), Order::any, Form::values, 0, 99000},
      {(1u << 20), Order::any, Form::values, 0, 20000},
      {(1u << 20), Order::any, Form::indices, 0, 60000},
      {(1u << 20) + 1, Order::stable, Form::indices, 0, 40000},
      {7, Order::stable, Form::values, 0, 50000},
      {0, Order::any, Form::values, 0, 50000},
      {(1u << 20) + 9, Order::stable, Form::values, 1, 50000},
      {(1u << 20), Order::stable, Form::flagged, 0, 0},
      {(1u << 20) + 3, Order::any, Form::flagged_indices, 0, 0},
      {(1u << 21) + 5, Order::stable, Form::values, 0, 90000},
      {(1u << 21) + 5, Order::any, Form::values, 0, 90000},
      {(1u << 21) + 5, Order::stable, Form::values, 0, 10},
      {(1u << 21) + 5, Order::any, Form::values, 0, 10},
  };
  const std::size_t m = std::size(calls);
  std::vector<std::unique_ptr<Dev<std::int32_t>>> outs;
  std::vector<std::unique_ptr<Dev<std::uint64_t>>> idx_outs;
  Dev<std::uint64_t> d_counts(m);
  d_counts.poison();
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  winnow::cuda::CompactWorkspace ws;
  EXPECT_EQ(ws.bytes(), 0u);
  auto issue = [&](const Call& c, std::size_t i, std::int32_t* out, std::uint64_t* idx) {
    CompactOptions o;
    o.order = c.order;
    const auto pred = winnow::where(winnow::CompareOp::greater, c.threshold);
    const std::int32_t* in = d_in.p + c.offset;
    switch (c.form) {
      case Form::values: winnow::cuda::compact<std::int32_t>(ws, in, c.n, out, d_counts.p + i, pred, o, s); break;
      case Form::indices:
        winnow::cuda::compact_indices<std::int32_t, std::uint64_t>(ws, in, c.n, idx, d_counts.p + i, pred, o, s);
        break;
      case Form::flagged:
        winnow::cuda::compact_flagged<std::int32_t>(ws, in, d_f.p, c.n, out, d_counts.p + i, o, s);
        break;
      case Form::flagged_indices:
        winnow::cuda::compact_flagged_indices(ws, d_f.p, c.n, idx, d_counts.p + i, o, s);
        break;
    }
  };
  for (std::size_t i = 0; i < m; ++i) {
    outs.push_back(std::make_unique<Dev<std::int32_t>>(calls[i].n));
    idx_outs.push_back(std::make_unique<Dev<std::uint64_t>>(calls[i].n));
    outs.back()->poison();
    idx_outs.back()->poison();
  }
  for (std::size_t i = 0; i < m; ++i) issue(calls[i], i, outs[i]->p, idx_outs[i]->p);
  CUDA_OK(cudaStreamSynchronize(s));
  EXPECT_GT(ws.bytes(), 0u);

  auto check = [&](const Call& c, std::uint64_t k, const Dev<std::int32_t>& out, const Dev<std::uint64_t>& idx,
                   const std::string& what) {
    std::vector<std::int32_t> want;
    std::vector<std::uint64_t> want_idx;
    for (std::uint64_t i = 0; i < c.n; ++i) {
      const bool keep =
          (c.form == Form::flagged || c.form == Form::flagged_indices) ? f[i] != 0 : h[i + c.offset] > c.threshold;
      if (keep) {
        want.push_back(h[i + c.offset]);
        want_idx.push_back(i);
      }
    }
    ASSERT_EQ(k, want.size()) << what;
    if (c.form == Form::values || c.form == Form::flagged) expect_same(out.download(k), want, c.order, what);
    else expect_same(idx.download(k), want_idx, c.order, what);
  };
  const std::vector<std::uint64_t> counts = d_counts.download(m);
  for (std::size_t i = 0; i < m; ++i)
    check(calls[i], counts[i], *outs[i], *idx_outs[i],
          "call " + std::to_string(i) + " n=" + std::to_string(calls[i].n));

  // Captured calls (the workspace is large enough now), replayed twice between eager calls.
  for (Order order : {Order::stable, Order::any}) {
    const Call c{(1u << 21) + 5, order, Form::values, 0, 80000};
    Dev<std::int32_t> out(c.n), eager_out(c.n);
    Dev<std::uint64_t> count(1), eager_count(1), unused(1);
    cudaGraph_t graph;
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CompactOptions o;
    o.order = order;
    winnow::cuda::compact<std::int32_t>(ws, d_in.p, c.n, out.p, count.p,
                                        winnow::where(winnow::CompareOp::greater, c.threshold), o, s);
    CUDA_OK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec;
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 2; ++rep) {
      out.poison();
      count.poison();
      eager_out.poison();
      d_counts.poison();
      CUDA_OK(cudaGraphLaunch(exec, s));
      issue(c, 0, eager_out.p, unused.p);  // eager call between replays (count into d_counts[0])
      CUDA_OK(cudaStreamSynchronize(s));
      const std::string what = std::string(order == Order::stable ? "stable" : "any") + " rep " + std::to_string(rep);
      check(c, count.download(1)[0], out, unused, "captured " + what);
      check(c, d_counts.download(1)[0], eager_out, unused, "eager " + what);
    }
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
  }

  // A moved-from workspace starts over; the moved-to one keeps working.
  winnow::cuda::CompactWorkspace moved = std::move(ws);
  EXPECT_GT(moved.bytes(), 0u);
  const Call c{(1u << 21) + 5, Order::stable, Form::values, 0, 65000};
  Dev<std::int32_t> out(c.n);
  for (winnow::cuda::CompactWorkspace* w : {&moved, &ws}) {
    out.poison();
    d_counts.poison();
    CompactOptions o;
    winnow::cuda::compact<std::int32_t>(*w, d_in.p, c.n, out.p, d_counts.p,
                                        winnow::where(winnow::CompareOp::greater, c.threshold), o, s);
    CUDA_OK(cudaStreamSynchronize(s));
    check(c, d_counts.download(1)[0], out, *idx_outs[0], "after move");
  }
  CUDA_OK(cudaStreamDestroy(s));
}

// A workspace too small for a captured call says so instead of allocating during the capture.
TEST(CompactDevice, WorkspaceCaptureNeedsReservedStorage) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  Dev<std::int32_t> d_in(1 << 20), d_out(1 << 20);
  Dev<std::uint64_t> d_count(1);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  winnow::cuda::CompactWorkspace ws;
  CompactOptions o;
  o.algorithm = CompactAlgorithm::block_ballot;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  EXPECT_THROW(winnow::cuda::compact<std::int32_t>(ws, d_in.p, 1 << 20, d_out.p, d_count.p, winnow::nonzero(), o, s),
               winnow::InputError);
  cudaGraph_t graph;
  CUDA_OK(cudaStreamEndCapture(s, &graph));
  CUDA_OK(cudaGraphDestroy(graph));
  CUDA_OK(cudaStreamDestroy(s));
}
