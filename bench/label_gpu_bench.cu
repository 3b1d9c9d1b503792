// GPU labeling benchmark: winnow's device API (labels + count + statistics, device-resident
// input) for every algorithm, on random masks and the bundled real images.
//
//   bench_label_gpu [--quick] [--dump DIR] [--reps N] [--conn 4|8] [--case SUBSTR] [--alg SUBSTR]
//
// Random masks: pixel i is foreground when fmix32(i ^ seed * 0x9E3779B9) < density * 2^32
// (bench/label_peers.py builds the identical masks with CuPy). --dump DIR writes the real-image
// masks as DIR/<name>_<W>x<H>.u8 for the peer script. CUDA events, 3 warm-ups, median of N runs.
//
// Every reported case is verified, whatever its size: after the timed runs the labels, the count
// and the statistics are compared with the CPU backend's (winnow::label, Backend::cpu), computed
// once per case and connectivity outside the timing. The exit status is 1 when any case differs.
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/cuda/check.cuh"
#include "random_mask.cuh"
#include "winnow/cuda/label.hpp"
#include "winnow/io.hpp"
#include "winnow/label.hpp"

using namespace winnow;

namespace {

struct Case {
  std::string name;
  std::int64_t w, h;
  std::vector<std::uint8_t> host;  // real images only
  double density = 0;
};

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int reps = 20;
  int only_conn = 0;                // 0: both
  std::string only_case, only_alg;  // substrings to select cases / algorithms
  std::string dump;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--dump") && i + 1 < argc) dump = argv[++i];
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--conn") && i + 1 < argc) only_conn = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc) only_case = argv[++i];
    else if (!std::strcmp(argv[i], "--alg") && i + 1 < argc) only_alg = argv[++i];
  }
  cudaDeviceProp prop{};
  WINNOW_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (%d SMs, L2 %d MiB)\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);

  std::vector<Case> cases;
  const std::vector<std::int64_t> sizes =
      quick ? std::vector<std::int64_t>{1024, 4096, 16384} : std::vector<std::int64_t>{1024, 4096, 8192, 16384};
  for (std::int64_t s : sizes)
    for (double d : {0.1, 0.5, 0.9})
      cases.push_back({"random_" + std::to_string(s) + "_d" + std::to_string(d).substr(0, 3), s, s, {}, d});
  for (const char* f : {"coins.png", "text.png", "hubble_deep_field.jpg"}) {
    const auto rgba = io::read_rgba8(std::filesystem::path(WINNOW_DATA_DIR) / f);
    std::vector<std::uint8_t> grey(static_cast<std::size_t>(rgba.size()));
    std::array<std::uint64_t, 256> hist{};
    for (std::size_t i = 0; i < grey.size(); ++i)
      ++hist[grey[i] = static_cast<std::uint8_t>(luminance_milli(rgba.data()[i]) / 1000)];
    const int t = otsu_threshold(std::span<const std::uint64_t, 256>(hist));
    Case c{std::string(f).substr(0, std::string(f).find('.')), rgba.width(), rgba.height(), {}, 0};
    c.host.resize(grey.size());
    for (std::size_t i = 0; i < grey.size(); ++i) c.host[i] = grey[i] > t;
    if (!dump.empty()) {
      std::filesystem::create_directories(dump);
      std::ofstream(
          std::filesystem::path(dump) / (c.name + "_" + std::to_string(c.w) + "x" + std::to_string(c.h) + ".u8"),
          std::ios::binary)
          .write(reinterpret_cast<const char*>(c.host.data()), static_cast<std::streamsize>(c.host.size()));
    }
    cases.push_back(std::move(c));
  }

  std::printf("%-22s %-17s %4s %10s %10s %10s %10s %12s\n", "case", "algorithm", "conn", "ms", "ms_nostat", "Gpx/s",
              "copy_ms", "components");
  cudaStream_t s = nullptr;
  bool any_mismatch = false;
  cudaEvent_t e0, e1;
  WINNOW_CUDA_CHECK(cudaEventCreate(&e0));
  WINNOW_CUDA_CHECK(cudaEventCreate(&e1));
  for (const Case& c : cases) {
    if (!only_case.empty() && c.name.find(only_case) == std::string::npos) continue;
    const auto n = static_cast<std::size_t>(c.w * c.h);
    detail::cuda::DeviceBuffer<std::uint8_t> d_mask(n);
    detail::cuda::DeviceBuffer<std::uint32_t> d_labels(n), d_copy(n);
    detail::cuda::DeviceBuffer<std::uint32_t> d_count(1);
    if (c.host.empty()) {
      random_mask_kernel<<<2048, 256>>>(d_mask.get(), n, 12345u, static_cast<std::uint32_t>(c.density * 4294967296.0));
      WINNOW_CUDA_CHECK_LAUNCH();
    } else {
      WINNOW_CUDA_CHECK(cudaMemcpy(d_mask.get(), c.host.data(), n, cudaMemcpyHostToDevice));
    }
    // Reference: a device copy of the label image's size (read 4 + write 4 bytes per pixel).
    std::vector<float> copy_t;
    for (int r = 0; r < reps + 3; ++r) {
      WINNOW_CUDA_CHECK(cudaEventRecord(e0, s));
      WINNOW_CUDA_CHECK(cudaMemcpyAsync(d_copy.get(), d_labels.get(), n * 4, cudaMemcpyDeviceToDevice, s));
      WINNOW_CUDA_CHECK(cudaEventRecord(e1, s));
      WINNOW_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms;
      WINNOW_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 3) copy_t.push_back(ms);
    }
    const float copy_ms = median(copy_t);
    // The CPU backend's labeling of this mask, the reference of every algorithm at one connectivity.
    std::vector<std::uint8_t> host_mask;
    std::optional<Labeling> want;
    int want_conn = 0;
    for (int conn : {8, 4})
      for (LabelAlgorithm a : {LabelAlgorithm::block_union_find, LabelAlgorithm::tile_merge}) {
        const std::string aname(to_string(a));
        if (only_conn && conn != only_conn) continue;
        if (!only_alg.empty() && aname.find(only_alg) == std::string::npos) continue;
        cuda::DeviceLabelOptions o;
        o.connectivity = conn;
        o.algorithm = a;
        const ImageView<const std::uint8_t> mask(d_mask.get(), c.w, c.h);
        std::size_t temp_bytes = 0;
        cuda::label(nullptr, temp_bytes, mask, d_labels.get(), d_count.get(), nullptr, 0, o, s);
        detail::cuda::DeviceBuffer<char> d_temp(temp_bytes);
        // First run: the count, to size the statistics.
        cuda::label(d_temp.get(), temp_bytes, mask, d_labels.get(), d_count.get(), nullptr, 0, o, s);
        std::uint32_t count = 0;
        WINNOW_CUDA_CHECK(cudaMemcpy(&count, d_count.get(), 4, cudaMemcpyDeviceToHost));
        detail::cuda::DeviceBuffer<cuda::RawComponentStats> d_stats(std::max<std::uint32_t>(count, 1));
        std::vector<float> t, t0;
        for (int r = 0; r < reps + 3; ++r) {  // without statistics: what they cost
          WINNOW_CUDA_CHECK(cudaEventRecord(e0, s));
          cuda::label(d_temp.get(), temp_bytes, mask, d_labels.get(), d_count.get(), nullptr, 0, o, s);
          WINNOW_CUDA_CHECK(cudaEventRecord(e1, s));
          WINNOW_CUDA_CHECK(cudaEventSynchronize(e1));
          float ms;
          WINNOW_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
          if (r >= 3) t0.push_back(ms);
        }
        for (int r = 0; r < reps + 3; ++r) {
          WINNOW_CUDA_CHECK(cudaEventRecord(e0, s));
          cuda::label(d_temp.get(), temp_bytes, mask, d_labels.get(), d_count.get(), d_stats.get(), count, o, s);
          WINNOW_CUDA_CHECK(cudaEventRecord(e1, s));
          WINNOW_CUDA_CHECK(cudaEventSynchronize(e1));
          float ms;
          WINNOW_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
          if (r >= 3) t.push_back(ms);
        }
        std::uint32_t count2 = 0;
        WINNOW_CUDA_CHECK(cudaMemcpy(&count2, d_count.get(), 4, cudaMemcpyDeviceToHost));
        // Check the device API's output (labels + count + statistics of the last timed run)
        // against the CPU backend, at every size.
        if (host_mask.empty()) {
          host_mask.resize(n);
          WINNOW_CUDA_CHECK(cudaMemcpy(host_mask.data(), d_mask.get(), n, cudaMemcpyDeviceToHost));
        }
        if (want_conn != conn) {
          want.reset();  // one reference in memory at a time (1 GiB of labels at 16384^2)
          LabelOptions co;
          co.connectivity = conn;
          co.backend = Backend::cpu;
          want = label(ImageView<const std::uint8_t>(host_mask.data(), c.w, c.h, c.w), co);
          want_conn = conn;
        }
        Image<std::uint32_t> got(c.w, c.h);
        WINNOW_CUDA_CHECK(cudaMemcpy(got.data(), d_labels.get(), n * 4, cudaMemcpyDeviceToHost));
        // d_stats holds `count` records (the first run's count); a changed count is a mismatch.
        const std::uint32_t nstats = std::min(count, count2);
        std::vector<cuda::RawComponentStats> raw(nstats);
        if (nstats)
          WINNOW_CUDA_CHECK(cudaMemcpy(raw.data(), d_stats.get(), nstats * sizeof(raw[0]), cudaMemcpyDeviceToHost));
        bool ok = count2 == count && want->count == count2 &&
                  std::equal(want->labels.pixels().begin(), want->labels.pixels().end(), got.pixels().begin());
        for (std::uint32_t i = 0; ok && i < count2; ++i) ok = cuda::to_component_stats(raw[i]) == want->stats[i];
        any_mismatch |= !ok;
        const char* verdict = ok ? "  ok" : "  MISMATCH";
        const float ms = median(t);
        std::printf("%-22s %-17s %4d %10.4f %10.4f %10.2f %10.4f %12u%s%s\n", c.name.c_str(), aname.c_str(), conn, ms,
                    median(t0), n / (ms * 1e6), copy_ms, count2, count2 == count ? "" : "  COUNT CHANGED", verdict);
        std::fflush(stdout);
      }
  }
  if (any_mismatch) std::fprintf(stderr, "MISMATCH: some case differs from the CPU backend (rows above)\n");
  return any_mismatch ? 1 : 0;
}
