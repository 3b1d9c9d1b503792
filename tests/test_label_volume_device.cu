// CUDA labeling of volumes (winnow::cuda::label_volume and the host-memory backend function
// detail::cuda::label_volume) against the BFS oracle of tests/common/volume_label_oracle.hpp:
// 6/18/26-connectivity, binary and multi-label, u8/u16/u32/u64 voxels, random volumes at
// densities 0.1/0.5/0.9, sizes around the bricks (32 x 8 x 8; 32 x 32 x 1 for one layer) and warp
// boundaries, 1-voxel-thick volumes, staircases and lattices that connect only through edges or
// corners, statistics (and a capacity below the count), strided host views. Outputs are poisoned
// before every run, and every case runs twice: a race shows as a difference between the runs.
// Also, on the host (no GPU needed): the 2x2x2 block helpers of 26-connectivity against the voxel
// geometry they stand for.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/gpu_guard.hpp"
#include "common/volume_label_oracle.hpp"
#include "label/backends.hpp"
#include "label/cuda/volume_rows.cuh"
#include "winnow/cuda/label.hpp"
#include "winnow/error.hpp"
#include "winnow/label.hpp"

namespace winnow {
namespace {

using test::Dev;
using RawStats = cuda::RawVolumeComponentStats;

struct Dims {
  std::int64_t nx, ny, nz;
};
std::string describe(const Dims& d, int conn, bool multilabel, const char* what) {
  return std::string(what) + " " + std::to_string(d.nx) + "x" + std::to_string(d.ny) + "x" + std::to_string(d.nz) +
         " conn " + std::to_string(conn) + (multilabel ? " multilabel" : " binary");
}

struct DeviceResult {
  std::uint32_t count = 0;
  std::vector<std::uint32_t> labels;
  std::vector<RawStats> stats;  // stats_records entries, read back whole (poison included)
};

// One device-API call on freshly poisoned outputs.
template <class T>
DeviceResult run_device(const T* d_volume, const Dims& d, int conn, bool multilabel, std::size_t stats_records,
                        std::uint64_t stats_capacity) {
  DeviceResult r;
  const auto n = static_cast<std::size_t>(d.nx * d.ny * d.nz);
  const cuda::DeviceLabelOptions o{.connectivity = conn, .multilabel = multilabel};
  const VolumeView<const T> view(d_volume, d.nx, d.ny, d.nz);
  std::size_t temp_bytes = 0;
  cuda::label_volume(nullptr, temp_bytes, view, nullptr, nullptr, nullptr, 0, o, nullptr);
  EXPECT_GT(temp_bytes, 0u);
  Dev<char> d_temp(temp_bytes);
  Dev<std::uint32_t> d_labels(n), d_count(1);
  Dev<RawStats> d_stats(stats_records);
  d_temp.poison();  // no reset of the temporary storage is needed
  d_labels.poison();
  d_count.poison();
  d_stats.poison();
  cuda::label_volume(d_temp.p, temp_bytes, view, d_labels.p, d_count.p, stats_records ? d_stats.p : nullptr,
                     stats_capacity, o, nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  r.count = d_count.download(1)[0];
  r.labels = d_labels.download(n);
  r.stats = d_stats.download(stats_records);
  return r;
}

void expect_stats_equal(const RawStats& got, const test::OracleComponent& want, std::uint64_t label) {
  SCOPED_TRACE("label " + std::to_string(label));
  EXPECT_EQ(got.voxels, want.voxels);
  EXPECT_EQ(got.sum_x, want.sum_x);
  EXPECT_EQ(got.sum_y, want.sum_y);
  EXPECT_EQ(got.sum_z, want.sum_z);
  EXPECT_EQ(std::int64_t{got.min_x}, want.min_x);
  EXPECT_EQ(std::int64_t{got.min_y}, want.min_y);
  EXPECT_EQ(std::int64_t{got.min_z}, want.min_z);
  EXPECT_EQ(std::int64_t{got.max_x}, want.max_x);
  EXPECT_EQ(std::int64_t{got.max_y}, want.max_y);
  EXPECT_EQ(std::int64_t{got.max_z}, want.max_z);
  EXPECT_EQ(got.value, want.value);
}

// Labels, count and statistics (capacity = count) against the oracle; twice, equal both times.
// The volume starts `offset` elements into its device allocation (the allocation ends with it).
template <class T>
void check_volume(const std::vector<T>& host, const Dims& d, int conn, bool multilabel, std::size_t offset = 0) {
  const test::OracleLabeling want =
      test::oracle_label_volume(VolumeView<const T>(host.data(), d.nx, d.ny, d.nz), conn, multilabel);
  const std::uint64_t count = want.components.size();
  Dev<T> d_buffer(host.size() + offset);
  d_buffer.poison();
  ASSERT_EQ(cudaMemcpy(d_buffer.p + offset, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  const T* d_vol = d_buffer.p + offset;
  const DeviceResult first = run_device(d_vol, d, conn, multilabel, count, count);
  ASSERT_EQ(first.count, count);
  for (std::size_t i = 0; i < host.size(); ++i)
    ASSERT_EQ(first.labels[i], want.labels[i])
        << "voxel (" << i % d.nx << "," << i / d.nx % d.ny << "," << i / (d.nx * d.ny) << ")";
  for (std::uint64_t l = 0; l < count; ++l) {
    expect_stats_equal(first.stats[l], want.components[l], l + 1);
    if (::testing::Test::HasFailure()) return;
  }
  const DeviceResult second = run_device(d_vol, d, conn, multilabel, count, count);
  EXPECT_EQ(second.count, first.count);
  EXPECT_TRUE(second.labels == first.labels) << "the second run's labels differ (a race)";
  EXPECT_EQ(std::memcmp(second.stats.data(), first.stats.data(), count * sizeof(RawStats)), 0)
      << "the second run's statistics differ (a race)";
}

template <class T>
std::vector<T> random_volume(const Dims& d, double density, std::uint32_t seed, int distinct_values, T base) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution on(density);
  std::vector<T> v(static_cast<std::size_t>(d.nx * d.ny * d.nz));
  for (T& x : v) x = on(rng) ? static_cast<T>(base + static_cast<T>(rng() % distinct_values)) : T{};
  return v;
}

const Dims kSizes[] = {{1, 1, 1},   {31, 7, 7},  {32, 8, 8},  {33, 9, 9},  {65, 17, 3},  {64, 16, 16},
                       {1, 64, 65}, {64, 1, 33}, {97, 33, 1}, {2, 2, 200}, {100, 23, 19}};

// The 2x2x2 blocks of 26-connectivity's bit-row passes (label/cuda/volume_rows.cuh), on the host,
// against the voxels they stand for: a block row's rows, its runs of joined blocks, and the face
// rows through which two block rows touch.
TEST(LabelVolumeBlocks, BlockRowsFromVoxelGeometry) {
  using detail::cuda::VolumeBrick;
  // Rows of a block row: each brick row once, the four of a block row in raster order.
  std::vector<int> seen(VolumeBrick::kRows, 0);
  for (int br = 0; br < detail::cuda::kBlockRows; ++br)
    for (int i = 0; i < 4; ++i) {
      const int r = detail::cuda::block_row_row(br, i);
      ASSERT_GE(r, 0);
      ASSERT_LT(r, VolumeBrick::kRows);
      ++seen[static_cast<std::size_t>(r)];
      if (i > 0) EXPECT_LT(detail::cuda::block_row_row(br, i - 1), r);
      EXPECT_EQ(r % VolumeBrick::kY / 2 + r / VolumeBrick::kY / 2 * detail::cuda::kBlockY, br);
    }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), VolumeBrick::kRows);

  // Runs of joined blocks: blocks k and k + 1 join when a voxel of the one is 26-adjacent to a
  // voxel of the other (any two rows of a block row are adjacent, so columns within one).
  std::mt19937 rng(2026);
  for (int t = 0; t < 100000; ++t) {
    unsigned rows[4];
    for (unsigned& w : rows) w = t % 3 == 0 ? rng() : t % 3 == 1 ? rng() & rng() : rng() & rng() & rng() & rng();
    const unsigned o = rows[0] | rows[1] | rows[2] | rows[3];
    auto voxel = [&](int x) { return x >= 0 && x < 32 && ((o >> x) & 1u); };
    unsigned want = 0;
    bool previous_held = false;
    for (int k = 0; k < 16; ++k) {
      const bool held = voxel(2 * k) || voxel(2 * k + 1);
      bool joined = false;
      for (int x1 = 2 * k - 2; x1 < 2 * k; ++x1)
        for (int x2 = 2 * k; x2 < 2 * k + 2; ++x2) joined = joined || (voxel(x1) && voxel(x2) && x2 - x1 <= 1);
      if (held && !(previous_held && joined)) want |= 1u << (2 * k);
      previous_held = held;
    }
    ASSERT_EQ(detail::cuda::block_run_starts(o), want)
        << "rows " << rows[0] << " " << rows[1] << " " << rows[2] << " " << rows[3];
  }

  // Face rows: for each backward block row, the rows of each block row with a 26-neighbour in
  // the other are exactly `near` and `far`, and every near row meets every far row (so their ORs
  // may be paired as one row each).
  for (int q = 0; q < 4; ++q) {
    const detail::cuda::BackRow b = detail::cuda::back_row(q, 26);
    const detail::cuda::BlockFaceRows f = detail::cuda::block_face_rows(b);
    auto y_of = [](int by, int i) { return 2 * by + i % 2; };
    auto z_of = [](int bz, int i) { return 2 * bz + i / 2; };
    auto meet = [&](int i, int j) {  // row i of block row (1, 1), row j of (1 + dy, 1 + dz)
      return std::abs(y_of(1, i) - y_of(1 + b.dy, j)) <= 1 && std::abs(z_of(1, i) - z_of(1 + b.dz, j)) <= 1;
    };
    for (int i = 0; i < 4; ++i) {
      bool any = false;
      for (int j = 0; j < 4; ++j) any = any || meet(i, j);
      EXPECT_EQ(any, i == f.near[0] || i == f.near[1]) << "back row " << q << ", near row " << i;
      bool any_far = false;
      for (int j = 0; j < 4; ++j) any_far = any_far || meet(j, i);
      EXPECT_EQ(any_far, i == f.far[0] || i == f.far[1]) << "back row " << q << ", far row " << i;
    }
    for (int i : f.near)
      for (int j : f.far) EXPECT_TRUE(meet(i, j)) << "back row " << q;
  }
}

// Densities near each connectivity's percolation threshold in 3D (about 0.31 for 6, 0.14 for 18,
// 0.10 for 26) give components that wind through many bricks in every direction: the merge's
// row pairs and x boundaries of binary volumes meet long chains of brick roots.
TEST(LabelVolumeDevice, RandomBinaryNearPercolation) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::uint32_t seed = 500;
  // 208 and 48 columns: rows of a multiple of 16 bytes, read 16 bytes at a time when the volume is
  // 16-byte aligned, the last brick's rows half full; 129 and 591: rows read a value per lane. The
  // volumes placed 0, 1 and 7 bytes into their allocations (which end with the volume): an
  // unaligned volume takes the value-per-lane reads too.
  const Dims sizes[] = {{208, 50, 40}, {129, 70, 33}, {48, 20, 20}, {591, 9, 10}};
  const std::size_t offsets[] = {0, 1, 7};
  int round = 0;
  for (const Dims& d : sizes)
    for (int conn : {6, 18, 26})
      for (double density : {conn == 6 ? 0.31 : conn == 18 ? 0.14 : 0.10, 0.25}) {
        const std::size_t offset = offsets[round++ % 3];
        SCOPED_TRACE(describe(d, conn, false, "random") + " density " + std::to_string(density) + " offset " +
                     std::to_string(offset));
        check_volume<std::uint8_t>(random_volume<std::uint8_t>(d, density, seed++, 255, 1), d, conn, false, offset);
        if (HasFailure()) return;
      }
}

TEST(LabelVolumeDevice, RandomBinaryEveryConnectivity) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::uint32_t seed = 1;
  for (const Dims& d : kSizes)
    for (double density : {0.1, 0.5, 0.9})
      for (int conn : {6, 18, 26}) {
        SCOPED_TRACE(describe(d, conn, false, "random") + " density " + std::to_string(density));
        // Values 1..255: binary means any non-zero value, not only 1.
        check_volume<std::uint8_t>(random_volume<std::uint8_t>(d, density, seed++, 255, 1), d, conn, false);
        if (HasFailure()) return;
      }
}

TEST(LabelVolumeDevice, RandomMultilabelEveryType) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::uint32_t seed = 100;
  const Dims sizes[] = {{33, 9, 9}, {65, 17, 10}, {40, 3, 31}};
  for (const Dims& d : sizes)
    for (double density : {0.5, 0.9})
      for (int conn : {6, 18, 26}) {
        SCOPED_TRACE(describe(d, conn, true, "random") + " density " + std::to_string(density));
        // Three values, so equal neighbours are common; bases that need each type's full width.
        check_volume<std::uint8_t>(random_volume<std::uint8_t>(d, density, seed++, 3, 200), d, conn, true);
        check_volume<std::uint16_t>(random_volume<std::uint16_t>(d, density, seed++, 3, 60000), d, conn, true);
        check_volume<std::uint32_t>(random_volume<std::uint32_t>(d, density, seed++, 3, 4000000000u), d, conn, true);
        check_volume<std::uint64_t>(random_volume<std::uint64_t>(d, density, seed++, 3, std::uint64_t{1} << 40), d,
                                    conn, true);
        if (HasFailure()) return;
      }
}

TEST(LabelVolumeDevice, BinaryWideTypesHighBitsOnly) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  // Voxels whose only set bits are high ones are foreground: a truncating comparison would lose them.
  const Dims d{45, 12, 11};
  std::mt19937 rng(7);
  std::vector<std::uint16_t> v16(static_cast<std::size_t>(d.nx * d.ny * d.nz));
  std::vector<std::uint32_t> v32(v16.size());
  std::vector<std::uint64_t> v64(v16.size());
  for (std::size_t i = 0; i < v16.size(); ++i) {
    const bool on = rng() % 100 < 35;
    v16[i] = on ? std::uint16_t{0x8000} : 0;
    v32[i] = on ? 0x80000000u : 0;
    v64[i] = on ? (std::uint64_t{1} << (32 + rng() % 32)) : 0;
  }
  for (int conn : {6, 26}) {
    SCOPED_TRACE(describe(d, conn, false, "high bits"));
    check_volume(v16, d, conn, false);
    check_volume(v32, d, conn, false);
    check_volume(v64, d, conn, false);
  }
}

TEST(LabelVolumeDevice, OneVoxelThick) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const Dims sizes[] = {{300, 70, 1}, {300, 1, 70}, {1, 300, 70}, {1000, 1, 1}, {1, 1000, 1}, {1, 1, 1000}};
  std::uint32_t seed = 300;
  for (const Dims& d : sizes)
    for (int conn : {6, 18, 26}) {
      SCOPED_TRACE(describe(d, conn, false, "thin"));
      check_volume<std::uint8_t>(random_volume<std::uint8_t>(d, 0.5, seed++, 1, 1), d, conn, false);
      SCOPED_TRACE("multilabel");
      check_volume<std::uint16_t>(random_volume<std::uint16_t>(d, 0.8, seed++, 2, 1), d, conn, true);
    }
}

// Volumes of one layer (images: multi-label, or of wide values) take bricks of 32 x 32 x 1, a
// warp each, in tiles of 128 x 64 (a block each): sizes around both boundaries, every
// connectivity (18 and 26 are the same in one layer), binary and multi-label, and diagonal
// staircases that cross brick and tile rows and columns through corners only.
TEST(LabelVolumeDevice, SingleLayersAroundLayerBricks) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const Dims sizes[] = {{32, 64, 1},   {31, 63, 1},   {33, 65, 1}, {65, 129, 1}, {97, 200, 1},
                        {300, 130, 1}, {1, 200, 1},   {200, 1, 1}, {128, 64, 1}, {127, 63, 1},
                        {129, 65, 1},  {257, 191, 1}, {385, 33, 1}};
  std::uint32_t seed = 500;
  for (const Dims& d : sizes)
    for (double density : {0.1, 0.5, 0.9})
      for (int conn : {6, 18, 26}) {
        SCOPED_TRACE(describe(d, conn, false, "layer") + " density " + std::to_string(density));
        check_volume<std::uint8_t>(random_volume<std::uint8_t>(d, density, seed++, 255, 1), d, conn, false);
        SCOPED_TRACE("multilabel");
        check_volume<std::uint8_t>(random_volume<std::uint8_t>(d, density, seed++, 3, 1), d, conn, true);
        check_volume<std::uint16_t>(random_volume<std::uint16_t>(d, density, seed++, 3, 60000), d, conn, true);
        if (HasFailure()) return;
      }
  // Staircases: pixel (x, y) set when (x + y) % 9 == 0 or (x - y) % 11 == 0 -- diagonal lines that
  // join only through corners, crossing every brick border at many places; values alternate per line.
  const Dims d{150, 300, 1};
  std::vector<std::uint8_t> binary(static_cast<std::size_t>(d.nx * d.ny)), multi(binary.size());
  for (std::int64_t y = 0; y < d.ny; ++y)
    for (std::int64_t x = 0; x < d.nx; ++x) {
      const bool a = (x + y) % 9 == 0, b = ((x - y) % 11 + 11) % 11 == 0;
      binary[static_cast<std::size_t>(y * d.nx + x)] = a || b;
      multi[static_cast<std::size_t>(y * d.nx + x)] = a ? 1 + (x + y) / 9 % 2 : b ? 3 : 0;
    }
  for (int conn : {6, 26}) {
    SCOPED_TRACE(describe(d, conn, false, "staircases"));
    check_volume(binary, d, conn, false);
    check_volume(multi, d, conn, true);
  }
  const auto count = [&](int conn) {
    return test::oracle_label_volume(VolumeView<const std::uint8_t>(binary.data(), d.nx, d.ny, d.nz), conn, false)
        .components.size();
  };
  EXPECT_GT(count(6), 10 * count(26));  // the staircases do tell the connectivities apart
}

// Patterns where 6, 18 and 26 differ: the 3D chessboard (edges join it under 18 and 26), spirals
// climbing one slice per step through edges (18, 26) or corners (26 only), and a lattice of
// diagonal rods, across brick boundaries.
std::vector<std::uint8_t> edge_corner_patterns(const Dims& d, int pattern) {
  std::vector<std::uint8_t> v(static_cast<std::size_t>(d.nx * d.ny * d.nz), 0);
  auto set = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    if (x >= 0 && y >= 0 && z >= 0 && x < d.nx && y < d.ny && z < d.nz)
      v[static_cast<std::size_t>((z * d.ny + y) * d.nx + x)] = 1;
  };
  if (pattern == 0) {  // chessboard
    for (std::int64_t z = 0; z < d.nz; ++z)
      for (std::int64_t y = 0; y < d.ny; ++y)
        for (std::int64_t x = 0; x < d.nx; ++x)
          if ((x + y + z) % 2 == 0) set(x, y, z);
  } else if (pattern == 1 || pattern == 2) {  // square spirals, one slice up per step
    const bool corners = pattern == 2;
    for (std::int64_t start = 0; start < 4; ++start) {
      std::int64_t x = 2 + 9 * start, y = 3 + 5 * start;
      int dir = static_cast<int>(start);
      for (std::int64_t z = 0; z < d.nz; ++z) {
        set(x, y, z);
        if (z % 6 == 5) dir = (dir + 1) % 4;
        const int dx[] = {1, 0, -1, 0}, dy[] = {0, 1, 0, -1};
        if (corners) x += dx[dir] + dy[dir], y += dy[dir] - dx[dir];  // diagonal in xy, +1 in z: corner steps
        else x += dx[dir], y += dy[dir];                              // one axis in xy, +1 in z: edge steps
      }
    }
  } else {  // lattice of rods along (1,1,1) and (1,-1,0)
    for (std::int64_t s = -d.nz; s < d.nx; s += 7)
      for (std::int64_t t = 0; t < d.nz; ++t) set(s + t, ((t + 3 * s) % d.ny + d.ny) % d.ny, t);
    for (std::int64_t s = 0; s < d.ny + d.nx; s += 5)
      for (std::int64_t t = 0; t < d.nx; ++t) set(t, s - t, (s / 5) % d.nz);
  }
  return v;
}

TEST(LabelVolumeDevice, EdgeAndCornerPatterns) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const Dims sizes[] = {{70, 40, 30}, {33, 17, 9}};
  for (const Dims& d : sizes)
    for (int pattern = 0; pattern < 4; ++pattern)
      for (int conn : {6, 18, 26}) {
        SCOPED_TRACE(describe(d, conn, false, "pattern") + " " + std::to_string(pattern));
        const auto v = edge_corner_patterns(d, pattern);
        check_volume(v, d, conn, false);
        // Multi-label: the same shapes, with the values alternating along x (only equal values join).
        std::vector<std::uint32_t> m(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) m[i] = v[i] ? 1 + static_cast<std::uint32_t>(i % d.nx % 2) : 0;
        check_volume(m, d, conn, true);
      }
  // The patterns do tell the connectivities apart (the oracle's counts differ).
  const Dims d = sizes[0];
  const auto spiral_edges = edge_corner_patterns(d, 1), spiral_corners = edge_corner_patterns(d, 2);
  auto count = [&](const std::vector<std::uint8_t>& v, int conn) {
    return test::oracle_label_volume(VolumeView<const std::uint8_t>(v.data(), d.nx, d.ny, d.nz), conn, false)
        .components.size();
  };
  EXPECT_GT(count(spiral_edges, 6), count(spiral_edges, 18));
  EXPECT_GT(count(spiral_corners, 18), count(spiral_corners, 26));
}

TEST(LabelVolumeDevice, EmptyFullAndLargerRandom) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const Dims d{67, 45, 38};
  const std::vector<std::uint8_t> empty(static_cast<std::size_t>(d.nx * d.ny * d.nz), 0);
  const std::vector<std::uint8_t> full(empty.size(), 9);
  for (int conn : {6, 18, 26}) {
    SCOPED_TRACE(describe(d, conn, false, "empty/full"));
    check_volume(empty, d, conn, false);
    check_volume(full, d, conn, false);
  }
  // Near the percolation thresholds (26: ~0.1, 18: ~0.14, 6: ~0.31): large, branching components.
  const Dims big{130, 129, 70};
  std::uint32_t seed = 900;
  for (int conn : {6, 18, 26})
    for (double density : {0.12, 0.2, 0.31}) {
      SCOPED_TRACE(describe(big, conn, false, "larger") + " density " + std::to_string(density));
      check_volume<std::uint8_t>(random_volume<std::uint8_t>(big, density, seed++, 1, 1), big, conn, false);
    }
}

// Bricks of more components than a statistics table holds (256 slots; a brick has 2048 voxels):
// lattices of isolated voxels -- every other voxel (6-connectivity) and every other voxel of every
// other row and slice (any connectivity) -- and multi-label, with neighbouring values that differ.
// Filling the volume (over 64 labels a brick on average), they make the statistics take each brick
// in passes, the runs left out of a full table going through the brick again, with the records of
// components that no merge marked written once, whole. Filling only a corner of a larger volume
// whose other bricks hold one solid slab (few labels a brick on average), they make the crowded
// bricks' runs go out alone in one pass. Also in volumes of one layer.
TEST(LabelVolumeDevice, StatsOfCrowdedBricks) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  struct Case {
    Dims d;
    std::int64_t corner;  // the lattices' extent in x, y and z; the slab from z = nz / 2 beyond it
  };
  for (const Case& c :
       {Case{{70, 21, 19}, 70}, Case{{96, 64, 1}, 96}, Case{{128, 64, 64}, 24}, Case{{256, 256, 1}, 40}}) {
    const Dims& d = c.d;
    const auto n = static_cast<std::size_t>(d.nx * d.ny * d.nz);
    std::vector<std::uint8_t> checker(n), sparse(n), multi(n);
    for (std::int64_t z = 0; z < d.nz; ++z)
      for (std::int64_t y = 0; y < d.ny; ++y)
        for (std::int64_t x = 0; x < d.nx; ++x) {
          const auto i = static_cast<std::size_t>((z * d.ny + y) * d.nx + x);
          if (x < c.corner && y < c.corner && z < c.corner) {
            checker[i] = (x + y + z) % 2 == 0;
            sparse[i] = x % 2 == 0 && y % 2 == 0 && z % 2 == 0 ? 5 : 0;
            multi[i] = static_cast<std::uint8_t>(1 + (x + 2 * y + 3 * z) % 4);  // no two 6-neighbours equal
          } else if (d.nz > 1 ? z > d.nz / 2 : y > d.ny / 2) {
            checker[i] = sparse[i] = multi[i] = 7;
          }
        }
    for (int conn : {6, 26}) {
      SCOPED_TRACE(describe(d, conn, false, "crowded") + " corner " + std::to_string(c.corner));
      check_volume(checker, d, conn, false);
      check_volume(sparse, d, conn, false);
      check_volume(multi, d, conn, true);
      if (HasFailure()) return;
    }
  }
}

TEST(LabelVolumeDevice, StatsCapacityBelowCount) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const Dims d{50, 30, 20};
  const auto host = random_volume<std::uint8_t>(d, 0.2, 77, 1, 1);
  const auto want = test::oracle_label_volume(VolumeView<const std::uint8_t>(host.data(), d.nx, d.ny, d.nz), 6, false);
  const std::uint64_t count = want.components.size();
  ASSERT_GT(count, 10u);
  Dev<std::uint8_t> d_vol(host.size());
  d_vol.upload(host);
  const std::uint64_t cap = count / 3;
  const DeviceResult r = run_device(d_vol.p, d, 6, false, count, cap);
  ASSERT_EQ(r.count, count);
  for (std::uint64_t l = 0; l < cap; ++l) expect_stats_equal(r.stats[l], want.components[l], l + 1);
  std::vector<unsigned char> poison(sizeof(RawStats), 0xA5);
  for (std::uint64_t l = cap; l < count; ++l)
    ASSERT_EQ(std::memcmp(&r.stats[l], poison.data(), poison.size()), 0)
        << "record " << l + 1 << " beyond the capacity was written";
  // No statistics at all: labels only.
  const DeviceResult bare = run_device(d_vol.p, d, 6, false, 0, 0);
  ASSERT_EQ(bare.count, count);
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(bare.labels[i], want.labels[i]);
  // Records that are not 16-byte aligned are refused before any work.
  std::size_t temp_bytes = 0;
  const VolumeView<const std::uint8_t> view(d_vol.p, d.nx, d.ny, d.nz);
  cuda::label_volume(nullptr, temp_bytes, view, nullptr, nullptr, nullptr, 0, cuda::DeviceLabelOptions{}, nullptr);
  Dev<char> d_temp(temp_bytes), d_records((count + 1) * sizeof(RawStats));
  Dev<std::uint32_t> d_labels(host.size()), d_count(1);
  auto* misaligned = reinterpret_cast<RawStats*>(d_records.p + 8);
  EXPECT_THROW(cuda::label_volume(d_temp.p, temp_bytes, view, d_labels.p, d_count.p, misaligned, count,
                                  cuda::DeviceLabelOptions{}, nullptr),
               InputError);
}

// The host-memory backend function: strided views in and out, sums, stage times.
TEST(LabelVolumeDevice, HostBackendStridedViews) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const Dims d{37, 21, 13};
  const std::int64_t rs = 41, ss = rs * 23 + 5;  // padded rows and slices
  std::mt19937 rng(11);
  std::vector<std::uint16_t> padded(static_cast<std::size_t>(ss * d.nz), 0);
  std::vector<std::uint16_t> dense(static_cast<std::size_t>(d.nx * d.ny * d.nz));
  for (std::int64_t z = 0; z < d.nz; ++z)
    for (std::int64_t y = 0; y < d.ny; ++y)
      for (std::int64_t x = 0; x < rs; ++x) {
        const std::uint16_t v = rng() % 100 < 45 ? static_cast<std::uint16_t>(1 + rng() % 2) : 0;
        padded[static_cast<std::size_t>(z * ss + y * rs + x)] =
            x < d.nx ? v : 7;  // padding is foreground: must be ignored
        if (x < d.nx) dense[static_cast<std::size_t>((z * d.ny + y) * d.nx + x)] = v;
      }
  for (bool multilabel : {false, true})
    for (int conn : {6, 18, 26}) {
      SCOPED_TRACE(describe(d, conn, multilabel, "host backend"));
      const auto want =
          test::oracle_label_volume(VolumeView<const std::uint16_t>(dense.data(), d.nx, d.ny, d.nz), conn, multilabel);
      const std::int64_t lrs = d.nx + 3, lss = lrs * d.ny + 2;
      std::vector<std::uint32_t> labels(static_cast<std::size_t>(lss * d.nz), 0xDEADBEEFu);
      detail::VolumeLabelRequest<std::uint16_t> req;
      req.volume = VolumeView<const std::uint16_t>(padded.data(), d.nx, d.ny, d.nz, rs, ss);
      req.labels32 = VolumeView<std::uint32_t>(labels.data(), d.nx, d.ny, d.nz, lrs, lss);
      req.connectivity = conn;
      req.multilabel = multilabel;
      StageTimes times;
      req.times = &times;
      std::vector<detail::VolumeComponentSums> sums;
      const std::uint64_t count = detail::cuda::label_volume(req, &sums);
      ASSERT_EQ(count, want.components.size());
      EXPECT_GT(times.compute, 0.0);
      for (std::int64_t z = 0; z < d.nz; ++z)
        for (std::int64_t y = 0; y < d.ny; ++y)
          for (std::int64_t x = 0; x < lrs; ++x) {
            const std::uint32_t got = labels[static_cast<std::size_t>(z * lss + y * lrs + x)];
            if (x >= d.nx) ASSERT_EQ(got, 0xDEADBEEFu) << "padding written at row " << y << " slice " << z;
            else
              ASSERT_EQ(got, want.labels[static_cast<std::size_t>((z * d.ny + y) * d.nx + x)])
                  << x << "," << y << "," << z;
          }
      ASSERT_EQ(sums.size(), count);
      for (std::uint64_t l = 0; l < count; ++l) {
        const auto& s = sums[l];
        const auto& w = want.components[l];
        ASSERT_EQ(s.voxels, w.voxels);
        ASSERT_EQ(s.sum_x, w.sum_x);
        ASSERT_EQ(s.sum_y, w.sum_y);
        ASSERT_EQ(s.sum_z, w.sum_z);
        ASSERT_EQ(s.min_x, w.min_x);
        ASSERT_EQ(s.max_x, w.max_x);
        ASSERT_EQ(s.min_y, w.min_y);
        ASSERT_EQ(s.max_y, w.max_y);
        ASSERT_EQ(s.min_z, w.min_z);
        ASSERT_EQ(s.max_z, w.max_z);
        ASSERT_EQ(s.value, w.value);
      }
    }
}

// Bad options and sizes are refused before any device work (these run without a GPU too).
TEST(LabelVolumeDeviceInput, RefusesBadOptionsAndSizes) {
  std::size_t temp_bytes = 0;
  const std::uint8_t* no_volume = nullptr;
  auto call = [&](std::int64_t nx, std::int64_t ny, std::int64_t nz, cuda::DeviceLabelOptions o) {
    cuda::label_volume(nullptr, temp_bytes, VolumeView<const std::uint8_t>(no_volume, nx, ny, nz), nullptr, nullptr,
                       nullptr, 0, o, nullptr);
  };
  for (int conn : {4, 8, 5, 27, -6})
    EXPECT_THROW(call(8, 8, 8, cuda::DeviceLabelOptions{.connectivity = conn}), InputError) << conn;
  EXPECT_THROW(
      call(8, 8, 8, cuda::DeviceLabelOptions{.connectivity = 26, .algorithm = LabelAlgorithm::block_union_find}),
      BackendError);
  EXPECT_THROW(call(-1, 8, 8, cuda::DeviceLabelOptions{}), InputError);
  // Strides other than the contiguous ones.
  EXPECT_THROW(cuda::label_volume(nullptr, temp_bytes, VolumeView<const std::uint8_t>(no_volume, 8, 8, 8, 9), nullptr,
                                  nullptr, nullptr, 0, cuda::DeviceLabelOptions{}, nullptr),
               InputError);
  // 2^32 voxels and more: beyond the 32-bit keys (the front end decides what to do).
  try {
    call(65536, 65536, 1, cuda::DeviceLabelOptions{});
    ADD_FAILURE() << "2^32 voxels accepted";
  } catch (const InputError&) {
    ADD_FAILURE() << "an Error, not an InputError, was expected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2^32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(call(std::int64_t{1} << 31, 1, 1, cuda::DeviceLabelOptions{}), Error);
  EXPECT_THROW(call(std::int64_t{1} << 40, std::int64_t{1} << 40, 1 << 20, cuda::DeviceLabelOptions{}),
               Error);  // no overflow
}

}  // namespace
}  // namespace winnow
