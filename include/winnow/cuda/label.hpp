#pragma once
/// @file cuda/label.hpp
/// Device API of connected-component labeling for CUDA users: device pointers, a stream, the
/// count and statistics written to device memory, no host synchronisation. Needs no CUDA header.
///
/// Temporary storage, CUB style: call once with d_temp == nullptr to get `temp_bytes`, allocate,
/// call again with the same sizes and options.
///
/// Limits: the mask is width x height with row stride `mask_stride` bytes; the label image is
/// contiguous (stride = width). height * next_pow2(width) must be below 2^31 (one call; the host
/// API `winnow::label` labels larger images in bands).
/// `options.min_area` must be 0 or 1 here (filtering needs the count on the host: use
/// winnow::label); `options.backend` is ignored.
#include <cstddef>
#include <cstdint>

#include "winnow/label.hpp"

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace winnow::cuda {

/// Raw statistics accumulated on the device for one label (exact integers). Convert with
/// `to_component_stats`. right/bottom are inclusive.
struct RawComponentStats {
  std::uint32_t area;
  std::uint32_t left, top, right, bottom;
  std::uint32_t reserved;
  std::uint64_t sum_x, sum_y;
};
static_assert(sizeof(RawComponentStats) == 40);

inline ComponentStats to_component_stats(const RawComponentStats& r) {
  ComponentStats s;
  s.area = r.area;
  s.left = r.left;
  s.top = r.top;
  s.width = std::int64_t{r.right} - r.left + 1;
  s.height = std::int64_t{r.bottom} - r.top + 1;
  s.cx = r.area ? static_cast<double>(r.sum_x) / static_cast<double>(r.area) : 0.0;
  s.cy = r.area ? static_cast<double>(r.sum_y) / static_cast<double>(r.area) : 0.0;
  return s;
}

/// Labels the non-zero pixels of d_mask into d_labels (width*height, contiguous); writes N to
/// *d_count. When d_stats is not null, d_stats[l-1] receives the statistics of label l for
/// l <= stats_capacity (a larger N leaves the rest unwritten; N itself is always exact).
/// `options.algorithm`: tile_merge or block_union_find (automatic picks the faster).
/// Throws InputError on bad sizes/options, BackendError on a CUDA error.
void label(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_mask, std::int64_t width,
           std::int64_t height, std::int64_t mask_stride, std::uint32_t* d_labels, std::uint32_t* d_count,
           RawComponentStats* d_stats, std::uint64_t stats_capacity, const LabelOptions& options,
           cudaStream_t stream);

}  // namespace winnow::cuda
