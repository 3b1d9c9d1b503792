// Stream expansion on CUDA through a HistoPyramid: counts in, (element, rank) per output key out.
//
// The HistoPyramid (Ziegler, Tevs, Theobalt & Seidel, "On-the-fly point clouds through histogram
// pyramids", VMV 2006; Dyken, Ziegler, Theobalt & Seidel, "High-speed marching cubes using
// HistoPyramids", Computer Graphics Forum 2008) is a reduction pyramid over per-element output
// counts: each level sums groups of the level below, the top holds the total, and output key k
// finds its element by descending from the top, at each node choosing the child whose key range
// holds k and subtracting the range's start; what remains at the base is k's rank inside its
// element's count. Dyken's HP5 (ComputeStuff, 2019) is the fastest published form: fan-in 5
// (a uint4 of four children's running sums plus a sideband for the fifth), the base and lower
// levels built in shared memory by one kernel, the top levels by one small kernel, and a
// traversal that lets a warp's keys share the upper path.
//
// The layout chosen here keeps that shape but makes the fan-in as wide as one thread block:
//
//   level 0  the counts. counts8: one byte per element (0..255); bits: one bit per element, 32
//            per word (compaction, k <= 1, after the caller evaluated its predicate into words).
//   level 1  per thread, the sum of its run of consecutive elements (32 counts, read as two
//            16-byte loads and summed with __dp4a; or 4 words = 128 bits, one 16-byte load and
//            popc), in registers;
//   level 2  per tile (one block: 256 threads, 8192 counts or 32768 bits), the sum of its
//            threads' sums (cub::BlockReduce), the one level written to global memory: 4 bytes
//            per tile (tile_sums_kernel; or the caller's predicate pass, which counts each
//            tile's kept elements as it writes their bits: tile_sums_ready);
//   top      the exclusive prefix of the tile sums, by one block of 1024 threads in chunks of
//            16384 (tile_offsets_kernel); it also stores the total (device, and host-mapped
//            memory when asked). Up to kTilesWithoutTop tiles there is no top pass: each
//            expansion block sums the tile sums before its own (at most 8 KB, from L2), and the
//            last one stores the total -- one launch less, which is most of what separates a
//            2^24-element compaction at 1 % kept from its memory floor.
//
// Traversal is by output range rather than one descent per key: tile t owns keys
// [offset_t, offset_t + sum_t), so the descent from the top to the tile is the one lookup of
// offset_t, shared by all of the tile's keys. Inside the tile (expand_kernel) the block re-reads
// its counts, scans its threads' sums (cub::BlockScan: thread j owns keys [start_j, start_j +
// sum_j) of the tile), and produces the keys in windows of 4096: every thread whose key range
// meets the window walks its own counts and stores (element, rank) at key - window into shared
// memory, then the block writes the window out, coalesced, in key order. That is the last two
// levels of the descent done by the owner of the keys instead of by the keys; each key costs a
// couple of shared-memory stores and loads, never a search. Dense tiles of bits (more keys than
// one window) skip the staging: a thread walking 128 bits one key at a time is the slow part
// there, so each warp takes its words one at a time instead, lane b the word's bit b, whose key
// is the word's first key plus the set bits below b -- consecutive keys, coalesced gathers and
// stores, and no barrier (BitsBase::write_dense; compaction at 50 % and 99 % kept, 2^24: 1.6x
// and 2.2x faster than staged).
//
// Why not HP5's per-key descent: a descent reads log5(n) nodes per key (cached, but dependent
// loads), and a separate kernel must keep the whole pyramid; by output range, the counts are read
// twice (once per pass, n bytes or n/8 bytes each) and every output is written once, coalesced:
// the traffic of a prefix sum without materialising the n offsets (an exclusive scan + expand
// writes and reads 4n bytes of offsets more). For compaction (bits) this is "read the flags,
// write the outputs, once"; the caller's predicate pass reads the values and writes n/8 bytes,
// and values are gathered from the input for the kept elements only.
//
// Cost: O(n + total) work; three launches at most (tile sums, top, expand); memory n (+n) bytes of counts
// read, 12 bytes per tile of temporary storage, outputs written once. The top is one block: fine
// up to ~2^19 tiles (2^32 counts); past that it would want a middle level. Stable: keys follow
// the input order, exactly as an exclusive prefix sum of the counts assigns them.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <string>
#include <type_traits>

#include "common/cuda/check.cuh"
#include "histopyramid/histopyramid.hpp"
#include "winnow/cuda/histopyramid.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cuda {
namespace {

constexpr int kThreads = 256;       // threads per tile
constexpr unsigned kWindow = 4096;  // output keys staged in shared memory per round
constexpr int kTopThreads = 1024;
constexpr int kTopItems = 16;  // tile sums per thread and chunk of the top scan

// ---- level 0 readers: each thread of tile t owns kItems consecutive elements ----------------

/// One byte per element.
struct Counts8Base {
  static constexpr int kItems = 32;
  static constexpr std::uint64_t kTile = std::uint64_t{kThreads} * kItems;  // 8192
  struct Thread {
    unsigned w[8];  // element e of the thread's run is byte e % 4 of w[e / 4]
  };
  const std::uint8_t* counts;
  std::uint64_t n;
  bool aligned;  // counts 16-byte aligned: vector loads

  __device__ __forceinline__ void load(std::uint64_t tile, Thread& t) const {
    const std::uint64_t first = tile * kTile + static_cast<std::uint64_t>(threadIdx.x) * kItems;
    if (aligned && first + kItems <= n) {
      const uint4* p = reinterpret_cast<const uint4*>(counts + first);
      const uint4 a = __ldg(p), b = __ldg(p + 1);
      t.w[0] = a.x, t.w[1] = a.y, t.w[2] = a.z, t.w[3] = a.w;
      t.w[4] = b.x, t.w[5] = b.y, t.w[6] = b.z, t.w[7] = b.w;
      return;
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {  // the last, partial run (or an unaligned input): no read past n
      unsigned v = 0;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const std::uint64_t i = first + 4 * j + b;
        if (i < n) v |= static_cast<unsigned>(counts[i]) << (8 * b);
      }
      t.w[j] = v;
    }
  }
  __device__ __forceinline__ static unsigned sum(const Thread& t) {
    unsigned s = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) s = __dp4a(t.w[j], 0x01010101u, s);
    return s;
  }
  static constexpr bool kDense = false;  // counts up to 255 per element: always staged
  /// Stores (local element, rank) at key - w for the thread's keys inside [w, w + kWindow);
  /// `start` is the thread's first key in the tile.
  __device__ __forceinline__ static void stage(const Thread& t, unsigned start, unsigned w, std::uint16_t* s_elem,
                                               std::uint8_t* s_rank) {
    const unsigned local0 = threadIdx.x * kItems;
    const unsigned w_end = w + kWindow;
    unsigned s = start;
#pragma unroll
    for (int e = 0; e < kItems; ++e) {
      const unsigned c = (t.w[e / 4] >> (8 * (e % 4))) & 0xffu;
      const unsigned lo = max(s, w), hi = min(s + c, w_end);
      for (unsigned key = lo; key < hi; ++key) {
        s_elem[key - w] = static_cast<std::uint16_t>(local0 + e);
        s_rank[key - w] = static_cast<std::uint8_t>(key - s);
      }
      s += c;
    }
  }
};

/// One bit per element, 32 per word; bits at or past n are ignored (cleared here).
struct BitsBase {
  static constexpr int kWords = 4;
  static constexpr int kItems = 32 * kWords;
  static constexpr std::uint64_t kTile = std::uint64_t{kThreads} * kItems;  // 32768
  static_assert(kTile == kBitsTileElements, "the tile callers sum for tile_sums_ready");
  struct Thread {
    unsigned w[kWords];
  };
  const std::uint32_t* words;
  std::uint64_t n;
  std::uint64_t word_count;  // (n + 31) / 32
  bool aligned;

  __device__ __forceinline__ void load(std::uint64_t tile, Thread& t) const {
    const std::uint64_t first = tile * (kTile / 32) + static_cast<std::uint64_t>(threadIdx.x) * kWords;
    if (aligned && (first + kWords) * 32 <= n) {
      const uint4 a = __ldg(reinterpret_cast<const uint4*>(words + first));
      t.w[0] = a.x, t.w[1] = a.y, t.w[2] = a.z, t.w[3] = a.w;
      return;
    }
#pragma unroll
    for (int j = 0; j < kWords; ++j) {
      const std::uint64_t word = first + j;
      unsigned v = word < word_count ? words[word] : 0u;
      const std::uint64_t bit0 = word * 32;
      if (bit0 >= n) v = 0;
      else if (n - bit0 < 32) v &= (1u << static_cast<unsigned>(n - bit0)) - 1u;
      t.w[j] = v;
    }
  }
  __device__ __forceinline__ static unsigned sum(const Thread& t) {
    unsigned s = 0;
#pragma unroll
    for (int j = 0; j < kWords; ++j) s += __popc(t.w[j]);
    return s;
  }
  static constexpr bool kDense = true;  // write_dense below
  /// A dense tile's outputs, written straight from the bits without staging, a warp at a time: for
  /// each word of the warp (word j of lane `from`), lane b takes bit b, whose key is the word's first
  /// key plus the set bits below b. A word's keys are consecutive, so its gathers and stores are
  /// coalesced; a lane fetches its four words' values before it stores any (no aliasing stalls).
  template <class Out>
  __device__ __forceinline__ static void write_dense(const Thread& t, unsigned start, unsigned outputs,
                                                     std::uint64_t key0, std::uint64_t first_element, const Out& out) {
    const unsigned lane = threadIdx.x % 32, below = (1u << lane) - 1u;
    unsigned word_start[kWords];
    unsigned s = start;
#pragma unroll
    for (int j = 0; j < kWords; ++j) word_start[j] = s, s += __popc(t.w[j]);
    const std::uint64_t warp_first = first_element + static_cast<std::uint64_t>(threadIdx.x - lane) * kItems;
#pragma unroll 2
    for (int from = 0; from < 32; ++from) {
      unsigned key[kWords];
      bool keep[kWords];
      typename Out::Value v[kWords];
#pragma unroll
      for (int j = 0; j < kWords; ++j) {
        const unsigned word = __shfl_sync(0xffffffffu, t.w[j], from);
        key[j] = __shfl_sync(0xffffffffu, word_start[j], from) + __popc(word & below);
        keep[j] = ((word >> lane) & 1u) != 0 && key[j] < outputs;
      }
#pragma unroll
      for (int j = 0; j < kWords; ++j)
        if (keep[j]) v[j] = out.fetch(warp_first + static_cast<unsigned>(from) * kItems + 32 * j + lane);
#pragma unroll
      for (int j = 0; j < kWords; ++j)
        if (keep[j]) out.store(key0 + key[j], v[j]);
    }
  }
  __device__ __forceinline__ static void stage(const Thread& t, unsigned start, unsigned w, std::uint16_t* s_elem,
                                               std::uint8_t* s_rank) {
    const unsigned local0 = threadIdx.x * kItems;
    const unsigned w_end = w + kWindow;
    unsigned s = start;
#pragma unroll
    for (int j = 0; j < kWords; ++j) {
      unsigned b = t.w[j];
      const unsigned c = __popc(b);
      if (s < w_end && s + c > w) {
        for (unsigned key = s; b != 0 && key < w_end; ++key, b &= b - 1) {
          if (key >= w) {
            s_elem[key - w] = static_cast<std::uint16_t>(local0 + 32 * j + (__ffs(b) - 1));
            s_rank[key - w] = 0;
          }
        }
      }
      s += c;
    }
  }
};

// ---- what is written for key k of element i with rank r ------------------------------------

// put(): key k of element i with rank r, from the staged windows. fetch() and store(): the dense
// tiles of a bits base (rank 0), split so that a thread's loads are all issued before its stores.
template <class E>
struct ElementOut {
  E* element;
  std::uint8_t* rank;  // may be null
  using Value = E;
  __device__ __forceinline__ void put(std::uint64_t k, std::uint64_t i, unsigned r) const {
    element[k] = static_cast<E>(i);
    if (rank != nullptr) rank[k] = static_cast<std::uint8_t>(r);
  }
  __device__ __forceinline__ E fetch(std::uint64_t i) const { return static_cast<E>(i); }
  __device__ __forceinline__ void store(std::uint64_t k, E v) const {
    element[k] = v;
    if (rank != nullptr) rank[k] = 0;
  }
};

/// 16-byte values with the alignment of their 4-byte parts (RgbaF32 and user structs).
struct Bytes16 {
  unsigned v[4];
};

template <class V>
struct GatherOut {
  const V* from;
  V* to;
  using Value = V;
  __device__ __forceinline__ void put(std::uint64_t k, std::uint64_t i, unsigned) const { to[k] = from[i]; }
  __device__ __forceinline__ V fetch(std::uint64_t i) const { return from[i]; }
  __device__ __forceinline__ void store(std::uint64_t k, const V& v) const { to[k] = v; }
};

// ---- kernels ---------------------------------------------------------------------------------

/// Level 2: tile_sums[t] = sum of tile t's counts.
template <class Base>
__global__ void __launch_bounds__(kThreads) tile_sums_kernel(Base base, std::uint32_t* tile_sums) {
  using Reduce = cub::BlockReduce<unsigned, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  typename Base::Thread t;
  base.load(blockIdx.x, t);
  const unsigned s = Reduce(temp).Sum(Base::sum(t));
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = s;
}

/// Top: tile_offsets[t] = tile_sums[0] + ... + tile_sums[t - 1]; the total to d_total (and
/// h_total). One block; `tiles` may be 0.
__global__ void __launch_bounds__(kTopThreads)
    tile_offsets_kernel(const std::uint32_t* tile_sums, std::uint64_t tiles, std::uint64_t* tile_offsets,
                        std::uint64_t* d_total, std::uint64_t* h_total) {
  using Scan = cub::BlockScan<std::uint64_t, kTopThreads>;
  __shared__ typename Scan::TempStorage temp;
  std::uint64_t carry = 0;
  for (std::uint64_t chunk = 0; chunk < tiles; chunk += std::uint64_t{kTopThreads} * kTopItems) {
    const std::uint64_t first = chunk + static_cast<std::uint64_t>(threadIdx.x) * kTopItems;
    std::uint64_t v[kTopItems];
#pragma unroll
    for (int j = 0; j < kTopItems; ++j) v[j] = first + j < tiles ? tile_sums[first + j] : 0;
    std::uint64_t aggregate = 0;
    Scan(temp).ExclusiveSum(v, v, aggregate);
#pragma unroll
    for (int j = 0; j < kTopItems; ++j)
      if (first + j < tiles) tile_offsets[first + j] = carry + v[j];
    carry += aggregate;
    __syncthreads();  // temp is reused by the next chunk
  }
  if (threadIdx.x == 0) {
    *d_total = carry;
    if (h_total != nullptr) *reinterpret_cast<volatile std::uint64_t*>(h_total) = carry;
  }
}

/// Output: tile blockIdx.x writes its keys [offset of the tile, + its sum), capped at `capacity`.
/// The tile's offset is tile_offsets[t]; without tile_offsets (few tiles: no top pass), the block
/// sums tile_sums[0 .. t) itself and the last block stores the total (device, and host-mapped
/// memory when asked), as the top pass would have.
template <class Base, class Out>
__global__ void __launch_bounds__(kThreads)
    expand_kernel(Base base, const std::uint32_t* tile_sums, const std::uint64_t* tile_offsets, Out out,
                  std::uint64_t capacity, std::uint64_t* d_total, std::uint64_t* h_total) {
  using Scan = cub::BlockScan<unsigned, kThreads>;
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ union {
    typename Scan::TempStorage scan;
    typename Reduce::TempStorage reduce;
  } temp;
  __shared__ std::uint64_t s_key0;
  __shared__ std::uint16_t s_elem[kWindow];
  __shared__ std::uint8_t s_rank[kWindow];
  const std::uint64_t tile = blockIdx.x;
  std::uint64_t key0;
  if (tile_offsets != nullptr) {
    key0 = tile_offsets[tile];
  } else {
    unsigned long long before = 0;
    for (std::uint64_t i = threadIdx.x; i < tile; i += kThreads) before += tile_sums[i];
    before = Reduce(temp.reduce).Sum(before);
    if (threadIdx.x == 0) {
      s_key0 = before;
      if (tile + 1 == gridDim.x) {
        *d_total = before + tile_sums[tile];
        if (h_total != nullptr) *reinterpret_cast<volatile std::uint64_t*>(h_total) = before + tile_sums[tile];
      }
    }
    __syncthreads();
    key0 = s_key0;
  }
  if (key0 >= capacity) return;  // the same for every thread of the block
  typename Base::Thread t;
  base.load(tile, t);
  const unsigned mine = Base::sum(t);
  unsigned start = 0, tile_total = 0;
  Scan(temp.scan).ExclusiveSum(mine, start, tile_total);
  const auto outputs = static_cast<unsigned>(std::min<std::uint64_t>(tile_total, capacity - key0));
  const std::uint64_t first_element = tile * Base::kTile;
  if constexpr (Base::kDense) {
    if (tile_total > kWindow) {  // more than one window: no staging
      Base::write_dense(t, start, outputs, key0, first_element, out);
      return;
    }
  }
  for (unsigned w = 0; w < outputs; w += kWindow) {
    if (mine != 0 && start < w + kWindow && start + mine > w) Base::stage(t, start, w, s_elem, s_rank);
    __syncthreads();
    const unsigned m = min(kWindow, outputs - w);
    for (unsigned j = threadIdx.x; j < m; j += kThreads) out.put(key0 + w + j, first_element + s_elem[j], s_rank[j]);
    __syncthreads();  // the window's staging is read before the next one overwrites it
  }
}

// ---- dispatch --------------------------------------------------------------------------------

/// Bump layout of the temporary storage, 256-byte aligned parts.
struct Layout {
  std::uint64_t tiles = 0;
  std::size_t at_sums = 0, at_offsets = 0, bytes = 0;
};
Layout layout_for(HistoBase kind, std::uint64_t n) {
  Layout l;
  const std::uint64_t tile = kind == HistoBase::bits ? BitsBase::kTile : Counts8Base::kTile;
  l.tiles = (n + tile - 1) / tile;
  auto round = [](std::size_t b) { return (b + 255) & ~std::size_t{255}; };
  l.at_sums = 0;
  l.at_offsets = round(std::max<std::size_t>(l.tiles * sizeof(std::uint32_t), 1));
  l.bytes = l.at_offsets + round(std::max<std::size_t>(l.tiles * sizeof(std::uint64_t), 1));
  return l;
}

/// Few tiles: the expansion blocks sum the tile sums before them themselves (no top pass).
constexpr std::uint64_t kTilesWithoutTop = 2048;

template <class Base, class Out>
void launch_expand(const Base& base, const std::uint32_t* sums, const std::uint64_t* offsets, const Out& out,
                   std::uint64_t capacity, unsigned tiles, std::uint64_t* d_total, std::uint64_t* h_total,
                   cudaStream_t stream) {
  expand_kernel<Base, Out><<<tiles, kThreads, 0, stream>>>(base, sums, offsets, out, capacity, d_total, h_total);
  WINNOW_CUDA_CHECK_LAUNCH();
}

template <class Base>
void run(const Base& base, const Layout& l, char* temp, const ExpandTargets& out, std::uint64_t* d_total,
         std::uint64_t* h_total, std::uint64_t capacity, cudaStream_t stream, bool tile_sums_ready) {
  auto* sums = reinterpret_cast<std::uint32_t*>(temp + l.at_sums);
  auto* offsets = reinterpret_cast<std::uint64_t*>(temp + l.at_offsets);
  const auto tiles = static_cast<unsigned>(l.tiles);
  if (tiles != 0 && !tile_sums_ready) {
    tile_sums_kernel<Base><<<tiles, kThreads, 0, stream>>>(base, sums);
    WINNOW_CUDA_CHECK_LAUNCH();
  }
  const bool top = tiles == 0 || capacity == 0 || l.tiles > kTilesWithoutTop;
  if (top) {
    tile_offsets_kernel<<<1, kTopThreads, 0, stream>>>(sums, l.tiles, offsets, d_total, h_total);
    WINNOW_CUDA_CHECK_LAUNCH();
  } else {
    offsets = nullptr;  // expand_kernel sums the tiles before its own
  }
  if (tiles == 0 || capacity == 0) return;
  auto launch = [&](const auto& o) {
    launch_expand(base, sums, offsets, o, capacity, tiles, d_total, h_total, stream);
  };
  if (out.gather_to == nullptr) {
    if (out.element_bytes == 4) launch(ElementOut<std::uint32_t>{static_cast<std::uint32_t*>(out.element), out.rank});
    else launch(ElementOut<std::uint64_t>{static_cast<std::uint64_t*>(out.element), out.rank});
    return;
  }
  if constexpr (std::is_same_v<Base, BitsBase>) {  // gathers only for compaction: one value per element
    auto gather = [&](auto tag) {
      using V = decltype(tag);
      launch(GatherOut<V>{static_cast<const V*>(out.gather_from), static_cast<V*>(out.gather_to)});
    };
    switch (out.value_bytes) {
      case 1: gather(std::uint8_t{}); return;
      case 2: gather(std::uint16_t{}); return;
      case 4: gather(std::uint32_t{}); return;
      case 8: gather(static_cast<unsigned long long>(0)); return;
      case 16: gather(Bytes16{}); return;
      default: break;
    }
  }
  throw BackendError("histopyramid: no gather of " + std::to_string(out.value_bytes) + "-byte values from this base");
}

}  // namespace

void histopyramid_expand(void* d_temp, std::size_t& temp_bytes, HistoBase kind, const void* d_base, std::uint64_t n,
                         const ExpandTargets& out, std::uint64_t* d_total, std::uint64_t* h_total,
                         std::uint64_t capacity, void* stream_ptr, bool tile_sums_ready) {
  const Layout l = layout_for(kind, n);
  if (d_temp == nullptr) {
    temp_bytes = l.bytes;
    return;
  }
  if (temp_bytes < l.bytes)
    throw InputError("histopyramid: temporary storage of " + std::to_string(temp_bytes) + " bytes, " +
                     std::to_string(l.bytes) + " needed");
  if (l.tiles > static_cast<std::uint64_t>(INT_MAX)) throw InputError("histopyramid: input too large for one grid");
  if (d_total == nullptr) throw InputError("histopyramid: d_total is null");
  if (n != 0 && d_base == nullptr) throw InputError("histopyramid: the counts are null");
  if (capacity != 0 && (out.gather_to == nullptr ? out.element == nullptr : out.gather_from == nullptr))
    throw InputError("histopyramid: no output for a capacity of " + std::to_string(capacity));
  auto* stream = static_cast<cudaStream_t>(stream_ptr);
  auto* temp = static_cast<char*>(d_temp);
  const bool aligned = reinterpret_cast<std::uintptr_t>(d_base) % 16 == 0;
  if (kind == HistoBase::bits)
    run(BitsBase{static_cast<const std::uint32_t*>(d_base), n, (n + 31) / 32, aligned}, l, temp, out, d_total, h_total,
        capacity, stream, tile_sums_ready);
  else
    run(Counts8Base{static_cast<const std::uint8_t*>(d_base), n, aligned}, l, temp, out, d_total, h_total, capacity,
        stream, tile_sums_ready);
}

std::uint32_t* histopyramid_tile_sums(void* d_temp, HistoBase kind, std::uint64_t n) {
  return reinterpret_cast<std::uint32_t*>(static_cast<char*>(d_temp) + layout_for(kind, n).at_sums);
}

std::uint64_t histopyramid_expand_host(const std::uint8_t* counts, std::uint64_t n, const ExpandTargets& out,
                                       std::uint64_t capacity) {
  cudaStream_t s = cudaStreamPerThread;
  const std::size_t element_bytes = static_cast<std::size_t>(out.element_bytes);
  DeviceBuffer<std::uint8_t> d_counts(n, s);
  DeviceBuffer<unsigned char> d_element(capacity * element_bytes, s);
  DeviceBuffer<std::uint8_t> d_rank(out.rank != nullptr ? capacity : 0, s);
  DeviceBuffer<std::uint64_t> d_total(1, s);
  if (n) WINNOW_CUDA_CHECK(cudaMemcpyAsync(d_counts.get(), counts, n, cudaMemcpyHostToDevice, s));
  ExpandTargets d_out = out;
  d_out.element = d_element.get();
  d_out.rank = out.rank != nullptr ? d_rank.get() : nullptr;
  std::size_t bytes = 0;
  histopyramid_expand(nullptr, bytes, HistoBase::counts8, d_counts.get(), n, d_out, d_total.get(), nullptr, capacity,
                      s);
  DeviceBuffer<unsigned char> d_temp(bytes, s);
  histopyramid_expand(d_temp.get(), bytes, HistoBase::counts8, d_counts.get(), n, d_out, d_total.get(), nullptr,
                      capacity, s);
  std::uint64_t total = 0;
  WINNOW_CUDA_CHECK(cudaMemcpyAsync(&total, d_total.get(), sizeof(total), cudaMemcpyDeviceToHost, s));
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  const std::uint64_t m = std::min(total, capacity);
  if (m) {
    WINNOW_CUDA_CHECK(cudaMemcpyAsync(out.element, d_element.get(), m * element_bytes, cudaMemcpyDeviceToHost, s));
    if (out.rank) WINNOW_CUDA_CHECK(cudaMemcpyAsync(out.rank, d_rank.get(), m, cudaMemcpyDeviceToHost, s));
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  return total;
}

}  // namespace winnow::detail::cuda

namespace winnow::cuda {

namespace {
template <class E>
void expand_device(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_counts, std::uint64_t n, E* d_element,
                   std::uint8_t* d_rank, std::uint64_t* d_total, std::uint64_t capacity, cudaStream_t stream,
                   std::uint64_t* h_total) {
  if (sizeof(E) == 4 && n > (std::uint64_t{1} << 32))
    throw InputError("histopyramid_expand: 32-bit elements cannot address " + std::to_string(n) + " counts");
  detail::ExpandTargets out;
  out.element = d_element;
  out.element_bytes = sizeof(E);
  out.rank = d_rank;
  detail::cuda::histopyramid_expand(d_temp, temp_bytes, detail::HistoBase::counts8, d_counts, n, out, d_total, h_total,
                                    capacity, stream);
}
}  // namespace

void histopyramid_expand(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_counts, std::uint64_t n,
                         std::uint64_t* d_element, std::uint8_t* d_rank, std::uint64_t* d_total, std::uint64_t capacity,
                         cudaStream_t stream, std::uint64_t* h_total) {
  expand_device(d_temp, temp_bytes, d_counts, n, d_element, d_rank, d_total, capacity, stream, h_total);
}
void histopyramid_expand(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_counts, std::uint64_t n,
                         std::uint32_t* d_element, std::uint8_t* d_rank, std::uint64_t* d_total, std::uint64_t capacity,
                         cudaStream_t stream, std::uint64_t* h_total) {
  expand_device(d_temp, temp_bytes, d_counts, n, d_element, d_rank, d_total, capacity, stream, h_total);
}

}  // namespace winnow::cuda
