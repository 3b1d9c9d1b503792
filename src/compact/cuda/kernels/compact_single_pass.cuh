#pragma once
// The single_pass kernel: decoupled look-back over per-tile status words (the algorithm is told
// in compact_kernels.cuh; the policy the library launches is chosen in ../compact_lookback.cuh).
#include <cub/agent/single_pass_scan_operators.cuh>
#include <cuda/atomic>

#include "compact/cuda/kernels/compact_tile.cuh"

namespace winnow::detail::cuda::kern {

// Tile status words of the decoupled look-back: (status << 62) | value.
constexpr std::uint64_t kStatusAggregate = std::uint64_t{1} << 62;
constexpr std::uint64_t kStatusInclusive = std::uint64_t{2} << 62;
constexpr std::uint64_t kStatusValue = kStatusAggregate - 1;

__device__ __forceinline__ std::uint64_t status_load(std::uint64_t* s) {
  return ::cuda::atomic_ref<std::uint64_t, ::cuda::thread_scope_device>(*s).load(::cuda::std::memory_order_relaxed);
}
__device__ __forceinline__ void status_store(std::uint64_t* s, std::uint64_t w) {
  ::cuda::atomic_ref<std::uint64_t, ::cuda::thread_scope_device>(*s).store(w, ::cuda::std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------------------------
// single_pass stable, tunable: the decoupled look-back tile kernel with its shape and look-back
// policy as compile-time parameters. The library uses kern::StableTuning (compact_impl.cuh); the
// benchmark's --sweep-stable mode measures other policies for int32.

/// Shape and look-back policy of the single_pass stable kernel.
///  Threads, Vectors: block size and 16-byte vectors per thread (int32: 4 items per vector; 1-byte
///    elements use half the vectors, so their index staging stays small);
///  BlockTileId: tile = blockIdx.x (blocks start in index order, as CUB relies on) instead of an
///    atomic tile counter (one L2 round trip before the loads);
///  LookbackWords: predecessors read per look-back round, in units of 32; 0 = CUB's
///    cub::ScanTileState + cub::TilePrefixCallbackOp with its default delays (a control);
///  InitialDelayNs: sleep once after publishing the aggregate, before the first look-back read;
///  PollDelayNs: sleep between re-reads of a predecessor that has not published yet (0: spin);
///  EarlyStage: warps 1.. stage their kept elements at their in-tile rank while warp 0 does the
///    look-back (only the final global write waits for the offset).
template <int Threads, int Vectors, bool BlockTileId, int LookbackWords, int InitialDelayNs, int PollDelayNs,
          bool EarlyStage>
struct LookbackPolicy {
  static constexpr int threads = Threads;
  static constexpr int warps = Threads / 32;
  template <int Size>
  static constexpr int vectors = Size == 1 ? (Vectors / 2 > 0 ? Vectors / 2 : 1) : Vectors;
  template <int Size>
  static constexpr int tile = Threads* vectors<Size>* Tuning<Size>::vec;
  static constexpr bool block_tile_id = BlockTileId;
  static constexpr int lookback_words = LookbackWords;
  static constexpr bool use_cub = LookbackWords == 0;
  static constexpr int initial_delay_ns = InitialDelayNs;
  static constexpr int poll_delay_ns = PollDelayNs;
  static constexpr bool early_stage = EarlyStage;
  static_assert(Threads % 32 == 0 && Threads <= 1024 && Vectors >= 1);
};

using CubTileState = cub::ScanTileState<unsigned long long>;

struct LookbackArgs {
  std::uint64_t n = 0;
  std::uint64_t num_tiles = 0;
  std::uint64_t* status = nullptr;             // ours: num_tiles words + 1 tile counter, zeroed
  CubTileState cub_state;                      // use_cub: initialised by cub_tile_state_init_kernel
  unsigned long long* tile_counter = nullptr;  // use_cub without BlockTileId: zeroed
  unsigned long long* d_count = nullptr;
};

/// Sets CUB's tile descriptors to "invalid" (and its padding to out-of-bounds) before a launch.
template <int = 0>
__global__ void cub_tile_state_init_kernel(CubTileState state, int num_tiles) {
  state.InitializeStatus(num_tiles);
}

/// Look-back by one warp over `Words` x 32 predecessors per round: the sum of all tiles before
/// `tile` (tile > 0). Status words carry their value, so relaxed loads suffice.
template <int Words, int InitialDelayNs, int PollDelayNs>
__device__ __forceinline__ std::uint64_t lookback_sum(std::uint64_t* status, std::uint64_t tile) {
  const unsigned lane = lane_id();
  if constexpr (InitialDelayNs > 0) __nanosleep(InitialDelayNs);
  std::uint64_t exclusive = 0;
  std::int64_t pred = static_cast<std::int64_t>(tile) - 1;
  while (true) {
    std::uint64_t w[Words];
#pragma unroll
    for (int q = 0; q < Words; ++q) {
      const std::int64_t j = pred - static_cast<std::int64_t>(q * 32 + lane);
      w[q] = j >= 0 ? status_load(&status[j]) : kStatusInclusive;  // "before tile 0": inclusive 0
    }
#pragma unroll
    for (int q = 0; q < Words; ++q) {
      const std::int64_t j = pred - static_cast<std::int64_t>(q * 32 + lane);
      while ((w[q] >> 62) == 0) {
        if constexpr (PollDelayNs > 0) __nanosleep(PollDelayNs);
        w[q] = status_load(&status[j]);
      }
    }
    int stop = 32 * Words;  // position (q * 32 + lane) of the nearest inclusive prefix
#pragma unroll
    for (int q = Words - 1; q >= 0; --q) {
      const unsigned inc = __ballot_sync(kFull, (w[q] >> 62) == 2);
      if (inc) stop = q * 32 + __ffs(inc) - 1;
    }
    std::uint64_t value = 0;
#pragma unroll
    for (int q = 0; q < Words; ++q)
      if (q * 32 + static_cast<int>(lane) <= stop) value += w[q] & kStatusValue;
    exclusive += warp_sum_u64(value);
    if (stop < 32 * Words) break;
    pred -= 32 * Words;
  }
  return exclusive;
}

template <class Src, class Sink, class Pol>
__global__ void __launch_bounds__(Pol::threads) compact_lookback_kernel(Src src, Sink sink, LookbackArgs a) {
  constexpr int kT = Pol::threads, kW = Pol::warps;
  constexpr int vec = Tuning<Src::size>::vec;
  constexpr int V = Pol::template vectors<Src::size>;
  constexpr int kTile = Pol::template tile<Src::size>;
  constexpr int E = V * kW;  // (vector, warp) entries, in memory order
  constexpr bool need_values = Src::eval_reads_values || Sink::wants_values;
  using Stage = typename Sink::stage_type;
  using CubPrefix = cub::TilePrefixCallbackOp<unsigned long long, ::cuda::std::plus<>, CubTileState>;
  extern __shared__ uint4 winnow_lookback_stage[];
  Stage* stage = reinterpret_cast<Stage*>(winnow_lookback_stage);
  __shared__ std::uint32_t warp_prefix[E];
  __shared__ std::uint64_t s_tile, s_offset;
  __shared__ std::uint32_t s_total;
  __shared__ typename CubPrefix::TempStorage cub_temp;

  std::uint64_t tile = blockIdx.x;
  if constexpr (!Pol::block_tile_id) {
    if (threadIdx.x == 0)
      s_tile = atomicAdd(Pol::use_cub ? a.tile_counter : reinterpret_cast<unsigned long long*>(a.status + a.num_tiles),
                         1ull);
    __syncthreads();
    tile = s_tile;
  }
  const std::uint64_t tile_base = tile * static_cast<std::uint64_t>(kTile);
  auto at = [&](int v) { return tile_base + static_cast<std::uint64_t>(v * kT + threadIdx.x) * vec; };
  typename Src::value_type vals[V][vec];
  typename Src::raw_type raw[V];
  unsigned bits[V];
#pragma unroll
  for (int v = 0; v < V; ++v) src.template fetch<need_values>(at(v), a.n, vals[v], raw[v]);
#pragma unroll
  for (int v = 0; v < V; ++v) bits[v] = src.finish(at(v), a.n, vals[v], raw[v]);

  const unsigned lane = lane_id(), warp = threadIdx.x / 32;
  unsigned lane_prefix[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const unsigned c = __popc(bits[v]);
    lane_prefix[v] = warp_exclusive_count(c);
    const unsigned w = __shfl_sync(kFull, lane_prefix[v] + c, 31);
    if (lane == 0) warp_prefix[v * kW + warp] = w;
  }
  __syncthreads();

  // Warp 0: tile total, publication of the aggregate, look-back; returns the tile's offset.
  auto lookback = [&](std::uint32_t total) -> std::uint64_t {
    std::uint64_t offset = 0;
    if constexpr (Pol::use_cub) {
      if (tile == 0) {
        if (lane == 0) a.cub_state.SetInclusive(0, total);
      } else {
        CubPrefix op(a.cub_state, cub_temp, ::cuda::std::plus<>{}, static_cast<int>(tile));
        offset = op(static_cast<unsigned long long>(total));
      }
    } else if (tile != 0) {
      offset = lookback_sum<Pol::lookback_words, Pol::initial_delay_ns, Pol::poll_delay_ns>(a.status, tile);
      if (lane == 0) status_store(&a.status[tile], kStatusInclusive | (offset + total));
    }
    if (lane == 0 && tile + 1 == a.num_tiles) *a.d_count = offset + total;
    return offset;
  };

  std::uint32_t total = 0;
  if (warp == 0) {
    total = warp_scan_entries<E>(warp_prefix);
    if constexpr (!Pol::use_cub) {  // publish as early as possible
      if (lane == 0) status_store(&a.status[tile], (tile == 0 ? kStatusInclusive : kStatusAggregate) | total);
    }
    if (lane == 0) s_total = total;
    if constexpr (!Pol::early_stage) {
      const std::uint64_t offset = lookback(total);
      if (lane == 0) s_offset = offset;
    }
  }
  __syncthreads();
  auto stage_mine = [&] {
#pragma unroll
    for (int v = 0; v < V; ++v) {
      unsigned r = warp_prefix[v * kW + warp] + lane_prefix[v];
#pragma unroll
      for (int e = 0; e < vec; ++e)
        if (bits[v] & (1u << e))
          stage[r++] = sink.make(vals[v][e], static_cast<std::uint32_t>((v * kT + threadIdx.x) * vec + e));
    }
  };
  if constexpr (Pol::early_stage) {
    if (warp == 0) {
      const std::uint64_t offset = lookback(total);
      if (lane == 0) s_offset = offset;
    }
  }
  stage_mine();
  __syncthreads();
  const std::uint64_t offset = s_offset;
  const std::uint32_t kept = s_total;
  for (std::uint32_t i = threadIdx.x; i < kept; i += kT) sink.put(offset + i, stage[i], tile_base);
}

}  // namespace winnow::detail::cuda::kern
