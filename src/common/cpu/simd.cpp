// SIMD kernels of the CPU backends (common/cpu/simd.hpp), compiled once per instruction set with Highway's
// foreach_target and chosen at run time (HWY_EXPORT / HWY_DYNAMIC_DISPATCH).
//
// Predicate pass: compare a vector, turn the mask into bits (StoreMaskBits), OR them into a
// 64-bit word per 64 elements; popcount gives the chunk's count. Emit pass: for each vector of
// the chunk, LoadMaskBits + Compress (register form) + a full-width StoreU at the running output
// position. Each full store may write up to one vector of garbage past the kept lanes; the next
// store overwrites it, and near the end of the chunk's output range (`limit`) the kept lanes go
// through a small buffer instead, so nothing past `limit` is ever written (the next chunk's range
// belongs to another thread). The memory form of compress-store (vpcompressd [mem]) is avoided on
// purpose: it is microcoded and very slow on AMD Zen 4.
//
// Compile time: 4 instruction sets (AVX3_DL, AVX3, AVX2, SSE4) plus the portable EMU128 fallback.
#include "common/cpu/simd.hpp"

#include <cstring>

#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3)
#endif
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL 1  // native 8/16-bit compress (VBMI2) on Ice Lake and Zen 4
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "common/cpu/simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace winnow::detail::cpu::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Mask of one vector (N <= 64 lanes) as the low N bits of a word, and back. On AVX-512 the mask
// register is the word; elsewhere Highway's bit extraction (a store + reload would stall on
// store forwarding once per vector).
template <class D, class M>
HWY_INLINE std::uint64_t MaskWord(D d, M m) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  (void)d;
  return static_cast<std::uint64_t>(m.raw);
#elif HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
  (void)d;
  return hn::detail::BitsFromMask(m);
#else
  std::uint8_t buf[16] = {0};
  hn::StoreMaskBits(d, m, buf);
  std::uint64_t w;
  std::memcpy(&w, buf, 8);
  const std::size_t N = hn::Lanes(d);
  return N >= 64 ? w : (w & ((std::uint64_t{1} << N) - 1));
#endif
}
template <class D>
HWY_INLINE auto WordMask(D d, std::uint64_t w) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  hn::MFromD<D> m;
  m.raw = static_cast<decltype(m.raw)>(w);
  (void)d;
  return m;
#else
  std::uint8_t buf[16] = {0};
  std::memcpy(buf, &w, 8);
  return hn::LoadMaskBits(d, buf);
#endif
}

// Runs `fn(d, pointer) -> mask` over in[0..n) and packs the results into bits.
template <class D, class T, class Fn>
HWY_INLINE std::uint64_t MatchLoop(D d, const T* HWY_RESTRICT in, std::size_t n, std::uint64_t* HWY_RESTRICT bits,
                                   Fn fn) {
  const std::size_t N = hn::Lanes(d);
  std::uint64_t total = 0;
  std::size_t i = 0, w = 0;
  for (; i + 64 <= n; i += 64, ++w) {
    std::uint64_t word = 0;
    for (std::size_t j = 0; j < 64; j += N) word |= MaskWord(d, fn(d, in + i + j)) << j;
    bits[w] = word;
    total += static_cast<std::uint64_t>(__builtin_popcountll(word));
  }
  if (i < n) {  // tail: a zero-padded copy (zeros may match; their bits are cleared below)
    HWY_ALIGN T buf[64];
    std::memset(static_cast<void*>(buf), 0, sizeof(buf));
    const std::size_t rest = n - i;
    std::memcpy(static_cast<void*>(buf), in + i, rest * sizeof(T));
    std::uint64_t word = 0;
    for (std::size_t j = 0; j < 64; j += N) word |= MaskWord(d, fn(d, buf + j)) << j;
    word &= (std::uint64_t{1} << rest) - 1;
    bits[w] = word;
    total += static_cast<std::uint64_t>(__builtin_popcountll(word));
  }
  return total;
}

template <CompareOp op, class V>
HWY_INLINE auto Cmp(V a, V b) {
  using T = hn::TFromV<V>;
  constexpr bool is_float = hwy::IsFloat<T>();
  if constexpr (op == CompareOp::greater) return a > b;
  else if constexpr (op == CompareOp::less) return b > a;
  else if constexpr (op == CompareOp::greater_equal) {
    if constexpr (is_float) return a >= b;
    else return hn::Not(b > a);
  } else if constexpr (op == CompareOp::less_equal) {
    if constexpr (is_float) return b >= a;
    else return hn::Not(a > b);
  } else if constexpr (op == CompareOp::equal) return a == b;
  else return hn::Not(a == b);
}

template <class T, CompareOp op>
HWY_INLINE std::uint64_t MatchValue(const T* in, std::size_t n, T t, std::uint64_t* bits) {
  const hn::ScalableTag<T> d;
  const auto vt = hn::Set(d, t);
  return MatchLoop(d, in, n, bits, [vt](auto dd, const T* p) { return Cmp<op>(hn::LoadU(dd, p), vt); });
}

template <class T>
HWY_INLINE std::uint64_t MatchNonzero(const T* in, std::size_t n, std::uint64_t* bits) {
  using U = hwy::MakeUnsigned<T>;
  const hn::ScalableTag<U> d;
  return MatchLoop(d, reinterpret_cast<const U*>(in), n, bits,
                   [](auto dd, const U* p) { return hn::Not(hn::LoadU(dd, p) == hn::Zero(dd)); });
}

template <class T>
HWY_INLINE std::uint64_t MatchArith(const T* in, std::size_t n, const Predicate& p, std::uint64_t* bits) {
  if (p.key == KeyKind::nonzero) return MatchNonzero(in, n, bits);
  const T t = p.template threshold_as<T>();
  switch (p.op) {
    case CompareOp::greater: return MatchValue<T, CompareOp::greater>(in, n, t, bits);
    case CompareOp::greater_equal: return MatchValue<T, CompareOp::greater_equal>(in, n, t, bits);
    case CompareOp::less: return MatchValue<T, CompareOp::less>(in, n, t, bits);
    case CompareOp::less_equal: return MatchValue<T, CompareOp::less_equal>(in, n, t, bits);
    case CompareOp::equal: return MatchValue<T, CompareOp::equal>(in, n, t, bits);
    case CompareOp::not_equal: return MatchValue<T, CompareOp::not_equal>(in, n, t, bits);
  }
  return 0;
}

// Rgba8 as little-endian u32 lanes: r bits 0..7, g 8..15, b 16..23, a 24..31.
template <bool kLuminance, CompareOp op>
HWY_INLINE std::uint64_t MatchRgba8Key(const std::uint32_t* in, std::size_t n, std::uint32_t t, std::uint64_t* bits) {
  const hn::ScalableTag<std::uint32_t> d;
  const auto vt = hn::Set(d, t);
  return MatchLoop(d, in, n, bits, [vt](auto dd, const std::uint32_t* p) {
    const auto v = hn::LoadU(dd, p);
    if constexpr (kLuminance) {
      const auto ff = hn::Set(dd, 0xFFu);
      const auto r = hn::And(v, ff);
      const auto g = hn::And(hn::ShiftRight<8>(v), ff);
      const auto b = hn::And(hn::ShiftRight<16>(v), ff);
      const auto lum =
          hn::Add(hn::Add(hn::Mul(r, hn::Set(dd, 299u)), hn::Mul(g, hn::Set(dd, 587u))), hn::Mul(b, hn::Set(dd, 114u)));
      return Cmp<op>(lum, vt);
    } else {
      return Cmp<op>(hn::ShiftRight<24>(v), vt);
    }
  });
}

template <bool kLuminance>
HWY_INLINE std::uint64_t MatchRgba8Op(const std::uint32_t* in, std::size_t n, const Predicate& p, std::uint64_t* bits) {
  const auto t = static_cast<std::uint32_t>(p.threshold_bits);
  switch (p.op) {
    case CompareOp::greater: return MatchRgba8Key<kLuminance, CompareOp::greater>(in, n, t, bits);
    case CompareOp::greater_equal: return MatchRgba8Key<kLuminance, CompareOp::greater_equal>(in, n, t, bits);
    case CompareOp::less: return MatchRgba8Key<kLuminance, CompareOp::less>(in, n, t, bits);
    case CompareOp::less_equal: return MatchRgba8Key<kLuminance, CompareOp::less_equal>(in, n, t, bits);
    case CompareOp::equal: return MatchRgba8Key<kLuminance, CompareOp::equal>(in, n, t, bits);
    case CompareOp::not_equal: return MatchRgba8Key<kLuminance, CompareOp::not_equal>(in, n, t, bits);
  }
  return 0;
}

std::uint64_t MatchBits(Elem type, const void* in, std::size_t n, const Predicate& p, std::uint64_t* bits) {
  switch (type) {
    case Elem::u8: return MatchArith(static_cast<const std::uint8_t*>(in), n, p, bits);
    case Elem::u16: return MatchArith(static_cast<const std::uint16_t*>(in), n, p, bits);
    case Elem::i32: return MatchArith(static_cast<const std::int32_t*>(in), n, p, bits);
    case Elem::u32: return MatchArith(static_cast<const std::uint32_t*>(in), n, p, bits);
    case Elem::f32: return MatchArith(static_cast<const float*>(in), n, p, bits);
    case Elem::i64: return MatchArith(static_cast<const std::int64_t*>(in), n, p, bits);
    case Elem::u64: return MatchArith(static_cast<const std::uint64_t*>(in), n, p, bits);
    case Elem::f64: return MatchArith(static_cast<const double*>(in), n, p, bits);
    case Elem::rgba8: {
      const auto* px = static_cast<const std::uint32_t*>(in);
      if (p.key == KeyKind::nonzero) return MatchNonzero(px, n, bits);
      // matches(): luminance key compares luminance_milli, every other key the alpha.
      return p.key == KeyKind::luminance ? MatchRgba8Op<true>(px, n, p, bits) : MatchRgba8Op<false>(px, n, p, bits);
    }
  }
  return 0;
}

std::uint64_t FlagBits(const std::uint8_t* flags, std::size_t n, std::uint64_t* bits) {
  return MatchNonzero(flags, n, bits);
}

// Each bit of m (up to 32) twice: bit i of m -> bits 2i and 2i + 1.
HWY_INLINE std::uint64_t DoubledBits(std::uint64_t m) {
  m = (m | (m << 16)) & 0x0000FFFF0000FFFFull;
  m = (m | (m << 8)) & 0x00FF00FF00FF00FFull;
  m = (m | (m << 4)) & 0x0F0F0F0F0F0F0F0Full;
  m = (m | (m << 2)) & 0x3333333333333333ull;
  m = (m | (m << 1)) & 0x5555555555555555ull;
  return m | (m << 1);
}

// The lanes of v whose bits in m are set, moved to the front. 8-byte lanes are compressed as pairs
// of 4-byte lanes: Highway's 8-byte Compress measured 15-20x slower than its 4-byte one on AVX3_DL
// (1.9-2.1 against 0.09-0.10 ns per element, Sapphire Rapids).
template <class D, class V>
HWY_INLINE V CompressLanes(D d, V v, std::uint64_t m) {
  if constexpr (sizeof(hn::TFromD<D>) == 8 && HWY_TARGET != HWY_SCALAR) {
    const hn::Repartition<std::uint32_t, D> d32;
    return hn::BitCast(d, hn::Compress(hn::BitCast(d32, v), WordMask(d32, DoubledBits(m))));
  } else {
    return hn::Compress(v, WordMask(d, m));
  }
}

// Compresses vectors of `gen(j)` (lanes j..j+N of the chunk) by bits into out[o..], never past limit.
// Words without kept elements are skipped; words with few (at most 128 / N, where one compress per
// N lanes would cost more than one store per kept element) store `one(i)` for each set bit, found
// by count-trailing-zeros. Sparse masks (flatnonzero at 1 %) are then bound by reading the bits.
template <class D, class Gen, class One>
HWY_INLINE void EmitLoop(D d, std::size_t n, const std::uint64_t* HWY_RESTRICT bits, hn::TFromD<D>* HWY_RESTRICT out,
                         std::size_t limit, Gen gen, One one) {
  using T = hn::TFromD<D>;
  const std::size_t N = hn::Lanes(d);
  const std::uint64_t lane_mask = N >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << N) - 1);
  const std::size_t sparse = 128 / N;  // kept elements per word up to which stores beat compresses
  std::size_t o = 0;
  const std::size_t words = (n + 63) / 64;
  for (std::size_t w = 0; w < words && o < limit; ++w) {
    std::uint64_t word = bits[w];
    if (word == 0) continue;
    const std::size_t base = w * 64;
    if (static_cast<std::size_t>(__builtin_popcountll(word)) <= sparse) {
      do {
        out[o++] = one(base + static_cast<std::size_t>(__builtin_ctzll(word)));
        if (o >= limit) return;
        word &= word - 1;
      } while (word != 0);
      continue;
    }
    const bool full_lanes = base + 64 <= n;  // gen may read lanes base..base+63
    for (std::size_t j = 0; j < 64; j += N) {
      const std::uint64_t m = (word >> j) & lane_mask;
      if (m == 0) continue;
      const std::size_t c = static_cast<std::size_t>(__builtin_popcountll(m));
      if (HWY_LIKELY(full_lanes && o + N <= limit)) {
        hn::StoreU(CompressLanes(d, gen(d, base + j), m), d, out + o);
      } else {
        if (!full_lanes && base + j >= n) break;
        HWY_ALIGN T buf[64];
        hn::Store(CompressLanes(d, gen(d, base + j), m), d, buf);
        const std::size_t take = o + c <= limit ? c : limit - o;
        std::memcpy(out + o, buf, take * sizeof(T));
      }
      o += c;
      if (o >= limit) return;
    }
  }
}

template <class U>
HWY_INLINE void EmitT(const U* HWY_RESTRICT in, std::size_t n, const std::uint64_t* bits, U* out, std::size_t limit) {
  const hn::ScalableTag<U> d;
  const std::size_t N = hn::Lanes(d);
  EmitLoop(
      d, n, bits, out, limit,
      [in, n, N](auto dd, std::size_t i) {
        if (HWY_LIKELY(i + N <= n)) return hn::LoadU(dd, in + i);
        HWY_ALIGN U buf[64] = {};
        std::memcpy(buf, in + i, (n - i) * sizeof(U));
        return hn::Load(dd, buf);
      },
      [in](std::size_t i) { return in[i]; });
}

void EmitValues(std::size_t elem_size, const void* in, std::size_t n, const std::uint64_t* bits, void* out,
                std::size_t limit) {
  switch (elem_size) {
    case 1: return EmitT(static_cast<const std::uint8_t*>(in), n, bits, static_cast<std::uint8_t*>(out), limit);
    case 2: return EmitT(static_cast<const std::uint16_t*>(in), n, bits, static_cast<std::uint16_t*>(out), limit);
    case 4: return EmitT(static_cast<const std::uint32_t*>(in), n, bits, static_cast<std::uint32_t*>(out), limit);
    case 8: return EmitT(static_cast<const std::uint64_t*>(in), n, bits, static_cast<std::uint64_t*>(out), limit);
    default: return;
  }
}

template <class U>
HWY_INLINE void EmitIndex(U first, std::size_t n, const std::uint64_t* bits, U* out, std::size_t limit) {
  const hn::ScalableTag<U> d;
  const auto iota = hn::Iota(d, first);
  EmitLoop(
      d, n, bits, out, limit, [iota](auto dd, std::size_t i) { return hn::Add(iota, hn::Set(dd, static_cast<U>(i))); },
      [first](std::size_t i) { return static_cast<U>(first + static_cast<U>(i)); });
}
void EmitIndex32(std::uint32_t first, std::size_t n, const std::uint64_t* bits, std::uint32_t* out, std::size_t limit) {
  EmitIndex<std::uint32_t>(first, n, bits, out, limit);
}
void EmitIndex64(std::uint64_t first, std::size_t n, const std::uint64_t* bits, std::uint64_t* out, std::size_t limit) {
  EmitIndex<std::uint64_t>(first, n, bits, out, limit);
}

}  // namespace HWY_NAMESPACE
}  // namespace winnow::detail::cpu::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace winnow::detail::cpu::simd {

HWY_EXPORT(MatchBits);
HWY_EXPORT(FlagBits);
HWY_EXPORT(EmitValues);
HWY_EXPORT(EmitIndex32);
HWY_EXPORT(EmitIndex64);

std::uint64_t match_bits(Elem type, const void* in, std::size_t n, const Predicate& pred, std::uint64_t* bits) {
  return HWY_DYNAMIC_DISPATCH(MatchBits)(type, in, n, pred, bits);
}
std::uint64_t flag_bits(const std::uint8_t* flags, std::size_t n, std::uint64_t* bits) {
  return HWY_DYNAMIC_DISPATCH(FlagBits)(flags, n, bits);
}
void emit_values(std::size_t elem_size, const void* in, std::size_t n, const std::uint64_t* bits, void* out,
                 std::size_t limit) {
  HWY_DYNAMIC_DISPATCH(EmitValues)(elem_size, in, n, bits, out, limit);
}
void emit_index32(std::uint32_t first, std::size_t n, const std::uint64_t* bits, std::uint32_t* out,
                  std::size_t limit) {
  HWY_DYNAMIC_DISPATCH(EmitIndex32)(first, n, bits, out, limit);
}
void emit_index64(std::uint64_t first, std::size_t n, const std::uint64_t* bits, std::uint64_t* out,
                  std::size_t limit) {
  HWY_DYNAMIC_DISPATCH(EmitIndex64)(first, n, bits, out, limit);
}
const char* target_name() {
  const std::int64_t usable = hwy::SupportedTargets() & HWY_TARGETS;
  return hwy::TargetName(usable & -usable);
}

}  // namespace winnow::detail::cpu::simd
#endif  // HWY_ONCE
