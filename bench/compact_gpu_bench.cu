// GPU benchmark of stream compaction: every winnow algorithm (stable and unordered variants)
// against cub::DeviceSelect::If, thrust::copy_if and device-to-device copy bandwidth, all in one
// run; then 8192x8192 RGBA image compaction + luminance sort: the library's winnow::compact_image
// (what `winnow compact` runs) against CUB select + CUB radix sort.
//
// CUDA events around each call, 3 warm-up calls, median of 25; inputs (and outputs) rotate over
// enough buffers to exceed twice the L2 cache. Every result of ours is checked against CUB's
// output on the device (abort on mismatch). single_pass is measured twice: CUB-style temporary
// storage (a reset before each launch) and a CompactWorkspace (no reset). No contestant allocates
// inside the timing: CUB's and winnow's temporary storage is allocated beforehand, thrust's comes
// from a caching allocator filled by the warm-up calls (thrust::copy_if still copies its count to
// the host and waits for it: it returns the end iterator).
//
// Image rows: "compact_image (device)" is the call's own `milliseconds` (CUDA events around
// compaction + count read-back + key gather + radix sort, as the peer does them; without the
// image upload and index download); "compact_image (host wall)" is the whole call as a host
// program sees it (device allocations, image upload from pageable memory, index download).
//
//   bench_compact_gpu [--quick] [--markdown] [--sweep-stable]
//     --quick         n = 2^21 and 2^24 only, and a 4096x4096 image
//     --markdown      also print the table in markdown at the end
//     --sweep-stable  instead: single_pass policies (compact_sweep_*.cu, int32) at 2^21, 2^24,
//                     2^28 (2^21, 2^24 with --quick) against CUB, the library's single_pass
//                     stable / any and block_ballot stable; each verified against CUB's output
//
// Columns: median time; ours/CUB = CUB time / our time (> 1: we are faster); copy frac =
// (4n + 4k bytes) / time over the achieved cudaMemcpy D2D bandwidth (2 * 4n bytes / its time).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "compact_sweep.cuh"
#include "gpu_timing.cuh"
#include "winnow/compact.hpp"
#include "winnow/cuda/compact.hpp"
#include "winnow/image_compact.hpp"

namespace {

using winnow::CompactAlgorithm;
using winnow::Order;

__host__ __device__ inline std::uint32_t hash32(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}

__global__ void fill_random(std::int32_t* p, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    p[i] = static_cast<std::int32_t>(hash32(i * 0x9e3779b97f4a7c15ull + seed) >> 1);  // 0 .. 2^31 - 1
}

// A dark sky with ~8% bright sources.
__global__ void fill_image(winnow::Rgba8* p, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint32_t h = hash32(i + seed), g = hash32(i ^ (seed << 7));
    const bool bright = (h % 100) < 8;
    const std::uint8_t base = bright ? static_cast<std::uint8_t>(60 + g % 196) : static_cast<std::uint8_t>(g % 32);
    p[i] = winnow::Rgba8{base, static_cast<std::uint8_t>(base ^ (h >> 8 & 7)),
                         static_cast<std::uint8_t>(base ^ (h >> 16 & 7)), 255};
  }
}

struct Greater {
  std::int32_t t;
  __host__ __device__ bool operator()(std::int32_t x) const { return x > t; }
};

struct LumaAbove {
  const winnow::Rgba8* img;
  std::uint32_t t;
  __host__ __device__ bool operator()(std::uint32_t i) const { return winnow::luminance_milli(img[i]) > t; }
};

__global__ void gather_keys(const winnow::Rgba8* img, const std::uint32_t* idx, std::uint32_t k, std::uint32_t* keys) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < k) keys[i] = winnow::luminance_milli(img[idx[i]]);
}

template <class T>
__global__ void count_mismatch(const T* a, const T* b, std::uint64_t k, unsigned long long* bad) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < k;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    if (a[i] != b[i]) atomicAdd(bad, 1ull);
}

template <class T>
T* dalloc(std::size_t count) {
  void* p = nullptr;
  CK(cudaMalloc(&p, std::max<std::size_t>(count, 1) * sizeof(T)));
  return static_cast<T*>(p);
}

/// Order-independent comparison of k elements: the sums of x and of a hash of x must agree
/// (bad != 0 when they differ); for the unordered sweep variants.
__global__ void multiset_mismatch(const std::int32_t* a, const std::int32_t* b, std::uint64_t k,
                                  unsigned long long* bad) {
  __shared__ unsigned long long s[4];
  if (threadIdx.x < 4) s[threadIdx.x] = 0;
  __syncthreads();
  unsigned long long sa = 0, sb = 0, ha = 0, hb = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < k;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    sa += static_cast<std::uint32_t>(a[i]);
    sb += static_cast<std::uint32_t>(b[i]);
    ha += (static_cast<std::uint32_t>(a[i]) * 2654435761u) ^ 0x9e3779b9u;
    hb += (static_cast<std::uint32_t>(b[i]) * 2654435761u) ^ 0x9e3779b9u;
  }
  atomicAdd(&s[0], sa);
  atomicAdd(&s[1], sb);
  atomicAdd(&s[2], ha);
  atomicAdd(&s[3], hb);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(bad, s[0]);
    atomicAdd(bad, 0ull - s[1]);  // wraps to the sum of differences, zero when equal
    atomicAdd(bad, s[2] * 3);
    atomicAdd(bad, 0ull - s[3] * 3);
  }
}

/// Temporary storage for thrust, kept for reuse (the pattern of thrust's custom temporary
/// allocation example): after the warm-up calls every request is served from a cached block,
/// so thrust::copy_if is timed without cudaMalloc / cudaFree, like CUB and winnow.
class CachingAllocator {
 public:
  using value_type = char;
  CachingAllocator() = default;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  ~CachingAllocator() {
    for (auto& [bytes, p] : free_) (void)cudaFree(p);
    for (auto& [p, bytes] : in_use_) (void)cudaFree(p);
  }
  char* allocate(std::ptrdiff_t bytes) {
    const auto want = static_cast<std::size_t>(std::max<std::ptrdiff_t>(bytes, 1));
    char* p = nullptr;
    std::size_t have = want;
    if (const auto it = free_.lower_bound(want); it != free_.end()) {  // the smallest cached block that fits
      have = it->first;
      p = it->second;
      free_.erase(it);
    } else {
      CK(cudaMalloc(reinterpret_cast<void**>(&p), want));
    }
    in_use_.emplace(p, have);
    return p;
  }
  void deallocate(char* p, std::size_t) {
    const auto it = in_use_.find(p);
    free_.emplace(it->second, p);
    in_use_.erase(it);
  }

 private:
  std::multimap<std::size_t, char*> free_;  // bytes -> block
  std::map<char*, std::size_t> in_use_;     // block -> bytes
};

struct Row {
  std::string size, sel, method;
  double us = 0, ours_over_cub = 0, copy_frac = 0;
};
std::vector<Row> g_rows;

void print_row(const Row& r) {
  std::printf("%-7s %-5s %-26s %10.1f us", r.size.c_str(), r.sel.c_str(), r.method.c_str(), r.us);
  if (r.ours_over_cub > 0) std::printf("   ours/CUB %5.2fx", r.ours_over_cub);
  else std::printf("%18s", "");
  if (r.copy_frac > 0) std::printf("   copy frac %5.2f", r.copy_frac);
  std::printf("\n");
  std::fflush(stdout);
  g_rows.push_back(r);
}

struct Variant {
  const char* name;
  CompactAlgorithm algorithm;
  Order order;
};
const Variant kVariants[] = {
    {"single_pass stable", CompactAlgorithm::single_pass, Order::stable},
    {"single_pass any", CompactAlgorithm::single_pass, Order::any},
    {"block_ballot stable", CompactAlgorithm::block_ballot, Order::stable},
    {"block_ballot any", CompactAlgorithm::block_ballot, Order::any},
    {"group_scan", CompactAlgorithm::group_scan, Order::stable},
    {"histopyramid", CompactAlgorithm::histopyramid, Order::stable},
};

std::string pow2_name(std::uint64_t n) {
  int e = 0;
  while ((std::uint64_t{1} << e) < n) ++e;
  return "2^" + std::to_string(e);
}

/// Checks our output `out` (count in *d_count) against CUB's `ref` of k elements: in order when
/// stable, as sorted multisets otherwise. Aborts on a mismatch.
void check_against_cub(const std::string& what, Order order, const std::int32_t* out, const std::int32_t* ref,
                       std::uint64_t k, const std::uint64_t* d_count, std::int32_t* sorted_a, std::int32_t* sorted_b,
                       unsigned long long* d_bad, cudaStream_t s) {
  std::uint64_t kk = 0;
  CK(cudaMemcpyAsync(&kk, d_count, sizeof kk, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  if (kk != k) {
    std::fprintf(stderr, "MISMATCH %s: count %llu, CUB %llu\n", what.c_str(), (unsigned long long)kk,
                 (unsigned long long)k);
    std::abort();
  }
  const std::int32_t* a = out;
  const std::int32_t* b = ref;
  if (order == Order::any && k > 0) {
    std::size_t sb = 0;
    CK(cub::DeviceRadixSort::SortKeys(nullptr, sb, out, sorted_a, static_cast<std::int64_t>(k), 0, 32, s));
    void* st = dalloc<char>(sb);
    CK(cub::DeviceRadixSort::SortKeys(st, sb, out, sorted_a, static_cast<std::int64_t>(k), 0, 32, s));
    CK(cub::DeviceRadixSort::SortKeys(st, sb, ref, sorted_b, static_cast<std::int64_t>(k), 0, 32, s));
    CK(cudaFree(st));
    a = sorted_a;
    b = sorted_b;
  }
  CK(cudaMemsetAsync(d_bad, 0, sizeof(unsigned long long), s));
  count_mismatch<<<1024, 256, 0, s>>>(a, b, k, d_bad);
  CK(cudaGetLastError());
  unsigned long long bad = 0;
  CK(cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  if (bad) {
    std::fprintf(stderr, "MISMATCH %s: %llu elements differ from CUB\n", what.c_str(), bad);
    std::abort();
  }
}

void bench_streams(const std::vector<std::uint64_t>& sizes, std::size_t l2_bytes, cudaStream_t s) {
  const double sels[] = {0.01, 0.50, 0.99};
  for (std::uint64_t n : sizes) {
    const std::size_t bytes = n * sizeof(std::int32_t);
    const int buffers = static_cast<int>(std::clamp<std::uint64_t>((2 * l2_bytes + bytes - 1) / bytes, 2, 16));
    std::vector<std::int32_t*> in(buffers), out(buffers);
    for (int b = 0; b < buffers; ++b) {
      in[b] = dalloc<std::int32_t>(n);
      out[b] = dalloc<std::int32_t>(n);
      fill_random<<<1024, 256, 0, s>>>(in[b], n, 1234567ull * (b + 1));
      CK(cudaGetLastError());
    }
    std::int32_t* ref = dalloc<std::int32_t>(n);
    std::int32_t* sorted_a = dalloc<std::int32_t>(n);
    std::int32_t* sorted_b = dalloc<std::int32_t>(n);
    auto* d_num = dalloc<std::uint64_t>(1);
    auto* d_bad = dalloc<unsigned long long>(1);
    auto* d_count = dalloc<std::uint64_t>(1);

    const double copy_ms = median_ms(
        [&](int r) { CK(cudaMemcpyAsync(out[r % buffers], in[r % buffers], bytes, cudaMemcpyDeviceToDevice, s)); }, s);
    const double copy_bps = 2.0 * bytes / (copy_ms * 1e-3);
    print_row({pow2_name(n), "-", "cudaMemcpy D2D", copy_ms * 1e3, 0, 0});
    std::printf("%-7s %-5s copy bandwidth %.0f GB/s (read + write)\n", pow2_name(n).c_str(), "-", copy_bps / 1e9);

    for (double sel : sels) {
      const auto t = static_cast<std::int32_t>((1.0 - sel) * 2147483647.0);
      const Greater op{t};
      const winnow::Predicate pred = winnow::where(winnow::CompareOp::greater, t);
      char sel_name[16];
      std::snprintf(sel_name, sizeof sel_name, "%d%%", static_cast<int>(sel * 100 + 0.5));

      // CUB
      std::size_t cub_bytes = 0;
      CK(cub::DeviceSelect::If(nullptr, cub_bytes, in[0], out[0], d_num, static_cast<std::int64_t>(n), op, s));
      void* cub_temp = dalloc<char>(cub_bytes);
      CK(cub::DeviceSelect::If(cub_temp, cub_bytes, in[0], ref, d_num, static_cast<std::int64_t>(n), op, s));
      std::uint64_t k = 0;
      CK(cudaMemcpyAsync(&k, d_num, sizeof k, cudaMemcpyDeviceToHost, s));
      CK(cudaStreamSynchronize(s));
      const double moved = 4.0 * n + 4.0 * k;
      const double cub_ms = median_ms(
          [&](int r) {
            CK(cub::DeviceSelect::If(cub_temp, cub_bytes, in[r % buffers], out[r % buffers], d_num,
                                     static_cast<std::int64_t>(n), op, s));
          },
          s);
      print_row(
          {pow2_name(n), sel_name, "cub::DeviceSelect::If", cub_ms * 1e3, 1.0, moved / (cub_ms * 1e-3) / copy_bps});

      CachingAllocator thrust_alloc;
      const std::int32_t* thrust_end =
          thrust::copy_if(thrust::cuda::par(thrust_alloc).on(s), in[0], in[0] + n, out[0], op);
      if (static_cast<std::uint64_t>(thrust_end - out[0]) != k) {
        std::fprintf(stderr, "MISMATCH thrust::copy_if n=%s sel=%s: count %lld, CUB %llu\n", pow2_name(n).c_str(),
                     sel_name, static_cast<long long>(thrust_end - out[0]), static_cast<unsigned long long>(k));
        std::abort();
      }
      const double thrust_ms = median_ms(
          [&](int r) {
            thrust::copy_if(thrust::cuda::par(thrust_alloc).on(s), in[r % buffers], in[r % buffers] + n,
                            out[r % buffers], op);
          },
          s);
      print_row({pow2_name(n), sel_name, "thrust::copy_if", thrust_ms * 1e3, cub_ms / thrust_ms,
                 moved / (thrust_ms * 1e-3) / copy_bps});

      for (const Variant& v : kVariants) {
        winnow::CompactOptions o;
        o.algorithm = v.algorithm;
        o.order = v.order;
        std::size_t temp_bytes = 0;
        winnow::cuda::compact<std::int32_t>(nullptr, temp_bytes, in[0], n, out[0], d_count, pred, o, s);
        void* temp = dalloc<char>(temp_bytes);
        // verify on buffer 0 against CUB
        const std::string what = std::string(v.name) + " n=" + pow2_name(n) + " sel=" + sel_name;
        CK(cudaMemsetAsync(out[0], 0xA5, bytes, s));
        winnow::cuda::compact<std::int32_t>(temp, temp_bytes, in[0], n, out[0], d_count, pred, o, s);
        check_against_cub(what, v.order, out[0], ref, k, d_count, sorted_a, sorted_b, d_bad, s);
        const double ms = median_ms(
            [&](int r) {
              winnow::cuda::compact<std::int32_t>(temp, temp_bytes, in[r % buffers], n, out[r % buffers], d_count, pred,
                                                  o, s);
            },
            s);
        print_row({pow2_name(n), sel_name, v.name, ms * 1e3, cub_ms / ms, moved / (ms * 1e-3) / copy_bps});
        if (v.algorithm == CompactAlgorithm::single_pass) {  // the same on a CompactWorkspace (no reset per call)
          winnow::cuda::CompactWorkspace ws;
          for (int rep = 0; rep < 2; ++rep) {  // the second call takes the words the first left ready
            CK(cudaMemsetAsync(out[0], 0xA5, bytes, s));
            winnow::cuda::compact<std::int32_t>(ws, in[0], n, out[0], d_count, pred, o, s);
          }
          check_against_cub(what + " (workspace)", v.order, out[0], ref, k, d_count, sorted_a, sorted_b, d_bad, s);
          const double ws_ms = median_ms(
              [&](int r) {
                winnow::cuda::compact<std::int32_t>(ws, in[r % buffers], n, out[r % buffers], d_count, pred, o, s);
              },
              s);
          print_row({pow2_name(n), sel_name, std::string(v.name) + " (workspace)", ws_ms * 1e3, cub_ms / ws_ms,
                     moved / (ws_ms * 1e-3) / copy_bps});
        }
        CK(cudaFree(temp));
      }
      CK(cudaFree(cub_temp));
    }
    for (int b = 0; b < buffers; ++b) {
      CK(cudaFree(in[b]));
      CK(cudaFree(out[b]));
    }
    for (void* p : {(void*)ref, (void*)sorted_a, (void*)sorted_b, (void*)d_num, (void*)d_bad, (void*)d_count})
      CK(cudaFree(p));
  }
}

/// --sweep-stable: every SweepVariant against CUB and the library's variants, same inputs.
void bench_sweep(const std::vector<std::uint64_t>& sizes, std::size_t l2_bytes, cudaStream_t s) {
  std::vector<SweepVariant> vars;
  add_sweep_a(vars);
  add_sweep_c(vars);
  const double sels[] = {0.01, 0.50, 0.99};
  for (std::uint64_t n : sizes) {
    const std::size_t bytes = n * sizeof(std::int32_t);
    const int buffers = static_cast<int>(std::clamp<std::uint64_t>((2 * l2_bytes + bytes - 1) / bytes, 2, 16));
    std::vector<std::int32_t*> in(buffers), out(buffers);
    for (int b = 0; b < buffers; ++b) {
      in[b] = dalloc<std::int32_t>(n);
      out[b] = dalloc<std::int32_t>(n);
      fill_random<<<1024, 256, 0, s>>>(in[b], n, 1234567ull * (b + 1));
      CK(cudaGetLastError());
    }
    std::int32_t* ref = dalloc<std::int32_t>(n);
    auto* d_num = dalloc<std::uint64_t>(1);
    auto* d_bad = dalloc<unsigned long long>(1);
    auto* d_count = dalloc<std::uint64_t>(1);
    const double copy_ms = median_ms(
        [&](int r) { CK(cudaMemcpyAsync(out[r % buffers], in[r % buffers], bytes, cudaMemcpyDeviceToDevice, s)); }, s);
    const double copy_bps = 2.0 * bytes / (copy_ms * 1e-3);
    print_row({pow2_name(n), "-", "cudaMemcpy D2D", copy_ms * 1e3, 0, 0});
    for (double sel : sels) {
      const auto t = static_cast<std::int32_t>((1.0 - sel) * 2147483647.0);
      const Greater op{t};
      const winnow::Predicate pred = winnow::where(winnow::CompareOp::greater, t);
      char sel_name[16];
      std::snprintf(sel_name, sizeof sel_name, "%d%%", static_cast<int>(sel * 100 + 0.5));
      std::size_t cub_bytes = 0;
      CK(cub::DeviceSelect::If(nullptr, cub_bytes, in[0], out[0], d_num, static_cast<std::int64_t>(n), op, s));
      void* cub_temp = dalloc<char>(cub_bytes);
      CK(cub::DeviceSelect::If(cub_temp, cub_bytes, in[0], ref, d_num, static_cast<std::int64_t>(n), op, s));
      std::uint64_t k = 0;
      CK(cudaMemcpyAsync(&k, d_num, sizeof k, cudaMemcpyDeviceToHost, s));
      CK(cudaStreamSynchronize(s));
      const double moved = 4.0 * n + 4.0 * k;
      const double cub_ms = median_ms(
          [&](int r) {
            CK(cub::DeviceSelect::If(cub_temp, cub_bytes, in[r % buffers], out[r % buffers], d_num,
                                     static_cast<std::int64_t>(n), op, s));
          },
          s);
      print_row(
          {pow2_name(n), sel_name, "cub::DeviceSelect::If", cub_ms * 1e3, 1.0, moved / (cub_ms * 1e-3) / copy_bps});
      // verify (count and elements against CUB's stable output), then time
      auto verify = [&](const std::string& name, bool stable = true) {
        std::uint64_t kk = 0;
        CK(cudaMemcpyAsync(&kk, d_count, sizeof kk, cudaMemcpyDeviceToHost, s));
        CK(cudaMemsetAsync(d_bad, 0, sizeof(unsigned long long), s));
        if (stable) count_mismatch<<<1024, 256, 0, s>>>(out[0], ref, k, d_bad);
        else multiset_mismatch<<<1024, 256, 0, s>>>(out[0], ref, k, d_bad);
        CK(cudaGetLastError());
        unsigned long long bad = 0;
        CK(cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        if (kk != k || bad) {
          std::printf("MISMATCH %s n=%llu sel=%s: count %llu (CUB %llu), %llu elements differ\n", name.c_str(),
                      (unsigned long long)n, sel_name, (unsigned long long)kk, (unsigned long long)k, bad);
          return false;
        }
        return true;
      };
      struct Lib {
        const char* name;
        CompactAlgorithm a;
        Order o;
      };
      for (const Lib& l : {Lib{"lib single_pass stable", CompactAlgorithm::single_pass, Order::stable},
                           Lib{"lib block_ballot stable", CompactAlgorithm::block_ballot, Order::stable},
                           Lib{"lib single_pass any", CompactAlgorithm::single_pass, Order::any}}) {
        winnow::CompactOptions o;
        o.algorithm = l.a;
        o.order = l.o;
        std::size_t tb = 0;
        winnow::cuda::compact<std::int32_t>(nullptr, tb, in[0], n, out[0], d_count, pred, o, s);
        void* temp = dalloc<char>(tb);
        CK(cudaMemsetAsync(out[0], 0xA5, bytes, s));
        winnow::cuda::compact<std::int32_t>(temp, tb, in[0], n, out[0], d_count, pred, o, s);
        if (l.o == Order::any || verify(l.name)) {
          const double ms = median_ms(
              [&](int r) {
                winnow::cuda::compact<std::int32_t>(temp, tb, in[r % buffers], n, out[r % buffers], d_count, pred, o,
                                                    s);
              },
              s);
          print_row({pow2_name(n), sel_name, l.name, ms * 1e3, cub_ms / ms, moved / (ms * 1e-3) / copy_bps});
        }
        CK(cudaFree(temp));
      }
      for (const SweepVariant& v : vars) {
        const std::size_t tb = v.temp_bytes(n);
        void* temp = dalloc<char>(tb);
        CK(cudaMemsetAsync(out[0], 0xA5, bytes, s));
        v.launch(in[0], n, out[0], d_count, pred, temp, s);
        CK(cudaMemsetAsync(out[0], 0xA5, bytes, s));
        v.launch(in[0], n, out[0], d_count, pred, temp, s);  // a workspace's second call: words left ready
        CK(cudaGetLastError());
        if (verify(v.name, v.stable)) {
          const double ms =
              median_ms([&](int r) { v.launch(in[r % buffers], n, out[r % buffers], d_count, pred, temp, s); }, s);
          print_row({pow2_name(n), sel_name, v.name, ms * 1e3, cub_ms / ms, moved / (ms * 1e-3) / copy_bps});
        }
        CK(cudaFree(temp));
      }
      CK(cudaFree(cub_temp));
    }
    for (int b = 0; b < buffers; ++b) {
      CK(cudaFree(in[b]));
      CK(cudaFree(out[b]));
    }
    for (void* p : {(void*)ref, (void*)d_num, (void*)d_bad, (void*)d_count}) CK(cudaFree(p));
  }
}

/// Copies k device indices to the host.
std::vector<std::uint32_t> to_host(const std::uint32_t* d, std::uint64_t k) {
  std::vector<std::uint32_t> h(k);
  if (k) CK(cudaMemcpy(h.data(), d, k * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  return h;
}

void bench_image(int side, cudaStream_t s) {
  const std::uint64_t n = std::uint64_t(side) * side;
  const std::string size = std::to_string(side) + "^2";
  auto* img = dalloc<winnow::Rgba8>(n);
  fill_image<<<1024, 256, 0, s>>>(img, n, 42);
  CK(cudaGetLastError());
  const double threshold = 40.0;  // luminance > 40, in thousandths as the library compares it
  const auto thr = static_cast<std::uint32_t>(threshold * 1000.0);
  auto* idx_ours = dalloc<std::uint32_t>(n);
  auto* idx_cub = dalloc<std::uint32_t>(n);
  auto* keys = dalloc<std::uint32_t>(n);
  auto* keys_sorted = dalloc<std::uint32_t>(n);
  auto* idx_sorted_cub = dalloc<std::uint32_t>(n);
  auto* d_count = dalloc<std::uint64_t>(1);
  auto* d_num = dalloc<std::uint64_t>(1);
  auto* d_bad = dalloc<unsigned long long>(1);

  // winnow's device API alone (the compaction step of compact_image, no sort)
  const winnow::Predicate pred = winnow::where_luminance(winnow::CompareOp::greater, threshold);
  winnow::CompactOptions o;  // automatic = single_pass, stable
  std::size_t ours_bytes = 0;
  winnow::cuda::compact_indices<winnow::Rgba8, std::uint32_t>(nullptr, ours_bytes, img, n, idx_ours, d_count, pred, o,
                                                              s);
  void* ours_temp = dalloc<char>(ours_bytes);
  auto ours_compact = [&] {
    winnow::cuda::compact_indices<winnow::Rgba8, std::uint32_t>(ours_temp, ours_bytes, img, n, idx_ours, d_count, pred,
                                                                o, s);
  };

  // The peer: CUB select of the indices, the count read back, a gather of the keys and a stable
  // CUB radix sort, descending, over the 18 bits a key can use.
  const LumaAbove op{img, thr};
  thrust::counting_iterator<std::uint32_t> first(0);
  std::size_t cub_bytes = 0;
  CK(cub::DeviceSelect::If(nullptr, cub_bytes, first, idx_cub, d_num, static_cast<std::int64_t>(n), op, s));
  void* cub_temp = dalloc<char>(cub_bytes);
  std::size_t sort_bytes = 0;
  CK(cub::DeviceRadixSort::SortPairsDescending(nullptr, sort_bytes, keys, keys_sorted, idx_cub, idx_sorted_cub,
                                               static_cast<std::int64_t>(n), 0, 18, s));
  void* sort_temp = dalloc<char>(sort_bytes);
  auto cub = [&](bool sort) {
    CK(cub::DeviceSelect::If(cub_temp, cub_bytes, first, idx_cub, d_num, static_cast<std::int64_t>(n), op, s));
    if (!sort) return std::uint64_t{0};
    std::uint64_t k = 0;
    CK(cudaMemcpyAsync(&k, d_num, sizeof k, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    if (k == 0) return k;
    gather_keys<<<(k + 255) / 256, 256, 0, s>>>(img, idx_cub, static_cast<std::uint32_t>(k), keys);
    CK(cudaGetLastError());
    CK(cub::DeviceRadixSort::SortPairsDescending(sort_temp, sort_bytes, keys, keys_sorted, idx_cub, idx_sorted_cub,
                                                 static_cast<std::int64_t>(k), 0, 18, s));
    return k;
  };

  // Check the device API's indices against CUB's.
  const std::uint64_t k = cub(true);
  CK(cudaMemsetAsync(idx_ours, 0xA5, n * sizeof(std::uint32_t), s));
  ours_compact();
  std::uint64_t k_ours = 0;
  CK(cudaMemcpyAsync(&k_ours, d_count, sizeof k_ours, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  if (k_ours != k) {
    std::fprintf(stderr, "MISMATCH image compaction (device API): %llu kept, CUB %llu\n", (unsigned long long)k_ours,
                 (unsigned long long)k);
    std::abort();
  }
  CK(cudaMemsetAsync(d_bad, 0, sizeof(unsigned long long), s));
  count_mismatch<<<1024, 256, 0, s>>>(idx_ours, idx_cub, k, d_bad);
  CK(cudaGetLastError());
  unsigned long long bad = 0;
  CK(cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  if (bad) {
    std::fprintf(stderr, "MISMATCH image compaction (device API): %llu indices differ from CUB\n", bad);
    std::abort();
  }
  const std::vector<std::uint32_t> want_packed = to_host(idx_cub, k), want_sorted = to_host(idx_sorted_cub, k);

  // The library call, from host memory, as the CLI makes it.
  std::vector<winnow::Rgba8> host_img(n);
  CK(cudaMemcpy(host_img.data(), img, n * sizeof(winnow::Rgba8), cudaMemcpyDeviceToHost));
  const winnow::ImageView<const winnow::Rgba8> view(host_img.data(), side, side);
  winnow::ImageCompactOptions io;
  io.threshold = threshold;
  io.key = winnow::PixelKey::luminance;
  io.sort = winnow::SortOrder::descending;
  io.backend = winnow::Backend::cuda;
  std::vector<double> lib_device_ms, lib_wall_ms;
  for (int r = 0; r < 3 + 25; ++r) {  // 3 warm-ups (the first one checked), 25 timed
    const auto t0 = std::chrono::steady_clock::now();
    const winnow::ImageCompactResult res = winnow::compact_image(view, io);
    const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r == 0 &&
        (res.backend != winnow::Backend::cuda || res.packed_index != want_packed || res.sorted_index != want_sorted)) {
      std::fprintf(stderr, "MISMATCH compact_image: backend %s, %zu packed / %zu sorted indices (CUB %llu), %s\n",
                   res.backend == winnow::Backend::cuda ? "cuda" : "not cuda", res.packed_index.size(),
                   res.sorted_index.size(), (unsigned long long)k,
                   res.packed_index != want_packed ? "packed order differs" : "sorted order differs");
      std::abort();
    }
    if (r >= 3) {
      lib_device_ms.push_back(res.milliseconds);
      lib_wall_ms.push_back(wall);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double lib_ms = median(lib_device_ms), lib_wall = median(lib_wall_ms);

  char sel[16];
  std::snprintf(sel, sizeof sel, "%.0f%%", 100.0 * k / n);
  const double cub_c = median_ms([&](int) { cub(false); }, s);
  const double ours_c = median_ms([&](int) { ours_compact(); }, s);
  const double cub_all = median_ms([&](int) { cub(true); }, s);
  print_row({size, sel, "image: CUB select", cub_c * 1e3, 1.0, 0});
  print_row({size, sel, "image: ours compact", ours_c * 1e3, cub_c / ours_c, 0});
  print_row({size, sel, "image: CUB select+sort", cub_all * 1e3, 1.0, 0});
  print_row({size, sel, "image: compact_image (device)", lib_ms * 1e3, cub_all / lib_ms, 0});
  print_row({size, sel, "image: compact_image (host wall, with alloc + copies)", lib_wall * 1e3, 0, 0});
  for (void* p : {(void*)img, (void*)idx_ours, (void*)idx_cub, (void*)keys, (void*)keys_sorted, (void*)idx_sorted_cub,
                  (void*)d_count, (void*)d_num, (void*)d_bad, ours_temp, cub_temp, sort_temp})
    CK(cudaFree(p));
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, markdown = false, sweep = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--markdown")) markdown = true;
    else if (!std::strcmp(argv[i], "--sweep-stable")) sweep = true;
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--markdown] [--sweep-stable]\n", argv[0]);
      return 2;
    }
  }
  int dev = 0;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("device: %s, %d SMs, L2 %d MiB, %.0f GiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
              prop.totalGlobalMem / 1073741824.0);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<std::uint64_t> sizes = {std::uint64_t{1} << 21, std::uint64_t{1} << 24};
  if (!quick) sizes.push_back(std::uint64_t{1} << 28);
  if (sweep) {
    bench_sweep(sizes, prop.l2CacheSize, s);
  } else {
    bench_streams(sizes, prop.l2CacheSize, s);
    bench_image(quick ? 4096 : 8192, s);
  }
  if (markdown) {
    std::printf("\n| n | kept | method | median time (us) | ours/CUB | copy frac |\n|---|---|---|---:|---:|---:|\n");
    for (const Row& r : g_rows) {
      std::printf("| %s | %s | %s | %.1f | ", r.size.c_str(), r.sel.c_str(), r.method.c_str(), r.us);
      if (r.ours_over_cub > 0) std::printf("%.2fx | ", r.ours_over_cub);
      else std::printf(" | ");
      if (r.copy_frac > 0) std::printf("%.2f |\n", r.copy_frac);
      else std::printf(" |\n");
    }
  }
  CK(cudaStreamDestroy(s));
  return 0;
}
