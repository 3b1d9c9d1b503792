#pragma once
// The histopyramid capability's interface inside the library: what its front end
// (histopyramid.cpp) and stream compaction (CompactAlgorithm::histopyramid) call on each backend.
// Host-only declarations; the implementations are cpu/histopyramid.cpp and
// cuda/histopyramid.cu, whose headers no other capability includes.
//
// Two forms of the base level (the per-element counts):
//   - counts8: one byte per element, 0..255 outputs each (stream expansion);
//   - bits:    one bit per element, 32 elements per 32-bit word, element i is bit i % 32 of word
//              i / 32, bits at or past n zero (compaction: the predicate evaluated once into words).
// Outputs for key k < min(total, capacity): the element (32- or 64-bit), optionally its rank, or,
// for compaction, the element's value gathered from an array (gather_to[k] = gather_from[element]).
#include <cstddef>
#include <cstdint>

namespace winnow::detail {

enum class HistoBase { counts8, bits };

/// Where one expansion writes. Exactly one of `element` and `gather_to` is set.
struct ExpandTargets {
  void* element = nullptr;            ///< std::uint32_t* or std::uint64_t*, by element_bytes
  int element_bytes = 8;              ///< 4 or 8
  std::uint8_t* rank = nullptr;       ///< optional (counts8 only: a bit's rank is always 0)
  const void* gather_from = nullptr;  ///< values, value_bytes each (bits base only)
  void* gather_to = nullptr;
  int value_bytes = 0;  ///< 1, 2, 4, 8 or 16
};

namespace cpu {
/// Host memory. base: n bytes (counts8) or (n + 31) / 32 words (bits). Returns the total.
std::uint64_t histopyramid_expand(HistoBase kind, const void* base, std::uint64_t n, const ExpandTargets& out,
                                  std::uint64_t capacity);
}  // namespace cpu

namespace cuda {
/// Device memory, CUB-style sizing (d_temp == nullptr: sets temp_bytes, launches nothing).
/// Writes the total to *d_total (and *h_total, a device-writable host pointer, when not null).
/// Never synchronises. The CUDA stream is passed as a void* so this header stays host-only.
/// With `tile_sums_ready`, the caller has already written the bits base's tile sums (the
/// pyramid's level 2, see below) for this call, and the pass that sums them is skipped.
void histopyramid_expand(void* d_temp, std::size_t& temp_bytes, HistoBase kind, const void* d_base, std::uint64_t n,
                         const ExpandTargets& out, std::uint64_t* d_total, std::uint64_t* h_total,
                         std::uint64_t capacity, void* stream, bool tile_sums_ready = false);
/// Elements per tile of the bits base. A caller that evaluates its predicate into the bits can
/// count each tile's set bits in the same pass, into histopyramid_tile_sums (one std::uint32_t
/// per tile), and pass tile_sums_ready: the pyramid then never reads the bits to sum them.
constexpr std::uint64_t kBitsTileElements = 32768;
/// Where the tile sums lie in d_temp (sized and laid out by histopyramid_expand for kind and n).
std::uint32_t* histopyramid_tile_sums(void* d_temp, HistoBase kind, std::uint64_t n);
/// The host wrapper of the public host API: copies in, runs, copies min(total, capacity) out.
std::uint64_t histopyramid_expand_host(const std::uint8_t* counts, std::uint64_t n, const ExpandTargets& out,
                                       std::uint64_t capacity);
}  // namespace cuda

}  // namespace winnow::detail
