// Probe (not built by CMake): persistent multi-stage cp.async pipelines for stream compaction
// against CUB, int32, value > t: stable offsets from this block's previous tile plus one parallel
// read of the aggregates in between, unordered by atomics, and a count-only pass (read ceiling).
// Results: bench/results/h200-2026-11-22b/compact-pipeline-probe.txt (lost to the library).
//   nvcc -O3 -std=c++20 -arch=sm_90 -o probe bench/probes/compact_pipeline_probe.cu && ./probe
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

struct PipeArgs {
  const int* in;
  int* out;
  u64 n;
  u64 num_tiles;
  int thr;
  u64* status;     // stable: num_tiles words, zeroed
  u64* d_count;    // unordered: the output counter (zeroed); stable: written by the last tile
  int mode;        // 0 = stable, 1 = unordered, 2 = count only (read ceiling)
};

// Pipeline: block b takes tiles b, b + G, ...; S tiles of this block are in flight (cp.async into
// shared memory). Stable offsets: exclusive(t) = inclusive(t - G) (this block's previous tile) +
// aggregates of tiles t-G+1 .. t-1 (published as soon as each tile is counted): one parallel read.
template <int T, int IPT, int S>
__global__ void __launch_bounds__(T) pipe_kernel(PipeArgs a) {
  constexpr int TILE = T * IPT;
  constexpr int V = IPT / 4;  // 16-byte vectors per thread
  constexpr int W = T / 32;
  extern __shared__ __align__(16) int smem[];
  int* buf = smem;  // S * TILE
  __shared__ unsigned warp_cnt[V * W];
  __shared__ unsigned red[W];
  __shared__ u64 s_off;
  __shared__ unsigned s_total;
  const unsigned G = gridDim.x;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x / 32;

  auto issue = [&](u64 tile, int slot) {
    if (tile < a.num_tiles) {
      const u64 base = tile * TILE;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const u64 i = base + (static_cast<u64>(v) * T + threadIdx.x) * 4;
        const u64 left = i < a.n ? a.n - i : 0;
        const unsigned bytes = left >= 4 ? 16u : static_cast<unsigned>(left * 4);
        cp16(buf + slot * TILE + (v * T + threadIdx.x) * 4, bytes ? a.in + i : a.in, bytes);
      }
    }
    cp_commit();
  };
#pragma unroll
  for (int s = 0; s < S; ++s) issue(blockIdx.x + static_cast<u64>(s) * G, s);

  u64 carry = 0;  // inclusive prefix of this block's previous tile
  int slot = 0;
  for (u64 tile = blockIdx.x; tile < a.num_tiles; tile += G) {
    cp_wait<S - 1>();
    __syncthreads();
    const u64 base = tile * TILE;
    int* b = buf + slot * TILE;
    int4 vals[V];
    unsigned bits[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      vals[v] = reinterpret_cast<const int4*>(b)[v * T + threadIdx.x];
      const u64 i = base + (static_cast<u64>(v) * T + threadIdx.x) * 4;
      const u64 left = i < a.n ? a.n - i : 0;
      const unsigned valid = left >= 4 ? 15u : (1u << left) - 1u;
      bits[v] = ((vals[v].x > a.thr) | (vals[v].y > a.thr) << 1 | (vals[v].z > a.thr) << 2 |
                 (vals[v].w > a.thr) << 3) & valid;
    }
    unsigned lane_pre[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const unsigned c = __popc(bits[v]);
      unsigned x = c;
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const unsigned y = __shfl_up_sync(~0u, x, d);
        if (lane >= d) x += y;
      }
      lane_pre[v] = x - c;
      if (lane == 31) warp_cnt[v * W + warp] = x;
    }
    __syncthreads();  // every thread has read its values: the slot may be overwritten
    if (warp == 0) {
      constexpr int E = V * W;
      constexpr int per = (E + 31) / 32;
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
      if (lane == 0) {
        s_total = total;
        if (a.mode == 0) st_relaxed(&a.status[tile], (u64{1} << 63) | total);
        else s_off = atomicAdd(a.d_count, static_cast<u64>(total));
      }
    }
    __syncthreads();
    const unsigned total = s_total;
    if (a.mode == 0) {
      // Sum of the aggregates of tiles lo .. tile-1, lo = max(tile - G + 1, 0).
      const u64 lo = tile >= G ? tile - G + 1 : 0;
      unsigned part = 0;
      for (u64 j = lo + threadIdx.x; j < tile; j += T) {
        u64 w = ld_relaxed(&a.status[j]);
        while (!(w >> 63)) w = ld_relaxed(&a.status[j]);
        part += static_cast<unsigned>(w);
      }
#pragma unroll
      for (int d = 16; d; d >>= 1) part += __shfl_xor_sync(~0u, part, d);
      if (lane == 0) red[warp] = part;
      __syncthreads();
      unsigned win = 0;
#pragma unroll
      for (int w = 0; w < W; ++w) win += red[w];
      const u64 off = carry + win;
      carry = off + total;
      if (threadIdx.x == 0) {
        s_off = off;
        if (tile + 1 == a.num_tiles) *a.d_count = carry;
      }
    }
    if (a.mode != 2) {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        unsigned r = warp_cnt[v * W + warp] + lane_pre[v];
        const int e[4] = {vals[v].x, vals[v].y, vals[v].z, vals[v].w};
#pragma unroll
        for (int k = 0; k < 4; ++k)
          if (bits[v] & (1u << k)) b[r++] = e[k];
      }
    }
    __syncthreads();
    if (a.mode != 2) {
      const u64 off = s_off;
      for (unsigned i = threadIdx.x; i < total; i += T) a.out[off + i] = b[i];
      __syncthreads();
    }
    issue(tile + static_cast<u64>(S) * G, slot);
    slot = slot + 1 == S ? 0 : slot + 1;
  }
  cp_wait<0>();
}

struct Variant {
  std::string name;
  void (*kernel)(PipeArgs);
  int tile;
  std::size_t smem;
  int grid = 0;
  int threads = 0;
};
template <int T, int IPT, int S>
Variant make(const char* name) {
  Variant v{name, &pipe_kernel<T, IPT, S>, T * IPT, static_cast<std::size_t>(S) * T * IPT * 4};
  CK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(v.smem)));
  int per = 0, sms = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, v.kernel, T, v.smem));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  v.grid = per * sms;
  v.threads = T;
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s (t%dx%d s%d, %d/SM)", name, T, IPT, S, per);
  v.name = buf;
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
  vars.push_back(make<256, 16, 4>("pipe"));
  vars.push_back(make<256, 16, 3>("pipe"));
  vars.push_back(make<256, 16, 6>("pipe"));
  vars.push_back(make<512, 16, 3>("pipe"));
  vars.push_back(make<256, 32, 3>("pipe"));
  vars.push_back(make<128, 32, 4>("pipe"));
  vars.push_back(make<512, 8, 4>("pipe"));
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
    const u64 max_tiles = n / 512 + 2;
    std::vector<u64*> status(copies);
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
        for (int mode = 0; mode < 3; ++mode) {
          const u64 tiles = (n + v.tile - 1) / v.tile;
          const unsigned grid = static_cast<unsigned>(std::min<u64>(tiles, v.grid));
          const int threads = v.threads;
          auto go = [&](int r) {
            const int c = r % copies;
            PipeArgs a{in[c], out[c], n, tiles, thr, status[c], d_count + c, mode};
            if (mode == 0) CK(cudaMemsetAsync(status[c], 0, tiles * 8, s));
            else CK(cudaMemsetAsync(d_count + c, 0, 8, s));
            v.kernel<<<grid, threads, v.smem, s>>>(a);
            CK(cudaGetLastError());
          };
          const double ms = median_ms(go, s);
          // verify on copy 0
          CK(cudaMemsetAsync(out[0], 0xAB, bytes, s));
          go(0);
          u64 got = 0;
          CK(cudaMemcpyAsync(&got, d_count, 8, cudaMemcpyDeviceToHost, s));
          CK(cudaStreamSynchronize(s));
          const char* verdict = "ok";
          if (mode != 2 && got != k) verdict = "COUNT MISMATCH";
          else if (mode == 2 && got != k) verdict = "COUNT MISMATCH";
          else if (mode == 0) {
            CK(cudaMemsetAsync(d_bad, 0, 8, s));
            count_mismatch<<<1024, 256, 0, s>>>(out[0], ref, k, d_bad);
            u64 bad = 0;
            CK(cudaMemcpyAsync(&bad, d_bad, 8, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            if (bad) verdict = "ORDER MISMATCH";
          } else if (mode == 1) {
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
          static const char* mn[] = {"stable", "any", "countonly"};
          const double fr = mode == 2 ? (4.0 * n) / (ms * 1e-3) / copy_bw : frac(ms);
          std::printf("  %-28s %-9s %8.1f us  %.2fx cub  frac %.2f  %s\n", v.name.c_str(), mn[mode], ms * 1e3,
                      cub_ms / ms, fr, verdict);
        }
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
