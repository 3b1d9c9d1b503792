// label_chunks.hpp against oracles that look at one voxel (or one pair of voxels) at a time:
// - chunk_label_summary: first voxels, counts, boxes and coordinate sums of labellings of random
//   chunks (densities from empty to full, sizes of one voxel and odd shapes, long runs and single
//   voxels), 32- and 64-bit labels, strided views, and the errors for labels that are not
//   numbered as winnow::label numbers them;
// - chunk_border_pairs: every pair of voxels of two random borders (planes, lines, single voxels)
//   that touch under 6-, 18- and 26-connectivity, binary and multi-label, and its errors;
// - relabel_chunk: random labels through random tables, voxel by voxel, every pair of label and
//   entry types, strided views on both sides, and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/input_error.hpp"
#include "winnow/error.hpp"
#include "winnow/label.hpp"
#include "winnow/label_chunks.hpp"

namespace winnow {
namespace {

/// Every field of the summary, one voxel at a time.
template <class L>
ChunkLabelSummary oracle_summary(VolumeView<const L> v, std::uint64_t count) {
  ChunkLabelSummary s;
  s.count = count;
  const std::size_t rows = static_cast<std::size_t>(count) + 1;
  s.first.assign(rows, -1);
  s.voxels.assign(rows, 0);
  s.lower.assign(rows * 3, std::numeric_limits<std::int64_t>::max());
  s.upper.assign(rows * 3, -1);
  s.sums.assign(rows * 3, 0);
  for (std::int64_t z = 0; z < v.nz; ++z)
    for (std::int64_t y = 0; y < v.ny; ++y)
      for (std::int64_t x = 0; x < v.nx; ++x) {
        const auto k = static_cast<std::size_t>(v(x, y, z));
        if (k != 0 && s.first[k] < 0) s.first[k] = (z * v.ny + y) * v.nx + x;
        ++s.voxels[k];
        const std::int64_t at[3] = {z, y, x};
        for (int d = 0; d < 3; ++d) {
          s.lower[k * 3 + d] = std::min(s.lower[k * 3 + d], at[d]);
          s.upper[k * 3 + d] = std::max(s.upper[k * 3 + d], at[d]);
          s.sums[k * 3 + d] += static_cast<std::uint64_t>(at[d]);
        }
      }
  return s;
}

template <class L>
void expect_summary(VolumeView<const L> v, std::uint64_t count, const std::string& what) {
  const ChunkLabelSummary o = oracle_summary(v, count);
  const ChunkLabelSummary s = chunk_label_summary(v, count, {.boxes_and_sums = true});
  EXPECT_EQ(s.count, count) << what;
  EXPECT_EQ(s.first, o.first) << what;
  EXPECT_EQ(s.voxels, o.voxels) << what;
  EXPECT_EQ(s.lower, o.lower) << what;
  EXPECT_EQ(s.upper, o.upper) << what;
  EXPECT_EQ(s.sums, o.sums) << what;
  const ChunkLabelSummary counted = chunk_label_summary(v, count);
  EXPECT_EQ(counted.first, o.first) << what;
  EXPECT_EQ(counted.voxels, o.voxels) << what;
  EXPECT_TRUE(counted.lower.empty() && counted.upper.empty() && counted.sums.empty()) << what;
  const ChunkLabelSummary lean = chunk_label_summary(v, count, {.counts = false});
  EXPECT_EQ(lean.first, o.first) << what;
  EXPECT_TRUE(lean.voxels.empty()) << what;
}

Volume<std::uint8_t> random_values(std::int64_t nx, std::int64_t ny, std::int64_t nz, double density, int values,
                                   std::uint64_t seed) {
  Volume<std::uint8_t> v(nx, ny, nz);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution fg(density);
  std::uniform_int_distribution<int> value(1, values);
  for (auto& x : v.voxels()) x = fg(rng) ? static_cast<std::uint8_t>(value(rng)) : 0;
  return v;
}

TEST(ChunkLabelSummary, MatchesTheOracleOnLabelledRandomChunks) {
  const std::int64_t shapes[][3] = {{1, 1, 1},   {7, 1, 1},  {1, 9, 1},   {1, 1, 5},
                                    {13, 11, 7}, {64, 3, 5}, {33, 17, 9}, {100, 2, 3}};
  const double densities[] = {0.0, 0.05, 0.3, 0.7, 1.0};
  std::uint64_t seed = 1;
  for (const auto& shape : shapes)
    for (const double density : densities)
      for (const int connectivity : {6, 26})
        for (const bool multilabel : {false, true}) {
          const auto values = random_values(shape[0], shape[1], shape[2], density, multilabel ? 3 : 1, seed++);
          const VolumeLabeling r = label(
              values.view(),
              {.connectivity = connectivity, .multilabel = multilabel, .want_stats = false, .backend = Backend::cpu});
          const std::string what = std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" +
                                   std::to_string(shape[2]) + " density " + std::to_string(density) + " c" +
                                   std::to_string(connectivity) + (multilabel ? " multi" : "");
          expect_summary(r.labels.view(), r.count, what);
        }
}

TEST(ChunkLabelSummary, SixtyFourBitLabelsAndStridedViews) {
  const auto values = random_values(21, 10, 6, 0.4, 1, 99);
  const VolumeLabeling r =
      label(values.view(), {.connectivity = 6, .want_stats = false, .wide_labels = true, .backend = Backend::cpu});
  ASSERT_FALSE(r.labels64.empty());
  expect_summary(r.labels64.view(), r.count, "uint64 labels");
  // The same labels inside a padded buffer: rows 25 apart, slices 300 apart, junk in the padding.
  std::vector<std::uint32_t> padded(6 * 300, 0xDEADBEEF);
  for (std::int64_t z = 0; z < 6; ++z)
    for (std::int64_t y = 0; y < 10; ++y)
      for (std::int64_t x = 0; x < 21; ++x)
        padded[static_cast<std::size_t>(z * 300 + y * 25 + x)] = static_cast<std::uint32_t>(r.labels64(x, y, z));
  const VolumeView<const std::uint32_t> strided(padded.data(), 21, 10, 6, 25, 300);
  expect_summary(strided, r.count, "strided uint32 labels");
  const ChunkLabelSummary a = chunk_label_summary(r.labels64.view(), r.count, {.boxes_and_sums = true});
  const ChunkLabelSummary b = chunk_label_summary(strided, r.count, {.boxes_and_sums = true});
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.sums, b.sums);
}

TEST(ChunkLabelSummary, LongRunsSumExactly) {
  // One run per row of a wide chunk: the x sums come from the arithmetic series, not per voxel.
  Volume<std::uint32_t> labels(100001, 2, 1, 1);
  labels(0, 0, 0) = 0;
  expect_summary(std::as_const(labels).view(), 1, "long runs");
  const ChunkLabelSummary s = chunk_label_summary(labels.view(), 1, {.boxes_and_sums = true});
  EXPECT_EQ(s.sums[3 + 2], 2 * (100000ull * 100001ull / 2));
  EXPECT_EQ(s.first[0], -1);
  EXPECT_EQ(s.first[1], 1);
  EXPECT_EQ(s.voxels[0], 1u);
}

TEST(ChunkLabelSummary, EmptyChunksAndBackgroundOnly) {
  const Volume<std::uint32_t> none(0, 4, 3);
  const ChunkLabelSummary s = chunk_label_summary(none.view(), 0, {.boxes_and_sums = true});
  EXPECT_EQ(s.first, std::vector<std::int64_t>{-1});
  EXPECT_EQ(s.voxels, std::vector<std::uint64_t>{0});
  EXPECT_GT(s.lower[0], s.upper[0]);
  const Volume<std::uint32_t> background(5, 4, 3);
  expect_summary(background.view(), 0, "background only");
}

TEST(ChunkLabelSummary, RejectsLabelsNotNumberedInRasterOrder) {
  Volume<std::uint32_t> labels(4, 2, 1);
  labels(1, 0, 0) = 2;  // label 2 before label 1
  labels(3, 1, 0) = 1;
  test::expect_input_error([&] { chunk_label_summary(labels.view(), 2); }, "chunk_label_summary", "raster order");
  test::expect_input_error([&] { chunk_label_summary(labels.view(), 2, {.counts = false}); }, "chunk_label_summary",
                           "raster order");
  labels(1, 0, 0) = 1;
  labels(3, 1, 0) = 3;  // label 2 missing, 3 after 1
  test::expect_input_error([&] { chunk_label_summary(labels.view(), 3); }, "chunk_label_summary", "raster order");
  labels(3, 1, 0) = 2;
  test::expect_input_error([&] { chunk_label_summary(labels.view(), 1); }, "chunk_label_summary", "exceeds the count");
  test::expect_input_error([&] { chunk_label_summary(labels.view(), 3); }, "chunk_label_summary",
                           "largest present is 2");
  test::expect_input_error([&] { chunk_label_summary(labels.view(), 3, {.counts = false}); }, "chunk_label_summary",
                           "largest present is 2");
  test::expect_input_error([&] { chunk_label_summary(labels.view(), 9); }, "chunk_label_summary", "exceeds the chunk");
  EXPECT_NO_THROW(chunk_label_summary(labels.view(), 2));
}

/// The distinct (near, far) label pairs of two borders, by looking at every pair of voxels.
template <class L, class V>
std::vector<std::uint64_t> oracle_border_pairs(const Volume<L>& near, const Volume<L>& far,
                                               const Volume<V>* near_values, const Volume<V>* far_values,
                                               const ChunkBorder& border) {
  const int reach = border.connectivity == 6 ? 1 : border.connectivity == 18 ? 2 : 3;
  std::vector<std::array<std::uint64_t, 2>> pairs;
  const std::int64_t n[3] = {near.nz(), near.ny(), near.nx()};
  for (std::int64_t pz = 0; pz < n[0]; ++pz)
    for (std::int64_t py = 0; py < n[1]; ++py)
      for (std::int64_t px = 0; px < n[2]; ++px)
        for (std::int64_t qz = 0; qz < n[0]; ++qz)
          for (std::int64_t qy = 0; qy < n[1]; ++qy)
            for (std::int64_t qx = 0; qx < n[2]; ++qx) {
              const std::int64_t step[3] = {qz - pz, qy - py, qx - px};
              int moved = 0;
              bool touching = true;
              for (int d = 0; d < 3; ++d) {
                if (border.across[d]) {
                  touching = touching && step[d] == 0;
                  ++moved;
                } else {
                  touching = touching && step[d] >= -1 && step[d] <= 1;
                  moved += step[d] != 0;
                }
              }
              if (!touching || moved > reach) continue;
              const auto a = static_cast<std::uint64_t>(near(px, py, pz)),
                         b = static_cast<std::uint64_t>(far(qx, qy, qz));
              if (a == 0 || b == 0) continue;
              if (near_values && (*near_values)(px, py, pz) != (*far_values)(qx, qy, qz)) continue;
              pairs.push_back({a, b});
            }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<std::uint64_t> flat;
  for (const auto& p : pairs) flat.insert(flat.end(), {p[0], p[1]});
  return flat;
}

/// Random labels 0..labels (background with probability 1 - density).
template <class T>
Volume<T> random_labels(std::int64_t nx, std::int64_t ny, std::int64_t nz, double density, int labels,
                        std::mt19937_64& rng) {
  Volume<T> v(nx, ny, nz);
  std::bernoulli_distribution fg(density);
  std::uniform_int_distribution<int> value(1, labels);
  for (auto& x : v.voxels()) x = fg(rng) ? static_cast<T>(value(rng)) : T{};
  return v;
}

TEST(ChunkBorderPairs, MatchesEveryPairOfTouchingVoxels) {
  std::mt19937_64 rng(7);
  // Borders as the caller cuts them: (across axes, border size z, y, x).
  struct Case {
    bool across[3];
    std::int64_t nz, ny, nx;
  };
  const Case cases[] = {
      {{true, false, false}, 1, 6, 7}, {{false, true, false}, 5, 1, 4}, {{false, false, true}, 6, 5, 1},
      {{true, false, false}, 1, 1, 9}, {{true, false, false}, 1, 1, 1}, {{true, true, false}, 1, 1, 8},
      {{true, false, true}, 1, 7, 1},  {{false, true, true}, 6, 1, 1},  {{true, true, true}, 1, 1, 1},
  };
  for (const Case& c : cases)
    for (const int connectivity : {6, 18, 26})
      for (const double density : {0.2, 0.6, 1.0})
        for (const bool multilabel : {false, true}) {
          ChunkBorder border{.across = {c.across[0], c.across[1], c.across[2]}, .connectivity = connectivity};
          const auto near = random_labels<std::uint32_t>(c.nx, c.ny, c.nz, density, 5, rng);
          const auto far = random_labels<std::uint32_t>(c.nx, c.ny, c.nz, density, 5, rng);
          const auto near_values = random_labels<std::uint16_t>(c.nx, c.ny, c.nz, 1.0, 2, rng);
          const auto far_values = random_labels<std::uint16_t>(c.nx, c.ny, c.nz, 1.0, 2, rng);
          const std::string what = std::to_string(c.nz) + "x" + std::to_string(c.ny) + "x" + std::to_string(c.nx) +
                                   " across " + std::to_string(c.across[0]) + std::to_string(c.across[1]) +
                                   std::to_string(c.across[2]) + " c" + std::to_string(connectivity) + " density " +
                                   std::to_string(density) + (multilabel ? " multi" : "");
          const VolumeView<const std::uint16_t> none;
          const auto got = multilabel ? chunk_border_pairs(std::as_const(near).view(), std::as_const(far).view(),
                                                           near_values.view(), far_values.view(), border)
                                      : chunk_border_pairs(std::as_const(near).view(), std::as_const(far).view(), none,
                                                           none, border);
          const auto expected =
              multilabel ? oracle_border_pairs(near, far, &near_values, &far_values, border)
                         : oracle_border_pairs<std::uint32_t, std::uint16_t>(near, far, nullptr, nullptr, border);
          EXPECT_EQ(got, expected) << what;
        }
}

TEST(ChunkBorderPairs, SixtyFourBitLabelsAndTheRunShortcut) {
  // One label on each side, every voxel foreground: one pair, however many voxels touch.
  Volume<std::uint64_t> near(50, 40, 1, std::uint64_t{1} << 40), far(50, 40, 1, 3);
  const VolumeView<const std::uint8_t> none;
  const ChunkBorder face{.across = {true, false, false}, .connectivity = 26};
  EXPECT_EQ(chunk_border_pairs(std::as_const(near).view(), std::as_const(far).view(), none, none, face),
            (std::vector<std::uint64_t>{std::uint64_t{1} << 40, 3}));
  // An edge or a corner border joins nothing under 6-connectivity, a corner nothing under 18.
  const ChunkBorder edge6{.across = {true, true, false}, .connectivity = 6};
  const ChunkBorder corner18{.across = {true, true, true}, .connectivity = 18};
  const Volume<std::uint32_t> one(1, 1, 1, 4);
  EXPECT_TRUE(chunk_border_pairs(one.view(), one.view(), none, none, edge6).empty());
  EXPECT_TRUE(chunk_border_pairs(one.view(), one.view(), none, none, corner18).empty());
  const ChunkBorder corner26{.across = {true, true, true}, .connectivity = 26};
  EXPECT_EQ(chunk_border_pairs(one.view(), one.view(), none, none, corner26), (std::vector<std::uint64_t>{4, 4}));
}

TEST(ChunkBorderPairs, RejectsBadBorders) {
  const Volume<std::uint32_t> a(4, 3, 1), b(4, 2, 1);
  const Volume<std::uint8_t> values(4, 3, 1);
  const VolumeView<const std::uint8_t> none;
  const ChunkBorder face{.across = {true, false, false}, .connectivity = 6};
  test::expect_input_error([&] { chunk_border_pairs(a.view(), b.view(), none, none, face); }, "chunk_border_pairs",
                           "differ in size");
  test::expect_input_error([&] { chunk_border_pairs(a.view(), a.view(), values.view(), none, face); },
                           "chunk_border_pairs", "values differ in size");
  test::expect_input_error(
      [&] {
        chunk_border_pairs(a.view(), a.view(), none, none,
                           ChunkBorder{.across = {true, false, false}, .connectivity = 8});
      },
      "chunk_border_pairs", "connectivity");
  test::expect_input_error([&] { chunk_border_pairs(a.view(), a.view(), none, none, ChunkBorder{}); },
                           "chunk_border_pairs", "neighbours along at least one axis");
}

template <class L, class T>
void expect_relabelled(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t nx = 23, ny = 7, nz = 5;
  const std::uint64_t entries = 1 + rng() % 500;
  std::vector<T> table(entries);
  for (T& t : table) t = static_cast<T>(rng());
  // Labels and output inside padded buffers (rows 31 and 29 apart, slices 250 and 240 apart).
  std::vector<L> in(nz * 250, static_cast<L>(entries + 7));
  std::vector<T> out(nz * 240, static_cast<T>(0xA5A5A5A5u));
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) in[z * 250 + y * 31 + x] = static_cast<L>(rng() % entries);
  in[0] = static_cast<L>(entries - 1);  // the largest label with an entry
  const VolumeView<const L> labels(in.data(), nx, ny, nz, 31, 250);
  relabel_chunk(labels, std::span<const T>(table), VolumeView<T>(out.data(), nx, ny, nz, 29, 240));
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x)
        ASSERT_EQ(out[z * 240 + y * 29 + x], table[in[z * 250 + y * 31 + x]]) << x << " " << y << " " << z;
  for (std::size_t i = 0; i < out.size(); ++i) {  // the padding untouched
    const std::int64_t k = static_cast<std::int64_t>(i) % 240, y = k / 29, x = k % 29;
    if (y >= ny || x >= nx) ASSERT_EQ(out[i], static_cast<T>(0xA5A5A5A5u)) << i;
  }
}

TEST(RelabelChunk, EveryVoxelThroughItsTable) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    expect_relabelled<std::uint32_t, std::uint32_t>(seed);
    expect_relabelled<std::uint32_t, std::uint64_t>(seed);
    expect_relabelled<std::uint64_t, std::uint32_t>(seed);
    expect_relabelled<std::uint64_t, std::uint64_t>(seed);
  }
}

TEST(RelabelChunk, RejectsLabelsBeyondTheTableAndOtherSizes) {
  std::vector<std::uint32_t> labels = {0, 1, 2, 3, 1, 0}, out(6);
  const std::vector<std::uint32_t> table = {0, 10, 20};
  const VolumeView<const std::uint32_t> view(labels.data(), 3, 2, 1);
  test::expect_input_error(
      [&] {
        relabel_chunk(view, std::span<const std::uint32_t>(table), VolumeView<std::uint32_t>(out.data(), 3, 2, 1));
      },
      "relabel_chunk", "label 3 has no entry in a table of 3");
  test::expect_input_error(
      [&] {
        relabel_chunk(view, std::span<const std::uint32_t>(table), VolumeView<std::uint32_t>(out.data(), 2, 3, 1));
      },
      "relabel_chunk", "differ in size");
  labels[3] = 2;
  relabel_chunk(view, std::span<const std::uint32_t>(table), VolumeView<std::uint32_t>(out.data(), 3, 2, 1));
  EXPECT_EQ(out, (std::vector<std::uint32_t>{0, 10, 20, 20, 10, 0}));
  test::expect_input_error(
      [&] { relabel_chunk(view, std::span<const std::uint32_t>(), VolumeView<std::uint32_t>(out.data(), 3, 2, 1)); },
      "relabel_chunk", "the table is empty");
  std::vector<std::uint32_t> none;  // an empty chunk needs no table entry
  relabel_chunk(VolumeView<const std::uint32_t>(none.data(), 0, 0, 0), std::span<const std::uint32_t>(),
                VolumeView<std::uint32_t>(none.data(), 0, 0, 0));
}

}  // namespace
}  // namespace winnow
