#pragma once
// Stream-compaction kernels: every algorithm of winnow's CUDA backend.
//
// The algorithms (n elements, k kept, p = tile size; all read n elements once per pass):
//
//  * single_pass (default): one kernel (compact_lookback_kernel). Each block takes a tile of p
//    elements (tile id = blockIdx.x), loads it with 16-byte vector loads, evaluates the predicate in
//    registers, ranks the kept elements inside the tile (warp ballot + popc, then a scan of the
//    per-warp counts by one warp) and finds the tile's output offset by decoupled look-back
//    (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVR-2016-002):
//    a tile publishes its count, sleeps about one L2 write latency, then looks back over its
//    predecessors' published counts or inclusive prefixes, 32 at a time, until it meets an
//    inclusive prefix; meanwhile the other warps stage the kept elements in shared memory at their
//    rank, and all write them out coalesced. Stable. Reads n, writes k; O(n). Its shape and
//    look-back policy are compile-time (LookbackPolicy; the library's choice in compact_lookback.cuh).
//    The unordered variant replaces the look-back by one atomicAdd per tile on the output counter.
//    Predicate compactions of 16-byte aligned inputs take the same steps with the tile in shared
//    memory instead of registers (compact_smem.cuh: more tiles resident per SM, so more loads in
//    flight while tiles wait); unordered ones of 16 MiB and more on sm_90+ run persistent blocks
//    that keep a ring of tiles in flight by bulk copies (compact_ring.cuh); the register kernels
//    here serve flagged, unaligned and 1- or 2-byte index compactions.
//  * block_ballot (Biller, Olsson & Assarsson, HPG 2009; Hughes et al., InK-Compact 2013): count
//    kernel (__syncthreads_count per bit of the per-thread count), exclusive scan of the block
//    counts (CUB), scatter kernel. Stable scatter = the single-pass tile code with the scanned
//    offsets; unordered scatter = per-warp ballot + popc offsets claimed from a shared-memory
//    counter in whatever order warps arrive (the seed's variant). Reads the input twice.
//  * group_scan (the "CUDA image compaction" seed): each thread owns a group of contiguous
//    elements; count kernel (one count per group), CUB exclusive scan of the group counts,
//    relocate kernel (each thread writes its kept elements from its group's offset on).
//  * histopyramid: this file's mask_tile_sums_kernel evaluates the predicate into one bit per
//    element and counts each pyramid tile's kept elements, the pyramid's level 2 (reads n
//    elements, writes n/8 bytes and 4 bytes per 32768 elements); the histopyramid capability
//    (src/histopyramid/cuda/histopyramid.cu) builds its pyramid over the bits and writes each
//    tile's outputs in order: indices, or values gathered from the input for the kept elements
//    only. Stable; O(n).
//
// Everything uses 64-bit element indices and offsets; counts inside a tile are 32-bit.
#include "compact/cuda/kernels/compact_single_pass.cuh"
#include "compact/cuda/kernels/compact_tile.cuh"

namespace winnow::detail::cuda::kern {

/// How a tile learns its output offset.
enum class Prefix {
  atomic,   ///< single_pass any: atomicAdd on *d_count (set to 0 before the launch)
  offsets,  ///< block_ballot stable: scanned block counts
};

struct TileArgs {
  std::uint64_t n = 0;
  std::uint64_t num_tiles = 0;
  const std::uint64_t* offsets = nullptr;  // offsets mode
  unsigned long long* d_count = nullptr;
};

/// One tile per block: load, rank, find the tile's offset, stage kept elements, write coalesced.
template <class Src, class Sink, Prefix P>
__global__ void __launch_bounds__(kThreads) compact_tile_kernel(Src src, Sink sink, TileArgs a) {
  using Tn = Tuning<Src::size>;
  constexpr bool need_values = Src::eval_reads_values || Sink::wants_values;
  __shared__ typename Sink::stage_type stage[Tn::tile];
  __shared__ std::uint32_t warp_prefix[32];
  __shared__ std::uint64_t s_offset;
  __shared__ std::uint32_t s_total;

  const std::uint64_t tile = blockIdx.x;
  const std::uint64_t tile_base = tile * static_cast<std::uint64_t>(Tn::tile);
  Tile<Src, need_values> t;
  t.load(src, tile_base, a.n);

  const unsigned lane = lane_id(), warp = threadIdx.x / 32;
  unsigned lane_prefix[Tn::vectors];
#pragma unroll
  for (int v = 0; v < Tn::vectors; ++v) {
    const unsigned c = __popc(t.bits[v]);
    lane_prefix[v] = warp_exclusive_count(c);
    const unsigned w = __shfl_sync(kFull, lane_prefix[v] + c, 31);
    if (lane == 0) warp_prefix[v * kWarps + warp] = w;
  }
  __syncthreads();
  if (warp == 0) {
    const std::uint32_t total = warp_scan_entries<Tn::vectors * kWarps>(warp_prefix);
    std::uint64_t offset = 0;
    if constexpr (P == Prefix::offsets) {
      offset = a.offsets[tile];
    } else {
      if (lane == 0) offset = atomicAdd(a.d_count, static_cast<unsigned long long>(total));
      offset = __shfl_sync(kFull, offset, 0);
    }
    if (lane == 0) {
      s_offset = offset;
      s_total = total;
    }
  }
  __syncthreads();
#pragma unroll
  for (int v = 0; v < Tn::vectors; ++v) {
    unsigned r = warp_prefix[v * kWarps + warp] + lane_prefix[v];
    unsigned b = t.bits[v];
#pragma unroll
    for (int e = 0; e < Tn::vec; ++e) {
      if (b & (1u << e)) stage[r++] = sink.make(t.vals[v][e], Tile<Src, need_values>::local_index(v, e));
    }
  }
  __syncthreads();
  const std::uint64_t offset = s_offset;
  const std::uint32_t total = s_total;
  for (std::uint32_t i = threadIdx.x; i < total; i += kThreads) sink.put(offset + i, stage[i], tile_base);
}

struct StreamArgs {
  std::uint64_t n = 0;
  std::uint64_t num_tiles = 0;
  /// Tile counter, output counter, finished-block counter. Zeroed before the launch.
  unsigned long long* state = nullptr;
  unsigned long long* d_count = nullptr;
};

/// single_pass any, persistent: each block takes tiles from a counter and software-pipelines
/// them: once a tile is ranked and staged in shared memory, the loads of the next tile are issued
/// before the atomic that finds the staged tile's output offset, so memory stays busy meanwhile.
template <class Src, class Sink, Prefix P>
__global__ void __launch_bounds__(kThreads) compact_stream_kernel(Src src, Sink sink, StreamArgs a) {
  using Tn = Tuning<Src::size>;
  constexpr bool need_values = Src::eval_reads_values || Sink::wants_values;
  __shared__ typename Sink::stage_type stage[Tn::tile];
  __shared__ std::uint32_t warp_prefix[32];
  __shared__ std::uint64_t s_next, s_offset;
  __shared__ std::uint32_t s_total;
  static_assert(P == Prefix::atomic, "the persistent stream kernel takes offsets by atomics");
  unsigned long long* counter = a.state;
  const unsigned lane = lane_id(), warp = threadIdx.x / 32;

  if (threadIdx.x == 0) s_next = atomicAdd(counter, 1ull);
  __syncthreads();
  std::uint64_t tile = s_next;
  Tile<Src, need_values> t;
  if (tile < a.num_tiles) t.fetch(src, tile * Tn::tile, a.n);
  while (tile < a.num_tiles) {
    const std::uint64_t tile_base = tile * static_cast<std::uint64_t>(Tn::tile);
    t.finish(src, tile_base, a.n);
    unsigned lane_prefix[Tn::vectors];
#pragma unroll
    for (int v = 0; v < Tn::vectors; ++v) {
      const unsigned c = __popc(t.bits[v]);
      lane_prefix[v] = warp_exclusive_count(c);
      const unsigned w = __shfl_sync(kFull, lane_prefix[v] + c, 31);
      if (lane == 0) warp_prefix[v * kWarps + warp] = w;
    }
    __syncthreads();
    if (warp == 0) {
      const std::uint32_t total = warp_scan_entries<Tn::vectors * kWarps>(warp_prefix);
      if (lane == 0) {
        s_total = total;
        s_next = atomicAdd(counter, 1ull);
      }
    }
    __syncthreads();
#pragma unroll
    for (int v = 0; v < Tn::vectors; ++v) {
      unsigned r = warp_prefix[v * kWarps + warp] + lane_prefix[v];
#pragma unroll
      for (int e = 0; e < Tn::vec; ++e)
        if (t.bits[v] & (1u << e)) stage[r++] = sink.make(t.vals[v][e], Tile<Src, need_values>::local_index(v, e));
    }
    const std::uint64_t next = s_next;
    if (next < a.num_tiles) t.fetch(src, next * Tn::tile, a.n);  // in flight during the look-back
    if (warp == 0) {
      const std::uint32_t total = s_total;
      std::uint64_t offset = 0;
      if (lane == 0) offset = atomicAdd(a.state + 1, static_cast<unsigned long long>(total));
      offset = __shfl_sync(kFull, offset, 0);
      if (lane == 0) s_offset = offset;
    }
    __syncthreads();
    const std::uint64_t offset = s_offset;
    const std::uint32_t total = s_total;
    for (std::uint32_t i = threadIdx.x; i < total; i += kThreads) sink.put(offset + i, stage[i], tile_base);
    __syncthreads();
    tile = next;
  }
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(a.state + 2, 1ull) == gridDim.x - 1) {
      __threadfence();
      *a.d_count = atomicAdd(a.state + 1, 0ull);
    }
  }
}

/// block_ballot pass 1: the tile's count by __syncthreads_count, one bit of the per-thread count
/// at a time. counts[num_tiles] is set to 0 (the scan then yields the total).
template <class Src>
__global__ void __launch_bounds__(kThreads)
    ballot_count_kernel(Src src, std::uint64_t n, std::uint32_t* counts, std::uint64_t num_tiles) {
  using Tn = Tuning<Src::size>;
  Tile<Src, Src::eval_reads_values> t;
  const std::uint64_t tile = blockIdx.x;
  t.load(src, tile * Tn::tile, n);
  unsigned c = 0;
#pragma unroll
  for (int v = 0; v < Tn::vectors; ++v) c += __popc(t.bits[v]);
  std::uint32_t total = 0;
#pragma unroll
  for (int b = 0; b < 6; ++b) total += static_cast<std::uint32_t>(__syncthreads_count((c >> b) & 1u)) << b;
  if (threadIdx.x == 0) {
    counts[tile] = total;
    if (tile == 0) counts[num_tiles] = 0;
  }
}

/// block_ballot unordered pass 2: per warp and vector, ballot + popc offsets inside the warp and a
/// warp base claimed from a shared counter (warps race: the order inside a block is unspecified).
template <class Src, class Sink>
__global__ void __launch_bounds__(kThreads)
    ballot_scatter_any_kernel(Src src, Sink sink, std::uint64_t n, const std::uint64_t* offsets) {
  using Tn = Tuning<Src::size>;
  constexpr bool need_values = Src::eval_reads_values || Sink::wants_values;
  __shared__ unsigned s_counter;
  if (threadIdx.x == 0) s_counter = 0;
  __syncthreads();
  const std::uint64_t tile = blockIdx.x;
  const std::uint64_t tile_base = tile * Tn::tile;
  Tile<Src, need_values> t;
  t.load(src, tile_base, n);
  const std::uint64_t block_offset = offsets[tile];
  const unsigned lane = lane_id();
#pragma unroll
  for (int v = 0; v < Tn::vectors; ++v) {
    const unsigned c = __popc(t.bits[v]);
    const unsigned p = warp_exclusive_count(c);
    const unsigned w = __shfl_sync(kFull, p + c, 31);
    unsigned base = 0;
    if (lane == 0 && w) base = atomicAdd(&s_counter, w);
    base = __shfl_sync(kFull, base, 0);
    std::uint64_t pos = block_offset + base + p;
#pragma unroll
    for (int e = 0; e < Tn::vec; ++e) {
      if (t.bits[v] & (1u << e))
        sink.put_direct(pos++, t.vals[v][e], tile_base + Tile<Src, need_values>::local_index(v, e));
    }
  }
}

/// group_scan pass 1: thread g counts its group [g * items, (g + 1) * items). counts[groups] = 0.
template <class Src>
__global__ void __launch_bounds__(kThreads)
    group_count_kernel(Src src, std::uint64_t n, std::uint32_t* counts, std::uint64_t groups) {
  using Tn = Tuning<Src::size>;
  const std::uint64_t g = static_cast<std::uint64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (g > groups) return;
  if (g == groups) {
    counts[g] = 0;
    return;
  }
  unsigned c = 0;
#pragma unroll
  for (int v = 0; v < Tn::vectors; ++v) {
    typename Src::value_type vals[Tn::vec];
    c += __popc(load_bits<Src::eval_reads_values>(src, g * Tn::items + v * Tn::vec, n, vals));
  }
  counts[g] = c;
}

/// group_scan pass 2: thread g writes its group's kept elements from offsets[g] on, in order.
template <class Src, class Sink>
__global__ void __launch_bounds__(kThreads)
    group_relocate_kernel(Src src, Sink sink, std::uint64_t n, const std::uint64_t* offsets, std::uint64_t groups) {
  using Tn = Tuning<Src::size>;
  constexpr bool need_values = Src::eval_reads_values || Sink::wants_values;
  const std::uint64_t g = static_cast<std::uint64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (g >= groups) return;
  std::uint64_t pos = offsets[g];
#pragma unroll
  for (int v = 0; v < Tn::vectors; ++v) {
    typename Src::value_type vals[Tn::vec];
    const std::uint64_t i = g * Tn::items + v * Tn::vec;
    const unsigned bits = load_bits<need_values>(src, i, n, vals);
#pragma unroll
    for (int e = 0; e < Tn::vec; ++e)
      if (bits & (1u << e)) sink.put_direct(pos++, vals[e], i + e);
  }
}

/// histopyramid: the predicate of the elements of tile `tile_base` into one 32-bit word per 32
/// elements, bit i % 32 of word i / 32 (bits past n zero), the base level the histopyramid
/// capability reads (lanes OR their bits). Returns the lane's count of kept elements.
template <class Src>
__device__ __forceinline__ unsigned mask_words_of_tile(const Src& src, std::uint64_t n, std::uint32_t* masks,
                                                       std::uint64_t words, std::uint64_t tile_base) {
  using Tn = Tuning<Src::size>;
  constexpr int group = 32 / Tn::vec;  // lanes per mask word
  Tile<Src, Src::eval_reads_values> t;
  t.load(src, tile_base, n);
  const unsigned lane = lane_id();
  unsigned kept = 0;
#pragma unroll
  for (int v = 0; v < Tn::vectors; ++v) {
    kept += __popc(t.bits[v]);
    unsigned x = t.bits[v] << ((lane % group) * Tn::vec);
#pragma unroll
    for (int d = 1; d < group; d <<= 1) x |= __shfl_xor_sync(kFull, x, d);
    const std::uint64_t word = (tile_base + static_cast<std::uint64_t>(v * kThreads + threadIdx.x) * Tn::vec) / 32;
    if (lane % group == 0 && word < words) masks[word] = x;
  }
  return kept;
}

/// histopyramid: the predicate's words (mask_words_of_tile) of one pyramid tile of
/// kPyramidTile elements per block, and the tile's count of kept elements -- the pyramid's level 2
/// (histopyramid_tile_sums), which the pyramid then need not sum from the words.
template <class Src, std::uint64_t kPyramidTile>
__global__ void __launch_bounds__(kThreads) mask_tile_sums_kernel(Src src, std::uint64_t n, std::uint32_t* masks,
                                                                  std::uint64_t words, std::uint32_t* tile_sums) {
  using Tn = Tuning<Src::size>;
  static_assert(kPyramidTile % Tn::tile == 0, "a pyramid tile is whole compaction tiles");
  __shared__ unsigned block_kept;
  if (threadIdx.x == 0) block_kept = 0;
  __syncthreads();
  unsigned kept = 0;
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * kPyramidTile;
  for (std::uint64_t tile_base = first; tile_base < first + kPyramidTile && tile_base < n; tile_base += Tn::tile)
    kept += mask_words_of_tile(src, n, masks, words, tile_base);
  kept = __reduce_add_sync(kFull, kept);
  if (lane_id() == 0) atomicAdd(&block_kept, kept);
  __syncthreads();
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = block_kept;
}

}  // namespace winnow::detail::cuda::kern
