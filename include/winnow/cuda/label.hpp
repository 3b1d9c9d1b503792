#pragma once
/// @file cuda/label.hpp
/// Device API of connected-component labeling of images and volumes for CUDA users: device
/// pointers, a stream, the count and statistics written to device memory, no host
/// synchronisation. Needs no CUDA header.
///
/// Temporary storage, CUB style: call once with d_temp == nullptr to get `temp_bytes`, allocate,
/// call again with the same sizes and options.
///
/// Inputs are views of device memory (an image's rows at any stride; a volume contiguous), label
/// outputs contiguous device arrays. Filtering by size (min_area, largest_k) needs the count on
/// the host: the host API `winnow::label` does it.
/// Limits (images): height * next_pow2(width) must be below 2^31 (one call; the host API
/// `winnow::label` labels larger images in bands).
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "winnow/label.hpp"

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace winnow::cuda {

/// What the device labelings honour.
struct DeviceLabelOptions {
  /// Images: 4 or 8; volumes: 6, 18 or 26; 0 the densest (winnow::resolve_connectivity).
  int connectivity = 0;
  /// Volumes: neighbours join only when their values are equal (and non-zero); else every
  /// non-zero voxel is foreground.
  bool multilabel = false;
  /// Images: tile_merge or block_union_find (automatic picks the faster); volumes: automatic or
  /// tile_merge (bricks labelled in shared memory, merged across their faces).
  LabelAlgorithm algorithm = LabelAlgorithm::automatic;
};

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

/// Labels the non-zero pixels of `mask` (device memory; its stride in bytes) into d_labels
/// (width*height, contiguous); writes N to *d_count. When d_stats is not null, d_stats[l-1]
/// receives the statistics of label l for l <= stats_capacity (a larger N leaves the rest
/// unwritten; N itself is always exact). Throws InputError on bad sizes/options, BackendError on a
/// CUDA error.
void label(void* d_temp, std::size_t& temp_bytes, ImageView<const std::uint8_t> mask, std::uint32_t* d_labels,
           std::uint32_t* d_count, RawComponentStats* d_stats, std::uint64_t stats_capacity,
           const DeviceLabelOptions& options, cudaStream_t stream);

// ---- volumes ------------------------------------------------------------------------------------

/// Raw statistics of one component of a volume, accumulated on the device (exact integers;
/// coordinates in voxels, maxima inclusive). Convert with `to_volume_component_stats`. 16-byte
/// aligned (cudaMalloc's allocations are): the device writes whole records as 16-byte stores.
struct alignas(16) RawVolumeComponentStats {
  std::uint64_t voxels;
  std::uint64_t sum_x, sum_y, sum_z;
  std::uint32_t min_x, min_y, min_z, max_x, max_y, max_z;
  std::uint64_t value;  ///< the component's voxel value (multilabel), else 1
};
static_assert(sizeof(RawVolumeComponentStats) == 64);

inline VolumeComponentStats to_volume_component_stats(const RawVolumeComponentStats& r) {
  VolumeComponentStats s;
  s.voxels = r.voxels;
  s.x = r.min_x, s.y = r.min_y, s.z = r.min_z;
  s.width = std::int64_t{r.max_x} - r.min_x + 1;
  s.height = std::int64_t{r.max_y} - r.min_y + 1;
  s.depth = std::int64_t{r.max_z} - r.min_z + 1;
  const double n = static_cast<double>(r.voxels);
  s.cx = r.voxels ? static_cast<double>(r.sum_x) / n : 0.0;
  s.cy = r.voxels ? static_cast<double>(r.sum_y) / n : 0.0;
  s.cz = r.voxels ? static_cast<double>(r.sum_z) / n : 0.0;
  s.value = r.value;
  return s;
}

/// Labels `volume` (device memory, contiguous: x fastest, then y, then z; InputError for other
/// strides) into d_labels (nx*ny*nz, contiguous): 0 for background, 1..N in raster order of each
/// component's first voxel, as winnow::label numbers them. Writes N to *d_count. When d_stats is
/// not null, d_stats[l-1] receives the statistics of label l for l <= stats_capacity (the rest
/// stay unwritten; N itself is always exact); d_stats must be 16-byte aligned (InputError
/// otherwise). Limit: nx*ny*nz < 2^32 and every side below 2^31 (32-bit keys; Error beyond).
/// Throws InputError on bad sizes/options, BackendError on a CUDA error. Temporary storage CUB
/// style (see the top of this header).
template <class T>
concept VolumeVoxel = std::same_as<T, std::uint8_t> || std::same_as<T, std::uint16_t> ||
    std::same_as<T, std::uint32_t> || std::same_as<T, std::uint64_t>;

/// Voxels of type T: std::uint8_t, std::uint16_t, std::uint32_t or std::uint64_t (the library
/// instantiates these four).
template <VolumeVoxel T>
void label_volume(void* d_temp, std::size_t& temp_bytes, VolumeView<const T> volume, std::uint32_t* d_labels,
                  std::uint32_t* d_count, RawVolumeComponentStats* d_stats, std::uint64_t stats_capacity,
                  const DeviceLabelOptions& options, cudaStream_t stream);

}  // namespace winnow::cuda
