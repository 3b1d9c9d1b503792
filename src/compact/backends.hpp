#pragma once
// The contract between the compaction front ends (compact.cpp: stream compaction;
// image_compact.cpp: image compaction) and each backend. A stream-compaction backend implements
// one function template per element type, explicitly instantiated once for WINNOW_COMPACT_TYPES
// in its own translation unit.
#include <cstdint>

#include "winnow/compact.hpp"
#include "winnow/image.hpp"
#include "winnow/image_compact.hpp"

/// The element types with precompiled compaction on every backend.
#define WINNOW_COMPACT_TYPES(X) \
  X(std::uint8_t)               \
  X(std::uint16_t)              \
  X(std::int32_t)               \
  X(std::uint32_t)              \
  X(float)                      \
  X(std::int64_t)               \
  X(std::uint64_t)              \
  X(double)                     \
  X(::winnow::Rgba8)            \
  X(::winnow::RgbaF32)

namespace winnow::detail {

enum class OutputKind { values, index32, index64 };

/// One compaction, host memory in and out.
template <class T>
struct CompactRequest {
  const T* in = nullptr;
  std::uint64_t n = 0;
  /// Non-null: keep in[i] where flags[i] != 0 (pred ignored). Null: keep where matches(pred, in[i]).
  const std::uint8_t* flags = nullptr;
  Predicate pred{};
  OutputKind output = OutputKind::values;
  void* out = nullptr;                                        ///< T*, std::uint32_t* or std::uint64_t* by `output`
  std::uint64_t out_capacity = 0;                             ///< elements; write min(kept, out_capacity)
  CompactAlgorithm algorithm = CompactAlgorithm::group_scan;  ///< never automatic here
  Order order = Order::stable;
};

namespace cpu {
/// Algorithms: group_scan, histopyramid. Returns the number kept.
template <class T>
std::uint64_t compact(const CompactRequest<T>& request);
/// Image compaction on the CPU (cpu/image_compact.cpp): keeps pixels with
/// pixel_key_milli(p, key) > luminance_threshold_milli(threshold), packed_index in raster order,
/// sorted_index by key (stable; empty for SortOrder::none); `milliseconds` is the wall time of
/// compaction + sort. Precondition (checked by the front end): 0 < image.size() < 2^32.
ImageCompactResult compact_image(ImageView<const Rgba8> image, const ImageCompactOptions& options);
}  // namespace cpu

namespace cuda {
/// Copies in, runs the device algorithm, copies min(kept, capacity) out; synchronises.
/// Algorithms: group_scan, block_ballot, histopyramid, single_pass.
template <class T>
std::uint64_t compact(const CompactRequest<T>& request);
/// The variant `automatic` means on CUDA for this size, element size and order.
CompactAlgorithm automatic_algorithm(std::uint64_t n, std::size_t element_size, Order order);
/// Image compaction on the current CUDA device (cuda/image_compact.cu): copies the image in (not
/// timed), the same selection and orders as cpu::compact_image, copies the indices out.
/// `milliseconds` is the device time of compaction + sort (CUDA events), without the copies.
/// Sets result.backend = Backend::cuda. Same precondition. Throws BackendError on a CUDA error.
ImageCompactResult compact_image(ImageView<const Rgba8> image, const ImageCompactOptions& options);
}  // namespace cuda

}  // namespace winnow::detail
