#pragma once
/// @file compact.hpp
/// Stream compaction: keep the elements that satisfy a predicate and pack them densely.
///
/// Host API (this header): spans in host memory, any backend; a CUDA run copies in and out.
/// Device API for CUDA users (device pointers, a stream, no host synchronisation):
/// `winnow/cuda/compact.hpp`.
///
/// Element types: any trivially copyable T of 1, 2, 4, 8 or 16 bytes, on every backend.
/// - Precompiled types (every predicate): std::uint8_t, std::uint16_t, std::int32_t,
///   std::uint32_t, float, std::int64_t, std::uint64_t, double, Rgba8, RgbaF32.
/// - Any other such T (a user's struct, std::int16_t, an enum): the flagged form, and the
///   predicate and index forms with `nonzero()`. Its bytes travel as a precompiled type of the
///   same size; a value, luminance or alpha predicate on it throws InputError. `nonzero()` tests
///   every byte, padding included: give such a struct no padding (or zero it), else use flags.
/// - Any trivially copyable T of any size with an arbitrary C++ callable: CPU backend (the
///   template at the end of this file).
#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "winnow/backend.hpp"
#include "winnow/image.hpp"

namespace winnow {

/// stable: kept elements keep their input order. any: order unspecified (may be faster on GPUs).
enum class Order { stable, any };

enum class CompactAlgorithm {
  automatic,     ///< the variant the benchmarks show fastest for this backend, size and order
  group_scan,    ///< per-group count, exclusive scan of counts, per-group relocate (CPU + CUDA)
  block_ballot,  ///< __syncthreads_count per block, scan, warp ballot+popc (CUDA)
  histopyramid,  ///< predicate bits, then the histopyramid of winnow/histopyramid.hpp (CPU + CUDA)
  single_pass,   ///< one kernel, decoupled look-back (stable) or atomic offsets (any) (CUDA)
};
std::string_view to_string(CompactAlgorithm a);
/// Parses the names above ("auto" too); throws InputError otherwise.
CompactAlgorithm parse_compact_algorithm(std::string_view name);

struct CompactOptions {
  Order order = Order::stable;
  CompactAlgorithm algorithm = CompactAlgorithm::automatic;
  Backend backend = Backend::automatic;
};

/// The (algorithm, backend) pairs that exist, `automatic` excluded. Asking for any other pair
/// throws BackendError.
struct CompactVariant {
  CompactAlgorithm algorithm;
  Backend backend;
};
std::vector<CompactVariant> compact_variants();

// ---------------------------------------------------------------------------------------------
// Predicates every backend evaluates: key(element) <op> threshold.

enum class CompareOp : std::uint8_t { greater, greater_equal, less, less_equal, equal, not_equal };

enum class KeyKind : std::uint8_t {
  value,      ///< the element itself (arithmetic T)
  luminance,  ///< Rgba8: luminance_milli() vs threshold in thousandths; RgbaF32: float luma
  alpha,      ///< the pixel's alpha (Rgba8, RgbaF32)
  nonzero,    ///< any byte of the element is non-zero (any T; op and threshold ignored)
};

/// A plain-data predicate. The threshold is stored in the key's own type (so 64-bit integers
/// compare exactly): int64/uint64/double bits, chosen by the factory functions below.
struct Predicate {
  KeyKind key = KeyKind::nonzero;
  CompareOp op = CompareOp::not_equal;
  std::uint64_t threshold_bits = 0;

  template <class K>
  constexpr K threshold_as() const {
    static_assert(sizeof(K) <= sizeof(std::uint64_t) && std::is_trivially_copyable_v<K>);
    return __builtin_bit_cast(
        K, static_cast<
               std::conditional_t<sizeof(K) == 8, std::uint64_t,
                                  std::conditional_t<sizeof(K) == 4, std::uint32_t,
                                                     std::conditional_t<sizeof(K) == 2, std::uint16_t, std::uint8_t>>>>(
               threshold_bits));
  }
};

/// keep x where `x <op> value` (arithmetic T).
template <class T>
requires std::is_arithmetic_v<T>
constexpr Predicate where(CompareOp op, T value) {
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t,
                                  std::conditional_t<sizeof(T) == 4, std::uint32_t,
                                                     std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>;
  return Predicate{KeyKind::value, op, static_cast<std::uint64_t>(__builtin_bit_cast(Bits, value))};
}
/// keep pixels whose luminance (0..255) <op> `luma`. For Rgba8 the comparison is exact on the
/// integer luminance in thousandths (luminance_milli), with `luma` rounded down to 1/1000.
constexpr Predicate where_luminance(CompareOp op, double luma) {
  const std::uint32_t milli = luminance_threshold_milli(luma);
  const float f = static_cast<float>(luma);
  return Predicate{KeyKind::luminance, op,
                   (static_cast<std::uint64_t>(__builtin_bit_cast(std::uint32_t, f)) << 32) | milli};
}
/// keep pixels whose alpha <op> `alpha` (0..255 for Rgba8, the float value for RgbaF32).
constexpr Predicate where_alpha(CompareOp op, double alpha) {
  const auto a8 = static_cast<std::uint32_t>(alpha < 0 ? 0 : alpha);
  const float f = static_cast<float>(alpha);
  return Predicate{KeyKind::alpha, op, (static_cast<std::uint64_t>(__builtin_bit_cast(std::uint32_t, f)) << 32) | a8};
}
/// keep elements with any non-zero byte.
constexpr Predicate nonzero() { return Predicate{}; }

namespace detail {
template <class K>
constexpr bool compare(CompareOp op, K a, K b) {
  switch (op) {
    case CompareOp::greater: return a > b;
    case CompareOp::greater_equal: return a >= b;
    case CompareOp::less: return a < b;
    case CompareOp::less_equal: return a <= b;
    case CompareOp::equal: return a == b;
    case CompareOp::not_equal: return a != b;
  }
  return false;
}
// Products and sums rounded one by one, never fused, so host and device agree bit for bit.
constexpr float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
constexpr float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a * 1.0f + b;
#endif
}
template <class T>
constexpr bool any_nonzero_byte(const T& x) {
  const auto bytes = __builtin_bit_cast(std::array<unsigned char, sizeof(T)>, x);
  bool any = false;
  for (unsigned char c : bytes) any |= (c != 0);
  return any;
}
}  // namespace detail

/// Evaluates `p` on `x` exactly as every backend does (constexpr: the CUDA kernels call it too).
template <class T>
constexpr bool matches(const Predicate& p, const T& x) {
  if (p.key == KeyKind::nonzero) return detail::any_nonzero_byte(x);
  if constexpr (std::is_arithmetic_v<T>) {
    return detail::compare(p.op, x, p.template threshold_as<T>());
  } else if constexpr (std::is_same_v<T, Rgba8>) {
    const auto lo = static_cast<std::uint32_t>(p.threshold_bits);
    return p.key == KeyKind::luminance ? detail::compare(p.op, luminance_milli(x), lo)
                                       : detail::compare(p.op, std::uint32_t{x.a}, lo);
  } else if constexpr (std::is_same_v<T, RgbaF32>) {
    const float t = __builtin_bit_cast(float, static_cast<std::uint32_t>(p.threshold_bits >> 32));
    using detail::add_rn, detail::mul_rn;
    const float luma = add_rn(add_rn(mul_rn(0.299f, x.r), mul_rn(0.587f, x.g)), mul_rn(0.114f, x.b));
    return p.key == KeyKind::luminance ? detail::compare(p.op, luma, t) : detail::compare(p.op, x.a, t);
  } else {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Host API. Each writes min(kept, out.size()) elements and returns the number kept.

/// The element sizes compaction carries on every backend.
template <class T>
concept CompactElement = std::is_trivially_copyable_v<T> &&
    (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16);

namespace detail {
template <class T>
inline constexpr bool precompiled_element =
    std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::int32_t> ||
    std::is_same_v<T, std::uint32_t> || std::is_same_v<T, float> || std::is_same_v<T, std::int64_t> ||
    std::is_same_v<T, std::uint64_t> || std::is_same_v<T, double> || std::is_same_v<T, Rgba8> ||
    std::is_same_v<T, RgbaF32>;

/// The precompiled type whose compaction carries the bytes of any element of this size.
template <std::size_t Size>
struct Carrier;
template <>
struct Carrier<1> {
  using type = std::uint8_t;
};
template <>
struct Carrier<2> {
  using type = std::uint16_t;
};
template <>
struct Carrier<4> {
  using type = std::uint32_t;
};
template <>
struct Carrier<8> {
  using type = std::uint64_t;
};
template <>
struct Carrier<16> {
  using type = RgbaF32;
};

// The precompiled entry points (src/compact/compact.cpp), one per precompiled type.
template <class T>
std::size_t compact_values(std::span<const T> in, std::span<T> out, const Predicate& pred,
                           const CompactOptions& options);
template <class T>
std::size_t compact_flagged_values(std::span<const T> in, std::span<const std::uint8_t> flags, std::span<T> out,
                                   const CompactOptions& options);
template <class T, class Index>
std::size_t compact_index_list(std::span<const T> in, const Predicate& pred, std::span<Index> out,
                               const CompactOptions& options);

/// Throws InputError unless `pred` looks at bytes alone (nonzero), as a carried type needs.
void check_carried_predicate(const Predicate& pred, std::size_t element_size);

/// Calls f(in, out) with both spans viewed as their carrier type C (the same bytes). Where a
/// span is not aligned for C (a T of smaller alignment), the bytes go through aligned copies.
/// The view is a byte-level reinterpretation: the precompiled code it calls lives in another
/// translation unit and only copies C values or tests their bytes, so no access through a T
/// and a C to the same object meets in one function the optimiser could reorder.
template <class T, class F>
std::size_t carried(std::span<const T> in, std::span<T> out, F&& f) {
  using C = typename Carrier<sizeof(T)>::type;
  static_assert(sizeof(C) == sizeof(T));
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % alignof(C) == 0; };
  if (aligned(in.data()) && aligned(out.data()))
    return f(std::span<const C>(reinterpret_cast<const C*>(in.data()), in.size()),
             std::span<C>(reinterpret_cast<C*>(out.data()), out.size()));
  std::vector<C> a(in.size()), b(out.size());
  if (!in.empty()) std::memcpy(a.data(), in.data(), in.size_bytes());
  const std::size_t kept = f(std::span<const C>(a), std::span<C>(b));
  if (const std::size_t k = std::min(kept, out.size())) std::memcpy(out.data(), b.data(), k * sizeof(T));
  return kept;
}
}  // namespace detail

/// Keeps the elements of `in` that match `pred`.
template <CompactElement T>
std::size_t compact(std::span<const T> in, std::span<T> out, const Predicate& pred,
                    const CompactOptions& options = {}) {
  if constexpr (detail::precompiled_element<T>) {
    return detail::compact_values<T>(in, out, pred, options);
  } else {
    detail::check_carried_predicate(pred, sizeof(T));
    return detail::carried(in, out,
                           [&](auto c_in, auto c_out) { return detail::compact_values(c_in, c_out, pred, options); });
  }
}
/// Keeps in[i] where flags[i] != 0 (flags.size() must equal in.size()).
template <CompactElement T>
std::size_t compact_flagged(std::span<const T> in, std::span<const std::uint8_t> flags, std::span<T> out,
                            const CompactOptions& options = {}) {
  if constexpr (detail::precompiled_element<T>) {
    return detail::compact_flagged_values<T>(in, flags, out, options);
  } else {
    return detail::carried(
        in, out, [&](auto c_in, auto c_out) { return detail::compact_flagged_values(c_in, flags, c_out, options); });
  }
}
namespace detail {
template <class T, class Index>
std::size_t compact_indices_any(std::span<const T> in, const Predicate& pred, std::span<Index> out,
                                const CompactOptions& options) {
  if constexpr (precompiled_element<T>) {
    return compact_index_list<T, Index>(in, pred, out, options);
  } else {
    check_carried_predicate(pred, sizeof(T));
    // Only the input is carried: no element output (an empty span needs no alignment or copy).
    return carried(in, std::span<T>(), [&](auto c_in, auto) { return compact_index_list(c_in, pred, out, options); });
  }
}
}  // namespace detail

/// Writes the indices i (ascending when stable) of the elements that match `pred`.
template <CompactElement T>
std::size_t compact_indices(std::span<const T> in, const Predicate& pred, std::span<std::uint64_t> out_indices,
                            const CompactOptions& options = {}) {
  return detail::compact_indices_any(in, pred, out_indices, options);
}
/// As above with 32-bit indices; throws InputError when in.size() > 2^32.
template <CompactElement T>
std::size_t compact_indices(std::span<const T> in, const Predicate& pred, std::span<std::uint32_t> out_indices,
                            const CompactOptions& options = {}) {
  return detail::compact_indices_any(in, pred, out_indices, options);
}

/// Convenience: returns the kept elements in a new vector.
template <class T>
std::vector<T> compact(std::span<const T> in, const Predicate& pred, const CompactOptions& options = {}) {
  std::vector<T> out(in.size());
  out.resize(compact(in, std::span<T>(out), pred, options));
  return out;
}

namespace detail {
[[noreturn]] void throw_callable_needs_cpu();
}  // namespace detail

/// Any trivially copyable T with any C++ callable `bool(const T&)`: stable, on the CPU backend
/// only (count per chunk, scan, scatter; the writes are branch-free). A request for another
/// backend throws BackendError: on a GPU use a Predicate, or compute the flags with your own
/// kernel and call the flagged form (here or in `winnow/cuda/compact.hpp`). Stable whatever
/// `options.order` says (stable is a valid "any"); `options.algorithm` is not consulted.
/// `pred` is called from several threads at once.
template <class T, class Fn>
requires std::is_trivially_copyable_v<T> && std::predicate<Fn&, const T&> std::size_t compact(
    std::span<const T> in, std::span<T> out, Fn&& pred, const CompactOptions& options = {}) {
  if (options.backend != Backend::automatic && options.backend != Backend::cpu) detail::throw_callable_needs_cpu();
  const std::size_t n = in.size();
  constexpr std::size_t chunk = std::size_t{1} << 16;
  const std::size_t chunks = (n + chunk - 1) / chunk;
  std::vector<std::size_t> offset(chunks + 1, 0);
#pragma omp parallel for schedule(static) num_threads(detail::cpu_threads())
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(chunks); ++c) {
    const std::size_t lo = c * chunk, hi = std::min(n, lo + chunk);
    std::size_t k = 0;
    for (std::size_t i = lo; i < hi; ++i) k += pred(in[i]) ? 1 : 0;
    offset[c + 1] = k;
  }
  for (std::size_t c = 0; c < chunks; ++c) offset[c + 1] += offset[c];
  const std::size_t cap = out.size();
#pragma omp parallel for schedule(static) num_threads(detail::cpu_threads())
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(chunks); ++c) {
    const std::size_t lo = c * chunk, hi = std::min(n, lo + chunk);
    std::size_t o = offset[c];
    if (offset[c + 1] <= cap) {  // whole chunk fits: write unconditionally, advance on match
      T* dst = out.data();
      const std::size_t end = offset[c + 1];
      for (std::size_t i = lo; o < end; ++i) {  // o < end: never write into the next chunk
        dst[o] = in[i];
        o += pred(in[i]) ? 1 : 0;
      }
    } else {
      for (std::size_t i = lo; i < hi && o < cap; ++i)
        if (pred(in[i])) out[o++] = in[i];
    }
  }
  return offset[chunks];
}

}  // namespace winnow
