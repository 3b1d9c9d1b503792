#pragma once
// Rows of a volume as bit rows, 64 voxels to a word: which voxels are foreground (non-zero) and
// where runs start (a foreground voxel whose left neighbour is background or, for multi-label
// input, holds another value), from SSE2 compares of any voxel type; and the element-wise
// equality of two rows, which multi-label pairing needs. The volume labeling
// (label_volume.cpp) keeps these two bit rows per row instead of lists of runs.
#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "label/cpu/row_runs.hpp"

namespace winnow::detail::cpu {

#if defined(__SSE2__)
/// The equality of the elements of two 16-byte vectors, one bit per element (16 / sizeof(T) bits).
template <class T>
[[gnu::always_inline]] inline unsigned equal_lanes(__m128i a, __m128i b) {
  if constexpr (sizeof(T) == 1) {
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)));
  } else if constexpr (sizeof(T) == 2) {
    const __m128i e = _mm_cmpeq_epi16(a, b);
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(e, e))) & 0xffu;
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(a, b))));
  } else {
    const __m128i e = _mm_cmpeq_epi32(a, b);  // 64-bit lanes: both halves equal
    return static_cast<unsigned>(_mm_movemask_pd(_mm_castsi128_pd(_mm_and_si128(e, _mm_shuffle_epi32(e, 0xB1)))));
  }
}
#endif

/// Bit i of the result: a[i] == b[i] (Zero: a[i] == 0, b unread), for i < 64; all 64 are read.
template <class T, bool Zero>
[[gnu::always_inline]] inline std::uint64_t equal64(const T* a, const T* b) {
#if defined(__SSE2__)
  constexpr int per = 16 / static_cast<int>(sizeof(T));
  std::uint64_t bits = 0;
#pragma GCC unroll 32
  for (int v = 0; v < 64 / per; ++v) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + v * per));
    const __m128i y = Zero ? _mm_setzero_si128() : _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + v * per));
    bits |= static_cast<std::uint64_t>(equal_lanes<T>(x, y)) << (v * per);
  }
  return bits;
#else
  std::uint64_t bits = 0;
  for (int i = 0; i < 64; ++i) bits |= static_cast<std::uint64_t>(a[i] == (Zero ? T{} : b[i])) << i;
  return bits;
#endif
}

/// Bit i: a[i] == b[i], for i < n <= 64 (bits from n on are 0); reads n elements of each.
template <class T>
inline std::uint64_t equal_bits(const T* a, const T* b, int n) {
  if (n == 64) return equal64<T, false>(a, b);
  alignas(16) T ca[64] = {}, cb[64] = {};
  std::memcpy(ca, a, static_cast<std::size_t>(n) * sizeof(T));
  std::memcpy(cb, b, static_cast<std::size_t>(n) * sizeof(T));
  return equal64<T, false>(ca, cb) & ((std::uint64_t{1} << n) - 1);
}

/// Bit i: vb[x0 + i] == va[x0 + i + dx] (dx = -1, 0 or 1), for the i < n <= 64 whose x0 + i + dx lies
/// in [0, nx) (others 0): the equality of a row with another row, or with its left or right
/// neighbour in it. Reads only inside both rows.
template <class T>
inline std::uint64_t equal_at(const T* vb, const T* va, std::int64_t x0, int n, std::int64_t nx, int dx) {
  if (n == 64) {
    if (x0 + dx >= 0 && x0 + 64 + dx <= nx) return equal64<T, false>(vb + x0, va + x0 + dx);
    // A full word at the start (dx = -1) or the end (dx = 1) of a row longer than one word:
    // shifted compares that stay inside the row.
    if (dx < 0 && x0 + 64 < nx) return equal64<T, false>(vb + x0 + 1, va + x0) << 1;
    if (dx > 0 && x0 > 0) return equal64<T, false>(vb + x0 - 1, va + x0) >> 1;
  }
  const int lo = x0 + dx < 0 ? 1 : 0;
  const int hi = x0 + n + dx > nx ? n - 1 : n;
  if (hi <= lo) return 0;
  return equal_bits(vb + x0 + lo, va + x0 + lo + dx, hi - lo) << lo;
}

/// The bits of `mask` (candidates among the n <= 64 voxels from x0, each with x0 + i + dx in
/// [0, nx)) where vb[x0 + i] == va[x0 + i + dx]: one by one when they are few, else a SIMD compare
/// of the word.
template <class T>
[[gnu::always_inline]] inline std::uint64_t keep_equal(std::uint64_t mask, const T* vb, const T* va, std::int64_t x0,
                                                       int n, std::int64_t nx, int dx) {
  if (__builtin_popcountll(mask) > 4) return mask & equal_at(vb, va, x0, n, nx, dx);
  std::uint64_t kept = 0;
  for (std::uint64_t m = mask; m; m &= m - 1) {
    const int i = __builtin_ctzll(m);
    kept |= static_cast<std::uint64_t>(vb[x0 + i] == va[x0 + i + dx]) << i;
  }
  return kept;
}

/// Bit i: a[i] != 0, for i < n <= 64 (bits from n on are 0).
template <class T>
inline std::uint64_t nonzero_bits(const T* a, int n) {
  if constexpr (sizeof(T) == 1) {
    return fg_bits(reinterpret_cast<const std::uint8_t*>(a), n);
  } else {
    if (n == 64) return ~equal64<T, true>(a, nullptr);
    alignas(16) T ca[64] = {};
    std::memcpy(ca, a, static_cast<std::size_t>(n) * sizeof(T));
    return ~equal64<T, true>(ca, nullptr) & ((std::uint64_t{1} << n) - 1);
  }
}

/// Bit i: row[x0 + i] == row[x0 + i - 1], for i < n <= 64 (0 for x = 0 and from n on); reads
/// row[x0 - 1] .. row[x0 + n - 1] only (and row[x0 + 64] when it exists: x0 + 64 < nx).
template <class T>
inline std::uint64_t same_as_left_bits(const T* row, std::int64_t x0, int n, std::int64_t nx) {
  if (n == 64 && x0 > 0) return equal64<T, false>(row + x0, row + x0 - 1);
  if (n == 64 && x0 + 64 < nx) return equal64<T, false>(row + 1, row) << 1;  // x0 == 0
  alignas(16) T cur[65] = {}, left[65] = {};
  const int k = x0 > 0 ? n : n - 1;  // pairs (x, x - 1) with x - 1 in the row
  if (k <= 0) return 0;
  const T* from = x0 > 0 ? row + x0 : row + 1;
  std::memcpy(cur, from, static_cast<std::size_t>(k) * sizeof(T));
  std::memcpy(left, from - 1, static_cast<std::size_t>(k) * sizeof(T));
  const std::uint64_t e = equal64<T, false>(cur, left) & (k == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1);
  return x0 > 0 ? e : e << 1;
}

/// The foreground and run-start bit rows of one row of nx voxels (nw = ceil(nx / 64) words each;
/// bits past nx are 0) and, per word, the number of run starts before it; returns the row's
/// number of runs. Binary: runs of non-zero voxels; Multi: runs of one non-zero value.
template <class T, bool Multi>
inline std::uint32_t row_bits(const T* row, std::int64_t nx, std::uint64_t* fg, std::uint64_t* starts,
                              std::uint32_t* before) {
  std::uint32_t count = 0;
  std::uint64_t carry = 0;  // binary: bit 0 = the previous word's last voxel is foreground
  for (std::int64_t x0 = 0, w = 0; x0 < nx; x0 += 64, ++w) {
    const int n = static_cast<int>(std::min<std::int64_t>(64, nx - x0));
    const std::uint64_t f = nonzero_bits(row + x0, n);
    std::uint64_t s;
    if constexpr (Multi) {
      s = f & ~same_as_left_bits(row, x0, n, nx);
    } else {
      s = f & ~((f << 1) | carry);
      carry = f >> 63;
    }
    fg[w] = f;
    starts[w] = s;
    before[w] = count;
    count += static_cast<std::uint32_t>(__builtin_popcountll(s));
  }
  return count;
}

}  // namespace winnow::detail::cpu
