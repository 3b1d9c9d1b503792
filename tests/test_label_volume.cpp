// Labeling of volumes (6/18/26-connectivity, binary and multi-label) and of multi-label images,
// checked against the BFS oracle of tests/common/volume_label_oracle.hpp: labels (numbering
// included), counts and statistics on random volumes of several densities and sizes around the
// 64-voxel words and the slab boundaries, 1-voxel-thick volumes, lattices that connect only through
// edges or corners, strided views, every voxel type, wide labels, min_area and largest_k, and the
// bundled real volumes; CUDA against the CPU where a device answers.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/gpu_guard.hpp"
#include "common/large_tests.hpp"
#include "common/volume_label_oracle.hpp"
#include "label/backends.hpp"
#include "winnow/error.hpp"
#include "winnow/label.hpp"
#include "winnow/volume_io.hpp"

namespace winnow {
namespace {

using test::oracle_label_volume;
using test::OracleLabeling;

/// Random voxels: background with probability 1 - density, else a value in 1..values (binary
/// tests use values = 1; `high` is added to non-zero values to exercise wide types' upper bits).
template <class T>
Volume<T> random_volume(std::int64_t nx, std::int64_t ny, std::int64_t nz, double density, int values,
                        std::uint64_t seed, T high = T{}) {
  Volume<T> v(nx, ny, nz);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution fg(density);
  std::uniform_int_distribution<int> value(1, values);
  for (auto& x : v.voxels()) x = fg(rng) ? static_cast<T>(high + static_cast<T>(value(rng))) : T{};
  return v;
}

/// Our labeling against the oracle: every label, the count and every statistic.
template <class T, class L>
void expect_matches_oracle(VolumeView<const T> v, const VolumeLabeling& r, const Volume<L>& labels, int connectivity,
                           bool multilabel, const std::string& what) {
  const OracleLabeling o = oracle_label_volume(v, connectivity, multilabel);
  ASSERT_EQ(r.count, o.components.size()) << what;
  ASSERT_EQ(labels.nx(), v.nx) << what;
  ASSERT_EQ(labels.ny(), v.ny) << what;
  ASSERT_EQ(labels.nz(), v.nz) << what;
  const auto got = labels.voxels();
  for (std::size_t i = 0; i < o.labels.size(); ++i)
    ASSERT_EQ(static_cast<std::uint64_t>(got[i]), o.labels[i]) << what << " at voxel " << i;
  ASSERT_EQ(r.stats.size(), o.components.size()) << what;
  for (std::size_t i = 0; i < o.components.size(); ++i) {
    const auto& c = o.components[i];
    const auto& s = r.stats[i];
    ASSERT_EQ(s.voxels, c.voxels) << what << " label " << i + 1;
    EXPECT_EQ(s.x, c.min_x) << what;
    EXPECT_EQ(s.y, c.min_y) << what;
    EXPECT_EQ(s.z, c.min_z) << what;
    EXPECT_EQ(s.width, c.max_x - c.min_x + 1) << what;
    EXPECT_EQ(s.height, c.max_y - c.min_y + 1) << what;
    EXPECT_EQ(s.depth, c.max_z - c.min_z + 1) << what;
    EXPECT_EQ(s.cx, static_cast<double>(c.sum_x) / static_cast<double>(c.voxels)) << what;
    EXPECT_EQ(s.cy, static_cast<double>(c.sum_y) / static_cast<double>(c.voxels)) << what;
    EXPECT_EQ(s.cz, static_cast<double>(c.sum_z) / static_cast<double>(c.voxels)) << what;
    EXPECT_EQ(s.value, c.value) << what;
  }
}

template <class T>
void check_volume(const Volume<T>& v, int connectivity, bool multilabel, const std::string& what) {
  LabelOptions opt;
  opt.connectivity = connectivity;
  opt.multilabel = multilabel;
  opt.backend = Backend::cpu;
  const VolumeLabeling r = label(v.view(), opt);
  EXPECT_EQ(r.backend, Backend::cpu);
  ASSERT_TRUE(r.labels64.empty());
  expect_matches_oracle<T>(v.view(), r, r.labels, connectivity, multilabel, what);
}

std::string name(std::int64_t nx, std::int64_t ny, std::int64_t nz, double d, int conn, bool multi) {
  return std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) + " density " + std::to_string(d) +
         " conn " + std::to_string(conn) + (multi ? " multilabel" : " binary");
}

// Sizes around the 64-voxel words of a row, and volumes large enough (>= 2^18 voxels) for the
// parallel slabs, whose boundaries fall inside slices or between them.
TEST(LabelVolume, RandomVolumesMatchTheOracle) {
  const std::int64_t sizes[][3] = {{1, 1, 1},   {2, 3, 2},    {63, 5, 4},   {64, 7, 3},   {65, 9, 9},
                                   {127, 4, 6}, {129, 3, 17}, {70, 64, 60}, {129, 65, 33}};
  std::uint64_t seed = 1;
  for (const auto& s : sizes)
    for (double d : {0.1, 0.5, 0.9})
      for (int conn : {6, 18, 26})
        for (bool multi : {false, true}) {
          const auto v = random_volume<std::uint8_t>(s[0], s[1], s[2], d, multi ? 3 : 1, seed++);
          check_volume(v, conn, multi, name(s[0], s[1], s[2], d, conn, multi));
        }
}

/// The CPU backend called with a request of its own (so with its own tuning), against the oracle:
/// every label, the count and every component's sums; 32- or 64-bit labels.
template <class T>
void check_cpu_request(const Volume<T>& v, detail::VolumeLabelRequest<T> req, bool wide, const std::string& what) {
  Volume<std::uint32_t> labels32(wide ? 0 : v.nx(), wide ? 0 : v.ny(), wide ? 0 : v.nz());
  Volume<std::uint64_t> labels64(wide ? v.nx() : 0, wide ? v.ny() : 0, wide ? v.nz() : 0);
  req.volume = v.view();
  if (wide) req.labels64 = labels64.view();
  else req.labels32 = labels32.view();
  std::vector<detail::VolumeComponentSums> sums;
  const std::uint64_t n = detail::cpu::label_volume(req, &sums);
  const OracleLabeling o = oracle_label_volume(req.volume, req.connectivity, req.multilabel);
  ASSERT_EQ(n, o.components.size()) << what;
  for (std::size_t i = 0; i < o.labels.size(); ++i) {
    const std::uint64_t got = wide ? labels64.voxels()[i] : labels32.voxels()[i];
    ASSERT_EQ(got, o.labels[i]) << what << " at voxel " << i;
  }
  ASSERT_EQ(sums.size(), o.components.size()) << what;
  for (std::size_t i = 0; i < o.components.size(); ++i) {
    const auto& c = o.components[i];
    const auto& s = sums[i];
    ASSERT_EQ(s.voxels, c.voxels) << what << " label " << i + 1;
    EXPECT_EQ(s.sum_x, c.sum_x) << what;
    EXPECT_EQ(s.sum_y, c.sum_y) << what;
    EXPECT_EQ(s.sum_z, c.sum_z) << what;
    EXPECT_EQ(s.min_x, c.min_x) << what;
    EXPECT_EQ(s.min_y, c.min_y) << what;
    EXPECT_EQ(s.min_z, c.min_z) << what;
    EXPECT_EQ(s.max_x, c.max_x) << what;
    EXPECT_EQ(s.max_y, c.max_y) << what;
    EXPECT_EQ(s.max_z, c.max_z) << what;
    EXPECT_EQ(s.value, c.value) << what;
  }
}

// Thin slabs: seams every few rows, inside slices and across them, with slabs thinner than a
// slice (the earlier rows of a seam then lie in several earlier slabs).
TEST(LabelVolume, ThinSlabsMatchTheOracle) {
  std::uint64_t seed = 3000;
  for (const std::int64_t slab_rows : {1, 3, 10, 70})
    for (const auto& s : {std::array<std::int64_t, 3>{65, 9, 9}, {129, 65, 33}})
      for (double d : {0.1, 0.5, 0.9})
        for (int conn : {6, 18, 26})
          for (bool multi : {false, true}) {
            const auto v = random_volume<std::uint8_t>(s[0], s[1], s[2], d, multi ? 3 : 1, seed++);
            detail::VolumeLabelRequest<std::uint8_t> req;
            req.connectivity = conn;
            req.multilabel = multi;
            req.slab_rows = slab_rows;
            check_cpu_request(
                v, req, false,
                "slabs of " + std::to_string(slab_rows) + " rows, " + name(s[0], s[1], s[2], d, conn, multi));
          }
}

// Rows of whole 64-voxel words: multi-label values compared across word edges with the shifted
// compares, and runs that span words.
TEST(LabelVolume, WholeWordRowsMatchTheOracle) {
  const std::int64_t sizes[][3] = {{64, 9, 7}, {128, 5, 6}, {192, 4, 5}, {256, 3, 4}};
  std::uint64_t seed = 3500;
  for (const auto& s : sizes)
    for (double d : {0.1, 0.5, 0.9})
      for (int conn : {6, 18, 26})
        for (bool multi : {false, true}) {
          const auto v = random_volume<std::uint8_t>(s[0], s[1], s[2], d, multi ? 2 : 1, seed++);
          check_volume(v, conn, multi, name(s[0], s[1], s[2], d, conn, multi));
        }
}

// Any number of threads gives the same labels and statistics: volumes past the size where a
// second thread starts (2^18 voxels each), thin and flat ones among them, every connectivity.
TEST(LabelVolume, ThreadCountsGiveIdenticalResults) {
  const int saved = omp_get_max_threads();
  const std::int64_t sizes[][3] = {{97, 83, 131}, {1000, 1100, 1}, {3, 700, 600}, {515, 2, 1030}};
  std::uint64_t seed = 3700;
  for (const auto& s : sizes)
    for (double d : {0.2, 0.6})
      for (int conn : {6, 18, 26})
        for (bool multi : {false, true}) {
          const auto v = random_volume<std::uint8_t>(s[0], s[1], s[2], d, multi ? 3 : 1, seed++);
          const LabelOptions opt{.connectivity = conn, .multilabel = multi, .backend = Backend::cpu};
          omp_set_num_threads(1);
          const VolumeLabeling one = label(v.view(), opt);
          for (int threads : {2, 3, 4}) {
            omp_set_num_threads(threads);
            const VolumeLabeling r = label(v.view(), opt);
            const std::string what =
                name(s[0], s[1], s[2], d, conn, multi) + ", " + std::to_string(threads) + " threads";
            ASSERT_EQ(r.count, one.count) << what;
            ASSERT_TRUE(std::equal(r.labels.voxels().begin(), r.labels.voxels().end(), one.labels.voxels().begin()))
                << what;
            ASSERT_EQ(r.stats, one.stats) << what;
          }
        }
  omp_set_num_threads(saved);
  // One of them against the oracle, on 4 threads.
  omp_set_num_threads(4);
  check_volume(random_volume<std::uint8_t>(97, 83, 131, 0.3, 1, 3799), 26, false, "97x83x131 on 4 threads");
  omp_set_num_threads(saved);
}

// The CPU backend called on a label buffer that does not hold zeros (what a caller's own buffer
// may hold) writes the background too: the same labels as through the front end.
TEST(LabelVolume, LabelsIntoUnzeroedBuffers) {
  std::uint64_t seed = 3900;
  for (double d : {0.05, 0.5, 0.95})
    for (int conn : {6, 26})
      for (bool multi : {false, true})
        for (bool wide : {false, true}) {
          const auto v = random_volume<std::uint8_t>(70, 33, 41, d, multi ? 3 : 1, seed++);
          const VolumeLabeling ref =
              label(v.view(), LabelOptions{.connectivity = conn, .multilabel = multi, .backend = Backend::cpu});
          Volume<std::uint32_t> out32(70, 33, 41, 0xdeadbeefu);
          Volume<std::uint64_t> out64(70, 33, 41, ~std::uint64_t{0});
          detail::VolumeLabelRequest<std::uint8_t> req;
          req.volume = v.view();
          if (wide) req.labels64 = out64.view();
          else req.labels32 = out32.view();
          req.connectivity = conn;
          req.multilabel = multi;
          ASSERT_EQ(detail::cpu::label_volume(req, nullptr), ref.count);
          for (std::size_t i = 0; i < ref.labels.voxels().size(); ++i)
            ASSERT_EQ(wide ? out64.voxels()[i] : out32.voxels()[i], ref.labels.voxels()[i]) << "voxel " << i;
        }
}

// The public label_into: a caller's poisoned 32-bit volume, contiguous or with padded rows and
// slices, gets every voxel of label()'s result, with its count and statistics, for each
// connectivity, binary and multi-label, min_area included; sizes that differ and volumes that
// need 64 bits are refused.
TEST(LabelVolume, LabelIntoACallersVolume) {
  std::uint64_t seed = 4100;
  for (double d : {0.1, 0.6})
    for (int conn : {6, 18, 26})
      for (bool multi : {false, true})
        for (std::int64_t pad : {0, 5}) {
          const auto v = random_volume<std::uint8_t>(67, 29, 37, d, multi ? 3 : 1, seed++);
          const LabelOptions opt{
              .connectivity = conn, .multilabel = multi, .min_area = 3, .want_stats = true, .backend = Backend::cpu};
          const VolumeLabeling ref = label(v.view(), opt);
          const std::int64_t row = 67 + pad, slice = row * (29 + pad);
          std::vector<std::uint32_t> buffer(static_cast<std::size_t>(slice * 37), 0xdeadbeefu);
          const VolumeView<std::uint32_t> into(buffer.data(), 67, 29, 37, row, slice);
          const VolumeLabeling r = label_into(v.view(), into, opt);
          const std::string what = name(67, 29, 37, d, conn, multi) + " pad " + std::to_string(pad);
          ASSERT_EQ(r.count, ref.count) << what;
          EXPECT_TRUE(r.labels.empty() && r.labels64.empty()) << what;
          ASSERT_EQ(r.stats.size(), ref.stats.size()) << what;
          for (std::size_t i = 0; i < ref.stats.size(); ++i) {
            EXPECT_EQ(r.stats[i].voxels, ref.stats[i].voxels) << what;
            EXPECT_EQ(r.stats[i].cx, ref.stats[i].cx) << what;
          }
          for (std::int64_t z = 0; z < 37; ++z)
            for (std::int64_t y = 0; y < 29; ++y)
              for (std::int64_t x = 0; x < 67; ++x)
                ASSERT_EQ(into.row(y, z)[x], ref.labels.view().row(y, z)[x])
                    << what << " at " << x << "," << y << "," << z;
          for (std::int64_t z = 0; z < 37 && pad; ++z)  // the padding is left alone
            ASSERT_EQ(buffer[static_cast<std::size_t>(z * slice + 67)], 0xdeadbeefu) << what;
        }
  const auto v = random_volume<std::uint8_t>(8, 9, 10, 0.5, 1, 1);
  Volume<std::uint32_t> wrong(8, 9, 11), right(8, 9, 10);
  EXPECT_THROW(label_into(v.view(), wrong.view(), LabelOptions{}), InputError);
  EXPECT_THROW(label_into(v.view(), right.view(), LabelOptions{.wide_labels = true}), InputError);
}

// 64-bit run indices (volumes whose rows could hold 2^31 runs): the same volumes, the index width
// forced, with 32- and 64-bit labels.
TEST(LabelVolume, WideRunIndicesMatchTheOracle) {
  std::uint64_t seed = 4000;
  for (double d : {0.1, 0.5, 0.9})
    for (int conn : {6, 18, 26})
      for (bool multi : {false, true})
        for (bool wide : {false, true}) {
          const auto v = random_volume<std::uint32_t>(129, 65, 33, d, multi ? 3 : 1, seed++);
          detail::VolumeLabelRequest<std::uint32_t> req;
          req.connectivity = conn;
          req.multilabel = multi;
          req.narrow_run_index_limit = 0;
          check_cpu_request(v, req, wide,
                            std::string("64-bit runs, ") + (wide ? "64" : "32") + "-bit labels, " +
                                name(129, 65, 33, d, conn, multi));
        }
}

// Beyond 2^31 voxels (opt-in, WINNOW_LARGE_TESTS=1: about 11 GB of memory): planes of foreground
// every other slice, so the components and their statistics are known without an oracle.
TEST(LabelVolume, BeyondTwoToThe31Voxels) {
  WINNOW_REQUIRE_LARGE_TESTS_OR_SKIP("about 11 GB of memory");
  const std::int64_t nx = 2048, ny = 1024, nz = 1025;  // 2^31 + 2^21 voxels
  Volume<std::uint8_t> v(nx, ny, nz);
  for (std::int64_t z = 0; z < nz; z += 2) std::fill_n(&v(0, 0, z), nx * ny, std::uint8_t{1});
  v(7, 9, 1) = 1;  // joins planes 0 and 2 through a face
  const VolumeLabeling r = label(v.view(), LabelOptions{.connectivity = 6, .backend = Backend::cpu});
  ASSERT_EQ(r.count, static_cast<std::uint64_t>(nz / 2));  // 513 planes, two of them joined
  EXPECT_EQ(r.stats[0].voxels, static_cast<std::uint64_t>(2 * nx * ny + 1));
  EXPECT_EQ(r.stats[0].depth, 3);
  for (std::size_t i = 1; i < r.stats.size(); ++i) {
    EXPECT_EQ(r.stats[i].voxels, static_cast<std::uint64_t>(nx * ny));
    EXPECT_EQ(r.stats[i].z, static_cast<std::int64_t>(2 * i + 2));
    EXPECT_EQ(r.stats[i].cy, (ny - 1) / 2.0);
  }
  EXPECT_EQ(r.labels(nx - 1, ny - 1, nz - 1), r.count);
  EXPECT_EQ(r.labels(7, 9, 1), 1u);
  EXPECT_EQ(r.labels(8, 9, 1), 0u);
}

// Rows of one voxel, slices of one row, volumes of one slice: each large enough for several slabs.
TEST(LabelVolume, OneVoxelThickVolumes) {
  const std::int64_t sizes[][3] = {{1, 600, 500}, {600, 1, 500}, {600, 500, 1}, {300000, 1, 1}, {1, 1, 300000}};
  std::uint64_t seed = 100;
  for (const auto& s : sizes)
    for (double d : {0.1, 0.5, 0.9})
      for (int conn : {6, 18, 26})
        for (bool multi : {false, true}) {
          const auto v = random_volume<std::uint8_t>(s[0], s[1], s[2], d, multi ? 2 : 1, seed++);
          check_volume(v, conn, multi, name(s[0], s[1], s[2], d, conn, multi));
        }
}

// Patterns whose voxels touch only at edges or corners, so the three connectivities differ.
TEST(LabelVolume, EdgesAndCornersSeparateTheConnectivities) {
  const std::int64_t n = 70;  // 343000 voxels: parallel slabs
  Volume<std::uint8_t> checker(n, n, n), body_centred(n, n, n), diagonal(n, n, n);
  for (std::int64_t z = 0; z < n; ++z)
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x) {
        checker(x, y, z) = (x + y + z) % 2 == 0;  // neighbours share edges, never faces
        body_centred(x, y, z) = (x % 2 == 0 && y % 2 == 0 && z % 2 == 0) || (x % 2 && y % 2 && z % 2);  // corners
      }
  for (std::int64_t i = 0; i < n; ++i) diagonal(i, i, i) = 1;
  LabelOptions opt;
  opt.backend = Backend::cpu;
  auto count = [&](const Volume<std::uint8_t>& v, int conn) {
    opt.connectivity = conn;
    return label(v.view(), opt).count;
  };
  EXPECT_EQ(count(checker, 6), static_cast<std::uint64_t>(n * n * n / 2));
  EXPECT_EQ(count(checker, 18), 1u);
  EXPECT_EQ(count(checker, 26), 1u);
  EXPECT_EQ(count(body_centred, 6), static_cast<std::uint64_t>(2 * 35 * 35 * 35));
  EXPECT_EQ(count(body_centred, 18), static_cast<std::uint64_t>(2 * 35 * 35 * 35));
  EXPECT_EQ(count(body_centred, 26), 1u);
  EXPECT_EQ(count(diagonal, 6), static_cast<std::uint64_t>(n));
  EXPECT_EQ(count(diagonal, 18), static_cast<std::uint64_t>(n));
  EXPECT_EQ(count(diagonal, 26), 1u);
  for (int conn : {6, 18, 26}) {
    check_volume(checker, conn, false, "checker " + std::to_string(conn));
    check_volume(body_centred, conn, false, "body-centred " + std::to_string(conn));
  }
}

// A spiral staircase: each step one voxel up and one over, in a helix around the z axis, so it
// holds together only through edges (18, 26), and a second one that steps diagonally (corners).
TEST(LabelVolume, SpiralsMatchTheOracle) {
  const std::int64_t n = 48, nz = 150;
  Volume<std::uint16_t> v(n, n, nz);
  const int ring[][2] = {{10, 10}, {11, 10}, {12, 10}, {12, 11}, {12, 12}, {11, 12}, {10, 12}, {10, 11}};
  for (std::int64_t z = 0; z < nz; ++z) {
    const auto& a = ring[z % 8];
    v(a[0], a[1], z) = 7;                      // edge-connected staircase
    v(30 + (z % 8), 30 + (z % 8) % 3, z) = 9;  // mostly corner-connected
  }
  for (int conn : {6, 18, 26})
    for (bool multi : {false, true}) check_volume(v, conn, multi, "spiral " + std::to_string(conn));
}

TEST(LabelVolume, EveryVoxelTypeMultilabelAndBinary) {
  const std::int64_t nx = 67, ny = 41, nz = 103;  // 283001 voxels
  std::uint64_t seed = 500;
  for (double d : {0.1, 0.5, 0.9})
    for (int conn : {6, 18, 26})
      for (bool multi : {false, true}) {
        const std::string what = name(nx, ny, nz, d, conn, multi);
        check_volume(random_volume<std::uint16_t>(nx, ny, nz, d, multi ? 3 : 1, seed++, std::uint16_t{60000}), conn,
                     multi, "u16 " + what);
        check_volume(random_volume<std::uint32_t>(nx, ny, nz, d, multi ? 3 : 1, seed++, std::uint32_t{1} << 31), conn,
                     multi, "u32 " + what);
        check_volume(random_volume<std::uint64_t>(nx, ny, nz, d, multi ? 3 : 1, seed++, std::uint64_t{1} << 40), conn,
                     multi, "u64 " + what);
      }
}

// A view into a larger buffer, rows and slices padded with non-zero garbage that must be ignored.
TEST(LabelVolume, StridedViews) {
  const std::int64_t nx = 77, ny = 50, nz = 80, rs = 90, ss = rs * ny + 13;
  std::vector<std::uint8_t> buffer(static_cast<std::size_t>(ss * nz), 5);
  const auto dense = random_volume<std::uint8_t>(nx, ny, nz, 0.5, 2, 77);
  const VolumeView<std::uint8_t> strided(buffer.data(), nx, ny, nz, rs, ss);
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) strided(x, y, z) = dense(x, y, z);
  for (int conn : {6, 18, 26})
    for (bool multi : {false, true}) {
      LabelOptions opt{.connectivity = conn, .multilabel = multi, .backend = Backend::cpu};
      const VolumeLabeling r = label(strided, opt);
      expect_matches_oracle<std::uint8_t>(dense.view(), r, r.labels, conn, multi, "strided " + std::to_string(conn));
    }
}

TEST(LabelVolume, WideLabels) {
  const auto v = random_volume<std::uint8_t>(70, 66, 61, 0.3, 1, 31);
  for (int conn : {6, 26}) {
    LabelOptions opt{.connectivity = conn, .backend = Backend::cpu};
    opt.wide_labels = true;
    const VolumeLabeling r = label(v.view(), opt);
    EXPECT_TRUE(r.labels.empty());
    ASSERT_FALSE(r.labels64.empty());
    expect_matches_oracle<std::uint8_t>(v.view(), r, r.labels64, conn, false, "wide " + std::to_string(conn));
  }
}

// min_area then largest_k, against the oracle's components filtered here: survivors keep their
// raster order and are renumbered 1..k.
TEST(LabelVolume, MinAreaAndLargestK) {
  const auto v = random_volume<std::uint8_t>(80, 70, 60, 0.25, 1, 41);
  const OracleLabeling o = oracle_label_volume<std::uint8_t>(v.view(), 26, false);
  for (std::uint64_t min_area : {0u, 2u, 5u})
    for (std::uint64_t k : {0u, 1u, 7u, 1000000u}) {
      std::vector<std::uint64_t> order;  // oracle labels - 1 that pass min_area
      for (std::uint64_t i = 0; i < o.components.size(); ++i)
        if (o.components[i].voxels >= min_area) order.push_back(i);
      if (k > 0 && k < order.size()) {
        std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) {
          return o.components[a].voxels > o.components[b].voxels;
        });
        order.resize(k);
        std::sort(order.begin(), order.end());
      }
      std::vector<std::uint64_t> renumber(o.components.size() + 1, 0);
      for (std::size_t j = 0; j < order.size(); ++j) renumber[order[j] + 1] = j + 1;
      LabelOptions opt{.connectivity = 26, .largest_k = k, .min_area = min_area, .backend = Backend::cpu};
      const VolumeLabeling r = label(v.view(), opt);
      const std::string what = "min_area " + std::to_string(min_area) + " k " + std::to_string(k);
      ASSERT_EQ(r.count, order.size()) << what;
      for (std::size_t i = 0; i < o.labels.size(); ++i)
        ASSERT_EQ(r.labels.voxels()[i], renumber[o.labels[i]]) << what << " voxel " << i;
      ASSERT_EQ(r.stats.size(), order.size()) << what;
      for (std::size_t j = 0; j < order.size(); ++j) {
        EXPECT_EQ(r.stats[j].voxels, o.components[order[j]].voxels) << what;
        EXPECT_EQ(r.stats[j].x, o.components[order[j]].min_x) << what;
        EXPECT_EQ(r.stats[j].z, o.components[order[j]].min_z) << what;
      }
      // The same filtering without statistics leaves the same labels.
      opt.want_stats = false;
      const VolumeLabeling bare = label(v.view(), opt);
      EXPECT_TRUE(bare.stats.empty());
      EXPECT_EQ(bare.count, r.count);
      EXPECT_TRUE(std::equal(bare.labels.voxels().begin(), bare.labels.voxels().end(), r.labels.voxels().begin()))
          << what;
    }
}

TEST(LabelVolume, EmptyVolumesAndBadOptions) {
  for (const auto& dims : {std::array<std::int64_t, 3>{0, 5, 5}, {5, 0, 5}, {5, 5, 0}}) {
    Volume<std::uint8_t> v(dims[0], dims[1], dims[2]);
    const VolumeLabeling r = label(v.view());
    EXPECT_EQ(r.count, 0u);
    EXPECT_TRUE(r.stats.empty());
  }
  Volume<std::uint8_t> v(4, 4, 4, 1);
  for (int conn : {4, 8, 5, 27, -1})
    EXPECT_THROW(label(v.view(), LabelOptions{.connectivity = conn}), InputError) << conn;
  EXPECT_EQ(label(v.view(), LabelOptions{.connectivity = 0}).count, 1u);  // 0 is 26
  VolumeView<const std::uint8_t> overlapping(v.data(), 4, 4, 4, 2, 16);
  EXPECT_THROW(label(overlapping), InputError);
  VolumeView<const std::uint8_t> null_data(nullptr, 4, 4, 4);
  EXPECT_THROW(label(null_data), InputError);
  EXPECT_THROW(label(v.view(), LabelOptions{.algorithm = LabelAlgorithm::block_union_find, .backend = Backend::cpu}),
               BackendError);
}

// ---- bands of layers -----------------------------------------------------------------------------

/// A labeling of a whole request (a request, its sums): what check_bands calls.
template <class T>
using LabelWhole =
    std::function<std::uint64_t(const detail::VolumeLabelRequest<T>&, std::vector<detail::VolumeComponentSums>*)>;

/// Labels `v` through `label_whole` into 32- or 64-bit labels, and checks labels, count and sums
/// against the oracle.
template <class T>
void check_bands(const Volume<T>& v, int conn, bool multi, bool wide, const LabelWhole<T>& label_whole,
                 const std::string& what) {
  const OracleLabeling o = oracle_label_volume<T>(v.view(), conn, multi);
  Volume<std::uint32_t> labels32 = wide ? Volume<std::uint32_t>() : Volume<std::uint32_t>(v.nx(), v.ny(), v.nz());
  Volume<std::uint64_t> labels64 = wide ? Volume<std::uint64_t>(v.nx(), v.ny(), v.nz()) : Volume<std::uint64_t>();
  // Poisoned: a voxel the labeling leaves unwritten, background included, cannot pass.
  std::fill_n(labels32.data(), labels32.size(), 0xFFFFFFFFu);
  std::fill_n(labels64.data(), labels64.size(), ~std::uint64_t{0});
  detail::VolumeLabelRequest<T> req;
  req.volume = v.view();
  req.labels32 = labels32.view();
  req.labels64 = labels64.view();
  req.connectivity = conn;
  req.multilabel = multi;
  std::vector<detail::VolumeComponentSums> sums;
  const std::uint64_t n = label_whole(req, &sums);
  ASSERT_EQ(n, o.components.size()) << what;
  for (std::size_t i = 0; i < o.labels.size(); ++i)
    ASSERT_EQ(wide ? labels64.voxels()[i] : std::uint64_t{labels32.voxels()[i]}, o.labels[i])
        << what << " at voxel " << i;
  ASSERT_EQ(sums.size(), o.components.size()) << what;
  for (std::size_t i = 0; i < sums.size(); ++i) {
    const auto& c = o.components[i];
    const auto& m = sums[i];
    ASSERT_EQ(m.voxels, c.voxels) << what << " label " << i + 1;
    EXPECT_EQ(std::make_tuple(m.min_x, m.min_y, m.min_z, m.max_x, m.max_y, m.max_z),
              std::make_tuple(c.min_x, c.min_y, c.min_z, c.max_x, c.max_y, c.max_z))
        << what << " label " << i + 1;
    EXPECT_EQ(std::make_tuple(m.sum_x, m.sum_y, m.sum_z), std::make_tuple(c.sum_x, c.sum_y, c.sum_z)) << what;
    if (multi) EXPECT_EQ(m.value, c.value) << what << " label " << i + 1;
  }
}

/// A backend that holds its band in host memory, labelled by the CPU: the two passes' driver (the
/// seams, the numbering, the sums) without a device. Its final labels go through
/// SeamNumbering::label_of, the rule the device's kernel follows.
template <class T>
class HostBand final : public detail::ResidentBand<T> {
 public:
  std::uint64_t label(const VolumeView<const T>& band, int conn, bool multi,
                      std::vector<detail::VolumeComponentSums>* sums) override {
    ++calls;
    labels_ = Volume<std::uint32_t>(band.nx, band.ny, band.nz);
    detail::VolumeLabelRequest<T> req;
    req.volume = band;
    req.labels32 = labels_.view();
    req.connectivity = conn;
    req.multilabel = multi;
    return detail::cpu::label_volume(req, sums);
  }
  void copy_layer(std::int64_t z, std::uint32_t* out) override {
    std::copy_n(&labels_(0, 0, z), labels_.nx() * labels_.ny(), out);
  }
  void write_labels(std::uint64_t base, const detail::SeamNumbering& numbering, std::size_t lo, std::size_t hi,
                    const VolumeView<std::uint32_t>& out32, const VolumeView<std::uint64_t>& out64) override {
    for (std::int64_t z = 0; z < labels_.nz(); ++z)
      for (std::int64_t y = 0; y < labels_.ny(); ++y)
        for (std::int64_t x = 0; x < labels_.nx(); ++x) {
          const std::uint32_t l = labels_(x, y, z);
          const std::uint64_t final_label = l ? numbering.label_of(base + l, lo, hi) : 0;
          if (out32.data) out32.row(y, z)[x] = static_cast<std::uint32_t>(final_label);
          else out64.row(y, z)[x] = final_label;
        }
  }
  int calls = 0;

 private:
  Volume<std::uint32_t> labels_;
};

// The two passes over bands, with the CPU labelling each band: bands of one layer, of a few, of the
// whole volume and deeper than it; every connectivity, binary and multi-label, both widths. Each
// band is labelled twice but the first (kept from pass 1).
TEST(LabelVolumeBands, TwoPassesMergeLikeOneCall) {
  std::uint64_t seed = 9100;
  for (double d : {0.1, 0.5, 0.9})
    for (int conn : {6, 18, 26})
      for (bool multi : {false, true}) {
        const auto v = random_volume<std::uint16_t>(37, 23, 19, d, multi ? 3 : 1, seed++, std::uint16_t{0x100});
        for (std::int64_t layers : {1, 2, 5, 19, 40})
          for (bool wide : {false, true}) {
            HostBand<std::uint16_t> host;
            check_bands<std::uint16_t>(
                v, conn, multi, wide,
                [&](const detail::VolumeLabelRequest<std::uint16_t>& req,
                    std::vector<detail::VolumeComponentSums>* sums) {
                  return detail::label_volume_in_passes(req, sums, layers, host);
                },
                name(37, 23, 19, d, conn, multi) + " bands of " + std::to_string(layers) + (wide ? " wide" : ""));
            const std::int64_t bands =
                (19 + std::min<std::int64_t>(layers, 19) - 1) / std::min<std::int64_t>(layers, 19);
            EXPECT_EQ(host.calls, 2 * bands - 1);
          }
      }
}

// More components than 32-bit labels hold is refused for 32-bit labels before any label is
// written, never a wrap-around (a stand-in backend that reports 2^31 components a band and labels
// nothing: real ones would need 2^33 voxels).
TEST(LabelVolumeBands, TooManyComponentsFor32BitLabels) {
  struct Claims231 final : detail::ResidentBand<std::uint8_t> {
    std::uint64_t label(const VolumeView<const std::uint8_t>& band, int, bool,
                        std::vector<detail::VolumeComponentSums>*) override {
      ++calls;
      layer = static_cast<std::size_t>(band.nx * band.ny);
      return std::uint64_t{1} << 31;
    }
    void copy_layer(std::int64_t, std::uint32_t* out) override { std::fill_n(out, layer, 0u); }
    void write_labels(std::uint64_t, const detail::SeamNumbering&, std::size_t, std::size_t,
                      const VolumeView<std::uint32_t>&, const VolumeView<std::uint64_t>&) override {
      ++writes;
    }
    std::size_t layer = 0;
    int calls = 0, writes = 0;
  } claims;
  Volume<std::uint8_t> v(4, 3, 6);
  Volume<std::uint32_t> labels32(4, 3, 6);
  detail::VolumeLabelRequest<std::uint8_t> req;
  req.volume = v.view();
  req.labels32 = labels32.view();
  EXPECT_THROW(detail::label_volume_in_passes<std::uint8_t>(req, nullptr, 3, claims), detail::CountBeyond32Bits);
  EXPECT_EQ(claims.calls, 2);
  EXPECT_EQ(claims.writes, 0);
  // 64-bit labels take the count (2^32, nothing merges).
  Volume<std::uint64_t> labels64(4, 3, 6);
  req.labels32 = VolumeView<std::uint32_t>();
  req.labels64 = labels64.view();
  EXPECT_EQ(detail::label_volume_in_passes<std::uint8_t>(req, nullptr, 3, claims), std::uint64_t{1} << 32);
  EXPECT_EQ(claims.writes, 2);
}

// ---- multi-label images ----------------------------------------------------------------------

template <class T>
void check_image(const Volume<T>& slice, int conn, bool multi, const std::string& what) {
  const ImageView<const T> image(slice.data(), slice.nx(), slice.ny());
  LabelOptions opt{.connectivity = conn, .multilabel = multi, .backend = Backend::cpu};
  const Labeling r = label(image, opt);
  const OracleLabeling o = oracle_label_volume<T>(slice.view(), conn == 4 ? 6 : 26, multi);
  ASSERT_EQ(r.count, o.components.size()) << what;
  for (std::size_t i = 0; i < o.labels.size(); ++i)
    ASSERT_EQ(r.labels.data()[i], o.labels[i]) << what << " pixel " << i;
  ASSERT_EQ(r.stats.size(), o.components.size()) << what;
  for (std::size_t i = 0; i < o.components.size(); ++i) {
    const auto& c = o.components[i];
    EXPECT_EQ(r.stats[i].area, c.voxels) << what;
    EXPECT_EQ(r.stats[i].left, c.min_x) << what;
    EXPECT_EQ(r.stats[i].top, c.min_y) << what;
    EXPECT_EQ(r.stats[i].width, c.max_x - c.min_x + 1) << what;
    EXPECT_EQ(r.stats[i].height, c.max_y - c.min_y + 1) << what;
    EXPECT_EQ(r.stats[i].cx, static_cast<double>(c.sum_x) / static_cast<double>(c.voxels)) << what;
    EXPECT_EQ(r.stats[i].value, multi ? c.value : 0u) << what;
  }
}

TEST(LabelImageMultilabel, EveryTypeMatchesTheOracle) {
  std::uint64_t seed = 900;
  for (const auto& s : {std::array<std::int64_t, 2>{1, 1}, {65, 1}, {1, 70}, {130, 77}, {700, 450}})
    for (double d : {0.1, 0.5, 0.9})
      for (int conn : {4, 8})
        for (bool multi : {false, true}) {
          const std::string what = std::to_string(s[0]) + "x" + std::to_string(s[1]) + " d " + std::to_string(d) +
                                   " conn " + std::to_string(conn) + (multi ? " multi" : " binary");
          const int values = multi ? 3 : 1;
          if (multi)
            check_image(random_volume<std::uint8_t>(s[0], s[1], 1, d, values, seed++), conn, multi, "u8 " + what);
          check_image(random_volume<std::uint16_t>(s[0], s[1], 1, d, values, seed++), conn, multi, "u16 " + what);
          check_image(random_volume<std::uint32_t>(s[0], s[1], 1, d, values, seed++), conn, multi, "u32 " + what);
          check_image(random_volume<std::uint64_t>(s[0], s[1], 1, d, values, seed++, std::uint64_t{1} << 50), conn,
                      multi, "u64 " + what);
        }
}

// largest_k on the binary image path (its own algorithms), against the oracle filtered here.
TEST(LabelImageMultilabel, LargestKOnBinaryImages) {
  const auto slice = random_volume<std::uint8_t>(300, 200, 1, 0.4, 1, 1234);
  const ImageView<const std::uint8_t> image(slice.data(), 300, 200);
  const OracleLabeling o = oracle_label_volume<std::uint8_t>(slice.view(), 26, false);
  std::vector<std::uint64_t> order(o.components.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return o.components[a].voxels > o.components[b].voxels; });
  order.resize(5);
  std::sort(order.begin(), order.end());
  for (auto algorithm : {LabelAlgorithm::row_stripes, LabelAlgorithm::tile_merge}) {
    const Labeling r =
        label(image, LabelOptions{.connectivity = 8, .largest_k = 5, .algorithm = algorithm, .backend = Backend::cpu});
    ASSERT_EQ(r.count, 5u);
    for (int j = 0; j < 5; ++j) EXPECT_EQ(r.stats[static_cast<std::size_t>(j)].area, o.components[order[j]].voxels);
    for (std::size_t i = 0; i < o.labels.size(); ++i) {
      const auto it = std::find(order.begin(), order.end(), o.labels[i] - 1);
      const std::uint64_t want =
          o.labels[i] && it != order.end() ? static_cast<std::uint64_t>(it - order.begin()) + 1 : 0;
      ASSERT_EQ(r.labels.data()[i], want) << "pixel " << i;
    }
  }
}

// The CPU tells of its slab passes (scan, then label rows): each of 1..total once, from its
// threads, and the labels are those of a run without a listener.
TEST(LabelVolume, ProgressCountsEverySlabPass) {
  const auto v = random_volume<std::uint8_t>(96, 80, 72, 0.4, 1, 71);  // past the parallel threshold
  std::mutex mutex;
  std::vector<std::uint64_t> seen;
  std::uint64_t total = 0;
  LabelOptions options;
  options.backend = Backend::cpu;
  options.progress = [&](std::uint64_t done, std::uint64_t all) {
    const std::lock_guard<std::mutex> lock(mutex);
    seen.push_back(done);
    total = all;
  };
  const VolumeLabeling with = label(v.view(), options);
  options.progress = nullptr;
  const VolumeLabeling without = label(v.view(), options);
  EXPECT_TRUE(std::equal(with.labels.voxels().begin(), with.labels.voxels().end(), without.labels.voxels().begin()));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(total % 2, 0u);
  std::sort(seen.begin(), seen.end());
  std::vector<std::uint64_t> every(total);
  std::iota(every.begin(), every.end(), 1);
  EXPECT_EQ(seen, every);
}

// ---- the bundled real volumes ------------------------------------------------------------------

std::string volume_path(const char* file) { return std::string(WINNOW_DATA_DIR) + "/volumes/" + file; }

TEST(LabelVolume, BundledVolumesMatchTheOracle) {
  // The MNI grey-matter map thresholded (the cortex: a thin folded sheet), as a mask and as a
  // multi-label volume of four probability bands.
  const auto mni = std::get<Volume<std::uint8_t>>(io::read_volume(volume_path("mni152_gm.nii.gz")));
  Volume<std::uint8_t> mask(mni.nx(), mni.ny(), mni.nz()), bands(mni.nx(), mni.ny(), mni.nz());
  for (std::size_t i = 0; i < mni.voxels().size(); ++i) {
    mask.voxels()[i] = mni.voxels()[i] > 128;
    bands.voxels()[i] = static_cast<std::uint8_t>(mni.voxels()[i] / 64);
  }
  for (int conn : {6, 26}) {
    check_volume(mask, conn, false, "mni152 > 128, conn " + std::to_string(conn));
    check_volume(bands, conn, true, "mni152 bands, conn " + std::to_string(conn));
  }
#ifdef WINNOW_HAVE_TIFF
  const auto blobs = std::get<Volume<std::uint8_t>>(io::read_volume(volume_path("blobs3d.tif")));
  for (int conn : {6, 18, 26}) check_volume(blobs, conn, false, "blobs3d, conn " + std::to_string(conn));
#endif
  // The fMRI map: positive and negative blobs as two labels.
  const auto motor = std::get<Volume<float>>(io::read_volume(volume_path("motor_activation.nii.gz")));
  Volume<std::uint8_t> signs(motor.nx(), motor.ny(), motor.nz());
  for (std::size_t i = 0; i < motor.voxels().size(); ++i)
    signs.voxels()[i] = motor.voxels()[i] > 2.3f ? 1 : motor.voxels()[i] < -2.3f ? 2 : 0;
  for (int conn : {6, 18, 26}) check_volume(signs, conn, true, "motor, conn " + std::to_string(conn));
}

// ---- CUDA against the CPU ------------------------------------------------------------------------

TEST(LabelVolumeCuda, SameLabelsAndStatisticsAsTheCpu) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::uint64_t seed = 7000;
  for (const auto& s : {std::array<std::int64_t, 3>{1, 1, 1}, {33, 17, 9}, {129, 65, 66}, {256, 256, 64}})
    for (double d : {0.1, 0.5, 0.9})
      for (int conn : {6, 18, 26})
        for (bool multi : {false, true}) {
          const auto v = random_volume<std::uint8_t>(s[0], s[1], s[2], d, multi ? 3 : 1, seed++);
          LabelOptions opt{.connectivity = conn, .multilabel = multi, .backend = Backend::cpu};
          const VolumeLabeling cpu = label(v.view(), opt);
          opt.backend = Backend::cuda;
          const VolumeLabeling gpu = label(v.view(), opt);
          const std::string what = name(s[0], s[1], s[2], d, conn, multi);
          EXPECT_EQ(gpu.backend, Backend::cuda) << what;
          ASSERT_EQ(gpu.count, cpu.count) << what;
          ASSERT_TRUE(std::equal(cpu.labels.voxels().begin(), cpu.labels.voxels().end(), gpu.labels.voxels().begin()))
              << what;
          ASSERT_EQ(gpu.stats, cpu.stats) << what;
        }
  // 64-bit labels on CUDA: one band, widened on the host.
  const auto v = random_volume<std::uint16_t>(90, 80, 70, 0.5, 1, 99);
  const VolumeLabeling cpu = label(v.view(), LabelOptions{.wide_labels = true, .backend = Backend::cpu});
  const VolumeLabeling gpu = label(v.view(), LabelOptions{.wide_labels = true, .backend = Backend::cuda});
  EXPECT_EQ(gpu.backend, Backend::cuda);
  ASSERT_TRUE(gpu.labels.empty());
  ASSERT_EQ(gpu.count, cpu.count);
  EXPECT_TRUE(std::equal(cpu.labels64.voxels().begin(), cpu.labels64.voxels().end(), gpu.labels64.voxels().begin()));
  EXPECT_EQ(gpu.stats, cpu.stats);
}

#ifdef WINNOW_HAVE_CUDA
// The CUDA backend's own band path (volumes beyond one call), with small bands.
TEST(LabelVolumeCuda, BandsMatchTheOracle) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::uint64_t seed = 9300;
  for (double d : {0.1, 0.5, 0.9})
    for (int conn : {6, 18, 26})
      for (bool multi : {false, true}) {
        const auto v = random_volume<std::uint8_t>(70, 41, 37, d, multi ? 3 : 1, seed++);
        for (std::int64_t layers : {1, 3, 8, 37})
          for (bool wide : {false, true})
            check_bands<std::uint8_t>(
                v, conn, multi, wide,
                [&](const detail::VolumeLabelRequest<std::uint8_t>& req,
                    std::vector<detail::VolumeComponentSums>* sums) {
                  return detail::cuda::label_volume(req, sums, layers);
                },
                "cuda " + name(70, 41, 37, d, conn, multi) + " bands of " + std::to_string(layers) +
                    (wide ? " wide" : ""));
      }
}
#else
// Shown as skipped (not missing) in a build without the CUDA backend.
TEST(LabelVolumeCuda, BandsMatchTheOracle) { WINNOW_GPU_MISSING("built without the CUDA backend"); }
#endif

// Beyond 2^32 voxels on CUDA (opt-in, WINNOW_LARGE_TESTS=1: 55 GB of host memory at its peak on the
// H200 machine, 40 s): two bands of layers merged on the host. Planes of foreground every other
// slice, known without an oracle; one voxel joins planes 0 and 2 inside the first band, another
// joins planes 1022 and 1024 across the seam between the bands (the first band's last layer is
// 1022: 1023 layers of 2^22 voxels are the most below 2^32).
TEST(LabelVolumeCuda, BeyondTwoToThe32Voxels) {
  WINNOW_REQUIRE_LARGE_TESTS_OR_SKIP("about 55 GB of memory");
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const std::int64_t nx = 2048, ny = 2048, nz = 1027;  // 2^32 + 3 * 2^22 voxels
  Volume<std::uint8_t> v(nx, ny, nz);
  for (std::int64_t z = 0; z < nz; z += 2) std::fill_n(&v(0, 0, z), nx * ny, std::uint8_t{1});
  v(7, 9, 1) = 1;     // joins planes 0 and 2
  v(5, 6, 1023) = 1;  // joins planes 1022 and 1024, across the seam
  const VolumeLabeling r = label(v.view(), LabelOptions{.connectivity = 6, .backend = Backend::cuda});
  EXPECT_EQ(r.backend, Backend::cuda);
  ASSERT_FALSE(r.labels.empty());            // the count fits: 32-bit labels
  const std::int64_t planes = (nz + 1) / 2;  // 514
  ASSERT_EQ(r.count, static_cast<std::uint64_t>(planes - 2));
  // Plane z (even) has label z / 2 + 1, less one from plane 2 on and one more from plane 1024 on.
  auto plane_label = [](std::int64_t z) { return static_cast<std::uint32_t>(z / 2 + 1 - (z >= 2) - (z >= 1024)); };
  for (std::int64_t z = 0; z < nz; z += 2) {
    const std::uint32_t want = plane_label(z);
    ASSERT_EQ(r.labels(0, 0, z), want) << "plane " << z;
    ASSERT_EQ(r.labels(nx - 1, ny - 1, z), want) << "plane " << z;
    ASSERT_EQ(r.labels(nx / 2, 3, z), want) << "plane " << z;
    const VolumeComponentStats& s = r.stats[want - 1];
    const bool joined = z <= 2 || z == 1022 || z == 1024;
    EXPECT_EQ(s.voxels, static_cast<std::uint64_t>(joined ? 2 * nx * ny + 1 : nx * ny)) << "plane " << z;
    EXPECT_EQ(s.depth, joined ? 3 : 1) << "plane " << z;
    if (!joined) EXPECT_EQ(s.cx, (nx - 1) / 2.0) << "plane " << z;
  }
  EXPECT_EQ(r.labels(7, 9, 1), 1u);
  EXPECT_EQ(r.labels(5, 6, 1023), plane_label(1022));
  EXPECT_EQ(r.labels(8, 9, 1), 0u);
  EXPECT_EQ(r.labels(5, 6, 1021), 0u);
  EXPECT_EQ(r.stats[plane_label(1022) - 1].z, 1022);
}

}  // namespace
}  // namespace winnow
