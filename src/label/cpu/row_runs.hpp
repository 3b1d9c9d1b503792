#pragma once
// The foreground runs of one row of an 8-bit mask, 64 pixels at a time: SSE2 compares give a bit
// row, run starts and ends are its bit transitions; the 16-byte fills that write label rows; and
// the union-find finds. Shared by the image (label_runs.cpp) and volume (label_volume.cpp)
// run-based labelings.
#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace winnow::detail::cpu {

/// The root of a in the union-find forest p, halving the path on the way (each visited node then
/// points at its grandparent).
template <class Idx>
inline Idx find_halving(Idx* p, Idx a) {
  while (p[a] != a) {
    const Idx g = p[p[a]];
    p[a] = g;
    a = g;
  }
  return a;
}

/// The root of a without path compression: for the seams between stripes or slabs, which must
/// leave non-roots pointing inside their own stripe or slab.
template <class Idx>
inline Idx find_root(const Idx* p, Idx a) {
  while (p[a] != a) a = p[a];
  return a;
}

/// Foreground bits of up to 64 mask bytes (bit i = m[i] != 0); bytes past n read as background.
inline std::uint64_t fg_bits(const std::uint8_t* m, std::int64_t n) {
  if (n < 64) {
    alignas(16) std::uint8_t buf[64] = {};
    std::memcpy(buf, m, static_cast<std::size_t>(n));
    return fg_bits(buf, 64);
  }
#if defined(__SSE2__)
  const __m128i z = _mm_setzero_si128();
  const auto b0 = static_cast<std::uint64_t>(static_cast<std::uint32_t>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m)), z))));
  const auto b1 = static_cast<std::uint64_t>(static_cast<std::uint32_t>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m + 16)), z))));
  const auto b2 = static_cast<std::uint64_t>(static_cast<std::uint32_t>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m + 32)), z))));
  const auto b3 = static_cast<std::uint64_t>(static_cast<std::uint32_t>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m + 48)), z))));
  return ~(b0 | (b1 << 16) | (b2 << 32) | (b3 << 48));
#else
  std::uint64_t bits = 0;
  for (int i = 0; i < 64; ++i) bits |= static_cast<std::uint64_t>(m[i] != 0) << i;
  return bits;
#endif
}

/// Appends base + the position of every set bit of `bits`, lowest first, to out[n], out[n + 1],
/// ...; returns the new n. (Run starts and ends from the words of a row's run-edge bits.)
inline std::uint32_t append_bit_positions(std::uint64_t bits, std::uint32_t base, std::uint32_t* out, std::uint32_t n) {
  while (bits) {
    out[n++] = base + static_cast<std::uint32_t>(__builtin_ctzll(bits));
    bits &= bits - 1;
  }
  return n;
}

/// The foreground runs [st[i], en[i]) of one mask row, left to right; returns their number.
inline std::uint32_t row_runs(const std::uint8_t* m, std::int64_t W, std::uint32_t* st, std::uint32_t* en) {
  std::uint32_t ns = 0, ne = 0;
  std::uint64_t carry = 0;
  for (std::int64_t x0 = 0; x0 < W; x0 += 64) {
    const std::uint64_t w = fg_bits(m + x0, std::min<std::int64_t>(64, W - x0));
    const std::uint64_t prev = (w << 1) | carry;
    carry = w >> 63;
    const auto base = static_cast<std::uint32_t>(x0);
    ns = append_bit_positions(w & ~prev, base, st, ns);
    ne = append_bit_positions(~w & prev, base, en, ne);
  }
  if (ne < ns) en[ne] = static_cast<std::uint32_t>(W);
  return ns;
}

/// Writes v to out[a, b); may also write up to 3 elements past b, but never at or past `limit`
/// (the caller's later writes cover the overshoot).
inline void fill_over(std::uint32_t* out, std::uint32_t a, std::uint32_t b, std::uint32_t limit, std::uint32_t v) {
#if defined(__SSE2__)
  if (b + 3 < limit) {
    const __m128i vv = _mm_set1_epi32(static_cast<int>(v));
    for (; a < b; a += 4) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + a), vv);
    return;
  }
#endif
  (void)limit;
  for (; a < b; ++a) out[a] = v;
}

/// Writes v to out[a, b) of a row of `limit` elements that is zero there and after b: 16-byte
/// stores that may write up to 3 elements past b, then one 16-byte store of zeros at b that puts
/// them back (it may reach into a later run, which is written after). Element by element near the
/// row's end.
inline void put_run(std::uint32_t* out, std::uint32_t a, std::uint32_t b, std::uint32_t limit, std::uint32_t v) {
#if defined(__SSE2__)
  if (b + 4 <= limit) {
    const __m128i vv = _mm_set1_epi32(static_cast<int>(v));
    for (std::uint32_t x = a; x < b; x += 4) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + x), vv);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + b), _mm_setzero_si128());
    return;
  }
#endif
  (void)limit;
  for (; a < b; ++a) out[a] = v;
}

}  // namespace winnow::detail::cpu
