// Statistics of label arrays (label_statistics) and the survivor rule (surviving_labels), against
// oracles of this file: a voxel-by-voxel loop over random label volumes of every label type (runs
// of equal labels, labels without voxels, labels along the volume's edges), strided views, sizes
// on both sides of the one-thread limit, few labels (the threads' own tables) and many (one
// table), many labels numbered in raster order over 1-4 threads (the threads' label windows), an
// intensity volume of every voxel type (exact integer sums, 64-bit sums that overflow, NaN among
// floats), the background alone, a given M, and every refusal.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "winnow/error.hpp"
#include "winnow/label_statistics.hpp"
#include "winnow/volume.hpp"

using namespace winnow;

namespace {

/// A random label volume with runs along x: labels 0..m-1, about `zero` of the voxels 0.
template <class L>
Volume<L> random_labels(std::int64_t nx, std::int64_t ny, std::int64_t nz, std::uint64_t m, double zero,
                        std::uint32_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<std::uint64_t> pick(1, m - 1);
  std::geometric_distribution<int> run(0.3);
  Volume<L> v(nx, ny, nz);
  L* p = v.data();
  for (std::int64_t i = 0; i < v.size();) {
    const L l = u(gen) < zero ? L{0} : static_cast<L>(pick(gen));
    for (int k = run(gen) + 1; k > 0 && i < v.size(); --k) p[i++] = l;
  }
  return v;
}

struct Expected {
  std::vector<std::uint64_t> voxels;
  std::vector<std::array<std::int64_t, 3>> lower, upper;
  std::vector<std::array<std::uint64_t, 3>> sums;
};

template <class L>
Expected oracle(const VolumeView<const L>& labels, std::uint64_t m) {
  Expected e;
  e.voxels.assign(m, 0);
  e.lower.assign(m, {INT64_MAX, INT64_MAX, INT64_MAX});
  e.upper.assign(m, {-1, -1, -1});
  e.sums.assign(m, {0, 0, 0});
  for (std::int64_t z = 0; z < labels.nz; ++z)
    for (std::int64_t y = 0; y < labels.ny; ++y)
      for (std::int64_t x = 0; x < labels.nx; ++x) {
        const auto l = static_cast<std::size_t>(labels(x, y, z));
        const std::int64_t at[3] = {x, y, z};
        ++e.voxels[l];
        for (int d = 0; d < 3; ++d) {
          e.lower[l][d] = std::min(e.lower[l][d], at[d]);
          e.upper[l][d] = std::max(e.upper[l][d], at[d]);
          e.sums[l][d] += static_cast<std::uint64_t>(at[d]);
        }
      }
  return e;
}

void expect_equal(const LabelStatistics& got, const Expected& e) {
  ASSERT_EQ(got.labels(), e.voxels.size());
  for (std::size_t l = 0; l < e.voxels.size(); ++l) {
    const LabelRecord& r = got.records[l];
    ASSERT_TRUE(r.voxels == e.voxels[l] && r.lower == e.lower[l] && r.upper == e.upper[l] && r.sums == e.sums[l])
        << "label " << l << ": " << r.voxels << " voxels (expected " << e.voxels[l] << ")";
  }
}

template <class L>
void check_type(std::uint32_t seed) {
  // Below and above the one-thread limit (2^16 voxels); few labels (threads' tables) and many.
  const std::int64_t shapes[][3] = {{1, 1, 1}, {37, 1, 1}, {1, 29, 3}, {41, 23, 19}, {67, 45, 39}};
  for (const auto& s : shapes)
    for (const std::uint64_t m : {2ull, 7ull, 5000ull}) {
      if constexpr (sizeof(L) == 1)
        if (m > 100) continue;
      const Volume<L> v = random_labels<L>(s[0], s[1], s[2], m, 0.5, seed++);
      const Expected e = oracle(v.view(), m);
      // M found: the largest label + 1 (labels above it without voxels are not rows).
      const LabelStatistics found = label_statistics(v.view());
      const Expected trimmed = oracle(v.view(), found.labels());
      expect_equal(found, trimmed);
      EXPECT_LE(found.labels(), m);
      // M given: every row, labels without voxels too.
      expect_equal(label_statistics(v.view(), {.labels = m}), e);
      // The background alone.
      const LabelStatistics background = label_statistics(v.view(), {.background_only = true});
      ASSERT_EQ(background.labels(), 1u);
      EXPECT_EQ(background.records[0].voxels, e.voxels[0]);
      EXPECT_EQ(background.records[0].lower, e.lower[0]);
      EXPECT_EQ(background.records[0].upper, e.upper[0]);
      EXPECT_EQ(background.records[0].sums, e.sums[0]);
    }
}

TEST(LabelStatistics, EveryLabelTypeMatchesTheVoxelLoop) {
  check_type<std::uint8_t>(1);
  check_type<std::int8_t>(2);
  check_type<std::uint16_t>(3);
  check_type<std::int16_t>(4);
  check_type<std::uint32_t>(5);
  check_type<std::int32_t>(6);
  check_type<std::uint64_t>(7);
  check_type<std::int64_t>(8);
}

TEST(LabelStatistics, StridedViewsAndEmptyVolumes) {
  const Volume<std::uint32_t> v = random_labels<std::uint32_t>(90, 70, 30, 300, 0.3, 11);
  // Every other voxel of every third row of every other slice is not expressible; a crop is.
  const VolumeView<const std::uint32_t> crop(v.data() + 5 + 3 * 90 + 2 * 90 * 70, 71, 50, 25, 90, 90 * 70);
  const LabelStatistics got = label_statistics(crop, {.labels = 300});
  expect_equal(got, oracle(crop, 300));
  const VolumeView<const std::uint32_t> empty(v.data(), 0, 5, 5);
  const LabelStatistics none = label_statistics(empty);
  ASSERT_EQ(none.labels(), 1u);
  EXPECT_EQ(none.records[0].voxels, 0u);
  EXPECT_EQ(none.records[0].upper[0], -1);
  EXPECT_EQ(label_statistics(empty, {.labels = 4}).labels(), 4u);
}

template <class V>
V random_value(std::mt19937_64& gen) {
  if constexpr (std::is_floating_point_v<V>) {
    return static_cast<V>(std::uniform_real_distribution<double>(-1000, 1000)(gen));
  } else {
    return static_cast<V>(gen());  // the whole range of the type
  }
}

template <class V>
void check_intensity(std::uint32_t seed) {
  std::mt19937_64 gen(seed);
  const std::uint64_t m = 40;
  for (const std::int64_t nx : {13, 83}) {
    const Volume<std::uint16_t> labels = random_labels<std::uint16_t>(nx, 31, 29, m, 0.4, seed);
    Volume<V> values(nx, 31, 29);
    for (std::int64_t i = 0; i < values.size(); ++i) {
      V v = random_value<V>(gen);
      if constexpr (sizeof(V) == 8 && !std::is_floating_point_v<V>) v = static_cast<V>(v >> 20);  // sums fit 64 bits
      values.data()[i] = v;
    }
    if constexpr (std::is_floating_point_v<V>) values.data()[7] = std::numeric_limits<V>::quiet_NaN();
    using S = IntensitySum<V>;
    std::vector<long double> sum(m, 0);
    std::vector<V> lo(m, std::numeric_limits<V>::max()), hi(m, std::numeric_limits<V>::lowest());
    std::vector<std::uint64_t> count(m, 0), real(m, 0);
    for (std::int64_t i = 0; i < values.size(); ++i) {
      const auto l = labels.data()[i];
      const V v = values.data()[i];
      ++count[l];
      sum[l] += static_cast<long double>(v);
      if constexpr (std::is_floating_point_v<V>)
        if (std::isnan(v)) continue;
      ++real[l];
      lo[l] = std::min(lo[l], v), hi[l] = std::max(hi[l], v);
    }
    const LabelIntensityStatistics<V> got = label_statistics(labels.view(), values.view(), {.labels = m});
    expect_equal(got, oracle(labels.view(), m));
    ASSERT_EQ(got.sum.size(), m);
    for (std::size_t l = 0; l < m; ++l) {
      SCOPED_TRACE("label " + std::to_string(l));
      if constexpr (std::is_floating_point_v<V>) {
        if (std::isnan(static_cast<double>(sum[l]))) {
          EXPECT_TRUE(std::isnan(got.sum[l]));
        } else {
          EXPECT_NEAR(got.sum[l], static_cast<double>(sum[l]), 1e-9 * static_cast<double>(count[l]) * 1000);
        }
      } else {
        EXPECT_EQ(got.sum[l], static_cast<S>(sum[l]));  // long double holds these sums exactly
      }
      if (count[l] == 0) {
        EXPECT_EQ(got.sum[l], S{0});
        if constexpr (std::is_floating_point_v<V>) EXPECT_TRUE(std::isnan(got.minimum[l]));
        else EXPECT_EQ(got.minimum[l], V{0});
        continue;
      }
      if (real[l] == 0) {
        EXPECT_TRUE(std::isnan(static_cast<double>(got.minimum[l])));
        continue;
      }
      EXPECT_EQ(got.minimum[l], lo[l]);
      EXPECT_EQ(got.maximum[l], hi[l]);
    }
  }
}

TEST(LabelStatistics, IntensityOfEveryVoxelType) {
  check_intensity<std::uint8_t>(21);
  check_intensity<std::int8_t>(22);
  check_intensity<std::uint16_t>(23);
  check_intensity<std::int16_t>(24);
  check_intensity<std::uint32_t>(25);
  check_intensity<std::int32_t>(26);
  check_intensity<std::uint64_t>(27);
  check_intensity<std::int64_t>(28);
  check_intensity<float>(29);
  check_intensity<double>(30);
}

/// Labels numbered in raster order, as a labeling numbers its components: runs along x, each
/// background, a new label (the next number) or the label of the voxel a row or a slice before
/// (components across rows, slices and the threads' shares of rows); `count` labels in all.
Volume<std::uint32_t> raster_labels(std::int64_t nx, std::int64_t ny, std::int64_t nz, std::uint32_t seed,
                                    std::uint64_t& count) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::geometric_distribution<int> run(0.3);
  Volume<std::uint32_t> v(nx, ny, nz, 0);
  std::uint32_t* p = v.data();
  count = 1;
  for (std::int64_t i = 0; i < v.size();) {
    const double c = u(gen);
    std::uint32_t l = 0;
    if (c >= 0.45) {
      const std::int64_t before = c < 0.55 ? i - nx * ny : c < 0.65 ? i - nx : -1;
      l = before >= 0 ? p[before] : 0u;
      if (l == 0) l = static_cast<std::uint32_t>(count++);
    }
    for (int k = run(gen) + 1; k > 0 && i < v.size(); ++i, --k) p[i] = l;
  }
  return v;
}

TEST(LabelStatistics, ManyLabelsInRasterOrderOverThreads) {
  const int saved = omp_get_max_threads();
  std::uint64_t count = 0;
  Volume<std::uint32_t> labels = raster_labels(97, 61, 23, 41, count);
  ASSERT_GT(count * 4 * 16, static_cast<std::uint64_t>(labels.size()));  // more labels than whole tables take
  Volume<std::uint16_t> values(97, 61, 23);
  std::mt19937_64 gen(42);
  for (std::int64_t i = 0; i < values.size(); ++i) values.data()[i] = static_cast<std::uint16_t>(gen());
  const auto check = [&](const char* what) {
    SCOPED_TRACE(what);
    const VolumeView<const std::uint32_t> view = std::as_const(labels).view();
    const LabelStatistics found = label_statistics(view);
    expect_equal(found, oracle(view, found.labels()));
    const std::uint64_t m = count + 9;  // labels without voxels at the end
    expect_equal(label_statistics(view, {.labels = m}), oracle(view, m));
    const LabelIntensityStatistics<std::uint16_t> got = label_statistics(view, values.view(), {.labels = m});
    expect_equal(got, oracle(view, m));
    std::vector<std::uint64_t> sum(m, 0);
    std::vector<std::uint16_t> lo(m, 0xFFFF), hi(m, 0);
    for (std::int64_t i = 0; i < labels.size(); ++i) {
      const std::uint32_t l = labels.data()[i];
      const std::uint16_t v = values.data()[i];
      sum[l] += v, lo[l] = std::min(lo[l], v), hi[l] = std::max(hi[l], v);
    }
    for (std::size_t l = 0; l < m; ++l) {
      const bool any = got.records[l].voxels > 0;
      ASSERT_TRUE(got.sum[l] == sum[l] && got.minimum[l] == (any ? lo[l] : 0) && got.maximum[l] == (any ? hi[l] : 0))
          << "label " << l;
    }
    const LabelStatistics background = label_statistics(view, {.background_only = true});
    EXPECT_EQ(background.records[0], found.records[0]);
  };
  for (int threads : {1, 2, 3, 4}) {
    omp_set_num_threads(threads);
    check(("raster order, threads " + std::to_string(threads)).c_str());
  }
  // The first label again in the last slice: one share's window spans nearly every label, and
  // the pass takes one thread.
  labels(96, 60, 22) = 1;
  omp_set_num_threads(4);
  check("a label far from its number's rows, threads 4");
  // A label beyond a given M, found on the threads' path too.
  labels(50, 30, 11) = static_cast<std::uint32_t>(count + 100);
  EXPECT_THROW(label_statistics(labels.view(), {.labels = count + 9}), InputError);
  omp_set_num_threads(saved);
}

TEST(LabelStatistics, Refusals) {
  Volume<std::int32_t> labels(4, 3, 2, 1);
  labels(2, 1, 1) = -3;
  EXPECT_THROW(label_statistics(labels.view()), InputError);
  try {
    label_statistics(labels.view(), {.labels = 5});
    ADD_FAILURE() << "no error for a negative label";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("non-negative"), std::string::npos) << e.what();
  }
  labels(2, 1, 1) = 9;
  try {
    label_statistics(labels.view(), {.labels = 5});
    ADD_FAILURE() << "no error for a label beyond M";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("label 9"), std::string::npos) << e.what();
  }
  Volume<std::uint64_t> huge(3, 3, 3, 0);
  huge(1, 1, 1) = std::uint64_t{1} << 40;  // labels that cannot come from a labeling of 27 voxels
  EXPECT_THROW(label_statistics(huge.view()), InputError);
  const Volume<float> small(4, 3, 1);
  EXPECT_THROW(label_statistics(labels.view(), small.view()), InputError);  // shapes differ
  Volume<std::int64_t> big(2, 1, 1, std::numeric_limits<std::int64_t>::max());
  const Volume<std::uint8_t> one(2, 1, 1, 1);
  EXPECT_THROW(label_statistics(one.view(), big.view()), InputError);  // the sum leaves 64 bits
}

TEST(SurvivingLabels, MinAreaThenLargestKTiesToTheLowerLabel) {
  // sizes[0] is the background's; labels 1..8.
  const std::vector<std::uint64_t> sizes = {100, 5, 9, 2, 9, 1, 7, 9, 3};
  std::vector<std::uint64_t> map;
  EXPECT_EQ(surviving_labels(sizes, 3, 0, map), 6u);  // 1, 2, 4, 6, 7, 8
  EXPECT_EQ(map, (std::vector<std::uint64_t>{0, 1, 2, 0, 3, 0, 4, 5, 6}));
  EXPECT_EQ(surviving_labels(sizes, 0, 2, map), 2u);  // three 9s: labels 2 and 4 (the lower)
  EXPECT_EQ(map, (std::vector<std::uint64_t>{0, 0, 1, 0, 2, 0, 0, 0, 0}));
  EXPECT_EQ(surviving_labels(sizes, 6, 4, map), 4u);  // 2, 4, 6, 7 (sizes 9, 9, 7, 9)
  EXPECT_EQ(map, (std::vector<std::uint64_t>{0, 0, 1, 0, 2, 0, 3, 4, 0}));
  EXPECT_EQ(surviving_labels(std::vector<std::uint64_t>{7}, 0, 3, map), 0u);  // the background alone
  EXPECT_EQ(map, (std::vector<std::uint64_t>{0}));
}

}  // namespace
