// Probe (not built by CMake): unordered stream compaction whose input tiles arrive by bulk
// copies (cp.async.bulk, completion counted on an mbarrier) into a ring of shared-memory stages
// of a persistent block, so a block's next tiles are in flight while it ranks and writes the
// current one. It led to kern::compact_ring_kernel (src/cuda/kernels/compact_ring.cuh), which it
// also launches, against the library's one-tile kernel (kern::compact_smem_kernel, unordered
// policy), CUB DeviceSelect::If, a read-only reduction (the read ceiling) and cudaMemcpy D2D,
// int32, value > t, every result checked (count + order-independent checksums against CUB).
// Results: bench/results/h200-2026-11-23/compact-bulk-probe-*.txt.
//   nvcc -O3 -std=c++20 -arch=sm_90 -Isrc -Iinclude --expt-relaxed-constexpr \
//        -o probe bench/probes/compact_bulk_probe.cu && ./probe
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cuda/kernels/compact_ring.cuh"
#include "cuda/kernels/compact_smem.cuh"

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

using u64 = unsigned long long;
namespace kern = winnow::detail::cuda::kern;

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

// mbarrier + bulk copy helpers: the library's (kern::ring, compact_ring.cuh)
using kern::ring::bulk_load;
using kern::ring::mbar_wait;
__device__ __forceinline__ void mbar_init(std::uint64_t* b, unsigned) { kern::ring::mbar_init(b); }
__device__ __forceinline__ void mbar_expect_tx(std::uint64_t* b, unsigned bytes) { kern::ring::mbar_expect(b, bytes); }
__device__ __forceinline__ void bulk_g2s(void* s, const void* g, unsigned bytes, std::uint64_t* b) { bulk_load(s, g, bytes, b); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// ---- the bulk-copy ring kernel -----------------------------------------------------------------
// Threads x V 16-byte vectors per tile, Stages tiles in flight per block, persistent grid.
// n must be a multiple of the tile here (the probe's sizes are).
template <int Threads, int V, int Stages>
struct Ring {
  static constexpr int kW = Threads / 32;
  static constexpr int tile = Threads * V * 4;  // int32
  static constexpr int tile_bytes = tile * 4;
  static constexpr int smem = Stages * tile_bytes + tile_bytes + 256;
};

template <int Threads, int V, int Stages, int MinB>
__global__ void __launch_bounds__(Threads, MinB) ring_kernel(const int* in, int* out, u64 n, int t, u64* counter) {
  using R = Ring<Threads, V, Stages>;
  extern __shared__ __align__(128) unsigned char smem[];
  int4* stage = reinterpret_cast<int4*>(smem);
  int* out_s = reinterpret_cast<int*>(smem + Stages * R::tile_bytes);
  std::uint64_t* bar = reinterpret_cast<std::uint64_t*>(smem + (Stages + 1) * R::tile_bytes);
  __shared__ std::uint32_t warp_tot[R::kW], warp_pre[R::kW];
  __shared__ u64 s_off;
  __shared__ std::uint32_t s_tot;
  const u64 tiles = n / R::tile;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) mbar_init(&bar[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < Stages; ++s) {
      const u64 tl = blockIdx.x + static_cast<u64>(s) * gridDim.x;
      if (tl < tiles) {
        mbar_expect_tx(&bar[s], R::tile_bytes);
        bulk_g2s(stage + s * (R::tile_bytes / 16), in + tl * R::tile, R::tile_bytes, &bar[s]);
      }
    }
  for (u64 k = 0;; ++k) {
    const u64 tl = blockIdx.x + k * gridDim.x;
    if (tl >= tiles) break;
    const int s = static_cast<int>(k % Stages);
    mbar_wait(&bar[s], static_cast<unsigned>((k / Stages) & 1));
    int4 x[V];
    unsigned bits[V], c = 0;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      x[v] = stage[s * (R::tile_bytes / 16) + v * Threads + threadIdx.x];
      bits[v] = (x[v].x > t) | (x[v].y > t) << 1 | (x[v].z > t) << 2 | (x[v].w > t) << 3;
      c += __popc(bits[v]);
    }
    unsigned incl = c;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const unsigned o = __shfl_up_sync(0xFFFFFFFFu, incl, d);
      if (lane >= d) incl += o;
    }
    if (lane == 31) warp_tot[w] = incl;
    __syncthreads();  // (1) stage s is read, warp totals are in
    if (threadIdx.x == 0) {
      const u64 nt = tl + static_cast<u64>(Stages) * gridDim.x;
      if (nt < tiles) {
        fence_proxy_async();
        mbar_expect_tx(&bar[s], R::tile_bytes);
        bulk_g2s(stage + s * (R::tile_bytes / 16), in + nt * R::tile, R::tile_bytes, &bar[s]);
      }
    }
    if (w == 0) {
      const unsigned wt = lane < R::kW ? warp_tot[lane] : 0u;
      unsigned wi = wt;
#pragma unroll
      for (int d = 1; d < R::kW; d <<= 1) {
        const unsigned o = __shfl_up_sync(0xFFFFFFFFu, wi, d);
        if (lane >= d) wi += o;
      }
      if (lane < R::kW) warp_pre[lane] = wi - wt;
      const unsigned total = __shfl_sync(0xFFFFFFFFu, wi, R::kW - 1);
      if (lane == 0) {
        s_off = total ? atomicAdd(counter, static_cast<u64>(total)) : 0;
        s_tot = total;
      }
    }
    __syncthreads();  // (2)
    unsigned pos = warp_pre[w] + incl - c;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (bits[v] & 1) out_s[pos++] = x[v].x;
      if (bits[v] & 2) out_s[pos++] = x[v].y;
      if (bits[v] & 4) out_s[pos++] = x[v].z;
      if (bits[v] & 8) out_s[pos++] = x[v].w;
    }
    __syncthreads();  // (3)
    const u64 off = s_off;
    const unsigned tot = s_tot;
    for (unsigned i = threadIdx.x; i < tot; i += Threads) out[off + i] = out_s[i];
  }
}

// read ceiling: sum of all elements (vector loads, several in flight per thread)
__global__ void read_kernel(const int4* in, u64 nv, u64* sink) {
  int acc = 0;
  const u64 stride = u64{gridDim.x} * blockDim.x;
  u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x;
  for (; i + 3 * stride < nv; i += 4 * stride) {
    const int4 a = __ldcs(in + i), b = __ldcs(in + i + stride), c = __ldcs(in + i + 2 * stride), d = __ldcs(in + i + 3 * stride);
    acc += a.x ^ b.y ^ c.z ^ d.w;
  }
  for (; i < nv; i += stride) acc += __ldcs(in + i).x;
  if (acc == 0x7fffffff) atomicAdd(sink, 1ull);
}

// order-independent checksums of out[0..k)
__global__ void checksum(const int* out, u64 k, u64* sums) {
  u64 s = 0, x = 0;
  for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < k; i += u64{gridDim.x} * blockDim.x) {
    s += static_cast<std::uint32_t>(out[i]);
    x ^= hash32(static_cast<std::uint32_t>(out[i]));
  }
  atomicAdd(&sums[0], s);
  atomicXor(&sums[1], x);
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
static float time_it(const std::function<void()>& f, int reps = 25) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> ts;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    ts.push_back(ms * 1000.f);
  }
  CK(cudaGetLastError());
  return median(ts);
}

int main(int argc, char** argv) {
  const int lg = argc > 1 ? std::atoi(argv[1]) : 28;
  const u64 n = u64{1} << lg;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int *d_in, *d_out, *d_ref;
  u64 *d_cnt, *d_sums;
  CK(cudaMalloc(&d_in, n * 4));
  CK(cudaMalloc(&d_out, n * 4));
  CK(cudaMalloc(&d_ref, n * 4));
  CK(cudaMalloc(&d_cnt, 64));
  CK(cudaMalloc(&d_sums, 64));
  fill<<<1024, 256>>>(d_in, n, 12345);
  CK(cudaDeviceSynchronize());
  const float copy_us = time_it([&] { CK(cudaMemcpyAsync(d_out, d_in, n * 4, cudaMemcpyDeviceToDevice)); });
  const double copy_bw = 2.0 * n * 4 / copy_us / 1e6;  // TB/s
  const float read_us = time_it([&] { read_kernel<<<sms * 8, 256>>>(reinterpret_cast<const int4*>(d_in), n / 4, d_cnt); });
  std::printf("n=2^%d  copy %.1f us (%.2f TB/s r+w)  read-only %.1f us (%.2f TB/s, %.2f of copy)\n", lg, copy_us, copy_bw,
              read_us, n * 4.0 / read_us / 1e6, (n * 4.0 / read_us / 1e6) / copy_bw);

  for (double keep : {0.01, 0.5, 0.99}) {
    const int t = static_cast<int>((1.0 - keep) * 2147483647.0);
    // CUB reference
    void* d_tmp = nullptr;
    size_t tb = 0;
    CK(cub::DeviceSelect::If(nullptr, tb, d_in, d_ref, d_cnt, static_cast<int64_t>(n), Greater{t}));
    CK(cudaMalloc(&d_tmp, tb));
    auto run_cub = [&] { CK(cub::DeviceSelect::If(d_tmp, tb, d_in, d_ref, d_cnt, static_cast<int64_t>(n), Greater{t})); };
    const float cub_us = time_it(run_cub);
    u64 ref_k = 0, ref_s[2] = {0, 0};
    CK(cudaMemcpy(&ref_k, d_cnt, 8, cudaMemcpyDeviceToHost));
    CK(cudaMemset(d_sums, 0, 16));
    checksum<<<1024, 256>>>(d_ref, ref_k, d_sums);
    CK(cudaMemcpy(ref_s, d_sums, 16, cudaMemcpyDeviceToHost));
    const double bytes = n * 4.0 + ref_k * 4.0;
    auto report = [&](const char* name, float us) {
      u64 k = 0, s[2] = {0, 0};
      CK(cudaMemcpy(&k, d_cnt, 8, cudaMemcpyDeviceToHost));
      CK(cudaMemset(d_sums, 0, 16));
      checksum<<<1024, 256>>>(d_out, k, d_sums);
      CK(cudaMemcpy(s, d_sums, 16, cudaMemcpyDeviceToHost));
      const bool ok = k == ref_k && s[0] == ref_s[0] && s[1] == ref_s[1];
      std::printf("  %4.0f%%  %-34s %8.1f us  CUB/ours %.2fx  copy frac %.2f  %s\n", keep * 100, name, us, cub_us / us,
                  bytes / us / 1e6 / copy_bw, ok ? "ok" : "MISMATCH");
    };
    std::printf("  %4.0f%%  %-34s %8.1f us  copy frac %.2f\n", keep * 100, "cub::DeviceSelect::If", cub_us,
                bytes / cub_us / 1e6 / copy_bw);
    // library shared-memory kernel, unordered policy 128 x 8, 10/SM
    {
      using Pol = kern::SmemPolicy<128, 8, false, 0, 0, 10>;
      using Src = kern::PredSource<int>;
      using Sink = kern::ValueSink<int>;
      Src src{d_in, winnow::where(winnow::CompareOp::greater, t), true};
      Sink sink{d_out};
      kern::SmemArgs a;
      a.n = n;
      a.num_tiles = (n + Pol::tile<4> - 1) / Pol::tile<4>;
      a.counter = reinterpret_cast<unsigned long long*>(d_cnt);
      a.d_count = a.counter;
      const float us = time_it([&] {
        CK(cudaMemsetAsync(d_cnt, 0, 8));
        kern::compact_smem_kernel<Src, Sink, Pol><<<static_cast<unsigned>(a.num_tiles), Pol::threads>>>(src, sink, a);
      });
      report("library smem any 128x8", us);
    }
    auto ring = [&](auto kernel, int threads, int smem, int tile, const char* name) {
      CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      int per_sm = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
      const u64 tiles = n / tile;
      const unsigned grid = static_cast<unsigned>(std::min<u64>(tiles, static_cast<u64>(per_sm) * sms));
      const float us = time_it([&] {
        CK(cudaMemsetAsync(d_cnt, 0, 8));
        kernel<<<grid, threads, smem>>>(d_in, d_out, n, t, d_cnt);
      });
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s (%d/SM)", name, per_sm);
      report(buf, us);
    };
    auto lib_ring = [&](auto src, auto pol, const char* name) {
      using Src = decltype(src);
      using Sink = kern::ValueSink<int>;
      using Pol = decltype(pol);
      constexpr int smem = Pol::smem_bytes;
      auto kernel = kern::compact_ring_kernel<Src, Sink, Pol>;
      CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      int per_sm = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Pol::threads, smem));
      kern::SmemArgs a;
      a.n = n;
      a.num_tiles = (n + Pol::template tile<4> - 1) / Pol::template tile<4>;
      a.counter = reinterpret_cast<unsigned long long*>(d_cnt);
      a.d_count = a.counter;
      const unsigned grid = static_cast<unsigned>(std::min<u64>(a.num_tiles, static_cast<u64>(per_sm) * sms));
      const float us = time_it([&] {
        CK(cudaMemsetAsync(d_cnt, 0, 8));
        kernel<<<grid, Pol::threads, smem>>>(src, Sink{d_out}, a);
      });
      report(name, us);
    };
    {
      kern::PredSource<int> ps{d_in, winnow::where(winnow::CompareOp::greater, t), true};
      lib_ring(ps, kern::RingPolicy<256, 4, 3, 3>{}, "library ring 256x4x3");
      lib_ring(ps, kern::RingPolicy<128, 8, 3, 3>{}, "library ring 128x8x3");
    }
#define RING(T, V, S, M) \
  ring(ring_kernel<T, V, S, M>, T, Ring<T, V, S>::smem, Ring<T, V, S>::tile, "ring " #T "x" #V " stages " #S)
    RING(256, 4, 3, 1);
    RING(128, 4, 4, 1);
    CK(cudaFree(d_tmp));
  }
  return 0;
}
