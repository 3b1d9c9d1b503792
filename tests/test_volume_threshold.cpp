// Volume thresholds (winnow::otsu_threshold and winnow::threshold_volume of label.hpp) against
// oracles written here: Otsu by brute force (every split of the distinct values, or of the 256
// bins of a float volume, its between-class variance in long double from the voxels themselves),
// and the mask by a scalar loop comparing exact values; every voxel type, random volumes with two
// modes, gaps (ties), negative values, NaN and infinities, one value, and thresholds beyond the
// type's range. The comparison with scikit-image itself is in tests/python/test_orientation.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <type_traits>
#include <vector>

#include "common/input_error.hpp"
#include "winnow/error.hpp"
#include "winnow/label.hpp"

namespace winnow {
namespace {

// Two modes: values around `low` and around `high`, spread by `spread`, in T.
template <class T>
Volume<T> two_modes(std::int64_t nx, std::int64_t ny, std::int64_t nz, double low, double high, double spread,
                    std::uint64_t seed) {
  Volume<T> v(nx, ny, nz);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> a(low, spread), b(high, spread);
  std::bernoulli_distribution pick(0.35);
  for (auto& x : v.voxels()) {
    double value = pick(rng) ? b(rng) : a(rng);
    if constexpr (std::is_integral_v<T>) {
      value = std::clamp(std::round(value), static_cast<double>(std::numeric_limits<T>::lowest()),
                         static_cast<double>(std::numeric_limits<T>::max()));
    }
    x = static_cast<T>(value);
  }
  return v;
}

// The between-class variance w0 w1 (m0 - m1)^2 (weights as voxel counts) of the split of `values`
// into those of key <= split and those above, each counted with its weight.
long double between_class(const std::map<long double, std::uint64_t>& values, long double split) {
  long double w0 = 0, w1 = 0, s0 = 0, s1 = 0;
  for (const auto& [value, count] : values) {
    if (value <= split) w0 += count, s0 += value * count;
    else w1 += count, s1 += value * count;
  }
  if (w0 == 0 || w1 == 0) return 0;
  const long double d = s0 / w0 - s1 / w1;
  return w0 * w1 * d * d;
}

// Integer voxels, by brute force over the distinct values (running sums in long double): the best
// variance, and the smallest value that reaches it.
template <class T>
std::pair<long double, long double> brute_force_integer_otsu(const Volume<T>& v) {
  std::map<long double, std::uint64_t> values;
  for (const T x : v.voxels()) ++values[static_cast<long double>(x)];
  long double total_w = 0, total_s = 0;
  for (const auto& [value, count] : values) total_w += count, total_s += value * count;
  long double best = -1, at = 0, w0 = 0, s0 = 0;
  for (const auto& [value, count] : values) {
    w0 += count, s0 += value * count;
    const long double w1 = total_w - w0;
    long double variance = 0;
    if (w1 > 0) {
      const long double d = s0 / w0 - (total_s - s0) / w1;
      variance = w0 * w1 * d * d;
    }
    if (variance > best) best = variance, at = value;
  }
  return {best, at};
}

template <class T>
void expect_integer_otsu_is_optimal(const Volume<T>& v, const char* what) {
  const double t = otsu_threshold(v.view());
  const auto [best, best_at] = brute_force_integer_otsu(v);
  std::map<long double, std::uint64_t> values;
  for (const T x : v.voxels()) ++values[static_cast<long double>(x)];
  EXPECT_TRUE(values.count(static_cast<long double>(t))) << what << ": t = " << t << " is not a voxel value";
  // The variance at t is the best to the float32 running weights' rounding (scikit-image's).
  EXPECT_GE(between_class(values, t), best * (1 - 1e-6L)) << what << ": t = " << t << ", best at " << best_at;
}

TEST(VolumeThreshold, IntegerOtsuIsTheBestSplitOfTheValues) {
  expect_integer_otsu_is_optimal(two_modes<std::uint8_t>(40, 30, 20, 60, 170, 25, 1), "u8");
  expect_integer_otsu_is_optimal(two_modes<std::int8_t>(33, 17, 9, -60, 40, 20, 2), "i8");
  expect_integer_otsu_is_optimal(two_modes<std::uint16_t>(31, 29, 13, 900, 2400, 300, 3), "u16");
  expect_integer_otsu_is_optimal(two_modes<std::int16_t>(25, 20, 16, -1000, 400, 250, 4), "i16");
  expect_integer_otsu_is_optimal(two_modes<std::uint32_t>(20, 20, 20, 10000, 30000, 5000, 5), "u32");
  expect_integer_otsu_is_optimal(two_modes<std::int32_t>(20, 21, 22, -30000, -5000, 6000, 6), "i32");
  // 64-bit values whose range (under 2^20 values) still has a bin per value.
  expect_integer_otsu_is_optimal(two_modes<std::uint64_t>(17, 13, 11, 5e15, 5e15 + 3e5, 4e4, 7), "u64");
  expect_integer_otsu_is_optimal(two_modes<std::int64_t>(17, 13, 11, -2e5, 1e5, 4e4, 8), "i64");
}

TEST(VolumeThreshold, IntegerOtsuTiesGoToTheLowestValue) {
  // Values 10..20 and 200..210 only: every split in the gap is as good; the first is taken (20).
  Volume<std::uint16_t> v(16, 16, 8);
  std::mt19937 rng(9);
  for (auto& x : v.voxels()) x = static_cast<std::uint16_t>(rng() % 2 ? 10 + rng() % 11 : 200 + rng() % 11);
  EXPECT_EQ(otsu_threshold(v.view()), 20.0);
  // One value: that value (nothing is above it).
  Volume<std::int32_t> flat(5, 4, 3, -7);
  EXPECT_EQ(otsu_threshold(flat.view()), -7.0);
}

TEST(VolumeThreshold, WideIntegerRangesAreGroupedIntoBinsOfEqualWidth) {
  // 0 .. 2^32 - 1: 2^20 bins of 4096 values; t is the last value of its bin.
  Volume<std::uint32_t> v(24, 24, 24);
  std::mt19937_64 rng(10);
  for (auto& x : v.voxels())
    x = static_cast<std::uint32_t>(rng() % 2 ? rng() % 1000000000u : 3000000000u + rng() % 1000000000u);
  v(0, 0, 0) = 0;
  v(1, 0, 0) = std::numeric_limits<std::uint32_t>::max();
  const double t = otsu_threshold(v.view());
  const std::uint64_t values = std::uint64_t{1} << 32, bins = std::uint64_t{1} << 20;
  const std::uint64_t width = (values + bins - 1) / bins;
  EXPECT_EQ((static_cast<std::uint64_t>(t) + 1) % width, 0u) << t;
  // Its split is as good as the best split of the values, to the grouping's coarseness.
  std::map<long double, std::uint64_t> values_seen;
  for (const auto x : v.voxels()) ++values_seen[static_cast<long double>(x)];
  EXPECT_GE(between_class(values_seen, t), brute_force_integer_otsu(v).first * (1 - 1e-4L)) << t;
}

// Float voxels, by brute force over the 256 bins of [min, max] of the finite voxels (bin edges in
// long double): the best variance with each voxel counted as its bin's centre.
template <class T>
void expect_float_otsu_is_optimal(const Volume<T>& v, const char* what) {
  long double lo = INFINITY, hi = -INFINITY;
  for (const T x : v.voxels())
    if (std::isfinite(x)) lo = std::min<long double>(lo, x), hi = std::max<long double>(hi, x);
  const long double width = (hi - lo) / 256;
  std::map<long double, std::uint64_t> centres;
  for (const T x : v.voxels()) {
    if (!std::isfinite(x)) continue;
    const auto bin = std::min<long double>(255, std::floor((x - lo) / width));
    ++centres[lo + (bin + 0.5L) * width];
  }
  long double best = -1;
  for (const auto& [centre, count] : centres) best = std::max(best, between_class(centres, centre));
  const double t = otsu_threshold(v.view());
  // t is a bin centre (to T's rounding of the edges), and its split is the best to rounding.
  const long double k = (t - lo) / width - 0.5L;
  EXPECT_NEAR(static_cast<double>(k), std::round(static_cast<double>(k)), 1e-3) << what << ": t = " << t;
  EXPECT_GE(between_class(centres, lo + (std::round(k) + 0.5L) * width), best * (1 - 1e-5L)) << what << ": t = " << t;
}

TEST(VolumeThreshold, FloatOtsuIsTheBestSplitOfTheBins) {
  expect_float_otsu_is_optimal(two_modes<float>(40, 30, 20, -2.5, 4, 1.2, 11), "f32");
  expect_float_otsu_is_optimal(two_modes<double>(30, 30, 30, 100, 1e4, 2e3, 12), "f64");
  // NaN and infinities are left out.
  auto v = two_modes<float>(30, 20, 10, 0.1, 0.9, 0.1, 13);
  const double without = otsu_threshold(v.view());
  v(3, 4, 5) = std::numeric_limits<float>::quiet_NaN();
  v(6, 7, 8) = std::numeric_limits<float>::infinity();
  v(0, 0, 0) = -std::numeric_limits<float>::infinity();
  expect_float_otsu_is_optimal(v, "f32 with NaN and infinities");
  EXPECT_NEAR(otsu_threshold(v.view()), without, 0.05);
  Volume<double> none(3, 3, 3, std::numeric_limits<double>::quiet_NaN());
  test::expect_input_error([&] { otsu_threshold(none.view()); }, "otsu_threshold", "no finite voxel");
  test::expect_input_error([&] { otsu_threshold(Volume<float>().view()); }, "otsu_threshold", "empty");
}

// The mask against a scalar loop on exact values: above T (integers: above floor(T), the same);
// inverted: finite and not above.
template <class T>
void expect_mask(const Volume<T>& v, double threshold) {
  for (const bool invert : {false, true}) {
    const Volume<std::uint8_t> mask = threshold_volume(v.view(), threshold, invert);
    ASSERT_EQ(mask.size(), v.size());
    EXPECT_EQ(mask.sx(), v.sx());
    for (std::int64_t i = 0; i < v.size(); ++i) {
      const long double x = static_cast<long double>(v.data()[i]);
      const bool above = x > static_cast<long double>(threshold);
      const bool expected = invert ? std::isfinite(x) && !above : above;
      ASSERT_EQ(mask.data()[i], expected ? 1 : 0)
          << "voxel " << x << ", threshold " << threshold << (invert ? " inverted" : "");
    }
  }
}

TEST(VolumeThreshold, MaskKeepsTheVoxelsAboveInTheirOwnType) {
  auto u8 = two_modes<std::uint8_t>(21, 13, 7, 60, 170, 40, 20);
  u8.set_spacing(0.5, 2, 3);
  for (const double t : {-5.0, 0.0, 99.5, 100.0, 254.9, 255.0, 1e9}) expect_mask(u8, t);
  const auto i16 = two_modes<std::int16_t>(21, 13, 7, -800, 300, 300, 21);
  for (const double t : {-32769.0, -100.5, -100.0, 0.0, 32767.0}) expect_mask(i16, t);
  const auto i64 = two_modes<std::int64_t>(9, 8, 7, -1e12, 1e12, 1e12, 22);
  for (const double t : {-1e18, -0.5, 3e11, 1e19}) expect_mask(i64, t);
  auto f32 = two_modes<float>(21, 13, 7, -1, 1, 0.5, 23);
  f32(1, 1, 1) = std::numeric_limits<float>::quiet_NaN();
  f32(2, 1, 1) = std::numeric_limits<float>::infinity();
  f32(3, 1, 1) = -std::numeric_limits<float>::infinity();
  f32(4, 1, 1) = 0.1f;  // 0.1f is above 0.1 (its double is 0.100000001490116...)
  for (const double t : {-2.0, 0.1, 0.30000001192092896, 1e40}) expect_mask(f32, t);
  const auto f64 = two_modes<double>(11, 12, 13, -1, 1, 0.5, 24);
  for (const double t : {-0.25, 0.0, 0.75}) expect_mask(f64, t);
  test::expect_input_error([&] { threshold_volume(f64.view(), std::nan("")); }, "threshold_volume", "NaN");
}

}  // namespace
}  // namespace winnow
