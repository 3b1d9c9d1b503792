#pragma once
// Dispatch layer of CUDA stream compaction (CUB style): sizes the temporary storage, picks the
// tuning by element size, launches the kernels of kernels/compact_kernels.cuh in one stream, never
// synchronises. Included by the per-element-size units compact_*.cu, which instantiate it once.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "common/cuda/arch.cuh"
#include "common/cuda/check.cuh"
#include "compact/backends.hpp"
#include "compact/cuda/compact_lookback.cuh"
#include "compact/cuda/compact_workspace.cuh"
#include "compact/cuda/kernels/compact_kernels.cuh"
#include "histopyramid/histopyramid.hpp"
#include "winnow/cuda/compact.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cuda {

// ---- defined once in compact.cu -------------------------------------------------------------
/// offsets[i] = counts[0] + ... + counts[i-1] for i < count (CUB DeviceScan, 64-bit sums).
void scan_counts(void* d_temp, std::size_t& temp_bytes, const std::uint32_t* d_counts, std::uint64_t* d_offsets,
                 std::uint64_t count, cudaStream_t stream);
/// `automatic` resolved for this size and order; other algorithms are returned unchanged.
CompactAlgorithm resolve_algorithm(CompactAlgorithm a, std::uint64_t n, std::size_t element_size, Order order);

/// Bump layout of one temporary allocation, 256-byte aligned parts.
struct TempLayout {
  std::size_t size = 0;
  std::size_t take(std::size_t bytes) {
    const std::size_t at = size;
    size += (bytes + 255) & ~std::size_t{255};
    return at;
  }
};

inline unsigned grid_for(std::uint64_t blocks) {
  if (blocks > static_cast<std::uint64_t>(INT_MAX)) throw InputError("compaction: input too large for one grid");
  return static_cast<unsigned>(std::max<std::uint64_t>(blocks, 1));
}

/// Blocks of a persistent kernel: as many as fit on the device at once, at most one per tile.
template <auto Kernel>
unsigned persistent_grid(std::uint64_t tiles) {
  static const int per_sm = resident_blocks_per_multiprocessor(reinterpret_cast<const void*>(Kernel), kern::kThreads);
  return grid_for(std::min<std::uint64_t>(tiles, static_cast<std::uint64_t>(per_sm) * multiprocessor_count()));
}

inline bool aligned_to(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

/// Runs (or sizes, when d_temp is null) one compaction on the device. With a workspace `ws`,
/// d_temp and temp_bytes are ignored and the workspace provides (and keeps ready) the storage.
template <class Src, class Sink>
void run_compaction(const Src& src, std::uint64_t n, const Sink& sink, std::uint64_t* d_count,
                    CompactAlgorithm algorithm, Order order, void* d_temp, std::size_t& temp_bytes, cudaStream_t stream,
                    WorkspaceState* ws = nullptr) {
  using Tn = kern::Tuning<Src::size>;
  using kern::kThreads;
  const std::uint64_t num_tiles = (n + Tn::tile - 1) / Tn::tile;
  TempLayout layout;
  std::size_t at_status = 0, at_counts = 0, at_offsets = 0, at_scan = 0, at_masks = 0, at_pyramid = 0;
  std::size_t scan_bytes = 0, pyramid_bytes = 0;
  std::uint64_t parts = 0;
  const std::uint64_t words = (n + 31) / 32;
  const bool small_input = n * static_cast<std::uint64_t>(Src::size) < kSmallInputBytes;
  switch (algorithm) {
    case CompactAlgorithm::single_pass: {
      std::size_t b = order != Order::stable ? 3 * sizeof(std::uint64_t)
                      : small_input          ? StableLookback<StableTuningSmall, Src, Sink>::temp_bytes(n)
                                             : StableLookback<StableTuning, Src, Sink>::temp_bytes(n);
      if constexpr (smem_eligible<Src, Sink>)  // either path may run, whatever the alignment
        b = std::max(b, order != Order::stable ? std::max(SmemCompaction<SmemAnyTuning, Src, Sink>::temp_bytes(n),
                                                          SmemCompaction<SmemAnyTuningSmall, Src, Sink>::temp_bytes(n))
                        : small_input          ? SmemCompaction<SmemStableTuningSmall, Src, Sink>::temp_bytes(n)
                                               : SmemCompaction<SmemStableTuning, Src, Sink>::temp_bytes(n));
      at_status = layout.take(b);
      break;
    }
    case CompactAlgorithm::block_ballot:
    case CompactAlgorithm::group_scan:
      parts = algorithm == CompactAlgorithm::block_ballot ? num_tiles : (n + Tn::items - 1) / Tn::items;
      at_counts = layout.take((parts + 1) * sizeof(std::uint32_t));
      at_offsets = layout.take((parts + 1) * sizeof(std::uint64_t));
      scan_counts(nullptr, scan_bytes, nullptr, nullptr, parts + 1, stream);
      at_scan = layout.take(scan_bytes);
      break;
    case CompactAlgorithm::histopyramid:
      at_masks = layout.take(std::max<std::uint64_t>(words, 1) * sizeof(std::uint32_t));
      histopyramid_expand(nullptr, pyramid_bytes, HistoBase::bits, nullptr, n, ExpandTargets{}, nullptr, nullptr, n,
                          stream);
      at_pyramid = layout.take(pyramid_bytes);
      break;
    default: throw BackendError("compaction: unknown CUDA algorithm");
  }
  const std::size_t needed = std::max<std::size_t>(layout.size, 256);
  if (ws) {
    // A captured call may be replayed any number of times, in any order with others: it resets
    // its words itself (in the workspace's general part), like the other forms, and cannot grow
    // the workspace (no allocation during capture).
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    WINNOW_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
    if (capture != cudaStreamCaptureStatusNone) {
      if (ws->base == nullptr || ws->general_bytes < needed)
        throw InputError("compaction: a CompactWorkspace must be large enough before stream capture (" +
                         std::to_string(needed) + " bytes needed; run the call once outside the capture)");
      d_temp = ws->general();
      temp_bytes = ws->general_bytes;
      ws = nullptr;
    } else {
      std::uint64_t status_words = 0;  // the stable shared-memory path keeps its status in the workspace
      if constexpr (smem_eligible<Src, Sink>)
        if (algorithm == CompactAlgorithm::single_pass && order == Order::stable && src.aligned)
          status_words = small_input ? SmemCompaction<SmemStableTuningSmall, Src, Sink>::tiles(n)
                                     : SmemCompaction<SmemStableTuning, Src, Sink>::tiles(n);
      ws->reserve(status_words, needed, stream);
      d_temp = ws->general();
      temp_bytes = ws->general_bytes;
    }
  }
  if (d_temp == nullptr) {
    temp_bytes = needed;
    return;
  }
  if (temp_bytes < needed)
    throw InputError("compaction: temporary storage of " + std::to_string(temp_bytes) + " bytes, " +
                     std::to_string(needed) + " needed");
  auto* count = reinterpret_cast<unsigned long long*>(d_count);
  if (n == 0) {
    WINNOW_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(std::uint64_t), stream));
    return;
  }
  char* temp = static_cast<char*>(d_temp);
  const unsigned tiles = grid_for(num_tiles);

  switch (algorithm) {
    case CompactAlgorithm::single_pass: {
      if constexpr (smem_eligible<Src, Sink>) {
        if (src.aligned) {  // shared-memory tiles (compact_ring.cuh, compact_smem.cuh)
          if (order != Order::stable && !small_input && RingCompaction<RingAnyTuning, Src, Sink>::available())
            RingCompaction<RingAnyTuning, Src, Sink>::launch(src, sink, n, d_count, temp + at_status, stream, ws);
          else if (order != Order::stable && small_input)
            SmemCompaction<SmemAnyTuningSmall, Src, Sink>::launch(src, sink, n, d_count, temp + at_status, stream, ws);
          else if (order != Order::stable)
            SmemCompaction<SmemAnyTuning, Src, Sink>::launch(src, sink, n, d_count, temp + at_status, stream, ws);
          else if (small_input)
            SmemCompaction<SmemStableTuningSmall, Src, Sink>::launch(src, sink, n, d_count, temp + at_status, stream,
                                                                     ws);
          else SmemCompaction<SmemStableTuning, Src, Sink>::launch(src, sink, n, d_count, temp + at_status, stream, ws);
          break;
        }
      }
      if (order == Order::stable) {
        // Decoupled look-back, one tile per block; policies in compact_lookback.cuh.
        if (small_input)
          StableLookback<StableTuningSmall, Src, Sink>::launch(src, sink, n, d_count, temp + at_status, stream);
        else StableLookback<StableTuning, Src, Sink>::launch(src, sink, n, d_count, temp + at_status, stream);
        break;
      }
      kern::StreamArgs a;
      a.n = n;
      a.num_tiles = num_tiles;
      a.d_count = count;
      a.state = reinterpret_cast<unsigned long long*>(temp + at_status);
      WINNOW_CUDA_CHECK(cudaMemsetAsync(a.state, 0, 3 * sizeof(std::uint64_t), stream));
      constexpr auto kernel = kern::compact_stream_kernel<Src, Sink, kern::Prefix::atomic>;
      kernel<<<persistent_grid<kernel>(num_tiles), kThreads, 0, stream>>>(src, sink, a);
      WINNOW_CUDA_CHECK_LAUNCH();
      break;
    }
    case CompactAlgorithm::block_ballot:
    case CompactAlgorithm::group_scan: {
      auto* counts = reinterpret_cast<std::uint32_t*>(temp + at_counts);
      auto* offsets = reinterpret_cast<std::uint64_t*>(temp + at_offsets);
      if (algorithm == CompactAlgorithm::block_ballot) {
        kern::ballot_count_kernel<Src><<<tiles, kThreads, 0, stream>>>(src, n, counts, num_tiles);
      } else {
        kern::group_count_kernel<Src>
            <<<grid_for((parts + 1 + kThreads - 1) / kThreads), kThreads, 0, stream>>>(src, n, counts, parts);
      }
      WINNOW_CUDA_CHECK_LAUNCH();
      scan_counts(temp + at_scan, scan_bytes, counts, offsets, parts + 1, stream);
      if (algorithm == CompactAlgorithm::group_scan) {
        kern::group_relocate_kernel<Src, Sink>
            <<<grid_for((parts + kThreads - 1) / kThreads), kThreads, 0, stream>>>(src, sink, n, offsets, parts);
      } else if (order == Order::stable) {
        kern::TileArgs a;
        a.n = n;
        a.num_tiles = num_tiles;
        a.offsets = offsets;
        a.d_count = count;
        kern::compact_tile_kernel<Src, Sink, kern::Prefix::offsets><<<tiles, kThreads, 0, stream>>>(src, sink, a);
      } else {
        kern::ballot_scatter_any_kernel<Src, Sink><<<tiles, kThreads, 0, stream>>>(src, sink, n, offsets);
      }
      WINNOW_CUDA_CHECK_LAUNCH();
      WINNOW_CUDA_CHECK(
          cudaMemcpyAsync(d_count, offsets + parts, sizeof(std::uint64_t), cudaMemcpyDeviceToDevice, stream));
      break;
    }
    case CompactAlgorithm::histopyramid: {
      // The predicate evaluated once into one bit per element, then the histopyramid capability
      // (src/histopyramid) turns the bits into outputs: indices, or values gathered from the input.
      // The predicate pass also counts each pyramid tile's kept elements (the pyramid's level 2),
      // so the pyramid does not read the words to sum them.
      auto* masks = reinterpret_cast<std::uint32_t*>(temp + at_masks);
      const std::uint64_t pyramid_tiles = (n + kBitsTileElements - 1) / kBitsTileElements;
      kern::mask_tile_sums_kernel<Src, kBitsTileElements><<<grid_for(pyramid_tiles), kThreads, 0, stream>>>(
          src, n, masks, words, histopyramid_tile_sums(temp + at_pyramid, HistoBase::bits, n));
      WINNOW_CUDA_CHECK_LAUNCH();
      ExpandTargets targets;
      if constexpr (Sink::wants_values) {
        targets.gather_from = src.in;
        targets.gather_to = sink.out;
        targets.value_bytes = Src::size;
      } else {
        targets.element = sink.out;
        targets.element_bytes = sizeof(*sink.out);
      }
      histopyramid_expand(temp + at_pyramid, pyramid_bytes, HistoBase::bits, masks, n, targets, d_count, nullptr, n,
                          stream, true);
      break;
    }
    default: break;
  }
}

// ---- the public device API, as templates instantiated by the compact_*.cu units --------------

template <class T>
using StorageT = kern::Storage<static_cast<int>(sizeof(T))>;

template <class T>
void device_compact(void* d_temp, std::size_t& temp_bytes, const T* d_in, std::uint64_t n, T* d_out,
                    std::uint64_t* d_count, const Predicate& pred, const CompactOptions& o, cudaStream_t stream,
                    WorkspaceState* ws = nullptr) {
  const kern::PredSource<T> src{d_in, pred, aligned_to(d_in, 16)};
  const kern::ValueSink<StorageT<T>> sink{reinterpret_cast<StorageT<T>*>(d_out)};
  run_compaction(src, n, sink, d_count, resolve_algorithm(o.algorithm, n, sizeof(T), o.order), o.order, d_temp,
                 temp_bytes, stream, ws);
}

template <class T>
void device_compact_flagged(void* d_temp, std::size_t& temp_bytes, const T* d_in, const std::uint8_t* d_flags,
                            std::uint64_t n, T* d_out, std::uint64_t* d_count, const CompactOptions& o,
                            cudaStream_t stream, WorkspaceState* ws = nullptr) {
  using S = StorageT<T>;
  constexpr int vec = kern::Tuning<sizeof(T)>::vec;
  const kern::FlagSource<S> src{reinterpret_cast<const S*>(d_in), d_flags,
                                aligned_to(d_in, 16) && aligned_to(d_flags, vec)};
  const kern::ValueSink<S> sink{reinterpret_cast<S*>(d_out)};
  run_compaction(src, n, sink, d_count, resolve_algorithm(o.algorithm, n, sizeof(T), o.order), o.order, d_temp,
                 temp_bytes, stream, ws);
}

template <class T, class Index>
void device_compact_indices(void* d_temp, std::size_t& temp_bytes, const T* d_in, std::uint64_t n, Index* d_out,
                            std::uint64_t* d_count, const Predicate& pred, const CompactOptions& o, cudaStream_t stream,
                            WorkspaceState* ws = nullptr) {
  if (sizeof(Index) == 4 && n > (std::uint64_t{1} << 32))
    throw InputError("compact_indices: 32-bit indices cannot address " + std::to_string(n) + " elements");
  const kern::PredSource<T> src{d_in, pred, aligned_to(d_in, 16)};
  const kern::IndexSink<Index> sink{d_out};
  run_compaction(src, n, sink, d_count, resolve_algorithm(o.algorithm, n, sizeof(T), o.order), o.order, d_temp,
                 temp_bytes, stream, ws);
}

/// Sizing call, allocation from `alloc`, run, stream-ordered release.
template <class Call>
void with_allocator(winnow::cuda::DeviceAllocator& alloc, cudaStream_t stream, Call&& call) {
  std::size_t bytes = 0;
  call(nullptr, bytes);
  void* p = alloc.allocate(bytes, stream);
  if (!p) throw BackendError("compaction: the device allocator returned null");
  try {
    call(p, bytes);
  } catch (...) {
    alloc.deallocate(p, bytes, stream);
    throw;
  }
  alloc.deallocate(p, bytes, stream);
}

/// The host wrapper: copies in, runs, copies min(kept, capacity) out; synchronises.
template <class T>
std::uint64_t host_compact(const CompactRequest<T>& r) {
  if (r.n == 0) return 0;
  cudaStream_t s = cudaStreamPerThread;
  const std::size_t out_size = r.output == OutputKind::values    ? sizeof(T)
                               : r.output == OutputKind::index32 ? sizeof(std::uint32_t)
                                                                 : sizeof(std::uint64_t);
  const bool need_in = !(r.flags && r.output != OutputKind::values);
  DeviceBuffer<T> d_in(need_in ? r.n : 0, s);
  DeviceBuffer<std::uint8_t> d_flags(r.flags ? r.n : 0, s);
  DeviceBuffer<unsigned char> d_out(r.n * out_size, s);
  DeviceBuffer<std::uint64_t> d_count(1, s);
  if (need_in) WINNOW_CUDA_CHECK(cudaMemcpyAsync(d_in.get(), r.in, r.n * sizeof(T), cudaMemcpyHostToDevice, s));
  if (r.flags) WINNOW_CUDA_CHECK(cudaMemcpyAsync(d_flags.get(), r.flags, r.n, cudaMemcpyHostToDevice, s));
  CompactOptions o;
  o.order = r.order;
  o.algorithm = r.algorithm;
  auto call = [&](void* d_temp, std::size_t& bytes) {
    void* out = d_out.get();
    if (r.flags) {
      if (r.output == OutputKind::values)
        device_compact_flagged<T>(d_temp, bytes, d_in.get(), d_flags.get(), r.n, static_cast<T*>(out), d_count.get(), o,
                                  s);
      else if (r.output == OutputKind::index32)
        winnow::cuda::compact_flagged_indices(d_temp, bytes, d_flags.get(), r.n, static_cast<std::uint32_t*>(out),
                                              d_count.get(), o, s);
      else
        winnow::cuda::compact_flagged_indices(d_temp, bytes, d_flags.get(), r.n, static_cast<std::uint64_t*>(out),
                                              d_count.get(), o, s);
    } else {
      if (r.output == OutputKind::values)
        device_compact<T>(d_temp, bytes, d_in.get(), r.n, static_cast<T*>(out), d_count.get(), r.pred, o, s);
      else if (r.output == OutputKind::index32)
        device_compact_indices<T, std::uint32_t>(d_temp, bytes, d_in.get(), r.n, static_cast<std::uint32_t*>(out),
                                                 d_count.get(), r.pred, o, s);
      else
        device_compact_indices<T, std::uint64_t>(d_temp, bytes, d_in.get(), r.n, static_cast<std::uint64_t*>(out),
                                                 d_count.get(), r.pred, o, s);
    }
  };
  std::size_t bytes = 0;
  call(nullptr, bytes);
  DeviceBuffer<unsigned char> d_temp(bytes, s);
  call(d_temp.get(), bytes);
  std::uint64_t kept = 0;
  WINNOW_CUDA_CHECK(cudaMemcpyAsync(&kept, d_count.get(), sizeof(kept), cudaMemcpyDeviceToHost, s));
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  const std::uint64_t m = std::min(kept, r.out_capacity);
  if (m) {
    WINNOW_CUDA_CHECK(cudaMemcpyAsync(r.out, d_out.get(), m * out_size, cudaMemcpyDeviceToHost, s));
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  return kept;
}

}  // namespace winnow::detail::cuda

// ---- definitions of the templates declared in winnow/cuda/compact.hpp and compact_backends.hpp --

namespace winnow::cuda {
template <class T>
void compact(void* d_temp, std::size_t& temp_bytes, const T* d_in, std::uint64_t n, T* d_out, std::uint64_t* d_count,
             const Predicate& pred, const CompactOptions& o, cudaStream_t s) {
  detail::cuda::device_compact<T>(d_temp, temp_bytes, d_in, n, d_out, d_count, pred, o, s);
}
template <class T>
void compact(DeviceAllocator& alloc, const T* d_in, std::uint64_t n, T* d_out, std::uint64_t* d_count,
             const Predicate& pred, const CompactOptions& o, cudaStream_t s) {
  detail::cuda::with_allocator(alloc, s, [&](void* t, std::size_t& b) {
    detail::cuda::device_compact<T>(t, b, d_in, n, d_out, d_count, pred, o, s);
  });
}
template <class T>
void compact(CompactWorkspace& ws, const T* d_in, std::uint64_t n, T* d_out, std::uint64_t* d_count,
             const Predicate& pred, const CompactOptions& o, cudaStream_t s) {
  std::size_t bytes = 0;
  detail::cuda::device_compact<T>(nullptr, bytes, d_in, n, d_out, d_count, pred, o, s, &ws.state());
}
template <class T>
void compact_flagged(CompactWorkspace& ws, const T* d_in, const std::uint8_t* d_flags, std::uint64_t n, T* d_out,
                     std::uint64_t* d_count, const CompactOptions& o, cudaStream_t s) {
  std::size_t bytes = 0;
  detail::cuda::device_compact_flagged<T>(nullptr, bytes, d_in, d_flags, n, d_out, d_count, o, s, &ws.state());
}
template <class T, class Index>
void compact_indices(CompactWorkspace& ws, const T* d_in, std::uint64_t n, Index* d_out, std::uint64_t* d_count,
                     const Predicate& pred, const CompactOptions& o, cudaStream_t s) {
  std::size_t bytes = 0;
  detail::cuda::device_compact_indices<T, Index>(nullptr, bytes, d_in, n, d_out, d_count, pred, o, s, &ws.state());
}
template <class T>
void compact_flagged(void* d_temp, std::size_t& temp_bytes, const T* d_in, const std::uint8_t* d_flags, std::uint64_t n,
                     T* d_out, std::uint64_t* d_count, const CompactOptions& o, cudaStream_t s) {
  detail::cuda::device_compact_flagged<T>(d_temp, temp_bytes, d_in, d_flags, n, d_out, d_count, o, s);
}
template <class T>
void compact_flagged(DeviceAllocator& alloc, const T* d_in, const std::uint8_t* d_flags, std::uint64_t n, T* d_out,
                     std::uint64_t* d_count, const CompactOptions& o, cudaStream_t s) {
  detail::cuda::with_allocator(alloc, s, [&](void* t, std::size_t& b) {
    detail::cuda::device_compact_flagged<T>(t, b, d_in, d_flags, n, d_out, d_count, o, s);
  });
}
template <class T, class Index>
void compact_indices(void* d_temp, std::size_t& temp_bytes, const T* d_in, std::uint64_t n, Index* d_out,
                     std::uint64_t* d_count, const Predicate& pred, const CompactOptions& o, cudaStream_t s) {
  detail::cuda::device_compact_indices<T, Index>(d_temp, temp_bytes, d_in, n, d_out, d_count, pred, o, s);
}
template <class T, class Index>
void compact_indices(DeviceAllocator& alloc, const T* d_in, std::uint64_t n, Index* d_out, std::uint64_t* d_count,
                     const Predicate& pred, const CompactOptions& o, cudaStream_t s) {
  detail::cuda::with_allocator(alloc, s, [&](void* t, std::size_t& b) {
    detail::cuda::device_compact_indices<T, Index>(t, b, d_in, n, d_out, d_count, pred, o, s);
  });
}
}  // namespace winnow::cuda

namespace winnow::detail::cuda {
template <class T>
std::uint64_t compact(const CompactRequest<T>& r) {
  return host_compact<T>(r);
}
}  // namespace winnow::detail::cuda

/// Explicit instantiation of the device API and the host wrapper for one element type.
#define WINNOW_CUDA_COMPACT_INSTANTIATE(T)                                                                             \
  template void winnow::cuda::compact<T>(void*, std::size_t&, const T*, std::uint64_t, T*, std::uint64_t*,             \
                                         const winnow::Predicate&, const winnow::CompactOptions&, cudaStream_t);       \
  template void winnow::cuda::compact<T>(winnow::cuda::DeviceAllocator&, const T*, std::uint64_t, T*, std::uint64_t*,  \
                                         const winnow::Predicate&, const winnow::CompactOptions&, cudaStream_t);       \
  template void winnow::cuda::compact_flagged<T>(void*, std::size_t&, const T*, const std::uint8_t*, std::uint64_t,    \
                                                 T*, std::uint64_t*, const winnow::CompactOptions&, cudaStream_t);     \
  template void winnow::cuda::compact_flagged<T>(winnow::cuda::DeviceAllocator&, const T*, const std::uint8_t*,        \
                                                 std::uint64_t, T*, std::uint64_t*, const winnow::CompactOptions&,     \
                                                 cudaStream_t);                                                        \
  template void winnow::cuda::compact_indices<T, std::uint32_t>(                                                       \
      void*, std::size_t&, const T*, std::uint64_t, std::uint32_t*, std::uint64_t*, const winnow::Predicate&,          \
      const winnow::CompactOptions&, cudaStream_t);                                                                    \
  template void winnow::cuda::compact_indices<T, std::uint64_t>(                                                       \
      void*, std::size_t&, const T*, std::uint64_t, std::uint64_t*, std::uint64_t*, const winnow::Predicate&,          \
      const winnow::CompactOptions&, cudaStream_t);                                                                    \
  template void winnow::cuda::compact_indices<T, std::uint32_t>(                                                       \
      winnow::cuda::DeviceAllocator&, const T*, std::uint64_t, std::uint32_t*, std::uint64_t*,                         \
      const winnow::Predicate&, const winnow::CompactOptions&, cudaStream_t);                                          \
  template void winnow::cuda::compact_indices<T, std::uint64_t>(                                                       \
      winnow::cuda::DeviceAllocator&, const T*, std::uint64_t, std::uint64_t*, std::uint64_t*,                         \
      const winnow::Predicate&, const winnow::CompactOptions&, cudaStream_t);                                          \
  template void winnow::cuda::compact<T>(winnow::cuda::CompactWorkspace&, const T*, std::uint64_t, T*, std::uint64_t*, \
                                         const winnow::Predicate&, const winnow::CompactOptions&, cudaStream_t);       \
  template void winnow::cuda::compact_flagged<T>(winnow::cuda::CompactWorkspace&, const T*, const std::uint8_t*,       \
                                                 std::uint64_t, T*, std::uint64_t*, const winnow::CompactOptions&,     \
                                                 cudaStream_t);                                                        \
  template void winnow::cuda::compact_indices<T, std::uint32_t>(                                                       \
      winnow::cuda::CompactWorkspace&, const T*, std::uint64_t, std::uint32_t*, std::uint64_t*,                        \
      const winnow::Predicate&, const winnow::CompactOptions&, cudaStream_t);                                          \
  template void winnow::cuda::compact_indices<T, std::uint64_t>(                                                       \
      winnow::cuda::CompactWorkspace&, const T*, std::uint64_t, std::uint64_t*, std::uint64_t*,                        \
      const winnow::Predicate&, const winnow::CompactOptions&, cudaStream_t);                                          \
  template std::uint64_t winnow::detail::cuda::compact<T>(const winnow::detail::CompactRequest<T>&);
