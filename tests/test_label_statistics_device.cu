// The device API of label statistics (winnow/cuda/label_statistics.hpp) against the host API on
// the same random label volumes: every label type, strided views, the background alone, M beyond
// the largest label (rows without voxels), each label's first voxel against a raster walk, one
// label filling most of a large volume (the warps' shared partials), an intensity volume of every type (integer sums
// exact; float sums to rounding, atomics adding in any order), labels beyond M and negative labels reported, outputs
// poisoned first. Skipped without a device; failed under WINNOW_REQUIRE_GPU=1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/gpu_guard.hpp"
#include "winnow/cuda/label_statistics.hpp"
#include "winnow/error.hpp"
#include "winnow/label_statistics.hpp"

using namespace winnow;
using winnow::test::Dev;

namespace {

template <class L>
std::vector<L> random_labels(std::size_t n, std::uint64_t m, double zero, std::uint32_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<std::uint64_t> pick(1, m - 1);
  std::geometric_distribution<int> run(0.3);
  std::vector<L> v(n);
  for (std::size_t i = 0; i < n;) {
    const L l = u(gen) < zero ? L{0} : static_cast<L>(pick(gen));
    for (int k = run(gen) + 1; k > 0 && i < n; --k) v[i++] = l;
  }
  return v;
}

/// The device statistics of a view into host vectors (records; intensity columns when V is not void).
struct DeviceResult {
  std::vector<std::uint64_t> voxels, beyond, first;
  std::vector<std::int64_t> lower, upper;
  std::vector<std::uint64_t> sums;
  std::vector<unsigned char> sum, minimum, maximum;  // raw bytes of the intensity columns
};

template <class L, class V>
DeviceResult run_device(const VolumeView<const L>& labels, const VolumeView<const V>* intensity, std::uint64_t m,
                        bool background_only) {
  const std::size_t rows = background_only ? 1 : m;
  Dev<std::uint64_t> voxels(rows), sums(rows * 3), beyond(2), first(rows);
  Dev<std::int64_t> lower(rows * 3), upper(rows * 3);
  Dev<unsigned char> sum(rows * 8), minimum(rows * sizeof(V)), maximum(rows * sizeof(V));
  voxels.poison(), sums.poison(), beyond.poison(), lower.poison(), upper.poison(), sum.poison(), minimum.poison();
  maximum.poison(), first.poison();
  cuda::DeviceLabelStatistics out{voxels.p, lower.p, upper.p, sums.p, sum.p, minimum.p, maximum.p, beyond.p, first.p};
  std::size_t temp_bytes = 0;
  if (intensity) {
    cuda::label_statistics(nullptr, temp_bytes, labels, *intensity, m, background_only, out, nullptr);
  } else {
    cuda::label_statistics(nullptr, temp_bytes, labels, m, background_only, out, nullptr);
  }
  Dev<unsigned char> temp(temp_bytes);
  if (intensity) {
    cuda::label_statistics(temp.p, temp_bytes, labels, *intensity, m, background_only, out, nullptr);
  } else {
    cuda::label_statistics(temp.p, temp_bytes, labels, m, background_only, out, nullptr);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  DeviceResult r;
  r.voxels = voxels.download(rows), r.sums = sums.download(rows * 3), r.beyond = beyond.download(2);
  r.first = first.download(rows);
  r.lower = lower.download(rows * 3), r.upper = upper.download(rows * 3);
  if (intensity) r.sum = sum.download(rows * 8), r.minimum = minimum.download(rows * sizeof(V));
  if (intensity) r.maximum = maximum.download(rows * sizeof(V));
  return r;
}

void expect_records(const DeviceResult& d, const LabelStatistics& host) {
  ASSERT_EQ(d.voxels.size(), host.labels());
  for (std::size_t l = 0; l < host.labels(); ++l) {
    const LabelRecord& r = host.records[l];
    ASSERT_EQ(d.voxels[l], r.voxels) << "label " << l;
    for (int a = 0; a < 3; ++a) {
      ASSERT_EQ(d.sums[l * 3 + a], r.sums[a]) << "label " << l;
      ASSERT_EQ(d.lower[l * 3 + a], r.lower[a]) << "label " << l;
      ASSERT_EQ(d.upper[l * 3 + a], r.upper[a]) << "label " << l;
    }
  }
}

/// Each label's first voxel in raster order, (z * ny + y) * nx + x (UINT64_MAX: none), by a walk.
template <class L>
std::vector<std::uint64_t> first_voxels(const VolumeView<const L>& v, std::uint64_t m) {
  std::vector<std::uint64_t> first(m, std::numeric_limits<std::uint64_t>::max());
  for (std::int64_t z = v.nz - 1; z >= 0; --z)
    for (std::int64_t y = v.ny - 1; y >= 0; --y)
      for (std::int64_t x = v.nx - 1; x >= 0; --x)
        first[static_cast<std::size_t>(v.row(y, z)[x])] = static_cast<std::uint64_t>((z * v.ny + y) * v.nx + x);
  return first;
}

template <class L>
void check_labels(std::uint32_t seed) {
  const std::int64_t nx = 77, ny = 45, nz = 23, pad = 5;  // rows padded: a strided view
  for (const std::uint64_t m : {3ull, 400ull}) {
    const std::vector<L> data = random_labels<L>(static_cast<std::size_t>((nx + pad) * ny * nz), m, 0.5, seed++);
    Dev<L> d_labels(data.size());
    d_labels.upload(data);
    const VolumeView<const L> host(data.data(), nx, ny, nz, nx + pad, (nx + pad) * ny);
    const VolumeView<const L> device(d_labels.p, nx, ny, nz, nx + pad, (nx + pad) * ny);
    const DeviceResult d = run_device<L, std::uint8_t>(device, nullptr, m + 3, false);  // 3 rows without voxels
    EXPECT_EQ(d.beyond[0], 0u);
    expect_records(d, label_statistics(host, {.labels = m + 3}));
    EXPECT_EQ(d.first, first_voxels(host, m + 3));
    const DeviceResult b = run_device<L, std::uint8_t>(device, nullptr, 1, true);
    expect_records(b, label_statistics(host, {.background_only = true}));
  }
}

TEST(LabelStatisticsDevice, EveryLabelTypeIsTheHostApis) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  check_labels<std::uint8_t>(1);
  check_labels<std::uint16_t>(2);
  check_labels<std::uint32_t>(3);
  check_labels<std::uint64_t>(4);
}

TEST(LabelStatisticsDevice, OneLabelFillingAVolumeIsTheHostApis) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const std::int64_t nx = 300, ny = 190, nz = 21;  // rows of several segments; warps over row ends
  std::vector<std::uint32_t> labels = random_labels<std::uint32_t>(static_cast<std::size_t>(nx * ny * nz), 2, 0.4, 31);
  labels[nx * 7 + 100] = 2, labels[nx * ny * 5] = 3;  // a few other labels among the large one
  Dev<std::uint32_t> d_labels(labels.size());
  d_labels.upload(labels);
  const VolumeView<const std::uint32_t> host(labels.data(), nx, ny, nz), device(d_labels.p, nx, ny, nz);
  const DeviceResult d = run_device<std::uint32_t, std::uint8_t>(device, nullptr, 4, false);
  expect_records(d, label_statistics(host, {.labels = 4}));
  EXPECT_EQ(d.first, first_voxels(host, 4));
}

template <class V>
void check_intensity(std::uint32_t seed) {
  const std::int64_t nx = 53, ny = 41, nz = 17;
  const std::uint64_t m = 60;
  const std::vector<std::uint32_t> labels = random_labels<std::uint32_t>(nx * ny * nz, m, 0.3, seed);
  std::mt19937_64 gen(seed);
  std::vector<V> values(labels.size());
  for (auto& v : values) {
    if constexpr (std::is_floating_point_v<V>) v = static_cast<V>(std::uniform_real_distribution<double>(-50, 50)(gen));
    else v = static_cast<V>(gen() >> (sizeof(V) == 8 ? 20 : 0));
  }
  if constexpr (std::is_floating_point_v<V>) values[9] = std::numeric_limits<V>::quiet_NaN();
  Dev<std::uint32_t> d_labels(labels.size());
  Dev<V> d_values(values.size());
  d_labels.upload(labels);
  d_values.upload(values);
  const VolumeView<const std::uint32_t> host_labels(labels.data(), nx, ny, nz), device_labels(d_labels.p, nx, ny, nz);
  const VolumeView<const V> host_values(values.data(), nx, ny, nz), device_values(d_values.p, nx, ny, nz);
  const DeviceResult d = run_device<std::uint32_t, V>(device_labels, &device_values, m, false);
  const LabelIntensityStatistics<V> h = label_statistics(host_labels, host_values, {.labels = m});
  expect_records(d, h);
  for (std::size_t l = 0; l < m; ++l) {
    IntensitySum<V> sum;
    V lo, hi;
    std::memcpy(&sum, d.sum.data() + l * 8, 8);
    std::memcpy(&lo, d.minimum.data() + l * sizeof(V), sizeof(V));
    std::memcpy(&hi, d.maximum.data() + l * sizeof(V), sizeof(V));
    if constexpr (std::is_floating_point_v<V>) {
      if (std::isnan(h.sum[l])) EXPECT_TRUE(std::isnan(sum));
      else EXPECT_NEAR(sum, h.sum[l], 1e-9 * (1 + std::abs(h.sum[l])) * 100) << "label " << l;
      EXPECT_TRUE(lo == h.minimum[l] || (std::isnan(lo) && std::isnan(h.minimum[l]))) << "label " << l;
      EXPECT_TRUE(hi == h.maximum[l] || (std::isnan(hi) && std::isnan(h.maximum[l]))) << "label " << l;
    } else {
      EXPECT_EQ(sum, h.sum[l]) << "label " << l;
      EXPECT_EQ(lo, h.minimum[l]) << "label " << l;
      EXPECT_EQ(hi, h.maximum[l]) << "label " << l;
    }
  }
}

TEST(LabelStatisticsDevice, IntensityOfEveryTypeIsTheHostApis) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  check_intensity<std::uint8_t>(11);
  check_intensity<std::int8_t>(12);
  check_intensity<std::uint16_t>(13);
  check_intensity<std::int16_t>(14);
  check_intensity<std::uint32_t>(15);
  check_intensity<std::int32_t>(16);
  check_intensity<std::uint64_t>(17);
  check_intensity<std::int64_t>(18);
  check_intensity<float>(19);
  check_intensity<double>(20);
}

TEST(LabelStatisticsDevice, LabelsBeyondMAreReported) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::vector<std::uint32_t> labels(300, 1);
  labels[17] = 9, labels[200] = 0xFFFFFFFDu;  // a negative int32 label reads as this
  Dev<std::uint32_t> d(labels.size());
  d.upload(labels);
  const DeviceResult r =
      run_device<std::uint32_t, std::uint8_t>(VolumeView<const std::uint32_t>(d.p, 300, 1, 1), nullptr, 5, false);
  EXPECT_EQ(r.beyond[0], 1u);
  EXPECT_EQ(r.beyond[1], 0xFFFFFFFDu);
  EXPECT_EQ(r.voxels[1], 298u);
  std::size_t temp_bytes = 0;
  EXPECT_THROW(cuda::label_statistics(nullptr, temp_bytes, VolumeView<const std::uint32_t>(d.p, 300, 1, 1), 0, false,
                                      cuda::DeviceLabelStatistics{}, nullptr),
               InputError);
}

}  // namespace
