// Isosurfaces through the device API (winnow/cuda/isosurface.hpp) and the CUDA host path, against
// the CPU backend's mesh (itself checked against independent references in
// test_isosurface.cpp): the sizing call, the totals in device and host-mapped memory, outputs
// poisoned first and compared bit for bit, a capacity below the totals (nothing written), the
// extraction alone after a sizing call (isosurface_extract), a
// strided device view, every voxel type, and the slabbed host path (max_slab_voxels) against
// one pass.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/gpu_guard.hpp"
#include "winnow/cuda/isosurface.hpp"
#include "winnow/error.hpp"
#include "winnow/isosurface.hpp"

namespace {

using winnow::test::Dev;

// Smooth random field plus noise, quantised so many voxels equal the level exactly.
template <class T>
std::vector<T> random_field(std::int64_t nx, std::int64_t ny, std::int64_t nz, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, 8);
  std::vector<T> v(static_cast<std::size_t>(nx * ny * nz));
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        const double smooth = 4 + 3 * std::sin(0.4 * x) * std::cos(0.3 * y) + 2 * std::sin(0.5 * z);
        v[static_cast<std::size_t>((z * ny + y) * nx + x)] = static_cast<T>(std::lround(smooth) + d(rng) % 3 - 1);
      }
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class T>
void device_matches_cpu(std::int64_t nx, std::int64_t ny, std::int64_t nz, double level, std::int64_t row_pad,
                        const std::string& what, std::size_t temp_offset = 0) {
  const std::vector<T> host = random_field<T>(nx, ny, nz, 11);
  winnow::VolumeView<const T> hv(host.data(), nx, ny, nz);
  hv.sx = 0.5, hv.sy = 1.25, hv.sz = 2;
  winnow::IsosurfaceOptions o;
  o.normals = true, o.values = true, o.backend = winnow::Backend::cpu;
  const winnow::Mesh cpu = winnow::isosurface(hv, level, o);
  ASSERT_GT(cpu.triangle_count(), 0u) << what;

  // The device copy, with padding between rows when asked (a strided view).
  const std::int64_t rs = nx + row_pad, ss = rs * ny;
  std::vector<T> padded(static_cast<std::size_t>(ss * nz), T{});
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x)
        padded[static_cast<std::size_t>(z * ss + y * rs + x)] = host[static_cast<std::size_t>((z * ny + y) * nx + x)];
  Dev<T> d_volume(padded.size());
  d_volume.upload(padded);
  winnow::VolumeView<const T> dv(d_volume.p, nx, ny, nz, rs, ss);
  dv.sx = hv.sx, dv.sy = hv.sy, dv.sz = hv.sz;

  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::uint64_t* h_totals = nullptr;
  ASSERT_EQ(cudaHostAlloc(&h_totals, 2 * sizeof(std::uint64_t), cudaHostAllocMapped), cudaSuccess);
  h_totals[0] = h_totals[1] = ~std::uint64_t{0};
  Dev<std::uint64_t> d_totals(2);
  std::size_t temp_bytes = 0;
  winnow::cuda::isosurface<T>(nullptr, temp_bytes, dv, level, o, {}, d_totals.p, stream);
  // Temporary storage at an odd offset when asked: the kernels' wide loads and stores must fall back.
  Dev<char> d_temp_block(temp_bytes + temp_offset);
  char* const d_temp = d_temp_block.p + temp_offset;
  // Sizing call: no outputs, the totals only.
  winnow::cuda::isosurface<T>(d_temp, temp_bytes, dv, level, o, {}, d_totals.p, stream, h_totals);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(h_totals[0], cpu.vertex_count()) << what;
  EXPECT_EQ(h_totals[1], cpu.triangle_count()) << what;
  const std::uint64_t V = cpu.vertex_count(), T3 = 3 * cpu.triangle_count();

  Dev<float> d_vertices(3 * V), d_normals(3 * V), d_values(V);
  Dev<std::uint32_t> d_triangles(T3);
  winnow::cuda::DeviceMesh out;
  out.d_vertices = d_vertices.p, out.d_normals = d_normals.p, out.d_values = d_values.p,
  out.d_triangles = d_triangles.p;
  // A capacity one triangle short: nothing is written, the totals are.
  d_vertices.poison(), d_triangles.poison();
  out.vertex_capacity = V, out.triangle_capacity = cpu.triangle_count() - 1;
  winnow::cuda::isosurface<T>(d_temp, temp_bytes, dv, level, o, out, d_totals.p, stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const auto untouched = d_triangles.download(T3);
  EXPECT_TRUE(std::all_of(untouched.begin(), untouched.end(), [](std::uint32_t v) { return v == 0xA5A5A5A5u; }))
      << what << ": a call without room wrote triangles";
  EXPECT_EQ(d_totals.download(2), (std::vector<std::uint64_t>{V, cpu.triangle_count()})) << what;

  d_vertices.poison(), d_normals.poison(), d_values.poison(), d_triangles.poison();
  out.triangle_capacity = cpu.triangle_count();
  winnow::cuda::isosurface<T>(d_temp, temp_bytes, dv, level, o, out, d_totals.p, stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<float> cpu_vertices(3 * V), cpu_normals(3 * V);
  std::memcpy(cpu_vertices.data(), cpu.vertices.data(), 12 * V);
  std::memcpy(cpu_normals.data(), cpu.normals.data(), 12 * V);
  std::vector<std::uint32_t> cpu_triangles(T3);
  std::memcpy(cpu_triangles.data(), cpu.triangles.data(), 4 * T3);
  EXPECT_TRUE(same_bits(d_vertices.download(3 * V), cpu_vertices)) << what << ": vertices";
  EXPECT_TRUE(same_bits(d_normals.download(3 * V), cpu_normals)) << what << ": normals";
  EXPECT_TRUE(same_bits(d_values.download(V), cpu.values)) << what << ": values";
  EXPECT_TRUE(d_triangles.download(T3) == cpu_triangles) << what << ": triangles";

  // A sizing call, then the extraction alone from the count it left in d_temp: the same mesh.
  winnow::cuda::isosurface<T>(d_temp, temp_bytes, dv, level, o, {}, d_totals.p, stream);
  d_vertices.poison(), d_normals.poison(), d_values.poison(), d_triangles.poison();
  h_totals[0] = h_totals[1] = ~std::uint64_t{0};
  winnow::cuda::isosurface_extract<T>(d_temp, temp_bytes, dv, level, o, out, d_totals.p, stream, h_totals);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(h_totals[0], V) << what << ": extraction alone";
  EXPECT_EQ(h_totals[1], cpu.triangle_count()) << what << ": extraction alone";
  EXPECT_TRUE(same_bits(d_vertices.download(3 * V), cpu_vertices)) << what << ": vertices, extraction alone";
  EXPECT_TRUE(same_bits(d_normals.download(3 * V), cpu_normals)) << what << ": normals, extraction alone";
  EXPECT_TRUE(same_bits(d_values.download(V), cpu.values)) << what << ": values, extraction alone";
  EXPECT_TRUE(d_triangles.download(T3) == cpu_triangles) << what << ": triangles, extraction alone";
  cudaFreeHost(h_totals);
  cudaStreamDestroy(stream);
}

TEST(IsosurfaceDevice, MatchesCpuBitForBit) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  device_matches_cpu<float>(37, 29, 23, 4.0, 0, "f32");
  device_matches_cpu<float>(33, 17, 9, 5.0, 7, "f32 strided");
  device_matches_cpu<double>(20, 21, 22, 3.0, 0, "f64");
  device_matches_cpu<std::uint8_t>(31, 33, 12, 4.0, 3, "u8");
  device_matches_cpu<std::uint16_t>(16, 40, 11, 4.5, 0, "u16");
  device_matches_cpu<std::int16_t>(25, 9, 30, 2.0, 1, "i16");
  // Rows of a multiple of 8 voxels (the wide paths), then the same with unaligned temporary storage.
  device_matches_cpu<float>(64, 24, 20, 4.0, 0, "f32 aligned rows");
  device_matches_cpu<float>(64, 24, 20, 4.0, 0, "f32, temporary storage at an odd address", 3);
  // Rows of several classification pieces (128 voxels) and layers of several blocks (32), copied
  // by 16-byte chunks (rows of a multiple of 16 bytes) or by elements (others).
  device_matches_cpu<float>(300, 20, 70, 4.0, 0, "f32, several pieces and layer chunks");
  device_matches_cpu<float>(301, 19, 40, 4.0, 0, "f32, rows not a multiple of 16 bytes");
  device_matches_cpu<float>(257, 11, 35, 4.0, 3, "f32 strided to 16-byte rows");
  device_matches_cpu<std::uint8_t>(272, 12, 40, 4.0, 0, "u8, several pieces");
  device_matches_cpu<double>(260, 10, 36, 4.0, 4, "f64 strided, several pieces");
}

TEST(IsosurfaceDevice, SlabbedHostPathEqualsOnePass) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const std::int64_t nx = 41, ny = 27, nz = 35;
  const std::vector<float> host = random_field<float>(nx, ny, nz, 5);
  winnow::VolumeView<const float> v(host.data(), nx, ny, nz);
  winnow::IsosurfaceOptions o;
  o.normals = true, o.backend = winnow::Backend::cpu;
  const winnow::Mesh cpu = winnow::isosurface(v, 4.0, o);
  o.backend = winnow::Backend::cuda;
  for (std::int64_t slab : {std::int64_t{0}, nx * ny, 3 * nx * ny, 10 * nx * ny + 5}) {
    o.max_slab_voxels = slab;
    const winnow::Mesh gpu = winnow::isosurface(v, 4.0, o);
    EXPECT_EQ(gpu.backend, winnow::Backend::cuda);
    EXPECT_TRUE(same_bits(gpu.vertices, cpu.vertices)) << "slab " << slab;
    EXPECT_TRUE(same_bits(gpu.normals, cpu.normals)) << "slab " << slab;
    EXPECT_TRUE(gpu.triangles == cpu.triangles) << "slab " << slab;
    EXPECT_TRUE(gpu.triangles64.empty()) << "slab " << slab;
  }
}

TEST(IsosurfaceDevice, RunsTwiceTheSame) {  // a race would change the mesh between runs
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const std::int64_t n = 96;
  std::vector<float> host(static_cast<std::size_t>(n * n * n));
  for (std::int64_t z = 0; z < n; ++z)
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x)
        host[static_cast<std::size_t>((z * n + y) * n + x)] =
            static_cast<float>(std::sin(0.3 * x) * std::cos(0.3 * y) + std::sin(0.3 * y) * std::cos(0.3 * z) +
                               std::sin(0.3 * z) * std::cos(0.3 * x));
  winnow::VolumeView<const float> v(host.data(), n, n, n);
  winnow::IsosurfaceOptions o;
  o.normals = true, o.backend = winnow::Backend::cuda;
  const winnow::Mesh a = winnow::isosurface(v, 0.0, o), b = winnow::isosurface(v, 0.0, o);
  ASSERT_GT(a.triangle_count(), 1000u);
  EXPECT_TRUE(same_bits(a.vertices, b.vertices));
  EXPECT_TRUE(a.triangles == b.triangles);
}

TEST(IsosurfaceDevice, BadArguments) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  Dev<float> d(8);
  winnow::VolumeView<const float> v(d.p, 2, 2, 2);
  Dev<std::uint64_t> totals(2);
  std::size_t bytes = 0;
  winnow::cuda::isosurface<float>(nullptr, bytes, v, 0.0, {}, {}, totals.p, nullptr);
  Dev<char> temp(bytes);
  std::size_t too_few = bytes - 1;
  EXPECT_THROW(winnow::cuda::isosurface<float>(temp.p, too_few, v, 0.0, {}, {}, totals.p, nullptr), winnow::InputError);
  EXPECT_THROW(winnow::cuda::isosurface<float>(temp.p, bytes, v, std::nan(""), {}, {}, totals.p, nullptr),
               winnow::InputError);
  winnow::cuda::DeviceMesh missing;
  missing.vertex_capacity = 10;  // room asked for, no arrays
  EXPECT_THROW(winnow::cuda::isosurface<float>(temp.p, bytes, v, 0.0, {}, missing, totals.p, nullptr),
               winnow::InputError);
}

}  // namespace
