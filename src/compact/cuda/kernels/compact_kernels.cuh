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
//  * histopyramid: this file's mask_words_kernel evaluates the predicate into one bit per element
//    (reads n elements, writes n/8 bytes); the histopyramid capability
//    (src/histopyramid/cuda/histopyramid.cu) builds its pyramid over the bits and writes each
//    tile's outputs in order: indices, or values gathered from the input for the kept elements
//    only. Stable; O(n).
//
// Everything uses 64-bit element indices and offsets; counts inside a tile are 32-bit.
#include <cub/agent/single_pass_scan_operators.cuh>
#include <cuda/atomic>
#include <cuda/std/functional>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "winnow/compact.hpp"

namespace winnow::detail::cuda::kern {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFull = 0xffffffffu;

/// Tile shape by element size: each thread loads `vectors` 16-byte vectors of `vec` elements.
/// Vector v of thread t covers elements tile_base + (v * kThreads + t) * vec + [0, vec), so every
/// load instruction of a warp reads 512 contiguous bytes.
template <int Size>
struct Tuning {
  static constexpr int vec = 16 / Size;
  static constexpr int vectors = Size == 1 ? 2 : 4;
  static constexpr int items = vec * vectors;
  static constexpr int tile = kThreads * items;
  static_assert(vectors * kWarps <= 32, "one warp scans the per-warp counts");
};

/// Plain storage of an element of a given size (shared-memory staging, output writes).
template <int Size>
struct StorageOf;
template <>
struct StorageOf<1> {
  using type = std::uint8_t;
};
template <>
struct StorageOf<2> {
  using type = std::uint16_t;
};
template <>
struct StorageOf<4> {
  using type = std::uint32_t;
};
template <>
struct StorageOf<8> {
  using type = unsigned long long;
};
template <>
struct StorageOf<16> {
  using type = uint4;
};
template <int Size>
using Storage = typename StorageOf<Size>::type;

template <class To, class From>
__device__ __forceinline__ To bit_to(const From& f) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  __builtin_memcpy(&t, &f, sizeof(To));
  return t;
}

/// Loads `N` elements starting at p[i] (the N-element run is inside [0, n) when `full`).
template <class T, int N>
__device__ __forceinline__ void load_run(const T* __restrict__ p, std::uint64_t i, std::uint64_t n, bool aligned,
                                         T (&v)[N]) {
  static_assert(sizeof(T) * N == 16 || N == 1 || sizeof(T) == 1);
  if (i + N <= n) {
    if constexpr (sizeof(T) * N == 16) {
      if (aligned) {
        const uint4 w = __ldg(reinterpret_cast<const uint4*>(p + i));
        __builtin_memcpy(v, &w, 16);
        return;
      }
    }
#pragma unroll
    for (int e = 0; e < N; ++e) v[e] = p[i + e];
  } else {
#pragma unroll
    for (int e = 0; e < N; ++e) v[e] = (i + e < n) ? p[i + e] : T{};
  }
}

/// Bits (1 << e) of the first N elements that are inside [0, n).
template <int N>
__device__ __forceinline__ unsigned valid_bits(std::uint64_t i, std::uint64_t n) {
  if (i + N <= n) return N == 32 ? kFull : ((1u << N) - 1u);
  if (i >= n) return 0u;
  return (1u << static_cast<unsigned>(n - i)) - 1u;
}

/// Fetches N flag bytes at flags[i] (0 past n) into a uint4, byte e = flag e.
template <int N>
__device__ __forceinline__ uint4 load_flag_raw(const std::uint8_t* __restrict__ flags, std::uint64_t i, std::uint64_t n,
                                               bool aligned) {
  uint4 w = make_uint4(0, 0, 0, 0);
  if (i + N <= n && aligned && N >= 4) {
    if constexpr (N == 16) {
      return __ldg(reinterpret_cast<const uint4*>(flags + i));
    } else if constexpr (N == 8) {
      const uint2 h = __ldg(reinterpret_cast<const uint2*>(flags + i));
      w.x = h.x;
      w.y = h.y;
      return w;
    } else if constexpr (N == 4) {
      w.x = __ldg(reinterpret_cast<const unsigned*>(flags + i));
      return w;
    }
  }
  unsigned char b[16] = {};
#pragma unroll
  for (int e = 0; e < N; ++e) b[e] = (i + e < n) ? flags[i + e] : 0;
  __builtin_memcpy(&w, b, 16);
  return w;
}
/// Bits (1 << e) of the non-zero bytes among the first N of w.
template <int N>
__device__ __forceinline__ unsigned flag_bits(const uint4& w) {
  const unsigned words[4] = {w.x, w.y, w.z, w.w};
  unsigned bits = 0;
#pragma unroll
  for (int e = 0; e < N; ++e) bits |= (((words[e / 4] >> (8 * (e % 4))) & 0xffu) != 0) << e;
  return bits;
}

/// Predicate bits of N values; the common arithmetic case hoists the comparison out of the loop.
template <class T, int N>
__device__ __forceinline__ unsigned eval_predicate(const Predicate& p, const T (&v)[N]) {
  unsigned b = 0;
  if constexpr (std::is_arithmetic_v<T>) {
    if (p.key == KeyKind::value) {
      const T t = p.template threshold_as<T>();
      auto apply = [&](auto cmp) {
#pragma unroll
        for (int e = 0; e < N; ++e) b |= static_cast<unsigned>(cmp(v[e], t)) << e;
      };
      switch (p.op) {
        case CompareOp::greater: apply([](T a, T c) { return a > c; }); break;
        case CompareOp::greater_equal: apply([](T a, T c) { return a >= c; }); break;
        case CompareOp::less: apply([](T a, T c) { return a < c; }); break;
        case CompareOp::less_equal: apply([](T a, T c) { return a <= c; }); break;
        case CompareOp::equal: apply([](T a, T c) { return a == c; }); break;
        case CompareOp::not_equal: apply([](T a, T c) { return a != c; }); break;
      }
      return b;
    }
  }
#pragma unroll
  for (int e = 0; e < N; ++e) b |= static_cast<unsigned>(matches(p, v[e])) << e;
  return b;
}

// ---------------------------------------------------------------------------------------------
// Sources: where flags and values come from. Each has value_type, size (tuning), eval_reads_values
// (the flag needs the value), fetch<NeedValues>(i, n, vals, raw) that only issues the loads,
// finish(i, n, vals, raw) that turns them into bits, and value_at(i).

struct NoRaw {};

/// keep in[i] where matches(pred, in[i]).
template <class T>
struct PredSource {
  using value_type = T;
  static constexpr int size = sizeof(T);
  static constexpr bool eval_reads_values = true;
  static constexpr int vec = Tuning<size>::vec;
  const T* in;
  Predicate pred;
  bool aligned;

  using raw_type = NoRaw;
  template <bool NeedValues>
  __device__ __forceinline__ void fetch(std::uint64_t i, std::uint64_t n, T (&v)[vec], raw_type&) const {
    load_run<T, vec>(in, i, n, aligned, v);
  }
  __device__ __forceinline__ unsigned finish(std::uint64_t i, std::uint64_t n, const T (&v)[vec],
                                             const raw_type&) const {
    return eval_predicate<T, vec>(pred, v) & valid_bits<vec>(i, n);
  }
  __device__ __forceinline__ T value_at(std::uint64_t i) const { return in[i]; }
};

/// keep in[i] where flags[i] != 0; V is the storage type of the element.
template <class V>
struct FlagSource {
  using value_type = V;
  static constexpr int size = sizeof(V);
  static constexpr bool eval_reads_values = false;
  static constexpr int vec = Tuning<size>::vec;
  const V* in;
  const std::uint8_t* flags;
  bool aligned;  // in 16-byte aligned and flags vec-aligned

  using raw_type = uint4;
  template <bool NeedValues>
  __device__ __forceinline__ void fetch(std::uint64_t i, std::uint64_t n, V (&v)[vec], raw_type& raw) const {
    if constexpr (NeedValues) load_run<V, vec>(in, i, n, aligned, v);
    raw = load_flag_raw<vec>(flags, i, n, aligned);
  }
  __device__ __forceinline__ unsigned finish(std::uint64_t, std::uint64_t, const V (&)[vec],
                                             const raw_type& raw) const {
    return flag_bits<vec>(raw);
  }
  __device__ __forceinline__ V value_at(std::uint64_t i) const { return in[i]; }
};

/// Flags only (index outputs of a flagged compaction): no element values at all.
struct FlagOnlySource {
  using value_type = std::uint8_t;
  static constexpr int size = 1;
  static constexpr bool eval_reads_values = false;
  static constexpr int vec = Tuning<size>::vec;
  const std::uint8_t* flags;
  bool aligned;

  using raw_type = uint4;
  template <bool NeedValues>
  __device__ __forceinline__ void fetch(std::uint64_t i, std::uint64_t n, std::uint8_t (&)[vec], raw_type& raw) const {
    raw = load_flag_raw<vec>(flags, i, n, aligned);
  }
  __device__ __forceinline__ unsigned finish(std::uint64_t, std::uint64_t, const std::uint8_t (&)[vec],
                                             const raw_type& raw) const {
    return flag_bits<vec>(raw);
  }
  __device__ __forceinline__ std::uint8_t value_at(std::uint64_t) const { return 0; }
};

// ---------------------------------------------------------------------------------------------
// Sinks: what is written for a kept element. stage_type is what a tile keeps in shared memory.

/// Writes the element (as its storage type).
template <class S>
struct ValueSink {
  static constexpr bool wants_values = true;
  using stage_type = S;
  S* out;
  template <class V>
  __device__ __forceinline__ S make(const V& v, std::uint32_t) const {
    return bit_to<S>(v);
  }
  __device__ __forceinline__ void put(std::uint64_t pos, const S& s, std::uint64_t) const { out[pos] = s; }
  template <class V>
  __device__ __forceinline__ void put_direct(std::uint64_t pos, const V& v, std::uint64_t) const {
    out[pos] = bit_to<S>(v);
  }
};

/// Writes the element's index (Index = uint32 or uint64).
template <class Index>
struct IndexSink {
  static constexpr bool wants_values = false;
  using stage_type = std::uint32_t;  // index inside the tile
  Index* out;
  template <class V>
  __device__ __forceinline__ std::uint32_t make(const V&, std::uint32_t local) const {
    return local;
  }
  __device__ __forceinline__ void put(std::uint64_t pos, std::uint32_t s, std::uint64_t tile_base) const {
    out[pos] = static_cast<Index>(tile_base + s);
  }
  template <class V>
  __device__ __forceinline__ void put_direct(std::uint64_t pos, const V&, std::uint64_t index) const {
    out[pos] = static_cast<Index>(index);
  }
};

/// fetch + finish.
template <bool NeedValues, class Src>
__device__ __forceinline__ unsigned load_bits(const Src& src, std::uint64_t i, std::uint64_t n,
                                              typename Src::value_type (&v)[Src::vec]) {
  typename Src::raw_type raw;
  src.template fetch<NeedValues>(i, n, v, raw);
  return src.finish(i, n, v, raw);
}

// ---------------------------------------------------------------------------------------------
// Block building blocks.

template <class Src, bool NeedValues>
struct Tile {
  using Tn = Tuning<Src::size>;
  typename Src::value_type vals[Tn::vectors][Tn::vec];
  typename Src::raw_type raw[Tn::vectors];
  unsigned bits[Tn::vectors];

  __device__ __forceinline__ static std::uint64_t at(std::uint64_t tile_base, int v) {
    return tile_base + static_cast<std::uint64_t>(v * kThreads + threadIdx.x) * Tn::vec;
  }
  /// Issues the loads only (their latency can overlap other work).
  __device__ __forceinline__ void fetch(const Src& src, std::uint64_t tile_base, std::uint64_t n) {
#pragma unroll
    for (int v = 0; v < Tn::vectors; ++v) src.template fetch<NeedValues>(at(tile_base, v), n, vals[v], raw[v]);
  }
  __device__ __forceinline__ void finish(const Src& src, std::uint64_t tile_base, std::uint64_t n) {
#pragma unroll
    for (int v = 0; v < Tn::vectors; ++v) bits[v] = src.finish(at(tile_base, v), n, vals[v], raw[v]);
  }
  __device__ __forceinline__ void load(const Src& src, std::uint64_t tile_base, std::uint64_t n) {
    fetch(src, tile_base, n);
    finish(src, tile_base, n);
  }
  __device__ __forceinline__ static std::uint32_t local_index(int v, int e) {
    return static_cast<std::uint32_t>((v * kThreads + threadIdx.x) * Tn::vec + e);
  }
};

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }
__device__ __forceinline__ unsigned lanemask_lt() { return (1u << lane_id()) - 1u; }

/// Exclusive prefix over the warp of c (0 <= c < 64) by ballot + popc per bit.
__device__ __forceinline__ unsigned warp_exclusive_count(unsigned c) {
  const unsigned lt = lanemask_lt();
  unsigned p = 0;
#pragma unroll
  for (int b = 0; b < 6; ++b) p += static_cast<unsigned>(__popc(__ballot_sync(kFull, (c >> b) & 1u) & lt)) << b;
  return p;
}

__device__ __forceinline__ std::uint64_t warp_sum_u64(std::uint64_t x) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(kFull, x, d);
  return x;
}

/// Called by one whole warp: replaces entries[0..E) (shared memory) by their exclusive prefix sums
/// and returns the total to every lane. Each lane scans (E + 31) / 32 consecutive entries.
template <int E>
__device__ __forceinline__ std::uint32_t warp_scan_entries(std::uint32_t* entries) {
  constexpr int per = (E + 31) / 32;
  const unsigned lane = lane_id();
  std::uint32_t x[per], sum = 0;
#pragma unroll
  for (int k = 0; k < per; ++k) {
    const int i = static_cast<int>(lane) * per + k;
    x[k] = i < E ? entries[i] : 0u;
    sum += x[k];
  }
  std::uint32_t incl = sum;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const std::uint32_t y = __shfl_up_sync(kFull, incl, d);
    if (lane >= static_cast<unsigned>(d)) incl += y;
  }
  std::uint32_t run = incl - sum;
#pragma unroll
  for (int k = 0; k < per; ++k) {
    const int i = static_cast<int>(lane) * per + k;
    if (i < E) entries[i] = run;
    run += x[k];
  }
  return __shfl_sync(kFull, incl, 31);
}

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

// ---------------------------------------------------------------------------------------------
// Kernels.

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

/// histopyramid: the predicate into one 32-bit word per 32 elements, bit i % 32 of word i / 32
/// (bits past n zero), the base level the histopyramid capability reads (lanes OR their bits).
template <class Src>
__global__ void __launch_bounds__(kThreads)
    mask_words_kernel(Src src, std::uint64_t n, std::uint32_t* masks, std::uint64_t words) {
  using Tn = Tuning<Src::size>;
  constexpr int group = 32 / Tn::vec;  // lanes per mask word
  Tile<Src, Src::eval_reads_values> t;
  const std::uint64_t tile_base = static_cast<std::uint64_t>(blockIdx.x) * Tn::tile;
  t.load(src, tile_base, n);
  const unsigned lane = lane_id();
#pragma unroll
  for (int v = 0; v < Tn::vectors; ++v) {
    unsigned x = t.bits[v] << ((lane % group) * Tn::vec);
#pragma unroll
    for (int d = 1; d < group; d <<= 1) x |= __shfl_xor_sync(kFull, x, d);
    const std::uint64_t word = (tile_base + static_cast<std::uint64_t>(v * kThreads + threadIdx.x) * Tn::vec) / 32;
    if (lane % group == 0 && word < words) masks[word] = x;
  }
}

}  // namespace winnow::detail::cuda::kern
