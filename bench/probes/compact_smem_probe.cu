// Probe (not built by CMake): one shared-memory tile per block (cp.async) for stream compaction,
// stable (decoupled look-back) and unordered, against CUB and the library's register kernels,
// int32, value > t. It led to kern::compact_smem_kernel (src/cuda/kernels/compact_smem.cuh).
// Results: bench/results/h200-2026-11-22b/compact-smem-probe.txt.
//   nvcc -O3 -std=c++20 -arch=sm_90 -Isrc -Iinclude --expt-relaxed-constexpr \
//        -o probe bench/probes/compact_smem_probe.cu && ./probe
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <functional>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

using u64 = unsigned long long;

__device__ __forceinline__ std::uint32_t hash32(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}
__global__ void fill(int* p, u64 n, u64 seed) {
  for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < n; i += u64{gridDim.x} * blockDim.x)
    p[i] = static_cast<int>(hash32(i * 0x9e3779b97f4a7c15ull + seed) >> 1);
}
struct Greater {
  int t;
  __host__ __device__ bool operator()(int x) const { return x > t; }
};

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp16(void* s, const void* g, unsigned bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(s)), "l"(g), "r"(bytes));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ u64 ld_relaxed(const u64* p) {
  u64 v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_relaxed(u64* p, u64 v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}


#include "cuda/compact_lookback.cuh"
namespace kern = winnow::detail::cuda::kern;

struct SmArgs {
  const int* in;
  int* out;
  u64 n;
  u64 num_tiles;
  int thr;
  std::uint64_t* status;   // zeroed, num_tiles words
  u64* d_count;  // any: the output counter (zeroed); stable: written by the last tile
};

// One tile per block, loaded by cp.async into shared memory (no registers hold the tile), so
// occupancy is set by shared memory. Stable: decoupled look-back by warp 0; any: atomicAdd.
// Kept elements are compacted in place in shared memory (round v reads vector v of every thread,
// barrier, writes its kept elements at their ranks, which lie below round v+1's sources).
template <int T, int IPT, bool Stable, int InitNs, int MinBlocks, int PollNs = 0>
__global__ void __launch_bounds__(T, MinBlocks) sm_kernel(SmArgs a) {
  constexpr int TILE = T * IPT;
  constexpr int V = IPT / 4;
  constexpr int W = T / 32;
  constexpr int E = V * W;
  constexpr int per = (E + 31) / 32;
  __shared__ __align__(16) int tile_s[TILE];
  __shared__ unsigned warp_cnt[E];
  __shared__ u64 s_off;
  __shared__ unsigned s_total;
  const u64 tile = blockIdx.x;
  const u64 base = tile * TILE;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x / 32;
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const u64 i = base + (static_cast<u64>(v) * T + threadIdx.x) * 4;
    const u64 left = i < a.n ? a.n - i : 0;
    const unsigned bytes = left >= 4 ? 16u : static_cast<unsigned>(left * 4);
    cp16(tile_s + (v * T + threadIdx.x) * 4, bytes ? a.in + i : a.in, bytes);
  }
  cp_commit();
  cp_wait<0>();
  __syncwarp();  // each thread reads back only what it copied itself
  unsigned bits[V];
  unsigned lane_pre[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const int4 x = reinterpret_cast<const int4*>(tile_s)[v * T + threadIdx.x];
    const u64 i = base + (static_cast<u64>(v) * T + threadIdx.x) * 4;
    const u64 left = i < a.n ? a.n - i : 0;
    const unsigned valid = left >= 4 ? 15u : (1u << left) - 1u;
    bits[v] = ((x.x > a.thr) | (x.y > a.thr) << 1 | (x.z > a.thr) << 2 | (x.w > a.thr) << 3) & valid;
    const unsigned c = __popc(bits[v]);
    lane_pre[v] = kern::warp_exclusive_count(c);
    if (lane == 31) warp_cnt[v * W + warp] = lane_pre[v] + c;
  }
  __syncthreads();
  if (warp == 0) {
    unsigned xs[per], sum = 0;
#pragma unroll
    for (int k = 0; k < per; ++k) {
      const int i = lane * per + k;
      xs[k] = i < E ? warp_cnt[i] : 0u;
      sum += xs[k];
    }
    unsigned incl = sum;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const unsigned y = __shfl_up_sync(~0u, incl, d);
      if (lane >= d) incl += y;
    }
    unsigned run = incl - sum;
#pragma unroll
    for (int k = 0; k < per; ++k) {
      const int i = lane * per + k;
      if (i < E) warp_cnt[i] = run;
      run += xs[k];
    }
    const unsigned total = __shfl_sync(~0u, incl, 31);
    u64 off = 0;
    if constexpr (Stable) {
      if (lane == 0)
        kern::status_store(&a.status[tile], (tile == 0 ? kern::kStatusInclusive : kern::kStatusAggregate) | total);
      if (tile != 0) {
        off = kern::lookback_sum<1, InitNs, PollNs>(a.status, tile);
        if (lane == 0) kern::status_store(&a.status[tile], kern::kStatusInclusive | (off + total));
      }
      if (lane == 0 && tile + 1 == a.num_tiles) *a.d_count = off + total;
    } else {
      if (lane == 0) off = atomicAdd(a.d_count, static_cast<u64>(total));
    }
    if (lane == 0) {
      s_off = off;
      s_total = total;
    }
  }
  __syncthreads();
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const int4 x = reinterpret_cast<const int4*>(tile_s)[v * T + threadIdx.x];
    __syncthreads();
    unsigned r = warp_cnt[v * W + warp] + lane_pre[v];
    const int e[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (bits[v] & (1u << k)) tile_s[r++] = e[k];
  }
  __syncthreads();
  const u64 off = s_off;
  const unsigned total = s_total;
  for (unsigned i = threadIdx.x; i < total; i += T) a.out[off + i] = tile_s[i];
}

struct Variant {
  std::string name;
  std::function<void(const SmArgs&, cudaStream_t)> go;  // includes the reset
  int tile = 0;
  bool stable = true;
};
template <int T, int IPT, bool Stable, int InitNs, int MinB, int PollNs = 0>
Variant make_sm(int sms) {
  auto k = &sm_kernel<T, IPT, Stable, InitNs, MinB, PollNs>;
  int per = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, T, 0));
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, k));
  char buf[200];
  std::snprintf(buf, sizeof buf, "sm t%dx%d d%d/%d mb%d (%d/SM, %d regs)", T, IPT, InitNs, PollNs, MinB, per, fa.numRegs);
  Variant v;
  v.name = buf;
  v.tile = T * IPT;
  v.stable = Stable;
  v.go = [k](const SmArgs& a, cudaStream_t s) {
    if (Stable) CK(cudaMemsetAsync(a.status, 0, a.num_tiles * 8, s));
    else CK(cudaMemsetAsync(a.d_count, 0, 8, s));
    k<<<static_cast<unsigned>(a.num_tiles), T, 0, s>>>(a);
    CK(cudaGetLastError());
  };
  (void)sms;
  return v;
}
// The library's kernels through their launchers (same code as winnow's single_pass).
template <class Pol>
Variant make_lib(const char* name) {
  using Src = kern::PredSource<int>;
  using Sink = kern::ValueSink<std::uint32_t>;
  using L = winnow::detail::cuda::StableLookback<Pol, Src, Sink>;
  Variant v;
  v.name = name;
  v.tile = L::tile;
  v.stable = true;
  v.go = [](const SmArgs& a, cudaStream_t s) {
    const Src src{a.in, winnow::where(winnow::CompareOp::greater, a.thr), true};
    const Sink sink{reinterpret_cast<std::uint32_t*>(a.out)};
    L::launch(src, sink, a.n, reinterpret_cast<std::uint64_t*>(a.d_count), a.status, s);
  };
  return v;
}
Variant make_lib_any(int sms) {
  using Src = kern::PredSource<int>;
  using Sink = kern::ValueSink<std::uint32_t>;
  using Tn = kern::Tuning<4>;
  constexpr auto kernel = kern::compact_stream_kernel<Src, Sink, kern::Prefix::atomic>;
  int per = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, kern::kThreads, 0));
  Variant v;
  v.name = "lib single_pass any";
  v.tile = Tn::tile;
  v.stable = false;
  v.go = [per, sms](const SmArgs& a, cudaStream_t s) {
    const Src src{a.in, winnow::where(winnow::CompareOp::greater, a.thr), true};
    const Sink sink{reinterpret_cast<std::uint32_t*>(a.out)};
    kern::StreamArgs sa;
    sa.n = a.n;
    sa.num_tiles = a.num_tiles;
    sa.d_count = a.d_count;
    sa.state = reinterpret_cast<unsigned long long*>(a.status);
    CK(cudaMemsetAsync(sa.state, 0, 24, s));
    kernel<<<static_cast<unsigned>(std::min<u64>(a.num_tiles, u64(per) * sms)), kern::kThreads, 0, s>>>(src, sink, sa);
    CK(cudaGetLastError());
  };
  return v;
}

template <class F>
double median_ms(F&& f, cudaStream_t s, int reps = 25, int warmup = 3) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int w = 0; w < warmup; ++w) f(w);
  CK(cudaStreamSynchronize(s));
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a, s));
    f(r + warmup);
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

__global__ void count_mismatch(const int* a, const int* b, u64 k, u64* bad) {
  for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < k; i += u64{gridDim.x} * blockDim.x)
    if (a[i] != b[i]) atomicAdd(bad, 1ull);
}
__global__ void sum_kernel(const int* a, u64 k, u64* s) {
  u64 x = 0;
  for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < k; i += u64{gridDim.x} * blockDim.x) x += a[i];
  atomicAdd(s, x);
}

int main(int argc, char** argv) {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  std::vector<Variant> vars;
  const int sms = prop.multiProcessorCount;
  vars.push_back(make_lib<winnow::detail::cuda::StableTuning>("lib single_pass stable (large policy)"));
  vars.push_back(make_lib<winnow::detail::cuda::StableTuningSmall>("lib single_pass stable (small policy)"));
  vars.push_back(make_lib_any(sms));
  vars.push_back(make_sm<128, 32, true, 1000, 1>(sms));
  vars.push_back(make_sm<128, 32, true, 1000, 12>(sms));
  vars.push_back(make_sm<128, 32, true, 500, 12>(sms));
  vars.push_back(make_sm<128, 32, true, 2000, 12>(sms));
  vars.push_back(make_sm<256, 16, true, 1000, 6>(sms));
  vars.push_back(make_sm<256, 32, true, 1000, 6>(sms));
  vars.push_back(make_sm<128, 64, true, 1000, 6>(sms));
  vars.push_back(make_sm<64, 64, true, 1000, 12>(sms));
  vars.push_back(make_sm<128, 32, false, 0, 12>(sms));
  vars.push_back(make_sm<128, 32, false, 0, 1>(sms));
  vars.push_back(make_sm<256, 32, false, 0, 6>(sms));
  vars.push_back(make_sm<128, 64, false, 0, 6>(sms));
  vars.push_back(make_sm<512, 16, false, 0, 3>(sms));
  std::vector<u64> sizes = {u64{1} << 21, u64{1} << 24, u64{1} << 28};
  if (argc > 1 && !std::strcmp(argv[1], "--quick")) sizes = {u64{1} << 21, u64{1} << 24};
  const double sels[] = {0.01, 0.5, 0.99};
  for (u64 n : sizes) {
    const std::size_t bytes = n * 4;
    const int copies = static_cast<int>(std::max<std::size_t>(1, (2 * static_cast<std::size_t>(prop.l2CacheSize) + bytes - 1) / bytes));
    std::vector<int*> in(copies), out(copies);
    for (int c = 0; c < copies; ++c) {
      CK(cudaMalloc(&in[c], bytes));
      CK(cudaMalloc(&out[c], bytes));
      fill<<<1024, 256, 0, s>>>(in[c], n, 1234);
    }
    int* ref;
    CK(cudaMalloc(&ref, bytes));
    u64 *d_count, *d_ref_count, *d_bad;
    CK(cudaMalloc(&d_count, 8 * copies));
    CK(cudaMalloc(&d_ref_count, 8));
    CK(cudaMalloc(&d_bad, 8));
    const u64 max_tiles = n / 256 + 8;
    std::vector<std::uint64_t*> status(copies);
    for (int c = 0; c < copies; ++c) CK(cudaMalloc(&status[c], max_tiles * 8));
    std::size_t cub_bytes = 0;
    CK(cub::DeviceSelect::If(nullptr, cub_bytes, in[0], out[0], d_ref_count, static_cast<int64_t>(n), Greater{0}, s));
    void* cub_temp;
    CK(cudaMalloc(&cub_temp, cub_bytes));
    const double copy_ms = median_ms([&](int r) {
      CK(cudaMemcpyAsync(out[r % copies], in[r % copies], bytes, cudaMemcpyDeviceToDevice, s));
    }, s);
    const double copy_bw = 2.0 * bytes / (copy_ms * 1e-3);
    std::printf("\n## n = 2^%d: copy %.1f us (%.2f TB/s r+w), %d buffer copies\n", __builtin_ctzll(n), copy_ms * 1e3,
                copy_bw / 1e12, copies);
    for (double sel : sels) {
      const int thr = static_cast<int>((1.0 - sel) * 2147483647.0);
      const Greater pred{thr};
      const double cub_ms = median_ms([&](int r) {
        CK(cub::DeviceSelect::If(cub_temp, cub_bytes, in[r % copies], out[r % copies], d_ref_count,
                                 static_cast<int64_t>(n), pred, s));
      }, s);
      CK(cub::DeviceSelect::If(cub_temp, cub_bytes, in[0], ref, d_ref_count, static_cast<int64_t>(n), pred, s));
      u64 k = 0;
      CK(cudaMemcpyAsync(&k, d_ref_count, 8, cudaMemcpyDeviceToHost, s));
      CK(cudaStreamSynchronize(s));
      auto frac = [&](double ms) { return (4.0 * n + 4.0 * k) / (ms * 1e-3) / copy_bw; };
      std::printf("sel %4.0f%% kept %llu | cub %8.1f us  frac %.2f\n", sel * 100, k, cub_ms * 1e3, frac(cub_ms));
      for (const Variant& v : vars) {
        const u64 tiles = (n + v.tile - 1) / v.tile;
        auto go = [&](int r) {
          const int c = r % copies;
          v.go(SmArgs{in[c], out[c], n, tiles, thr, status[c], d_count + c}, s);
        };
        const double ms = median_ms(go, s);
        CK(cudaMemsetAsync(out[0], 0xAB, bytes, s));
        go(0);
        u64 got = 0;
        CK(cudaMemcpyAsync(&got, d_count, 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        const char* verdict = "ok";
        if (got != k) verdict = "COUNT MISMATCH";
        else if (v.stable) {
          CK(cudaMemsetAsync(d_bad, 0, 8, s));
          count_mismatch<<<1024, 256, 0, s>>>(out[0], ref, k, d_bad);
          u64 bad = 0;
          CK(cudaMemcpyAsync(&bad, d_bad, 8, cudaMemcpyDeviceToHost, s));
          CK(cudaStreamSynchronize(s));
          if (bad) verdict = "ORDER MISMATCH";
        } else {
          CK(cudaMemsetAsync(d_bad, 0, 8, s));
          sum_kernel<<<1024, 256, 0, s>>>(out[0], k, d_bad);
          u64 a1 = 0, a2 = 0;
          CK(cudaMemcpyAsync(&a1, d_bad, 8, cudaMemcpyDeviceToHost, s));
          CK(cudaMemsetAsync(d_bad, 0, 8, s));
          sum_kernel<<<1024, 256, 0, s>>>(ref, k, d_bad);
          CK(cudaMemcpyAsync(&a2, d_bad, 8, cudaMemcpyDeviceToHost, s));
          CK(cudaStreamSynchronize(s));
          if (a1 != a2) verdict = "SUM MISMATCH";
        }
        std::printf("  %-48s %-6s %8.1f us  %.2fx cub  frac %.2f  %s\n", v.name.c_str(), v.stable ? "stable" : "any",
                    ms * 1e3, cub_ms / ms, frac(ms), verdict);
      }
    }
    for (int c = 0; c < copies; ++c) {
      CK(cudaFree(in[c]));
      CK(cudaFree(out[c]));
      CK(cudaFree(status[c]));
    }
    CK(cudaFree(ref));
    CK(cudaFree(cub_temp));
    CK(cudaFree(d_count));
    CK(cudaFree(d_ref_count));
    CK(cudaFree(d_bad));
  }
  return 0;
}
