// GPU volume labeling benchmark: winnow::cuda::label_volume (device-resident u8 volume, labels +
// count, with and without statistics) on random volumes, beside the copy floor.
//
//   bench_label_volume_gpu [--quick] [--reps N] [--conn 6|18|26] [--case SUBSTR] [--verify-all] [--breakdown]
//                          [--images]
//   bench_label_volume_gpu --beyond NX NY NZ [--density D] [--conn C] [--reps N]
//
// --beyond: a volume in host memory, labels to host memory (winnow::label, what winnow.label does
// for a NumPy volume), the CUDA backend against the CPU backend on the machine's cores in the same
// run, for volumes beyond one device call (2^32 voxels and more). Voxel i is foreground when a hash
// of its 64-bit index falls below density * 2^32. Prints the CUDA call's wall time (median of N,
// default 2) with its stages (device setup, transfers, compute), the CPU call's (once), whether the
// labels are equal, and the floor: the volume in and the labels out at the link's bandwidth,
// measured here with pinned buffers.
//
// --images: multi-label images instead (volumes of one layer, as winnow::label takes them), 2048^2
// and 8192^2, 8-connectivity (26 in one layer) and 4 (6): "speckle", every pixel a value 0..3
// (fmix32 of its index), and "cells", squares of 16 x 16 pixels of one value 0..5 (fmix32 of the
// square's index) -- many tiny components, and large ones touching others of other values.
//
// Random volumes: voxel i (linear index, x fastest) is foreground when
// fmix32(i ^ seed * 0x9E3779B9) < density * 2^32, seed 12345 -- bench/label_volume_peers.py
// builds the identical volumes for cupyx, cuCIM and cc3d. Sizes 256^3 and 512^3 (--quick: 256^3),
// densities 0.1/0.5/0.9, connectivity 6 and 26 (--conn picks one; 18 on request). A real volume:
// the bundled MNI152 grey-matter map (197 x 233 x 189) > 128, repeated 3 x 2 x 3 times (x, y, z)
// to 591 x 466 x 567 voxels (np.tile in the peers' script).
// Timing: CUDA events, 3 warm-ups, median of N runs (bench/gpu_timing.cuh).
// Copy floor: a kernel that reads the u8 volume and writes a u32 per voxel (what labeling must at
// least move); `x floor` is our time over it.
// --breakdown: after each case, the median milliseconds of each phase of the run with statistics
// (local bricks, merge across faces, the roots' scan, labels, statistics), timed by
// events that the library records at its phase boundaries (detail::cuda::set_volume_phase_events).
// Verification: every case's two timed configurations must agree (count, labels, and the
// labels-only run against the run with statistics); cases of up to 2^24 voxels (all with
// --verify-all) are also checked against the BFS oracle of tests/common, statistics included. Exit status 1 when
// anything differs.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/volume_label_oracle.hpp"
#include "gpu_timing.cuh"
#include "random_mask.cuh"
#include "winnow/cuda/label.hpp"
#include "winnow/label.hpp"
#include "winnow/volume_io.hpp"

using namespace winnow;

namespace winnow::detail::cuda {
void set_volume_phase_events(cudaEvent_t* events);  // src/label/cuda/label_volume.cu
}

namespace {

// The floor: read a u8 and write a u32 per voxel, 4 voxels per thread.
__global__ void copy_floor_kernel(const uchar4* in, uint4* out, std::uint64_t n4) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const uchar4 v = in[i];
    out[i] = make_uint4(v.x, v.y, v.z, v.w);
  }
}

template <class T>
struct Buf {
  T* p = nullptr;
  explicit Buf(std::size_t n) { CK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T))); }
  ~Buf() { cudaFree(p); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
};

// Multi-label image values: pixel (x, y) takes fmix32(cell ^ seed) % values, cell = the index of
// its square of `square` x `square` pixels (square 1: every pixel its own draw).
__global__ void random_values_kernel(std::uint8_t* m, std::uint32_t width, std::uint64_t n, std::uint32_t square,
                                     std::uint32_t values) {
  const std::uint32_t cells_per_row = (width + square - 1) / square;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const auto x = static_cast<std::uint32_t>(i % width), y = static_cast<std::uint32_t>(i / width);
    const std::uint32_t cell = (y / square) * cells_per_row + x / square;
    m[i] = static_cast<std::uint8_t>(fmix32(cell ^ (12345u * 0x9E3779B9u)) % values);
  }
}

// The --beyond volumes: element first + i of a mask is 1 when fmix32(fmix32(lo ^ seed) ^ hi) < cut,
// lo and hi the 32-bit halves of its index (volumes of 2^32 voxels and more do not repeat).
__global__ void random_mask_wide_kernel(std::uint8_t* m, std::uint64_t n, std::uint64_t first, std::uint32_t cut) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t k = first + i;
    const std::uint32_t h =
        fmix32(fmix32(static_cast<std::uint32_t>(k) ^ (12345u * 0x9E3779B9u)) ^ static_cast<std::uint32_t>(k >> 32));
    m[i] = h < cut ? 1 : 0;
  }
}

double wall_ms(const std::chrono::steady_clock::time_point& t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

/// --beyond: see the file's description. Returns the exit status.
int beyond_one_call(std::int64_t nx, std::int64_t ny, std::int64_t nz, double density, int conn, int reps) {
  const auto n = static_cast<std::size_t>(nx * ny * nz);
  Volume<std::uint8_t> volume(nx, ny, nz, zero_pages);
  {  // made on the device a slab at a time
    const std::size_t slab = std::size_t{1} << 30;
    Buf<std::uint8_t> d(slab);
    for (std::size_t at = 0; at < n; at += slab) {
      const std::size_t m = std::min(slab, n - at);
      random_mask_wide_kernel<<<2048, 256>>>(d.p, m, at, static_cast<std::uint32_t>(density * 4294967296.0));
      CK(cudaGetLastError());
      CK(cudaMemcpy(volume.data() + at, d.p, m, cudaMemcpyDeviceToHost));
    }
  }
  double h2d = 0, d2h = 0;  // the link, GB/s, pinned buffers of 1 GiB (best of 3)
  {
    const std::size_t bytes = std::size_t{1} << 30;
    void* pinned = nullptr;
    CK(cudaMallocHost(&pinned, bytes));
    Buf<char> d(bytes);
    for (int r = 0; r < 3; ++r) {
      auto t = std::chrono::steady_clock::now();
      CK(cudaMemcpy(d.p, pinned, bytes, cudaMemcpyHostToDevice));
      h2d = std::max(h2d, bytes / wall_ms(t) / 1e6);
      t = std::chrono::steady_clock::now();
      CK(cudaMemcpy(pinned, d.p, bytes, cudaMemcpyDeviceToHost));
      d2h = std::max(d2h, bytes / wall_ms(t) / 1e6);
    }
    CK(cudaFreeHost(pinned));
  }
  const LabelOptions on_cuda{.connectivity = conn, .want_stats = false, .backend = Backend::cuda};
  std::vector<double> ms;
  VolumeLabeling gpu;
  for (int r = 0; r < std::max(1, reps); ++r) {
    gpu = VolumeLabeling();
    const auto t = std::chrono::steady_clock::now();
    gpu = label(volume.view(), on_cuda);
    ms.push_back(wall_ms(t));
    std::printf("  cuda run %d: %.1f ms (device setup %.1f, transfers %.1f, compute %.1f)\n", r + 1, ms.back(),
                gpu.stages.device_setup, gpu.stages.transfers, gpu.stages.compute);
    std::fflush(stdout);
  }
  std::sort(ms.begin(), ms.end());
  const double cuda_ms = ms[ms.size() / 2];
  auto t = std::chrono::steady_clock::now();
  const VolumeLabeling cpu =
      label(volume.view(), LabelOptions{.connectivity = conn, .want_stats = false, .backend = Backend::cpu});
  const double cpu_ms = wall_ms(t);
  const bool equal = gpu.count == cpu.count && gpu.labels.size() == cpu.labels.size() && !gpu.labels.empty() &&
                     std::memcmp(gpu.labels.data(), cpu.labels.data(), n * 4) == 0;
  const double floor_ms = n / h2d / 1e6 + 4.0 * n / d2h / 1e6;
  std::printf(
      "beyond %lldx%lldx%lld (%.3g G voxels) density %.2f conn %d: cuda %.1f ms = %.2f G voxels/s, cpu %.1f ms "
      "(cuda %.2fx cpu); link %.1f / %.1f GB/s in / out, floor %.1f ms (cuda at %.2fx floor); %llu components; "
      "labels %s\n",
      static_cast<long long>(nx), static_cast<long long>(ny), static_cast<long long>(nz), n / 1e9, density, conn,
      cuda_ms, n / cuda_ms / 1e6, cpu_ms, cpu_ms / cuda_ms, h2d, d2h, floor_ms, cuda_ms / floor_ms,
      static_cast<unsigned long long>(gpu.count), equal ? "equal" : "DIFFER");
  return equal ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, verify_all = false, breakdown = false, images = false;
  int reps = 20, only_conn = 0;
  std::string only_case;
  std::int64_t beyond[3] = {0, 0, 0};
  double density = 0.2;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--beyond") && i + 3 < argc)
      for (std::int64_t& side : beyond) side = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--density") && i + 1 < argc) density = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--verify-all")) verify_all = true;
    else if (!std::strcmp(argv[i], "--breakdown")) breakdown = true;
    else if (!std::strcmp(argv[i], "--images")) images = true;
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--conn") && i + 1 < argc) only_conn = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc) only_case = argv[++i];
    else {
      std::fprintf(
          stderr,
          "usage: %s [--quick] [--reps N] [--conn 6|18|26] [--case SUBSTR] [--verify-all] [--breakdown] [--images]\n"
          "       %s --beyond NX NY NZ [--density D] [--conn C] [--reps N]\n",
          argv[0], argv[0]);
      return 2;
    }
  }
  if (beyond[0] > 0)
    return beyond_one_call(beyond[0], beyond[1], beyond[2], density, only_conn ? only_conn : 6, reps == 20 ? 2 : reps);
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (%d SMs, L2 %d MiB)\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  std::printf("%-18s %4s %10s %10s %10s %8s %8s %12s\n", "case", "conn", "ms_labels", "ms_stats", "floor_ms", "x_floor",
              "Gvox/s", "components");
  struct Case {
    std::string name;
    std::int64_t nx, ny, nz;
    double density;                       // volumes: the mask's density
    std::uint32_t square, values;         // images: see random_values_kernel
    std::vector<std::uint8_t> mask = {};  // a real volume's mask (x fastest), else empty
  };
  std::vector<Case> cases;
  if (images) {
    for (std::int64_t side : quick ? std::vector<std::int64_t>{2048} : std::vector<std::int64_t>{2048, 8192}) {
      cases.push_back({"speckle_" + std::to_string(side), side, side, 1, 0, 1, 4});
      cases.push_back({"cells_" + std::to_string(side), side, side, 1, 0, 16, 6});
    }
  } else {
    for (std::int64_t side : quick ? std::vector<std::int64_t>{256} : std::vector<std::int64_t>{256, 512})
      for (double density : {0.1, 0.5, 0.9})
        cases.push_back({"random_" + std::to_string(side) + "_d" + std::to_string(density).substr(0, 3), side, side,
                         side, density, 0, 0});
    const auto mni =
        std::get<Volume<std::uint8_t>>(io::read_volume(std::string(WINNOW_DATA_DIR) + "/volumes/mni152_gm.nii.gz"));
    constexpr std::int64_t kTimesX = 3, kTimesY = 2, kTimesZ = 3;
    Case tiled{"mni152_3x2x3", mni.nx() * kTimesX, mni.ny() * kTimesY, mni.nz() * kTimesZ, 0, 0, 0};
    tiled.mask.resize(static_cast<std::size_t>(tiled.nx * tiled.ny * tiled.nz));
    for (std::int64_t z = 0; z < tiled.nz; ++z)
      for (std::int64_t y = 0; y < tiled.ny; ++y)
        for (std::int64_t x = 0; x < tiled.nx; ++x)
          tiled.mask[static_cast<std::size_t>((z * tiled.ny + y) * tiled.nx + x)] =
              mni(x % mni.nx(), y % mni.ny(), z % mni.nz()) > 128;
    cases.push_back(std::move(tiled));
  }
  const std::vector<int> conns = only_conn ? std::vector<int>{only_conn} : std::vector<int>{6, 26};
  cudaStream_t s = nullptr;
  bool any_mismatch = false;
  for (const Case& c : cases) {
    {  // one case
      const std::string& name = c.name;
      if (!only_case.empty() && name.find(only_case) == std::string::npos) continue;
      const std::int64_t nx = c.nx, ny = c.ny, nz = c.nz;
      const auto n = static_cast<std::size_t>(nx * ny * nz);
      Buf<std::uint8_t> d_vol(n);
      Buf<std::uint32_t> d_labels(n), d_count(1);
      if (!c.mask.empty()) CK(cudaMemcpy(d_vol.p, c.mask.data(), n, cudaMemcpyHostToDevice));
      else if (images)
        random_values_kernel<<<2048, 256, 0, s>>>(d_vol.p, static_cast<std::uint32_t>(nx), n, c.square, c.values);
      else
        random_mask_kernel<<<2048, 256, 0, s>>>(d_vol.p, n, 12345u,
                                                static_cast<std::uint32_t>(c.density * 4294967296.0));
      CK(cudaGetLastError());
      const double floor_ms = median_ms(
          [&](int) {
            copy_floor_kernel<<<4 * prop.multiProcessorCount * 8, 256, 0, s>>>(
                reinterpret_cast<const uchar4*>(d_vol.p), reinterpret_cast<uint4*>(d_labels.p), n / 4);
          },
          s, reps);
      CK(cudaGetLastError());
      std::vector<std::uint8_t> host;
      for (int conn : conns) {
        cuda::DeviceLabelOptions o;
        o.connectivity = conn;
        o.multilabel = images;
        const VolumeView<const std::uint8_t> view(d_vol.p, nx, ny, nz);
        std::size_t temp_bytes = 0;
        cuda::label_volume(nullptr, temp_bytes, view, nullptr, nullptr, nullptr, 0, o, s);
        Buf<char> d_temp(temp_bytes);
        cuda::label_volume(d_temp.p, temp_bytes, view, d_labels.p, d_count.p, nullptr, 0, o, s);
        std::uint32_t count = 0;
        CK(cudaMemcpy(&count, d_count.p, 4, cudaMemcpyDeviceToHost));
        Buf<cuda::RawVolumeComponentStats> d_stats(count);
        const double ms_labels = median_ms(
            [&](int) { cuda::label_volume(d_temp.p, temp_bytes, view, d_labels.p, d_count.p, nullptr, 0, o, s); }, s,
            reps);
        std::vector<std::uint32_t> labels_only(n);
        CK(cudaMemcpy(labels_only.data(), d_labels.p, n * 4, cudaMemcpyDeviceToHost));
        const double ms_stats = median_ms(
            [&](int) { cuda::label_volume(d_temp.p, temp_bytes, view, d_labels.p, d_count.p, d_stats.p, count, o, s); },
            s, reps);
        std::uint32_t count2 = 0;
        std::vector<std::uint32_t> labels(n);
        CK(cudaMemcpy(&count2, d_count.p, 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(labels.data(), d_labels.p, n * 4, cudaMemcpyDeviceToHost));
        bool ok = count2 == count && labels == labels_only;
        if (ok && (n <= (std::size_t{1} << 24) || verify_all)) {
          if (host.empty()) {
            host.resize(n);
            CK(cudaMemcpy(host.data(), d_vol.p, n, cudaMemcpyDeviceToHost));
          }
          const auto want =
              test::oracle_label_volume(VolumeView<const std::uint8_t>(host.data(), nx, ny, nz), conn, images);
          std::vector<cuda::RawVolumeComponentStats> raw(count);
          CK(cudaMemcpy(raw.data(), d_stats.p, count * sizeof(raw[0]), cudaMemcpyDeviceToHost));
          ok = want.components.size() == count;
          for (std::size_t i = 0; ok && i < n; ++i) ok = labels[i] == want.labels[i];
          for (std::uint32_t l = 0; ok && l < count; ++l) {
            const auto& r = raw[l];
            const auto& w = want.components[l];
            ok = r.voxels == w.voxels && r.sum_x == w.sum_x && r.sum_y == w.sum_y && r.sum_z == w.sum_z &&
                 r.min_x == w.min_x && r.min_y == w.min_y && r.min_z == w.min_z && r.max_x == w.max_x &&
                 r.max_y == w.max_y && r.max_z == w.max_z && r.value == w.value;
          }
        }
        any_mismatch |= !ok;
        std::printf("%-18s %4d %10.4f %10.4f %10.4f %8.1f %8.2f %12u%s\n", name.c_str(), conn, ms_labels, ms_stats,
                    floor_ms, ms_stats / floor_ms, n / (ms_stats * 1e6), count2, ok ? "  ok" : "  MISMATCH");
        if (breakdown) {
          constexpr int kEvents = 6;
          const char* phase_names[kEvents - 1] = {"local", "merge", "scan", "labels", "stats"};
          cudaEvent_t ev[kEvents];
          for (cudaEvent_t& e : ev) CK(cudaEventCreate(&e));
          detail::cuda::set_volume_phase_events(ev);
          std::vector<std::vector<float>> phase_ms(kEvents - 1);
          for (int r = 0; r < reps + 3; ++r) {
            cuda::label_volume(d_temp.p, temp_bytes, view, d_labels.p, d_count.p, d_stats.p, count, o, s);
            CK(cudaEventSynchronize(ev[kEvents - 1]));
            for (int k = 0; r >= 3 && k + 1 < kEvents; ++k) {  // 3 warm-ups
              float ms = 0;
              CK(cudaEventElapsedTime(&ms, ev[k], ev[k + 1]));
              phase_ms[k].push_back(ms);
            }
          }
          detail::cuda::set_volume_phase_events(nullptr);
          for (cudaEvent_t e : ev) CK(cudaEventDestroy(e));
          std::printf("  phases ms:");
          for (int k = 0; k + 1 < kEvents; ++k) {
            std::sort(phase_ms[k].begin(), phase_ms[k].end());
            std::printf(" %s %.4f", phase_names[k], phase_ms[k][phase_ms[k].size() / 2]);
          }
          std::printf("\n");
        }
        std::fflush(stdout);
      }
    }
  }
  if (any_mismatch) std::fprintf(stderr, "MISMATCH: some case differs (rows above)\n");
  return any_mismatch ? 1 : 0;
}
