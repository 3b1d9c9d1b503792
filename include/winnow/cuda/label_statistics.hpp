#pragma once
/// @file cuda/label_statistics.hpp
/// Device API of the statistics of a label array (winnow/label_statistics.hpp says what they
/// are) for CUDA users: views of device memory, a stream, the results written to device memory,
/// no host synchronisation. Needs no CUDA header.
///
/// The caller gives M (the number of labels: the largest + 1, say, from a reduction); a voxel
/// whose label is M or more is skipped and reported in `d_beyond`. Labels are read as unsigned
/// integers: a negative label of a signed array reads as a large one, so it is reported there too.
///
/// Temporary storage, CUB style: call once with d_temp == nullptr to get `temp_bytes` (nothing is
/// launched), allocate, call again with the same M and types. It holds the intensity's running
/// minima and maxima (16 bytes per label); without intensity it is empty.
#include <cstddef>
#include <cstdint>

#include "winnow/label_statistics.hpp"
#include "winnow/volume.hpp"

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace winnow::cuda {

/// Where label_statistics writes: device arrays of M rows (`background_only`: one row, label 0).
struct DeviceLabelStatistics {
  std::uint64_t* d_voxels = nullptr;  ///< [M] voxel counts
  std::int64_t* d_lower = nullptr;    ///< [M][3] x, y, z; INT64_MAX for a label without voxels
  std::int64_t* d_upper = nullptr;    ///< [M][3] x, y, z, inclusive; -1 for a label without voxels
  std::uint64_t* d_sums = nullptr;    ///< [M][3] exact sums of the voxels' x, y and z
  void* d_intensity_sum = nullptr;    ///< [M] IntensitySum<V> (intensity form only)
  void* d_minimum = nullptr;          ///< [M] V, as the host API gives it (intensity form only)
  void* d_maximum = nullptr;          ///< [M] V (intensity form only)
  /// Two words: [0] 1 when a label of M or more was met (else 0), [1] the largest such label's
  /// bits as an unsigned integer. Required.
  std::uint64_t* d_beyond = nullptr;
  /// [M] flat index (z * ny + y) * nx + x of the label's first voxel in raster order (UINT64_MAX
  /// for a label without voxels): what labeling a volume in chunks needs. Optional (nullptr:
  /// not computed).
  std::uint64_t* d_first = nullptr;
};

/// The statistics of `labels` (a view of device memory: any strides, x adjacent) into `out`.
/// Labels of type std::uint8_t, std::uint16_t, std::uint32_t or std::uint64_t. Threads walk
/// segments of rows, add up the runs of one label in registers and add them to its row with
/// atomics when the label changes (a warp whose lanes hold one label adds once; the
/// background's runs go to a per-warp sum). Integer intensity sums
/// are 64-bit atomics: exact unless a 64-bit type's sum leaves 64 bits (it then wraps, where the
/// host API refuses). InputError for M = 0 or a view of negative size; BackendError on a CUDA error.
template <class L>
void label_statistics(void* d_temp, std::size_t& temp_bytes, VolumeView<const L> labels, std::uint64_t m,
                      bool background_only, const DeviceLabelStatistics& out, cudaStream_t stream);

/// The same with `intensity` (device memory, the labels' size, any strides with x adjacent), of
/// the intensity types of the host API.
template <class L, class V>
void label_statistics(void* d_temp, std::size_t& temp_bytes, VolumeView<const L> labels, VolumeView<const V> intensity,
                      std::uint64_t m, bool background_only, const DeviceLabelStatistics& out, cudaStream_t stream);

}  // namespace winnow::cuda
