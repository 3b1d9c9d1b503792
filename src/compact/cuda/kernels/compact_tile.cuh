#pragma once
// Building blocks of the compaction kernels (compact_kernels.cuh tells the algorithms): the tile
// shape per element size, 16-byte vector loads, the element sources (predicate on values, flags
// beside values, flags alone), the sinks (values or indices), one tile loaded and ranked in
// registers, and the warp-level count and scan helpers every kernel shares.
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

}  // namespace winnow::detail::cuda::kern
