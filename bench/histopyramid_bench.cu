// GPU benchmark of the histopyramid capability, peers in the same run:
//
//  * compaction of int32 (keep x > t), 2^24 and 2^28 elements, 1 / 3 / 50 / 99 % kept: the
//    library's CompactAlgorithm::histopyramid (winnow::cuda::compact) against
//    cub::DeviceSelect::If and winnow's single_pass, with device-to-device copy bandwidth;
//  * stream expansion (winnow::cuda::histopyramid_expand: u8 counts -> u32 element + u8 rank per
//    output), 2^24 and 2^28 counts, uniform 0..5 and marching-cubes-like (90 % zero, the rest
//    1..4), against CUB's ExclusiveScan of the counts + an expand kernel written here (one thread
//    per element writing its (element, rank) pairs from its offset);
//  * voxel compaction of a 512^3 float32 volume at 1 / 10 / 50 % active (value > level): the
//    active voxels' (x, y, z) as three uint32 and their values, in raster order. Peer:
//    cub::DeviceSelect::If over the raster indices (a counting iterator, the predicate reading the
//    volume) + an index -> (x, y, z, value) decode kernel written here; ours: winnow's
//    compact_indices (single_pass and histopyramid) + the same decode. Floor: read the volume once,
//    write 16 bytes per active voxel.
//
// CUDA events around each call, 3 warm-up calls, median of 25; inputs rotate over enough buffers
// to exceed twice the L2 cache; temporary storage allocated beforehand. Every case is verified
// once against CUB's result on the device (exit status 1 on a mismatch).
//
// Columns: median time; ratio = peer time / our time (> 1: faster than the peer; the peer is CUB
// for compaction, CUB scan + expand for expansion); copy frac = bytes that must move (input read
// + outputs written) / time, over the achieved cudaMemcpy D2D bandwidth.
//
//   bench_histopyramid_gpu [--quick]     --quick: 2^24 only
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_timing.cuh"
#include "winnow/compact.hpp"
#include "winnow/cuda/compact.hpp"
#include "winnow/cuda/histopyramid.hpp"

namespace {

template <class T>
T* dalloc(std::size_t n) {
  void* p = nullptr;
  CK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
  return static_cast<T*>(p);
}

__device__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

__global__ void fill_int32(std::int32_t* p, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    p[i] = static_cast<std::int32_t>(mix(i + seed) & 0x7fffffff);
}

/// uniform 0..5 (mc = false) or 90 % zero, the rest 1..4 (mc = true).
__global__ void fill_counts(std::uint8_t* p, std::uint64_t n, std::uint64_t seed, bool mc) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t r = mix(i + seed);
    p[i] = mc ? static_cast<std::uint8_t>(r % 10 == 0 ? 1 + (r >> 8) % 4 : 0) : static_cast<std::uint8_t>(r % 6);
  }
}

template <class T>
__global__ void count_mismatch(const T* a, const T* b, std::uint64_t n, unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(bad, local);
}

/// The expansion peer: element i writes its counts[i] outputs from offsets[i] on.
__global__ void expand_peer(const std::uint8_t* counts, const std::uint32_t* offsets, std::uint64_t n,
                            std::uint32_t* element, std::uint8_t* rank) {
  const std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  const unsigned c = counts[i];
  const std::uint32_t o = offsets[i];
  for (unsigned r = 0; r < c; ++r) {
    element[o + r] = static_cast<std::uint32_t>(i);
    rank[o + r] = static_cast<std::uint8_t>(r);
  }
}

struct GreaterThan {
  std::int32_t t;
  __host__ __device__ bool operator()(std::int32_t x) const { return x > t; }
};

struct Row {
  std::string task, size, cases, method;
  double us = 0, ratio = 0, copy_frac = 0;
};
std::vector<Row> g_rows;
bool g_failed = false;

void print_row(const Row& r) {
  std::printf("%-10s %-5s %-8s %-28s %10.1f us", r.task.c_str(), r.size.c_str(), r.cases.c_str(), r.method.c_str(),
              r.us);
  if (r.ratio > 0) std::printf("   ratio %5.2fx", r.ratio);
  else std::printf("%15s", "");
  if (r.copy_frac > 0) std::printf("   copy frac %5.2f", r.copy_frac);
  std::printf("\n");
  std::fflush(stdout);
  g_rows.push_back(r);
}

std::string pow2_name(std::uint64_t n) {
  int e = 0;
  while ((std::uint64_t{1} << e) < n) ++e;
  return "2^" + std::to_string(e);
}

template <class T>
void verify(const std::string& what, const T* ours, const T* ref, std::uint64_t k, unsigned long long* d_bad,
            cudaStream_t s) {
  CK(cudaMemsetAsync(d_bad, 0, sizeof(unsigned long long), s));
  count_mismatch<<<1024, 256, 0, s>>>(ours, ref, k, d_bad);
  CK(cudaGetLastError());
  unsigned long long bad = 0;
  CK(cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  if (bad) {
    std::fprintf(stderr, "MISMATCH %s: %llu of %llu outputs differ from CUB's\n", what.c_str(), bad,
                 static_cast<unsigned long long>(k));
    g_failed = true;
  }
}

std::uint64_t read_u64(const std::uint64_t* d, cudaStream_t s) {
  std::uint64_t v = 0;
  CK(cudaMemcpyAsync(&v, d, sizeof v, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  return v;
}

int rotation(std::size_t bytes, std::size_t l2_bytes) {
  return static_cast<int>(std::clamp<std::uint64_t>((2 * l2_bytes + bytes - 1) / bytes, 2, 16));
}

double copy_bandwidth(std::size_t bytes, std::size_t l2_bytes, cudaStream_t s, const std::string& size) {
  const int buffers = rotation(bytes, l2_bytes);
  std::vector<char*> a(buffers), b(buffers);
  for (int i = 0; i < buffers; ++i) {
    a[i] = dalloc<char>(bytes);
    b[i] = dalloc<char>(bytes);
  }
  const double ms = median_ms(
      [&](int r) { CK(cudaMemcpyAsync(b[r % buffers], a[r % buffers], bytes, cudaMemcpyDeviceToDevice, s)); }, s);
  for (int i = 0; i < buffers; ++i) {
    CK(cudaFree(a[i]));
    CK(cudaFree(b[i]));
  }
  print_row({"copy", size, "-", "cudaMemcpy D2D", ms * 1e3, 0, 0});
  return 2.0 * bytes / (ms * 1e-3);
}

void bench_compaction(std::uint64_t n, std::size_t l2_bytes, cudaStream_t s) {
  const std::size_t bytes = n * sizeof(std::int32_t);
  const double copy_bps = copy_bandwidth(bytes, l2_bytes, s, pow2_name(n));
  const int buffers = rotation(bytes, l2_bytes);
  std::vector<std::int32_t*> in(buffers), out(buffers);
  for (int b = 0; b < buffers; ++b) {
    in[b] = dalloc<std::int32_t>(n);
    out[b] = dalloc<std::int32_t>(n);
    fill_int32<<<1024, 256, 0, s>>>(in[b], n, 0x9E3779B9ull * (b + 1));
    CK(cudaGetLastError());
  }
  std::int32_t* ref = dalloc<std::int32_t>(n);
  auto* d_num = dalloc<std::uint64_t>(1);
  auto* d_count = dalloc<std::uint64_t>(1);
  auto* d_bad = dalloc<unsigned long long>(1);
  for (double kept : {0.01, 0.03, 0.50, 0.99}) {
    const auto t = static_cast<std::int32_t>((1.0 - kept) * 2147483647.0);
    const GreaterThan op{t};
    const winnow::Predicate pred = winnow::where(winnow::CompareOp::greater, t);
    const std::string sel = std::to_string(static_cast<int>(kept * 100 + 0.5)) + "%";
    std::size_t cub_bytes = 0;
    CK(cub::DeviceSelect::If(nullptr, cub_bytes, in[0], ref, d_num, static_cast<std::int64_t>(n), op, s));
    char* cub_temp = dalloc<char>(cub_bytes);
    CK(cub::DeviceSelect::If(cub_temp, cub_bytes, in[0], ref, d_num, static_cast<std::int64_t>(n), op, s));
    const std::uint64_t k = read_u64(d_num, s);
    const double moved = 4.0 * n + 4.0 * k;
    const double cub_ms = median_ms(
        [&](int r) {
          CK(cub::DeviceSelect::If(cub_temp, cub_bytes, in[r % buffers], out[r % buffers], d_num,
                                   static_cast<std::int64_t>(n), op, s));
        },
        s);
    print_row(
        {"compact", pow2_name(n), sel, "cub::DeviceSelect::If", cub_ms * 1e3, 1.0, moved / (cub_ms * 1e-3) / copy_bps});
    CK(cudaFree(cub_temp));
    for (auto [name, algorithm] : {std::pair{"winnow single_pass", winnow::CompactAlgorithm::single_pass},
                                   std::pair{"winnow histopyramid", winnow::CompactAlgorithm::histopyramid}}) {
      winnow::CompactOptions o;
      o.algorithm = algorithm;
      std::size_t temp_bytes = 0;
      winnow::cuda::compact<std::int32_t>(nullptr, temp_bytes, in[0], n, out[0], d_count, pred, o, s);
      char* temp = dalloc<char>(temp_bytes);
      CK(cudaMemsetAsync(out[0], 0xA5, bytes, s));
      winnow::cuda::compact<std::int32_t>(temp, temp_bytes, in[0], n, out[0], d_count, pred, o, s);
      const std::string what = std::string(name) + " n=" + pow2_name(n) + " kept=" + sel;
      if (read_u64(d_count, s) != k) {
        std::fprintf(stderr, "MISMATCH %s: count %llu, CUB %llu\n", what.c_str(),
                     static_cast<unsigned long long>(read_u64(d_count, s)), static_cast<unsigned long long>(k));
        g_failed = true;
      } else {
        verify(what, out[0], ref, k, d_bad, s);
      }
      const double ms = median_ms(
          [&](int r) {
            winnow::cuda::compact<std::int32_t>(temp, temp_bytes, in[r % buffers], n, out[r % buffers], d_count, pred,
                                                o, s);
          },
          s);
      print_row({"compact", pow2_name(n), sel, name, ms * 1e3, cub_ms / ms, moved / (ms * 1e-3) / copy_bps});
      CK(cudaFree(temp));
    }
  }
  for (int b = 0; b < buffers; ++b) {
    CK(cudaFree(in[b]));
    CK(cudaFree(out[b]));
  }
  CK(cudaFree(ref));
  CK(cudaFree(d_num));
  CK(cudaFree(d_count));
  CK(cudaFree(d_bad));
}

void bench_expansion(std::uint64_t n, std::size_t l2_bytes, cudaStream_t s) {
  const double copy_bps = copy_bandwidth(n * 4, l2_bytes, s, pow2_name(n));
  const int buffers = rotation(n, l2_bytes);
  std::vector<std::uint8_t*> counts(buffers);
  for (int b = 0; b < buffers; ++b) counts[b] = dalloc<std::uint8_t>(n);
  auto* offsets = dalloc<std::uint32_t>(n);
  auto* d_total = dalloc<std::uint64_t>(1);
  auto* d_bad = dalloc<unsigned long long>(1);
  for (bool mc : {false, true}) {
    const std::string dist = mc ? "mc-like" : "0..5";
    for (int b = 0; b < buffers; ++b) {
      fill_counts<<<1024, 256, 0, s>>>(counts[b], n, 0x51ED27ull * (b + 1), mc);
      CK(cudaGetLastError());
    }
    // The largest total over the rotated buffers sizes the outputs.
    std::size_t scan_bytes = 0;
    const auto plus = ::cuda::std::plus<>{};
    CK(cub::DeviceScan::ExclusiveScan(nullptr, scan_bytes, counts[0], offsets, plus, std::uint32_t{0},
                                      static_cast<std::int64_t>(n), s));
    char* scan_temp = dalloc<char>(scan_bytes);
    std::size_t hp_bytes = 0;
    winnow::cuda::histopyramid_expand(nullptr, hp_bytes, counts[0], n, static_cast<std::uint32_t*>(nullptr), nullptr,
                                      d_total, 0, s);
    char* hp_temp = dalloc<char>(hp_bytes);
    std::uint64_t capacity = 0;
    for (int b = 0; b < buffers; ++b) {
      winnow::cuda::histopyramid_expand(hp_temp, hp_bytes, counts[b], n, static_cast<std::uint32_t*>(nullptr), nullptr,
                                        d_total, 0, s);
      capacity = std::max(capacity, read_u64(d_total, s));
    }
    if (capacity >= (std::uint64_t{1} << 32)) {  // the peer's 32-bit offsets would wrap
      std::fprintf(stderr, "expansion of %s counts: total past 2^32, skipped\n", pow2_name(n).c_str());
      CK(cudaFree(scan_temp));
      CK(cudaFree(hp_temp));
      continue;
    }
    auto* element = dalloc<std::uint32_t>(capacity);
    auto* rank = dalloc<std::uint8_t>(capacity);
    auto* ref_element = dalloc<std::uint32_t>(capacity);
    auto* ref_rank = dalloc<std::uint8_t>(capacity);
    auto peer = [&](int r, std::uint32_t* e, std::uint8_t* k) {
      CK(cub::DeviceScan::ExclusiveScan(scan_temp, scan_bytes, counts[r % buffers], offsets, plus, std::uint32_t{0},
                                        static_cast<std::int64_t>(n), s));
      expand_peer<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(counts[r % buffers], offsets, n, e, k);
      CK(cudaGetLastError());
    };
    auto ours = [&](int r, std::uint32_t* e, std::uint8_t* k) {
      winnow::cuda::histopyramid_expand(hp_temp, hp_bytes, counts[r % buffers], n, e, k, d_total, capacity, s);
    };
    // Verify on buffer 0: the same outputs as the peer's.
    peer(0, ref_element, ref_rank);
    CK(cudaMemsetAsync(element, 0xA5, capacity * 4, s));
    CK(cudaMemsetAsync(rank, 0xA5, capacity, s));
    ours(0, element, rank);
    const std::uint64_t total = read_u64(d_total, s);
    const std::string what = "expand n=" + pow2_name(n) + " " + dist;
    verify(what + " elements", element, ref_element, total, d_bad, s);
    verify(what + " ranks", rank, ref_rank, total, d_bad, s);
    const double moved = static_cast<double>(n) + 5.0 * static_cast<double>(total);
    const double peer_ms = median_ms([&](int r) { peer(r, ref_element, ref_rank); }, s);
    print_row({"expand", pow2_name(n), dist, "CUB scan + expand kernel", peer_ms * 1e3, 1.0,
               moved / (peer_ms * 1e-3) / copy_bps});
    const double ms = median_ms([&](int r) { ours(r, element, rank); }, s);
    print_row({"expand", pow2_name(n), dist, "winnow histopyramid_expand", ms * 1e3, peer_ms / ms,
               moved / (ms * 1e-3) / copy_bps});
    CK(cudaFree(element));
    CK(cudaFree(rank));
    CK(cudaFree(ref_element));
    CK(cudaFree(ref_rank));
    CK(cudaFree(scan_temp));
    CK(cudaFree(hp_temp));
  }
  for (auto* c : counts) CK(cudaFree(c));
  CK(cudaFree(offsets));
  CK(cudaFree(d_total));
  CK(cudaFree(d_bad));
}

/// Voxel (x, y, z, value) of each kept raster index; the count is read on the device, so the
/// grid covers the worst case and threads past the count return at once.
__global__ void decode_voxels(const std::uint32_t* indices, const std::uint64_t* d_count, const float* volume,
                              std::uint32_t nx, std::uint32_t nxy, std::uint32_t* xyz, float* values) {
  const std::uint64_t count = *d_count;
  for (std::uint64_t k = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; k < count;
       k += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint32_t i = indices[k];
    const std::uint32_t z = i / nxy, r = i - z * nxy, y = r / nx, x = r - y * nx;
    xyz[3 * k] = x, xyz[3 * k + 1] = y, xyz[3 * k + 2] = z;
    values[k] = volume[i];
  }
}

__global__ void fill_unit_floats(float* p, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    p[i] = static_cast<float>(mix(i + seed) >> 40) * (1.0f / 16777216.0f);  // [0, 1), 24 random bits
}

struct VoxelAbove {
  const float* volume;
  float level;
  __host__ __device__ bool operator()(std::uint32_t i) const { return volume[i] > level; }
};

void bench_voxels(std::size_t l2_bytes, cudaStream_t s, int side) {
  const std::uint64_t n = std::uint64_t(side) * side * side;
  const std::string size = std::to_string(side) + "^3";
  const double copy_bps = copy_bandwidth(n * 4, l2_bytes, s, size);
  const int buffers = rotation(n * 4, l2_bytes);
  std::vector<float*> vol(buffers);
  for (int b = 0; b < buffers; ++b) {
    vol[b] = dalloc<float>(n);
    fill_unit_floats<<<1024, 256, 0, s>>>(vol[b], n, 0x7F4A7C15ull * (b + 1));
    CK(cudaGetLastError());
  }
  auto* indices = dalloc<std::uint32_t>(n);
  auto* ref = dalloc<std::uint32_t>(n);
  auto* xyz = dalloc<std::uint32_t>(3 * n);
  auto* values = dalloc<float>(n);
  auto* d_num = dalloc<std::uint64_t>(1);
  auto* d_bad = dalloc<unsigned long long>(1);
  int sms = 0, device = 0;
  CK(cudaGetDevice(&device));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const auto nx = static_cast<std::uint32_t>(side), nxy = nx * nx;
  auto decode = [&](const float* v) {
    decode_voxels<<<sms * 8, 256, 0, s>>>(indices, d_num, v, nx, nxy, xyz, values);
    CK(cudaGetLastError());
  };
  for (double active : {0.01, 0.10, 0.50}) {
    const float level = static_cast<float>(1.0 - active);
    const std::string sel = std::to_string(static_cast<int>(active * 100 + 0.5)) + "%";
    const auto first = thrust::counting_iterator<std::uint32_t>(0);
    std::size_t cub_bytes = 0;
    CK(cub::DeviceSelect::If(nullptr, cub_bytes, first, ref, d_num, static_cast<std::int64_t>(n),
                             VoxelAbove{vol[0], level}, s));
    char* cub_temp = dalloc<char>(cub_bytes);
    CK(cub::DeviceSelect::If(cub_temp, cub_bytes, first, ref, d_num, static_cast<std::int64_t>(n),
                             VoxelAbove{vol[0], level}, s));
    const std::uint64_t k = read_u64(d_num, s);
    const double moved = 4.0 * n + 16.0 * k;
    const double cub_ms = median_ms(
        [&](int r) {
          CK(cub::DeviceSelect::If(cub_temp, cub_bytes, first, indices, d_num, static_cast<std::int64_t>(n),
                                   VoxelAbove{vol[r % buffers], level}, s));
          decode(vol[r % buffers]);
        },
        s);
    print_row(
        {"voxels", size, sel, "cub::DeviceSelect::If + decode", cub_ms * 1e3, 1.0, moved / (cub_ms * 1e-3) / copy_bps});
    CK(cudaFree(cub_temp));
    const winnow::Predicate pred = winnow::where(winnow::CompareOp::greater, level);
    for (auto [name, algorithm] : {std::pair{"winnow single_pass + decode", winnow::CompactAlgorithm::single_pass},
                                   std::pair{"winnow histopyramid + decode", winnow::CompactAlgorithm::histopyramid}}) {
      winnow::CompactOptions o;
      o.algorithm = algorithm;
      std::size_t temp_bytes = 0;
      winnow::cuda::compact_indices<float, std::uint32_t>(nullptr, temp_bytes, vol[0], n, indices, d_num, pred, o, s);
      char* temp = dalloc<char>(temp_bytes);
      CK(cudaMemsetAsync(indices, 0xA5, n * 4, s));
      winnow::cuda::compact_indices<float, std::uint32_t>(temp, temp_bytes, vol[0], n, indices, d_num, pred, o, s);
      const std::string what = std::string(name) + " " + size + " active=" + sel;
      if (read_u64(d_num, s) != k) {
        std::fprintf(stderr, "MISMATCH %s: count %llu, CUB %llu\n", what.c_str(),
                     static_cast<unsigned long long>(read_u64(d_num, s)), static_cast<unsigned long long>(k));
        g_failed = true;
      } else {
        verify(what, indices, ref, k, d_bad, s);
      }
      const double ms = median_ms(
          [&](int r) {
            winnow::cuda::compact_indices<float, std::uint32_t>(temp, temp_bytes, vol[r % buffers], n, indices, d_num,
                                                                pred, o, s);
            decode(vol[r % buffers]);
          },
          s);
      print_row({"voxels", size, sel, name, ms * 1e3, cub_ms / ms, moved / (ms * 1e-3) / copy_bps});
      CK(cudaFree(temp));
    }
  }
  for (float* v : vol) CK(cudaFree(v));
  for (void* p : {static_cast<void*>(indices), static_cast<void*>(ref), static_cast<void*>(xyz),
                  static_cast<void*>(values), static_cast<void*>(d_num), static_cast<void*>(d_bad)})
    CK(cudaFree(p));
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  int device = 0;
  CK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, device));
  std::printf("device: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<std::uint64_t> sizes = {std::uint64_t{1} << 24};
  if (!quick) sizes.push_back(std::uint64_t{1} << 28);
  for (std::uint64_t n : sizes) bench_compaction(n, static_cast<std::size_t>(prop.l2CacheSize), s);
  for (std::uint64_t n : sizes) bench_expansion(n, static_cast<std::size_t>(prop.l2CacheSize), s);
  bench_voxels(static_cast<std::size_t>(prop.l2CacheSize), s, quick ? 256 : 512);
  CK(cudaStreamDestroy(s));

  std::printf(
      "\n## summary\n\n| task | n | case | method | median time (us) | ratio vs peer | copy frac |\n"
      "|---|---|---|---|---:|---:|---:|\n");
  for (const Row& r : g_rows) {
    std::printf("| %s | %s | %s | %s | %.1f | ", r.task.c_str(), r.size.c_str(), r.cases.c_str(), r.method.c_str(),
                r.us);
    if (r.ratio > 0) std::printf("%.2fx | ", r.ratio);
    else std::printf("- | ");
    if (r.copy_frac > 0) std::printf("%.2f |\n", r.copy_frac);
    else std::printf("- |\n");
  }
  if (g_failed) {
    std::fprintf(stderr, "some outputs differ from CUB's: see MISMATCH above\n");
    return 1;
  }
  return 0;
}
