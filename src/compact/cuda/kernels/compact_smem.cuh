#pragma once
// single_pass with shared-memory tiles: the library's path for predicate compactions of aligned
// inputs (PredSource), values or indices out. Stable (decoupled look-back) and unordered (one
// atomicAdd per tile).
//
// Why: in the register kernels (compact_lookback_kernel, compact_stream_kernel) a tile's elements
// live in registers, so a block's register footprint caps the tiles resident per SM, and a tile
// that waits for its look-back or its atomic holds its registers with no load in flight. Here
// each thread copies its 16-byte vectors straight into shared memory (cp.async; the input's last
// partial vector by element loads, zero-filled past n) and keeps only one predicate bit mask per
// vector in registers: more bytes in flight per SM
// for the same waits (H200, int32, 2^28: stable 1.08 -> 1.26x CUB at 1% kept, unordered 0.70 ->
// 0.83 of copy bandwidth; bench/results/compact-gpu.md).
//
// Kept elements are then compacted in place in shared memory: round v reads vector v of every
// thread, a barrier, then each thread writes its kept elements at their in-tile ranks. A rank
// never exceeds the element's own index and the ranks of round v lie below every source of
// round v + 1, so no unread element is overwritten. Then the tile is written out coalesced.
#include <cstdint>

#include "compact/cuda/kernels/compact_kernels.cuh"

namespace winnow::detail::cuda::kern {

/// Shape of the shared-memory kernel: Threads x Vectors 16-byte vectors per thread (tile bytes =
/// 16 * Threads * Vectors); Stable: look-back (else atomic offsets); InitialDelayNs / PollDelayNs
/// as in LookbackPolicy; MinBlocks: resident blocks per SM the registers must allow (the
/// compiler otherwise spends registers that shared memory would not need to cap occupancy).
template <int Threads, int Vectors, bool Stable, int InitialDelayNs = 1000, int PollDelayNs = 0, int MinBlocks = 1>
struct SmemPolicy {
  static constexpr int threads = Threads;
  static constexpr int warps = Threads / 32;
  static constexpr int vectors = Vectors;
  static constexpr int tile_bytes = 16 * Threads * Vectors;
  static constexpr bool stable = Stable;
  static constexpr int initial_delay_ns = InitialDelayNs;
  static constexpr int poll_delay_ns = PollDelayNs;
  static constexpr int min_blocks = MinBlocks;
  template <int Size>
  static constexpr int tile = tile_bytes / Size;
  static_assert(Threads % 32 == 0 && tile_bytes <= 40 * 1024, "static shared memory: the tile and the scan entries");
};

/// Bits of the packed unordered counter (tiles done << kPackedCountBits | elements kept).
constexpr int kPackedCountBits = 40;
constexpr int kPackedTileBits = 24;

struct SmemArgs {
  std::uint64_t n = 0;
  std::uint64_t num_tiles = 0;
  std::uint64_t* status = nullptr;                 // stable: num_tiles words, zero
  std::uint64_t* status_to_clear = nullptr;        // stable on a workspace: the next call's words, zeroed here
  unsigned long long* counter = nullptr;           // unordered: zero; elements kept so far (packed: and tiles done)
  unsigned long long* counter_to_clear = nullptr;  // unordered on a workspace: the next call's counter
  bool packed = false;
  unsigned long long* d_count = nullptr;  // the count: set by the last tile (stable, packed) or = counter
};

/// Unordered: the tile's output offset, one atomicAdd on the counter. The packed counter (on a
/// workspace) also counts tiles, so the last tile writes *d_count and tile 0 clears the counter
/// of the next call.
__device__ __forceinline__ std::uint64_t unordered_offset(const SmemArgs& a, std::uint64_t tile, std::uint32_t total) {
  if (!a.packed) return total ? atomicAdd(a.counter, static_cast<unsigned long long>(total)) : 0;
  constexpr unsigned long long count_mask = (1ull << kPackedCountBits) - 1;
  const unsigned long long before =
      atomicAdd(a.counter, (1ull << kPackedCountBits) | static_cast<unsigned long long>(total));
  const std::uint64_t offset = before & count_mask;
  if ((before >> kPackedCountBits) + 1 == a.num_tiles) *a.d_count = offset + total;  // the last tile
  if (tile == 0) *a.counter_to_clear = 0;
  return offset;
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}

/// Src = PredSource<T> with a 16-byte aligned input; Sink = ValueSink or IndexSink (a stage entry
/// no larger than an element, so it fits in place).
template <class Src, class Sink, class Pol>
__global__ void __launch_bounds__(Pol::threads, Pol::min_blocks) compact_smem_kernel(Src src, Sink sink, SmemArgs a) {
  using T = typename Src::value_type;
  using Stage = typename Sink::stage_type;
  constexpr int kT = Pol::threads, kW = Pol::warps, V = Pol::vectors;
  constexpr int vec = 16 / static_cast<int>(sizeof(T));
  constexpr int kTile = Pol::template tile<sizeof(T)>;
  constexpr int E = V * kW;  // (vector, warp) entries in memory order
  static_assert(sizeof(Stage) <= sizeof(T), "in-place staging needs stage entries no larger than elements");
  __shared__ uint4 tile_s[kT * V];
  __shared__ std::uint32_t warp_prefix[E];
  __shared__ std::uint64_t s_offset;
  __shared__ std::uint32_t s_total;

  const std::uint64_t tile = blockIdx.x;
  const std::uint64_t tile_base = tile * static_cast<std::uint64_t>(kTile);
  auto first = [&](int v) { return tile_base + static_cast<std::uint64_t>(v * kT + threadIdx.x) * vec; };
  if (tile_base + kTile <= a.n) {  // a whole tile: every vector in one cp.async
#pragma unroll
    for (int v = 0; v < V; ++v) cp_async16(&tile_s[v * kT + threadIdx.x], src.in + first(v));
  } else {
    // The last tile: whole vectors by cp.async, the input's last partial vector (and any past it)
    // by element loads, zero-filled. A 16-byte cp.async with a smaller source size would be
    // correct, but memory checkers (compute-sanitizer memcheck) count it as a read past the input.
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::uint64_t i = first(v);
      const std::uint64_t left = i < a.n ? a.n - i : 0;
      if (left >= static_cast<std::uint64_t>(vec)) {
        cp_async16(&tile_s[v * kT + threadIdx.x], src.in + i);
      } else {
        T x[vec];
#pragma unroll
        for (int k = 0; k < vec; ++k) x[k] = static_cast<std::uint64_t>(k) < left ? src.in[i + k] : T{};
        __builtin_memcpy(&tile_s[v * kT + threadIdx.x], x, 16);
      }
    }
  }
  cp_async_wait_all();  // each thread reads back only its own vectors until the barrier below

  const unsigned lane = lane_id(), warp = threadIdx.x / 32;
  unsigned bits[V], lane_prefix[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    T x[vec];
    __builtin_memcpy(x, &tile_s[v * kT + threadIdx.x], 16);
    bits[v] = eval_predicate<T, vec>(src.pred, x) & valid_bits<vec>(first(v), a.n);
    const unsigned c = __popc(bits[v]);
    lane_prefix[v] = warp_exclusive_count(c);
    if (lane == 31) warp_prefix[v * kW + warp] = lane_prefix[v] + c;
  }
  __syncthreads();

  if (warp == 0) {
    const std::uint32_t total = warp_scan_entries<E>(warp_prefix);
    std::uint64_t offset = 0;
    if constexpr (Pol::stable) {
      if (lane == 0) status_store(&a.status[tile], (tile == 0 ? kStatusInclusive : kStatusAggregate) | total);
      if (lane == 1 && a.status_to_clear) a.status_to_clear[tile] = 0;  // not read in this call
      if (tile != 0) {
        offset = lookback_sum<1, Pol::initial_delay_ns, Pol::poll_delay_ns>(a.status, tile);
        if (lane == 0) status_store(&a.status[tile], kStatusInclusive | (offset + total));
      }
      if (lane == 0 && tile + 1 == a.num_tiles) *a.d_count = offset + total;
    } else if (lane == 0) {
      offset = unordered_offset(a, tile, total);
    }
    if (lane == 0) {
      s_offset = offset;
      s_total = total;
    }
  }
  __syncthreads();

  Stage* stage = reinterpret_cast<Stage*>(tile_s);
#pragma unroll
  for (int v = 0; v < V; ++v) {
    T x[vec];
    __builtin_memcpy(x, &tile_s[v * kT + threadIdx.x], 16);
    __syncthreads();  // round v's sources are read before any of its ranks is written
    unsigned r = warp_prefix[v * kW + warp] + lane_prefix[v];
#pragma unroll
    for (int e = 0; e < vec; ++e)
      if (bits[v] & (1u << e))
        stage[r++] = sink.make(x[e], static_cast<std::uint32_t>((v * kT + threadIdx.x) * vec + e));
  }
  __syncthreads();
  const std::uint64_t offset = s_offset;
  const std::uint32_t kept = s_total;
  for (std::uint32_t i = threadIdx.x; i < kept; i += kT) sink.put(offset + i, stage[i], tile_base);
}

}  // namespace winnow::detail::cuda::kern
