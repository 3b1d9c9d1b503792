// Stream expansion on the CPU (OpenMP): the same pyramid as the CUDA backend
// (cuda/histopyramid.cu, whose opening essay describes the algorithm and its references), shaped
// for a few cores with large caches.
//
//   level 0: the counts (one byte per element, or one bit per element for compaction);
//   level 1: one sum per tile of 2^16 elements (parallel over tiles; reads the counts once);
//   top:     the exclusive prefix of the tile sums (one thread: n / 2^16 values);
//   output:  each tile owns the keys [prefix, prefix + sum) and writes them in input order, the
//            element and rank of each key coming from a walk over the tile's counts (parallel
//            over tiles, dynamically scheduled since tiles differ in output).
// Work O(n + total): the counts are read twice (64 KiB per tile), every output written once.
// Stable: keys follow the input order.
#include "histopyramid/histopyramid.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/threads.hpp"

namespace winnow::detail::cpu {
namespace {

constexpr std::uint64_t kTile = std::uint64_t{1} << 16;  // elements per tile, a multiple of 32

// The base level: the sum over elements [lo, hi), and each output of them in order.
struct Counts8 {
  const std::uint8_t* c;
  std::uint64_t sum(std::uint64_t lo, std::uint64_t hi) const {
    std::uint64_t s = 0;
    for (std::uint64_t i = lo; i < hi; ++i) s += c[i];
    return s;
  }
  template <class Emit>
  void each(std::uint64_t lo, std::uint64_t hi, Emit&& emit) const {
    for (std::uint64_t i = lo; i < hi; ++i)
      for (unsigned r = 0; r < c[i]; ++r) emit(i, r);
  }
};

struct Bits {
  const std::uint32_t* w;  // lo is a multiple of 32; bits at or past n are zero
  std::uint64_t sum(std::uint64_t lo, std::uint64_t hi) const {
    std::uint64_t s = 0;
    for (std::uint64_t j = lo / 32; j < (hi + 31) / 32; ++j) s += static_cast<unsigned>(__builtin_popcount(w[j]));
    return s;
  }
  template <class Emit>
  void each(std::uint64_t lo, std::uint64_t hi, Emit&& emit) const {
    for (std::uint64_t j = lo / 32; j < (hi + 31) / 32; ++j)
      for (std::uint32_t b = w[j]; b != 0; b &= b - 1) emit(j * 32 + static_cast<unsigned>(__builtin_ctz(b)), 0u);
  }
};

template <class Base>
std::uint64_t expand(const Base& base, std::uint64_t n, const ExpandTargets& out, std::uint64_t capacity) {
  if (n == 0) return 0;
  const std::uint64_t tiles = (n + kTile - 1) / kTile;
  std::vector<std::uint64_t> offset(tiles + 1, 0);
  const auto st = static_cast<std::int64_t>(tiles);
#pragma omp parallel for schedule(static) num_threads(cpu_threads()) if (tiles > 1)
  for (std::int64_t t = 0; t < st; ++t) {
    const auto lo = static_cast<std::uint64_t>(t) * kTile;
    offset[t + 1] = base.sum(lo, std::min(n, lo + kTile));
  }
  for (std::uint64_t t = 0; t < tiles; ++t) offset[t + 1] += offset[t];
  const std::uint64_t total = offset[tiles];

#pragma omp parallel for schedule(dynamic, 1) num_threads(cpu_threads()) if (tiles > 1)
  for (std::int64_t t = 0; t < st; ++t) {
    std::uint64_t key = offset[t];
    if (key >= capacity || key == offset[t + 1]) continue;
    const auto lo = static_cast<std::uint64_t>(t) * kTile;
    const std::uint64_t hi = std::min(n, lo + kTile);
    // One loop per target kind, so the per-output work is a store or two.
    if (out.gather_to != nullptr) {
      const auto vb = static_cast<std::size_t>(out.value_bytes);
      const auto* from = static_cast<const unsigned char*>(out.gather_from);
      auto* to = static_cast<unsigned char*>(out.gather_to);
      base.each(lo, hi, [&](std::uint64_t i, unsigned) {
        if (key < capacity) std::memcpy(to + key * vb, from + i * vb, vb);
        ++key;
      });
    } else if (out.element_bytes == 4) {
      auto* e = static_cast<std::uint32_t*>(out.element);
      base.each(lo, hi, [&](std::uint64_t i, unsigned r) {
        if (key < capacity) {
          e[key] = static_cast<std::uint32_t>(i);
          if (out.rank) out.rank[key] = static_cast<std::uint8_t>(r);
        }
        ++key;
      });
    } else {
      auto* e = static_cast<std::uint64_t*>(out.element);
      base.each(lo, hi, [&](std::uint64_t i, unsigned r) {
        if (key < capacity) {
          e[key] = i;
          if (out.rank) out.rank[key] = static_cast<std::uint8_t>(r);
        }
        ++key;
      });
    }
  }
  return total;
}

}  // namespace

std::uint64_t histopyramid_expand(HistoBase kind, const void* base, std::uint64_t n, const ExpandTargets& out,
                                  std::uint64_t capacity) {
  if (kind == HistoBase::bits) return expand(Bits{static_cast<const std::uint32_t*>(base)}, n, out, capacity);
  return expand(Counts8{static_cast<const std::uint8_t*>(base)}, n, out, capacity);
}

}  // namespace winnow::detail::cpu
