// CPU stream compaction.
//
// group_scan (the default): the input is cut into chunks of ~256 KiB (a multiple of 64
// elements). For each chunk a thread
//   1. evaluates the predicate into a bit mask (SIMD compare + mask bits; common/cpu/simd.cpp) and
//      counts the bits: the "count" step, which reads the chunk from memory once;
//   2. publishes its count, looks back over the previous chunks until one has published its
//      inclusive prefix, adds, and publishes its own inclusive prefix (the "scan" step: a
//      decoupled look-back, Merrill & Garland 2016; chunks are handed out in increasing order so
//      predecessors are already being worked on, and a predecessor whose thread was preempted
//      is counted by the waiting thread instead of waited for);
//   3. writes its kept elements at that offset: SIMD Compress + full-width stores for 1/2/4/8-byte
//      elements, a popcount/ctz loop for 16-byte ones (the "scatter" step; the chunk is still in
//      L2, so the input is read from memory only once).
// Writes are branch-free; there is no data-dependent branch per element (std::copy_if's
// misprediction at 50% selectivity is what makes it slow). Work O(n), one pass over memory
// (n elements read, k written), output in input order for Order::stable and Order::any alike.
//
// histopyramid: the predicate into one bit per element, then the histopyramid capability
// (src/histopyramid: a pyramid of tile sums, each tile writing its own output range). Two passes
// over the bits instead of one over the chunk; there to cross-check the CUDA version.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "common/cpu/simd.hpp"
#include "compact/backends.hpp"
#include "histopyramid/histopyramid.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cpu {
namespace {

template <class T>
constexpr bool kSimdPredicate = !std::is_same_v<T, RgbaF32>;

template <class T>
constexpr simd::Elem elem_of() {
  if constexpr (std::is_same_v<T, std::uint8_t>) return simd::Elem::u8;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return simd::Elem::u16;
  else if constexpr (std::is_same_v<T, std::int32_t>) return simd::Elem::i32;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return simd::Elem::u32;
  else if constexpr (std::is_same_v<T, float>) return simd::Elem::f32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return simd::Elem::i64;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return simd::Elem::u64;
  else if constexpr (std::is_same_v<T, double>) return simd::Elem::f64;
  else {
    static_assert(std::is_same_v<T, Rgba8>);
    return simd::Elem::rgba8;
  }
}

/// Chunk length in elements: ~256 KiB of input, a multiple of 64.
template <class T>
constexpr std::size_t chunk_elements() {
  constexpr std::size_t bytes = std::size_t{1} << 18;
  return std::max<std::size_t>(4096, bytes / sizeof(T)) & ~std::size_t{63};
}

// Branch-free scalar predicate pass (16-byte elements): the result of matches() is OR-ed in.
template <class T>
std::uint64_t scalar_match_bits(const T* in, std::size_t n, const Predicate& p, std::uint64_t* bits) {
  std::uint64_t total = 0;
  for (std::size_t w = 0, i = 0; i < n; ++w) {
    const std::size_t end = std::min(n, i + 64);
    std::uint64_t word = 0;
    for (std::size_t j = 0; i < end; ++i, ++j) word |= static_cast<std::uint64_t>(matches(p, in[i])) << j;
    bits[w] = word;
    total += static_cast<std::uint64_t>(__builtin_popcountll(word));
  }
  return total;
}

template <class T>
void emit_values(const T* in, std::size_t n, const std::uint64_t* bits, T* out, std::size_t limit) {
  if constexpr (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) {
    simd::emit_values(sizeof(T), in, n, bits, out, limit);
  } else {
    std::size_t o = 0;
    for (std::size_t w = 0; w * 64 < n && o < limit; ++w) {
      std::uint64_t word = bits[w];
      while (word != 0 && o < limit) {
        out[o++] = in[w * 64 + static_cast<std::size_t>(__builtin_ctzll(word))];
        word &= word - 1;
      }
    }
  }
}

template <class T>
struct Chunks {
  const CompactRequest<T>& r;

  std::uint64_t count(std::uint64_t lo, std::size_t len, std::uint64_t* bits) const {
    if (r.flags != nullptr) return simd::flag_bits(r.flags + lo, len, bits);
    if constexpr (kSimdPredicate<T>) return simd::match_bits(elem_of<T>(), r.in + lo, len, r.pred, bits);
    else return scalar_match_bits(r.in + lo, len, r.pred, bits);
  }

  void emit(std::uint64_t lo, std::size_t len, const std::uint64_t* bits, std::uint64_t offset,
            std::uint64_t kept) const {
    if (kept == 0 || offset >= r.out_capacity) return;
    const auto limit = static_cast<std::size_t>(std::min(kept, r.out_capacity - offset));
    switch (r.output) {
      case OutputKind::values: emit_values(r.in + lo, len, bits, static_cast<T*>(r.out) + offset, limit); break;
      case OutputKind::index32:
        simd::emit_index32(static_cast<std::uint32_t>(lo), len, bits, static_cast<std::uint32_t*>(r.out) + offset,
                           limit);
        break;
      case OutputKind::index64:
        simd::emit_index64(lo, len, bits, static_cast<std::uint64_t*>(r.out) + offset, limit);
        break;
    }
  }
};

constexpr std::uint64_t kPending = ~std::uint64_t{0};

// Per-chunk scan state, one cache line each (neighbouring chunks belong to different threads).
struct alignas(64) ChunkState {
  std::atomic<std::uint64_t> count{kPending};      ///< kept in this chunk
  std::atomic<std::uint64_t> inclusive{kPending};  ///< kept in chunks 0..this one
};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Kept elements before chunk c: looks back over the predecessors, adding their counts until one
// has published its inclusive prefix (decoupled look-back). A predecessor that has not even
// published its count after a short spin (its thread was likely descheduled: this machine may be
// shared) is counted here instead; counting is side-effect free and every thread gets the same
// value, so the duplicate store is harmless. No thread ever waits for a preempted one.
template <class T>
std::uint64_t exclusive_prefix(std::uint64_t c, ChunkState* states, const Chunks<T>& job, std::size_t chunk,
                               std::uint64_t* scratch) {
  std::uint64_t sum = 0;
  for (std::uint64_t j = c; j-- > 0;) {
    for (unsigned spins = 0;; ++spins) {
      const std::uint64_t inc = states[j].inclusive.load(std::memory_order_acquire);
      if (inc != kPending) return sum + inc;
      std::uint64_t cnt = states[j].count.load(std::memory_order_acquire);
      if (cnt != kPending) {
        sum += cnt;
        break;
      }
      if (spins >= 2048) {
        const std::uint64_t lo = j * chunk;
        cnt = job.count(lo, static_cast<std::size_t>(std::min<std::uint64_t>(chunk, job.r.n - lo)), scratch);
        states[j].count.store(cnt, std::memory_order_release);
        sum += cnt;
        break;
      }
      cpu_relax();
    }
  }
  return sum;
}

template <class T>
std::uint64_t group_scan(const CompactRequest<T>& r) {
  const std::uint64_t n = r.n;
  if (n == 0) return 0;
  constexpr std::size_t chunk = chunk_elements<T>();
  const std::uint64_t chunks = (n + chunk - 1) / chunk;
  const Chunks<T> job{r};
  // Threads by size: at least four chunks (1 MiB of input) each, since waking a sleeping thread
  // (OMP_WAIT_POLICY=passive, as the Python package sets it) costs tens of microseconds.
  const int threads = static_cast<int>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(cpu_threads()), std::max<std::uint64_t>(1, chunks / 4)));

  if (threads <= 1) {
    std::vector<std::uint64_t> bits(chunk / 64);
    std::uint64_t offset = 0;
    for (std::uint64_t c = 0; c < chunks; ++c) {
      const std::uint64_t lo = c * chunk;
      const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, n - lo));
      const std::uint64_t kept = job.count(lo, len, bits.data());
      job.emit(lo, len, bits.data(), offset, kept);
      offset += kept;
    }
    return offset;
  }

  std::unique_ptr<ChunkState[]> states(new ChunkState[chunks]);
  std::atomic<std::uint64_t> next{0};
#pragma omp parallel num_threads(threads)
  {
    std::vector<std::uint64_t> bits(chunk / 64), scratch(chunk / 64);
    for (;;) {
      const std::uint64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) break;
      const std::uint64_t lo = c * chunk;
      const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, n - lo));
      const std::uint64_t kept = job.count(lo, len, bits.data());
      states[c].count.store(kept, std::memory_order_release);
      const std::uint64_t before = exclusive_prefix(c, states.get(), job, chunk, scratch.data());
      states[c].inclusive.store(before + kept, std::memory_order_release);
      job.emit(lo, len, bits.data(), before, kept);
    }
  }
  return states[chunks - 1].inclusive.load(std::memory_order_acquire);
}

// The predicate into one bit per element (the count pass of group_scan, over all chunks at once),
// then the histopyramid capability turns the bits into outputs.
template <class T>
std::uint64_t histopyramid(const CompactRequest<T>& r) {
  const std::uint64_t n = r.n;
  if (n == 0) return 0;
  constexpr std::size_t chunk = chunk_elements<T>();  // a multiple of 64: chunks own whole words
  const auto chunks = static_cast<std::int64_t>((n + chunk - 1) / chunk);
  std::vector<std::uint64_t> bits((n + 63) / 64, 0);
  const Chunks<T> job{r};
#pragma omp parallel for schedule(static) num_threads(cpu_threads()) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::uint64_t lo = static_cast<std::uint64_t>(c) * chunk;
    job.count(lo, static_cast<std::size_t>(std::min<std::uint64_t>(chunk, n - lo)), bits.data() + lo / 64);
  }
  if (n % 64 != 0) bits.back() &= (std::uint64_t{1} << (n % 64)) - 1;  // the base's bits past n are zero
  static_assert(std::endian::native == std::endian::little, "64-bit words read as pairs of 32-bit words");
  ExpandTargets out;
  switch (r.output) {
    case OutputKind::values:
      out.gather_from = r.in;
      out.gather_to = r.out;
      out.value_bytes = sizeof(T);
      break;
    case OutputKind::index32:
      out.element = r.out;
      out.element_bytes = 4;
      break;
    case OutputKind::index64:
      out.element = r.out;
      out.element_bytes = 8;
      break;
  }
  return histopyramid_expand(HistoBase::bits, bits.data(), n, out, r.out_capacity);
}

}  // namespace

template <class T>
std::uint64_t compact(const CompactRequest<T>& request) {
  switch (request.algorithm) {
    case CompactAlgorithm::automatic:
    case CompactAlgorithm::group_scan: return group_scan(request);
    case CompactAlgorithm::histopyramid: return histopyramid(request);
    default:
      throw BackendError("compaction algorithm '" + std::string(to_string(request.algorithm)) +
                         "' is not available on the cpu backend");
  }
}

#define WINNOW_INSTANTIATE(T) template std::uint64_t compact<T>(const CompactRequest<T>&);
WINNOW_COMPACT_TYPES(WINNOW_INSTANTIATE)
#undef WINNOW_INSTANTIATE

}  // namespace winnow::detail::cpu
