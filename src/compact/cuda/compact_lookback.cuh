#pragma once
// Launcher of the single_pass stable kernel (kern::compact_lookback_kernel) for one policy:
// temporary storage size, status reset, launch. Used by the library (compact_impl.cuh, with
// StableTuning) and by the benchmark's --sweep-stable mode (other policies, int32 only).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>

#include "common/cuda/arch.cuh"
#include "common/cuda/check.cuh"
#include "compact/cuda/compact_workspace.cuh"
#include "compact/cuda/kernels/compact_kernels.cuh"
#include "compact/cuda/kernels/compact_ring.cuh"
#include "compact/cuda/kernels/compact_smem.cuh"
#include "winnow/error.hpp"

namespace winnow::detail::cuda {

/// The library's single_pass stable policies, chosen by the --sweep-stable measurements recorded
/// in bench/results/compact-gpu.md (H200, int32; kern::LookbackPolicy says what each parameter
/// does). Large inputs: 256 x 16 items, tile id = blockIdx.x, 32 predecessors per round, one 1 us
/// sleep after publishing the aggregate and no sleep while polling (1.00-1.09x CUB at 2^24-2^28,
/// where the previous atomic-id / 128-wide / 32 ns-poll kernel was 0.55-0.71x). Small inputs (the
/// grid fits on the device at once): 512 x 16 items, 450 ns first sleep, 350 ns polls (1.18-1.40x
/// CUB at 2^21, where the large policy is 0.97-1.07x).
//                                          threads vectors blockIdx lookback init_ns poll_ns early_stage
using StableTuning = kern::LookbackPolicy<256, 4, true, 1, 1000, 0, true>;
using StableTuningSmall = kern::LookbackPolicy<512, 4, true, 1, 450, 350, true>;
/// Inputs of fewer bytes than this use StableTuningSmall.
constexpr std::uint64_t kSmallInputBytes = std::uint64_t{1} << 24;

template <class Pol, class Src, class Sink>
struct StableLookback {
  static constexpr int tile = Pol::template tile<Src::size>;
  static constexpr std::size_t stage_bytes = sizeof(typename Sink::stage_type) * static_cast<std::size_t>(tile);

  static std::uint64_t tiles(std::uint64_t n) { return (n + tile - 1) / tile; }

  /// Bytes of temporary storage for n elements (status words, counter).
  static std::size_t temp_bytes(std::uint64_t n) {
    const std::uint64_t t = std::max<std::uint64_t>(tiles(n), 1);
    if constexpr (Pol::use_cub) {
      if (t > static_cast<std::uint64_t>(INT_MAX)) throw InputError("compaction: input too large for one grid");
      std::size_t b = 0;
      WINNOW_CUDA_CHECK(kern::CubTileState::AllocationSize(static_cast<int>(t), b));
      return ((b + 255) & ~std::size_t{255}) + 256;
    } else {
      return (t + 1) * sizeof(std::uint64_t);
    }
  }

  /// Resets the status and launches (n > 0; temp holds temp_bytes(n)). Never synchronises.
  static void launch(const Src& src, const Sink& sink, std::uint64_t n, std::uint64_t* d_count, void* temp,
                     cudaStream_t stream) {
    constexpr auto kernel = &kern::compact_lookback_kernel<Src, Sink, Pol>;
    static const bool configured = [] {
      if (stage_bytes > 48 * 1024)
        WINNOW_CUDA_CHECK(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(stage_bytes)));
      return true;
    }();
    (void)configured;
    const std::uint64_t t = tiles(n);
    if (t > static_cast<std::uint64_t>(INT_MAX)) throw InputError("compaction: input too large for one grid");
    kern::LookbackArgs a;
    a.n = n;
    a.num_tiles = t;
    a.d_count = reinterpret_cast<unsigned long long*>(d_count);
    if constexpr (Pol::use_cub) {
      std::size_t b = 0;
      WINNOW_CUDA_CHECK(kern::CubTileState::AllocationSize(static_cast<int>(t), b));
      b = (b + 255) & ~std::size_t{255};
      WINNOW_CUDA_CHECK(a.cub_state.Init(static_cast<int>(t), temp, b));
      a.tile_counter = reinterpret_cast<unsigned long long*>(static_cast<char*>(temp) + b);
      WINNOW_CUDA_CHECK(cudaMemsetAsync(a.tile_counter, 0, sizeof(unsigned long long), stream));
      const unsigned init_blocks = static_cast<unsigned>((t + 32 + 255) / 256);
      kern::cub_tile_state_init_kernel<<<init_blocks, 256, 0, stream>>>(a.cub_state, static_cast<int>(t));
      WINNOW_CUDA_CHECK_LAUNCH();
    } else {
      a.status = static_cast<std::uint64_t*>(temp);
      WINNOW_CUDA_CHECK(cudaMemsetAsync(a.status, 0, (t + 1) * sizeof(std::uint64_t), stream));
    }
    kernel<<<static_cast<unsigned>(t), Pol::threads, stage_bytes, stream>>>(src, sink, a);
    WINNOW_CUDA_CHECK_LAUNCH();
  }
};

/// single_pass with shared-memory tiles (kern::compact_smem_kernel), the path for predicate
/// compactions of 16-byte aligned inputs; policies chosen by the shared-memory sweep of
/// bench/results/compact-gpu.md (H200, int32): stable, >= 16 MiB: 256 threads x 8 vectors (32 KiB
/// tiles, 6 blocks per SM, 2 us first sleep; 1.32 / 1.21 / 1.15x CUB at 2^28 and 1% / 50% / 99%
/// kept, 1.18 / 1.13 / 1.05x at 2^24); stable, smaller: 256 x 4 (16 KiB, 1 us; 1.27-1.30x CUB at
/// 2^21); unordered: 128 x 8 (16 KiB, 10 blocks per SM; 0.83 / 1.00 / 0.96 of copy bandwidth at
/// 2^28 in the probe that chose it).
using SmemStableTuning = kern::SmemPolicy<256, 8, true, 2000, 0, 6>;
using SmemStableTuningSmall = kern::SmemPolicy<256, 4, true, 1000, 0>;
using SmemAnyTuning = kern::SmemPolicy<128, 8, false, 0, 0, 10>;
/// Unordered, smaller than kSmallInputBytes: 128 x 4 (8 KiB tiles, 16 blocks per SM), chosen by
/// the round-4 sweep on a workspace (2^21: 1.71 / 1.65 / 1.68x CUB, where 128 x 8 is 1.59 / 1.53 /
/// 1.54x; 2^24: within 0.06x of 128 x 8).
using SmemAnyTuningSmall = kern::SmemPolicy<128, 4, false, 0, 0, 16>;

template <class Src>
inline constexpr bool is_pred_source = false;
template <class T>
inline constexpr bool is_pred_source<kern::PredSource<T>> = true;

/// The shared-memory kernel applies: a predicate source whose stage entries fit in place.
template <class Src, class Sink>
inline constexpr bool smem_eligible = is_pred_source<Src> && sizeof(typename Sink::stage_type) <= Src::size;

/// Unordered: points `a` at its counter and resets what needs it. On a workspace (within the
/// 24 / 40 bit fields) one 64-bit counter of (tiles done << 40 | kept so far), so the last tile
/// knows it is last and writes *d_count, taken from the two the workspace keeps ready; else
/// *d_count itself. Returns the workspace counter taken, -1 for none.
inline int take_unordered_counter(kern::SmemArgs& a, WorkspaceState* ws, std::uint64_t tiles, std::uint64_t n,
                                  std::uint64_t* d_count, cudaStream_t stream) {
  if (ws && tiles < (std::uint64_t{1} << kern::kPackedTileBits) && n < (std::uint64_t{1} << kern::kPackedCountBits)) {
    const int k = ws->next_counter;
    a.counter = ws->counter(k);
    a.counter_to_clear = ws->counter(1 - k);
    a.packed = true;
    if (!ws->counter_zero[k]) WINNOW_CUDA_CHECK(cudaMemsetAsync(a.counter, 0, sizeof(unsigned long long), stream));
    return k;
  }
  a.counter = reinterpret_cast<unsigned long long*>(d_count);
  WINNOW_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(std::uint64_t), stream));
  return -1;
}
/// After the launch: counter k is used up, the kernel zeroed the other one.
inline void release_unordered_counter(WorkspaceState* ws, int k) {
  if (k < 0) return;
  ws->counter_zero[k] = false;
  ws->counter_zero[1 - k] = true;
  ws->next_counter = 1 - k;
}

template <class Pol, class Src, class Sink>
struct SmemCompaction {
  static constexpr int tile = Pol::template tile<Src::size>;
  static std::uint64_t tiles(std::uint64_t n) { return (n + tile - 1) / tile; }
  /// Bytes of temporary storage for n elements.
  static std::size_t temp_bytes(std::uint64_t n) {
    return Pol::stable ? (std::max<std::uint64_t>(tiles(n), 1) + 1) * sizeof(std::uint64_t) : 256;
  }
  /// Resets the status (stable) or the count (unordered) and launches (n > 0). Never synchronises.
  /// With a workspace (reserved for this call) the words come from it, ready unless unknown.
  static void launch(const Src& src, const Sink& sink, std::uint64_t n, std::uint64_t* d_count, void* temp,
                     cudaStream_t stream, WorkspaceState* ws = nullptr) {
    const std::uint64_t t = tiles(n);
    if (t > static_cast<std::uint64_t>(INT_MAX)) throw InputError("compaction: input too large for one grid");
    kern::SmemArgs a;
    a.n = n;
    a.num_tiles = t;
    a.d_count = reinterpret_cast<unsigned long long*>(d_count);
    int k = -1;
    if constexpr (Pol::stable) {
      if (ws) {
        k = ws->next_status;
        a.status = ws->status(k);
        a.status_to_clear = ws->status(1 - k);
        if (ws->zero_prefix[k] < t) WINNOW_CUDA_CHECK(cudaMemsetAsync(a.status, 0, t * sizeof(std::uint64_t), stream));
      } else {
        a.status = static_cast<std::uint64_t*>(temp);
        WINNOW_CUDA_CHECK(cudaMemsetAsync(a.status, 0, t * sizeof(std::uint64_t), stream));
      }
    } else {
      k = take_unordered_counter(a, ws, t, n, d_count, stream);
    }
    kern::compact_smem_kernel<Src, Sink, Pol><<<static_cast<unsigned>(t), Pol::threads, 0, stream>>>(src, sink, a);
    WINNOW_CUDA_CHECK_LAUNCH();
    if (ws && Pol::stable) {  // this call's array is used up; the kernel zeroed the other's first t words
      ws->zero_prefix[k] = 0;
      ws->zero_prefix[1 - k] = std::max(ws->zero_prefix[1 - k], t);
      ws->next_status = 1 - k;
    } else {
      release_unordered_counter(ws, k);
    }
  }
};

/// single_pass unordered with a ring of bulk-copied tiles in persistent blocks
/// (kern::compact_ring_kernel), the library's path for unordered predicate compactions of
/// 16-byte aligned inputs of kSmallInputBytes or more on devices of compute capability 9.0 or
/// later. Policy from bench/probes/compact_bulk_probe.cu and the round-6 sweep (H200, int32, 2^28,
/// 1 / 50 / 99 % kept): 256 threads x 4 vectors (16 KiB tiles), 3 stages, 3 blocks per SM: 0.92 /
/// 0.97 / 0.87 of copy bandwidth, against 0.76 / 0.98 / 0.96 for the one-tile kernel. Smaller
/// inputs keep the one-tile kernel (SmemAnyTuningSmall), ahead there at 99 % kept.
using RingAnyTuning = kern::RingPolicy<256, 4, 3, 3>;

template <class Pol, class Src, class Sink>
struct RingCompaction {
  static constexpr int tile = Pol::template tile<Src::size>;
  static constexpr int smem_bytes = Pol::smem_bytes;
  static constexpr auto kernel = &kern::compact_ring_kernel<Src, Sink, Pol>;
  static std::uint64_t tiles(std::uint64_t n) { return (n + tile - 1) / tile; }
  static std::size_t temp_bytes(std::uint64_t) { return 256; }
  /// Whether the current device runs it: compute capability 9.0 or later (bulk copies) and the
  /// kernel compiled for such an architecture. Cached per device.
  static bool available() {
    static std::atomic<signed char> known[64] = {};  // per device: 0 unknown, 1 no, 2 yes
    return runs_as_sm90(reinterpret_cast<const void*>(kernel), known);
  }
  /// Persistent grid: as many blocks as are resident at once, at most one per tile. The shared
  /// memory attribute is set once per instantiation, so each (Src, Sink) must be launched from
  /// one translation unit only (the library's rule anyway: compact_<size>.cu instantiate them).
  static unsigned grid(std::uint64_t t) {
    static const int per_sm = [] {
      WINNOW_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
      return resident_blocks_per_multiprocessor(reinterpret_cast<const void*>(kernel), Pol::threads, smem_bytes);
    }();
    return static_cast<unsigned>(
        std::min<std::uint64_t>(t, static_cast<std::uint64_t>(per_sm) * multiprocessor_count()));
  }
  /// Resets the count (unless a workspace has it ready) and launches (n > 0). Never synchronises.
  static void launch(const Src& src, const Sink& sink, std::uint64_t n, std::uint64_t* d_count, void* /*temp*/,
                     cudaStream_t stream, WorkspaceState* ws = nullptr) {
    const std::uint64_t t = tiles(n);
    kern::SmemArgs a;
    a.n = n;
    a.num_tiles = t;
    a.d_count = reinterpret_cast<unsigned long long*>(d_count);
    const int k = take_unordered_counter(a, ws, t, n, d_count, stream);
    kernel<<<grid(t), Pol::threads, smem_bytes, stream>>>(src, sink, a);
    WINNOW_CUDA_CHECK_LAUNCH();
    release_unordered_counter(ws, k);
  }
};

}  // namespace winnow::detail::cuda
