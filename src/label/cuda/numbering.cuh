#pragma once
// The passes after numbering, shared by every CUDA labeling algorithm (used by label.cu):
// total_kernel writes N; labels2_kernel writes the labels of 2x2-block forests with vectorised
// loads and stores (no statistics); final_kernel gives every pixel its root's number and
// accumulates statistics: per-thread runs, warp aggregation (__match_any_sync +
// __reduce_*_sync on values relative to the block origin), and one shared accumulator per thread
// block for its dominant label, so a giant component costs a few atomics per 4096 pixels.
#include <cuda_runtime.h>

#include <cstdint>

#include "label/cuda/image_nodes.cuh"

namespace winnow::detail::cuda {
namespace {

__global__ void total_kernel(const std::uint32_t* counts, const std::uint32_t* offsets, std::size_t n,
                             std::uint32_t* d_count) {
  grid_dependency_wait();
  *d_count = n ? offsets[n - 1] + counts[n - 1] : 0;
}

// ---- label image, 2x2 blocks, vectorised --------------------------------------------------------
//
// For W % 4 == 0 with a 4-byte aligned mask (pointer and stride) and a 16-byte aligned label
// image: a thread takes two adjacent blocks (one 8-byte node load), their labels (one more hop
// for non-roots), reads each of the two mask rows as one 32-bit word and writes 4 labels with
// one streaming 16-byte store. Statistics are not touched (they are complete before this pass on
// the tile_merge path; the other paths use final_kernel).
__device__ __forceinline__ std::uint32_t label_of(const std::uint32_t* P, std::uint32_t p, const Geo& g) {
  if (p == kNone) return 0;
  std::uint32_t w = p;
  while (!(w & kHigh)) w = __ldg(P + node_of<2>(w, g));  // at most two hops
  return w & ~(kHigh | kDone);
}

__global__ void __launch_bounds__(256)
    labels2_kernel(const std::uint8_t* m, const std::uint32_t* P, std::uint32_t* labels, Geo g) {
  grid_dependency_wait();
  const int q = blockIdx.x * 256 + threadIdx.x;  // blocks 2q, 2q + 1 of a block row
  if (q >= g.bw / 2) return;
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    const uint2 pp = __ldg(reinterpret_cast<const uint2*>(P + static_cast<long long>(by) * g.bw) + q);
    const std::uint32_t l0 = label_of(P, pp.x, g), l1 = label_of(P, pp.y, g);
#pragma unroll
    for (int dy = 0; dy < 2; ++dy) {
      const int y = 2 * by + dy;
      if (y >= g.H) break;
      const std::uint32_t mw =
          __ldg(reinterpret_cast<const std::uint32_t*>(m + static_cast<long long>(y) * g.mstride) + q);
      const uint4 o = make_uint4((mw & 0xFFu) ? l0 : 0u, (mw & 0xFF00u) ? l0 : 0u, (mw & 0xFF0000u) ? l1 : 0u,
                                 (mw >> 24) ? l1 : 0u);
      __stcs(reinterpret_cast<uint4*>(labels + static_cast<long long>(y) * g.W) + q, o);
    }
  }
}

// ---- final labels + statistics ------------------------------------------------------------------

struct Run {
  std::uint32_t lab = 0, area = 0, sxr = 0, syr = 0;
  std::uint32_t mnx = 0xFFFFFFFFu, mxx = 0, mny = 0xFFFFFFFFu, mxy = 0;
};

__device__ void flush_global(RawComponentStats* st, const Run& r, std::uint64_t xbase, std::uint64_t ybase) {
  RawComponentStats& s = st[r.lab - 1];
  atomicAdd(&s.area, r.area);
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_x),
            static_cast<unsigned long long>(r.sxr + static_cast<std::uint64_t>(r.area) * xbase));
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_y),
            static_cast<unsigned long long>(r.syr + static_cast<std::uint64_t>(r.area) * ybase));
  // Fire-and-forget reductions (results unused): cheaper than reading first for small labels.
  atomicMin(&s.left, r.mnx);
  atomicMax(&s.right, r.mxx);
  atomicMin(&s.top, r.mny);
  atomicMax(&s.bottom, r.mxy);
}

template <int B, int K>
__global__ void __launch_bounds__(256)
    final_kernel(const std::uint8_t* m, const std::uint32_t* P, std::uint32_t* labels, Geo g, RawComponentStats* st,
                 std::uint64_t cap) {
  __shared__ struct { std::uint32_t lab, area, mnx, mxx, mny, mxy; } sh;
  __shared__ unsigned long long sh_sx, sh_sy;
  const int lane = threadIdx.x & 31;
  const int block_bx0 = blockIdx.x * 256 * K;
  const std::uint32_t xbase = static_cast<std::uint32_t>(block_bx0 * B);
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    const std::uint32_t ybase = static_cast<std::uint32_t>(by * B);
    Run run;
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const int bx = block_bx0 + j * 256 + threadIdx.x;
      if (bx >= g.bw) break;
      const long long b = static_cast<long long>(by) * g.bw + bx;
      const std::uint32_t p = P[b];
      std::uint32_t lab = 0;
      if (p != kNone) {
        std::uint32_t w = p;
        while (!(w & kHigh)) w = __ldg(P + node_of<B>(w, g));  // one hop, two on the tile_merge 2x2 path
        lab = w & (B == 2 ? ~(kHigh | kDone) : ~kHigh);
      }
#pragma unroll
      for (int dy = 0; dy < B; ++dy) {
        const int y = by * B + dy;
        if (y >= g.H) break;
#pragma unroll
        for (int dx = 0; dx < B; ++dx) {
          const int x = bx * B + dx;
          if (x >= g.W) break;
          const bool f = lab && m[static_cast<long long>(y) * g.mstride + x];
          labels[static_cast<long long>(y) * g.W + x] = f ? lab : 0;
          if (st && f) {
            if (lab != run.lab) {
              if (run.lab && run.lab <= cap) flush_global(st, run, xbase, ybase);
              run = Run{};
              run.lab = lab;
            }
            ++run.area;
            run.sxr += static_cast<std::uint32_t>(x) - xbase;
            run.syr += static_cast<std::uint32_t>(dy);
            run.mnx = min(run.mnx, static_cast<std::uint32_t>(x));
            run.mxx = max(run.mxx, static_cast<std::uint32_t>(x));
            run.mny = min(run.mny, static_cast<std::uint32_t>(y));
            run.mxy = max(run.mxy, static_cast<std::uint32_t>(y));
          }
        }
      }
    }
    if (st) {                                         // block-uniform
      if (!__syncthreads_or(run.lab != 0)) continue;  // nothing of this row needs atomics
      if (threadIdx.x == 0) {
        sh.lab = run.lab;
        sh.area = sh.mxx = sh.mxy = 0;
        sh.mnx = sh.mny = 0xFFFFFFFFu;
        sh_sx = sh_sy = 0;
      }
      __syncthreads();
      const std::uint32_t dominant = sh.lab;
      const unsigned peers = __match_any_sync(kFull, run.lab);
      if (run.lab && run.lab <= cap) {
        Run w;
        w.lab = run.lab;
        w.area = __reduce_add_sync(peers, run.area);
        w.sxr = __reduce_add_sync(peers, run.sxr);
        w.syr = __reduce_add_sync(peers, run.syr);
        w.mnx = __reduce_min_sync(peers, run.mnx);
        w.mxx = __reduce_max_sync(peers, run.mxx);
        w.mny = __reduce_min_sync(peers, run.mny);
        w.mxy = __reduce_max_sync(peers, run.mxy);
        if (lane == __ffs(peers) - 1) {
          if (w.lab == dominant) {
            atomicAdd(&sh.area, w.area);
            atomicAdd(&sh_sx, static_cast<unsigned long long>(w.sxr));
            atomicAdd(&sh_sy, static_cast<unsigned long long>(w.syr));
            atomicMin(&sh.mnx, w.mnx);
            atomicMax(&sh.mxx, w.mxx);
            atomicMin(&sh.mny, w.mny);
            atomicMax(&sh.mxy, w.mxy);
          } else {
            flush_global(st, w, xbase, ybase);
          }
        }
      }
      __syncthreads();
      if (threadIdx.x == 0 && dominant && dominant <= cap) {
        RawComponentStats& s = st[dominant - 1];
        atomicAdd(&s.area, sh.area);
        atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_x),
                  static_cast<unsigned long long>(sh_sx + static_cast<std::uint64_t>(sh.area) * xbase));
        atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_y),
                  static_cast<unsigned long long>(sh_sy + static_cast<std::uint64_t>(sh.area) * ybase));
        if (sh.mnx < __ldcg(&s.left)) atomicMin(&s.left, sh.mnx);
        if (sh.mxx > __ldcg(&s.right)) atomicMax(&s.right, sh.mxx);
        if (sh.mny < __ldcg(&s.top)) atomicMin(&s.top, sh.mny);
        if (sh.mxy > __ldcg(&s.bottom)) atomicMax(&s.bottom, sh.mxy);
      }
      __syncthreads();
    }
  }
}

}  // namespace
}  // namespace winnow::detail::cuda
