#pragma once
// single_pass unordered with a ring of bulk-copied shared-memory tiles: the library's path for
// unordered predicate compactions of 16-byte aligned inputs of 16 MiB or more (values or
// indices out) on sm_90 and later.
//
// Why: the one-tile-per-block kernel (compact_smem.cuh) has no load in flight while a block
// ranks and writes its tile, and a new block starts only when an old one exits, so at 1 % kept
// it read at 0.76 of copy bandwidth (H200, int32, 2^28) against 1.04 for a plain read. Here a
// persistent block keeps Stages tiles in flight: one thread starts each tile's copy with one
// bulk copy (cp.async.bulk, Hopper's copy engine; completion counted in bytes on an mbarrier),
// and refills a stage as soon as every thread has taken its vectors out of it, so the next
// tiles load while this one is ranked, offset (one atomicAdd per tile) and written: 0.92 / 0.97
// / 0.87 of copy at 1 / 50 / 99 % kept (bench/results/compact-gpu.md). Instructions per vector
// decide at this rate (at 32 GB/s per SM a warp has ~120 issue slots per 512-byte warp-vector):
// a run-time comparison switch inside the loop cost 0.93 -> 0.74 of copy at 1 % kept, so the
// kernel picks the comparison once and runs one tile loop per operator, and whole tiles skip
// the bounds checks.
//
// Per tile: wait for the stage; each thread evaluates its Vectors 16-byte vectors (kept in
// registers: the stage is refilled under it); a warp scan and a scan of the warp totals rank
// the kept elements; one atomicAdd on the counter gives the tile's output offset; the kept
// elements go to an output buffer in shared memory and are written out coalesced.
// Three barriers per tile. The last tile may be partial: its whole vectors come by the bulk
// copy, a trailing part vector is read from global memory directly.
#include <cstdint>
#include <type_traits>

#include "compact/cuda/kernels/compact_smem.cuh"

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
  /// Dynamic shared memory: the stages, the output buffer (a tile's stage entries, which are no
  /// larger than its elements), the stages' mbarriers.
  static constexpr int smem_bytes = (Stages + 1) * tile_bytes + 8 * Stages;
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
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(s)),
      "l"(g), "r"(bytes), "r"(smem_addr(b))
      : "memory");
}
}  // namespace ring

/// Starts the copy of tile `t` into `stage` (whole vectors; a trailing part vector is read later).
template <class T, int TileBytes>
__device__ __forceinline__ void ring_fetch(const T* in, std::uint64_t n, std::uint64_t t, void* stage,
                                           std::uint64_t* bar) {
  constexpr std::uint64_t kTile = TileBytes / sizeof(T);
  const std::uint64_t base = t * kTile;
  const std::uint64_t left_bytes = (n - base) * sizeof(T);
  const unsigned bytes = left_bytes >= TileBytes ? TileBytes : static_cast<unsigned>(left_bytes & ~std::uint64_t{15});
  ring::mbar_expect(bar, bytes);
  if (bytes) ring::bulk_load(stage, in + base, bytes, bar);
}

/// The persistent block's loop over its tiles; keep(x) is the predicate of one element.
template <class Src, class Sink, class Pol, class Keep>
__device__ __forceinline__ void ring_tiles(const Src& src, const Sink& sink, const SmemArgs& a, Keep keep) {
  using T = typename Src::value_type;
  using Stage = typename Sink::stage_type;
  constexpr int kT = Pol::threads, kW = Pol::warps, V = Pol::vectors, S = Pol::stages;
  constexpr int vec = 16 / static_cast<int>(sizeof(T));
  constexpr int kTile = Pol::template tile<sizeof(T)>;
  static_assert(sizeof(Stage) <= sizeof(T), "the output buffer holds a tile's stage entries in tile_bytes");
  extern __shared__ __align__(128) unsigned char ring_smem[];
  uint4* stages = reinterpret_cast<uint4*>(ring_smem);
  Stage* out_s = reinterpret_cast<Stage*>(ring_smem + S * Pol::tile_bytes);
  std::uint64_t* bar = reinterpret_cast<std::uint64_t*>(ring_smem + (S + 1) * Pol::tile_bytes);
  __shared__ std::uint32_t warp_prefix[kW];  // each warp's kept count, then (scanned) the warps' offsets
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
    if (lane == 31) warp_prefix[warp] = incl;
    __syncthreads();  // (1) stage s is taken out, warp totals are in

    if (threadIdx.x == 0) {
      const std::uint64_t next = tile + static_cast<std::uint64_t>(S) * gridDim.x;
      if (next < a.num_tiles) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // our reads before the copy's writes
        ring_fetch<T, Pol::tile_bytes>(src.in, a.n, next, stages + s * (Pol::tile_bytes / 16), &bar[s]);
      }
    }
    if (warp == 0) {
      const std::uint32_t total = warp_scan_entries<kW>(warp_prefix);
      if (lane == 0) {
        s_offset = unordered_offset(a, tile, total);
        s_kept = total;
      }
    }
    __syncthreads();  // (2) offset and warp offsets are in

    unsigned r = warp_prefix[warp] + incl - count;
#pragma unroll
    for (int v = 0; v < V; ++v)
#pragma unroll
      for (int e = 0; e < vec; ++e)
        if (bits[v] & (1u << e))
          out_s[r++] =
              sink.make(x[v][e], static_cast<std::uint32_t>((v * kT + static_cast<int>(threadIdx.x)) * vec + e));
    __syncthreads();  // (3) the output buffer is full

    // Element stores: measured faster than 16-byte stores lined up with the output (0.87 against
    // 0.77 of copy bandwidth at 99 % kept), whose alignment shift waits for the offset.
    const std::uint64_t offset = s_offset;
    const std::uint32_t kept = s_kept;
    for (std::uint32_t i = threadIdx.x; i < kept; i += kT) sink.put(offset + i, out_s[i], tile_base);
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
