#pragma once
// single_pass unordered with a ring of bulk-copied shared-memory tiles, for predicate
// compactions of 16-byte aligned inputs, values or indices out. Selectable in the compaction
// sweep; the library does not launch it yet (see RingCompaction in compact_lookback.cuh: with the
// run-time predicate and bounds checks it loses to the one-tile kernel at 50 / 99 % kept).
//
// Why: the one-tile-per-block kernel (compact_smem.cuh) has no load in flight while a block
// ranks and writes its tile, and a new block starts only when an old one exits, so at 1 % kept
// it read at 0.76 of copy bandwidth (H200, int32, 2^28) against 1.04-1.08 for a plain read. Here a
// persistent block keeps Stages tiles in flight: one thread starts each tile's copy with one
// bulk copy (cp.async.bulk, Hopper's copy engine; completion counted in bytes on an mbarrier),
// and refills a stage as soon as every thread has taken its vectors out of it, so the next
// tiles load while this one is ranked, offset (one atomicAdd per tile) and written.
// bench/probes/compact_bulk_probe.cu measured 0.95 / 0.95-0.97 / 0.86-0.87 of copy at 1 / 50 /
// 99 % kept for a lean version (comparison fixed, no bounds checks, scalar stores). At 32 GB/s
// per SM a warp has only ~120 issue slots per 512-byte warp-vector, so instructions per vector
// decide: this general version (run-time predicate, per-vector bounds, 64-bit indices) is slower.
//
// Per tile: wait for the stage; each thread evaluates its Vectors 16-byte vectors (kept in
// registers: the stage is refilled under it); a warp scan and a scan of the warp totals rank
// the kept elements; one atomicAdd on the counter gives the tile's output offset; the kept
// elements go to an output buffer in shared memory, shifted so that its 16-byte vectors line
// up with the output's, and are written out as 16-byte stores (scalar at the two ends).
// Three barriers per tile. The last tile may be partial: its whole vectors come by the bulk
// copy, a trailing part vector is read from global memory directly.
#include <cstdint>
#include <type_traits>

#include "cuda/kernels/compact_smem.cuh"

namespace winnow::detail::cuda::kern {

/// Shape of the ring kernel: Threads x Vectors 16-byte vectors per tile, Stages tiles in flight
/// per block, MinBlocks resident blocks per SM that the registers must allow.
template <int Threads, int Vectors, int Stages, int MinBlocks = 1>
struct RingPolicy {
  static constexpr int threads = Threads;
  static constexpr int warps = Threads / 32;
  static constexpr int vectors = Vectors;
  static constexpr int stages = Stages;
  static constexpr int min_blocks = MinBlocks;
  static constexpr int tile_bytes = 16 * Threads * Vectors;
  static constexpr bool stable = false;
  template <int Size>
  static constexpr int tile = tile_bytes / Size;
  /// Dynamic shared memory: the stages, the output buffer (a tile of stage entries plus one
  /// vector of slack for the alignment shift), the stages' mbarriers.
  template <class Stage>
  static constexpr int out_bytes = ((tile_bytes / static_cast<int>(sizeof(Stage)) + 16) * static_cast<int>(sizeof(Stage)) + 15) / 16 * 16;
  template <class Stage>
  static constexpr int smem_bytes = Stages * tile_bytes + out_bytes<Stage> + 8 * Stages;
  static_assert(Threads % 32 == 0 && Threads <= 1024 && Stages >= 2, "ring shape");
};

namespace ring {
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(std::uint64_t* b) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(b)) : "memory");
}
/// Arms the barrier's phase for `bytes` of copies and arrives (the phase completes when they land).
__device__ __forceinline__ void mbar_expect(std::uint64_t* b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* b, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "WAIT_%=: mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra WAIT_%=;\n}\n" ::"r"(smem_addr(b)),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void bulk_load(void* s, const void* g, unsigned bytes, std::uint64_t* b) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(s)),
               "l"(g), "r"(bytes), "r"(smem_addr(b))
               : "memory");
}
}  // namespace ring

/// Starts the copy of tile `t` into `stage` (whole vectors; a trailing part vector is read later).
template <class T, int TileBytes>
__device__ __forceinline__ void ring_fetch(const T* in, std::uint64_t n, std::uint64_t t, void* stage, std::uint64_t* bar) {
  constexpr std::uint64_t kTile = TileBytes / sizeof(T);
  const std::uint64_t base = t * kTile;
  const std::uint64_t left_bytes = (n - base) * sizeof(T);
  const unsigned bytes = left_bytes >= TileBytes ? TileBytes : static_cast<unsigned>(left_bytes & ~std::uint64_t{15});
  ring::mbar_expect(bar, bytes);
  if (bytes) ring::bulk_load(stage, in + base, bytes, bar);
}

/// 16-byte-or-smaller vector copy out of shared memory (Bytes = 4, 8 or 16; aligned to Bytes).
template <int Bytes>
__device__ __forceinline__ void smem_load_vec(void* dst, const void* src) {
  if constexpr (Bytes == 16) *static_cast<uint4*>(dst) = *static_cast<const uint4*>(src);
  else if constexpr (Bytes == 8) *static_cast<uint2*>(dst) = *static_cast<const uint2*>(src);
  else if constexpr (Bytes == 4) *static_cast<unsigned*>(dst) = *static_cast<const unsigned*>(src);
  else __builtin_memcpy(dst, src, Bytes);
}

/// The persistent block's loop over its tiles; keep(x) is the predicate of one element.
template <class Src, class Sink, class Pol, class Keep>
__device__ __forceinline__ void ring_tiles(const Src& src, const Sink& sink, const SmemArgs& a, Keep keep) {
  using T = typename Src::value_type;
  using Stage = typename Sink::stage_type;
  using Out = typename Sink::out_type;
  constexpr int kT = Pol::threads, kW = Pol::warps, V = Pol::vectors, S = Pol::stages;
  constexpr int vec = 16 / static_cast<int>(sizeof(T));
  constexpr int kTile = Pol::template tile<sizeof(T)>;
  constexpr int per = 16 / static_cast<int>(sizeof(Out));  // output elements per 16-byte store
  static_assert(16 % sizeof(Out) == 0, "16-byte output vectors");
  extern __shared__ __align__(128) unsigned char ring_smem[];
  uint4* stages = reinterpret_cast<uint4*>(ring_smem);
  Stage* out_s = reinterpret_cast<Stage*>(ring_smem + S * Pol::tile_bytes);
  std::uint64_t* bar = reinterpret_cast<std::uint64_t*>(ring_smem + S * Pol::tile_bytes + Pol::template out_bytes<Stage>);
  __shared__ std::uint32_t warp_total[kW], warp_offset[kW];
  __shared__ std::uint64_t s_offset;
  __shared__ std::uint32_t s_kept;

  const unsigned lane = lane_id(), warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) ring::mbar_init(&bar[s]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < S; ++s) {
      const std::uint64_t t = blockIdx.x + static_cast<std::uint64_t>(s) * gridDim.x;
      if (t < a.num_tiles) ring_fetch<T, Pol::tile_bytes>(src.in, a.n, t, stages + s * (Pol::tile_bytes / 16), &bar[s]);
    }

  for (std::uint64_t k = 0;; ++k) {
    const std::uint64_t tile = blockIdx.x + k * gridDim.x;
    if (tile >= a.num_tiles) break;
    const int s = static_cast<int>(k % S);
    const std::uint64_t tile_base = tile * static_cast<std::uint64_t>(kTile);
    const uint4* stage = stages + s * (Pol::tile_bytes / 16);
    ring::mbar_wait(&bar[s], static_cast<unsigned>((k / S) & 1u));

    T x[V][vec];
    unsigned bits[V], count = 0;
    if (tile_base + kTile <= a.n) {  // a whole tile: every vector came by the bulk copy
#pragma unroll
      for (int v = 0; v < V; ++v) {
        __builtin_memcpy(x[v], &stage[v * kT + threadIdx.x], 16);
        unsigned b = 0;
#pragma unroll
        for (int e = 0; e < vec; ++e) b |= static_cast<unsigned>(keep(x[v][e])) << e;
        bits[v] = b;
        count += __popc(b);
      }
    } else {  // the last tile: a trailing part vector is read from global memory
      const std::uint64_t left = a.n - tile_base;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const std::uint64_t j = static_cast<std::uint64_t>(v * kT + static_cast<int>(threadIdx.x)) * vec;
        if (j + vec <= left) {
          __builtin_memcpy(x[v], &stage[v * kT + threadIdx.x], 16);
        } else {
#pragma unroll
          for (int e = 0; e < vec; ++e) x[v][e] = j + e < left ? src.in[tile_base + j + e] : T{};
        }
        unsigned b = 0;
#pragma unroll
        for (int e = 0; e < vec; ++e) b |= static_cast<unsigned>(j + e < left && keep(x[v][e])) << e;
        bits[v] = b;
        count += __popc(b);
      }
    }
    std::uint32_t incl = count;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const std::uint32_t y = __shfl_up_sync(kFull, incl, d);
      if (lane >= static_cast<unsigned>(d)) incl += y;
    }
    if (lane == 31) warp_total[warp] = incl;
    __syncthreads();  // (1) stage s is taken out, warp totals are in

    if (threadIdx.x == 0) {
      const std::uint64_t next = tile + static_cast<std::uint64_t>(S) * gridDim.x;
      if (next < a.num_tiles) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // our reads before the copy's writes
        ring_fetch<T, Pol::tile_bytes>(src.in, a.n, next, stages + s * (Pol::tile_bytes / 16), &bar[s]);
      }
    }
    if (warp == 0) {
      const std::uint32_t wt = lane < static_cast<unsigned>(kW) ? warp_total[lane] : 0u;
      std::uint32_t wi = wt;
#pragma unroll
      for (int d = 1; d < kW; d <<= 1) {
        const std::uint32_t y = __shfl_up_sync(kFull, wi, d);
        if (lane >= static_cast<unsigned>(d)) wi += y;
      }
      if (lane < static_cast<unsigned>(kW)) warp_offset[lane] = wi - wt;
      const std::uint32_t total = __shfl_sync(kFull, wi, kW - 1);
      if (lane == 0) {
        std::uint64_t offset = 0;
        if (a.packed) {
          constexpr unsigned long long count_mask = (1ull << kPackedCountBits) - 1;
          const unsigned long long before =
              atomicAdd(a.counter, (1ull << kPackedCountBits) | static_cast<unsigned long long>(total));
          offset = before & count_mask;
          if ((before >> kPackedCountBits) + 1 == a.num_tiles) *a.d_count = offset + total;  // the last tile
          if (tile == 0) *a.counter_to_clear = 0;
        } else if (total) {
          offset = atomicAdd(a.counter, static_cast<unsigned long long>(total));
        }
        s_offset = offset;
        s_kept = total;
      }
    }
    __syncthreads();  // (2) offset and warp offsets are in

    const std::uint64_t offset = s_offset;
    const std::uint32_t kept = s_kept;
    const unsigned shift = a.out_aligned ? static_cast<unsigned>(offset % per) : 0u;
    unsigned r = shift + warp_offset[warp] + incl - count;
#pragma unroll
    for (int v = 0; v < V; ++v)
#pragma unroll
      for (int e = 0; e < vec; ++e)
        if (bits[v] & (1u << e))
          out_s[r++] = sink.make(x[v][e], static_cast<std::uint32_t>((v * kT + static_cast<int>(threadIdx.x)) * vec + e));
    __syncthreads();  // (3) the output buffer is full

    if (a.out_aligned) {
      Out* dst = sink.out + (offset - shift);  // 16-byte aligned
      const unsigned end = shift + kept, nvec = (end + per - 1) / per;
      for (unsigned q = threadIdx.x; q < nvec; q += kT) {
        const unsigned lo = q * per;
        if (lo >= shift && lo + per <= end) {
          Stage st[per];  // one vector load out of shared memory (no bank conflicts)
          smem_load_vec<per * static_cast<int>(sizeof(Stage))>(st, &out_s[lo]);
          Out o[per];
#pragma unroll
          for (int e = 0; e < per; ++e) o[e] = sink.out_value(st[e], tile_base);
          uint4 w;
          __builtin_memcpy(&w, o, 16);
          *reinterpret_cast<uint4*>(dst + lo) = w;
        } else {
#pragma unroll
          for (int e = 0; e < per; ++e)
            if (lo + e >= shift && lo + e < end) dst[lo + e] = sink.out_value(out_s[lo + e], tile_base);
        }
      }
    } else {
      for (std::uint32_t i = threadIdx.x; i < kept; i += kT) sink.put(offset + i, out_s[i], tile_base);
    }
    // the next tile's barrier (1) keeps its output buffer writes behind these reads
  }
}

/// Src = PredSource<T> with a 16-byte aligned input; Sink = ValueSink or IndexSink. A persistent
/// grid (at most one block per tile); tiles blockIdx.x, + gridDim.x, ... A comparison of
/// arithmetic values is chosen once per kernel (one loop per operator): a run-time switch in
/// the loop costs ~10 % of the bandwidth at 1 % kept.
template <class Src, class Sink, class Pol>
__global__ void __launch_bounds__(Pol::threads, Pol::min_blocks) compact_ring_kernel(Src src, Sink sink, SmemArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // no bulk copies before sm_90; RingCompaction::available() keeps it from launching
#else
  using T = typename Src::value_type;
  if constexpr (std::is_arithmetic_v<T>) {
    if (src.pred.key == KeyKind::value) {
      const T t = src.pred.template threshold_as<T>();
      switch (src.pred.op) {
        case CompareOp::greater: return ring_tiles<Src, Sink, Pol>(src, sink, a, [t](T x) { return x > t; });
        case CompareOp::greater_equal: return ring_tiles<Src, Sink, Pol>(src, sink, a, [t](T x) { return x >= t; });
        case CompareOp::less: return ring_tiles<Src, Sink, Pol>(src, sink, a, [t](T x) { return x < t; });
        case CompareOp::less_equal: return ring_tiles<Src, Sink, Pol>(src, sink, a, [t](T x) { return x <= t; });
        case CompareOp::equal: return ring_tiles<Src, Sink, Pol>(src, sink, a, [t](T x) { return x == t; });
        case CompareOp::not_equal: return ring_tiles<Src, Sink, Pol>(src, sink, a, [t](T x) { return x != t; });
      }
    }
  }
  const Predicate p = src.pred;
  ring_tiles<Src, Sink, Pol>(src, sink, a, [p](const T& x) { return matches(p, x); });
#endif
}

}  // namespace winnow::detail::cuda::kern
