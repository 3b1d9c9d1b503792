// Device API of labeling (winnow::cuda::label): statistics capacity smaller than the count (the
// records beyond it stay untouched), padded and unaligned masks (the scalar label pass), and the
// vectorised label pass, for both CUDA algorithms at 8-connectivity, against the CPU backend.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/gpu_guard.hpp"
#include "winnow/cuda/label.hpp"
#include "winnow/label.hpp"

namespace winnow {
namespace {

#define CK(x) ASSERT_EQ((x), cudaSuccess) << #x

struct Shape {
  std::int64_t w, h, stride, offset;  // mask row stride and byte offset of the mask in its buffer
};

TEST(LabelDevice, StatsCapacityStridesAlignment) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const Shape shapes[] = {
      {1024, 768, 1024, 0}, {1000, 700, 1000, 0}, {999, 701, 1003, 1}, {1028, 130, 1032, 2}, {64, 64, 64, 0}};
  std::uint32_t seed = 5;
  for (LabelAlgorithm alg : {LabelAlgorithm::tile_merge, LabelAlgorithm::block_union_find})
    for (const Shape& s : shapes)
      for (double d : {0.1, 0.45, 0.9}) {
        SCOPED_TRACE(std::string(to_string(alg)) + " " + std::to_string(s.w) + "x" + std::to_string(s.h) + " stride " +
                     std::to_string(s.stride) + " offset " + std::to_string(s.offset) + " density " +
                     std::to_string(d));
        std::mt19937 rng(seed++);
        std::bernoulli_distribution on(d);
        std::vector<std::uint8_t> host(static_cast<std::size_t>(s.offset + s.h * s.stride), 0);
        for (std::int64_t y = 0; y < s.h; ++y)
          for (std::int64_t x = 0; x < s.stride; ++x)
            host[s.offset + y * s.stride + x] = on(rng) ? (x < s.w ? 1 + rng() % 255 : 1) : 0;
        LabelOptions co;
        co.connectivity = 8;
        co.backend = Backend::cpu;
        const Labeling want = label(ImageView<const std::uint8_t>(host.data() + s.offset, s.w, s.h, s.stride), co);
        ASSERT_GT(want.count, 0u);  // dense masks have one component: capacity 0, no record written

        cuda::DeviceLabelOptions o;
        o.connectivity = 8;
        o.algorithm = alg;
        const std::size_t n = static_cast<std::size_t>(s.w * s.h);
        std::uint8_t* d_buf = nullptr;
        std::uint32_t *d_labels = nullptr, *d_count = nullptr;
        cuda::RawComponentStats* d_stats = nullptr;
        void* d_temp = nullptr;
        std::size_t temp_bytes = 0;
        cuda::label(nullptr, temp_bytes, ImageView<const std::uint8_t>(nullptr, s.w, s.h, s.stride), nullptr, nullptr,
                    nullptr, 0, o, nullptr);
        CK(cudaMalloc(&d_buf, host.size()));
        CK(cudaMalloc(&d_labels, n * 4));
        CK(cudaMalloc(&d_count, 4));
        CK(cudaMalloc(&d_stats, want.count * sizeof(cuda::RawComponentStats)));
        CK(cudaMalloc(&d_temp, temp_bytes));
        CK(cudaMemcpy(d_buf, host.data(), host.size(), cudaMemcpyHostToDevice));
        CK(cudaMemset(d_labels, 0xCD, n * 4));  // poison
        CK(cudaMemset(d_stats, 0xAB, want.count * sizeof(cuda::RawComponentStats)));
        const std::uint64_t cap = want.count / 2;
        cuda::label(d_temp, temp_bytes, ImageView<const std::uint8_t>(d_buf + s.offset, s.w, s.h, s.stride), d_labels,
                    d_count, d_stats, cap, o, nullptr);
        CK(cudaDeviceSynchronize());
        std::uint32_t count = 0;
        std::vector<std::uint32_t> got(n);
        std::vector<cuda::RawComponentStats> raw(want.count);
        CK(cudaMemcpy(&count, d_count, 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(got.data(), d_labels, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(raw.data(), d_stats, raw.size() * sizeof(raw[0]), cudaMemcpyDeviceToHost));
        cudaFree(d_buf);
        cudaFree(d_labels);
        cudaFree(d_count);
        cudaFree(d_stats);
        cudaFree(d_temp);
        ASSERT_EQ(count, want.count);
        const auto wl = want.labels.pixels();
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(got[i], wl[i]) << "label at (" << i % s.w << "," << i / s.w << ")";
        for (std::uint64_t i = 0; i < cap; ++i)
          ASSERT_EQ(cuda::to_component_stats(raw[i]), want.stats[i]) << "label " << i + 1;
        std::vector<unsigned char> poison(sizeof(cuda::RawComponentStats), 0xAB);
        for (std::uint64_t i = cap; i < want.count; ++i)
          ASSERT_EQ(std::memcmp(&raw[i], poison.data(), poison.size()), 0)
              << "record " << i + 1 << " beyond the capacity was written";
      }
}

}  // namespace
}  // namespace winnow
