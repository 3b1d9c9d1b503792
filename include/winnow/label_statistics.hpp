#pragma once
/// @file label_statistics.hpp
/// Statistics of a label array -- any labeling's output, not only winnow's: for every label
/// 0..M-1 (M the largest label + 1) its voxel count, bounding box and exact coordinate sums (what
/// cc3d.statistics gives), and with an intensity volume of the same size the sum, minimum and
/// maximum of its values (scipy.ndimage.sum_labels / minimum / maximum, scikit-image's
/// regionprops intensity_*). And the survivor rule of LabelOptions::min_area and largest_k, for
/// callers that filter a labeling themselves (the Python layer's device arrays).
///
/// Host API (this header): host memory, the CPU. Device API: winnow/cuda/label_statistics.hpp.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "winnow/volume.hpp"

namespace winnow {

struct LabelStatisticsOptions {
  /// M, the number of labels (rows of the result); 0: the largest label + 1, found by one more
  /// pass. A voxel whose label is M or more is then an InputError.
  std::uint64_t labels = 0;
  /// Label 0 (the background) alone: M = 1, every other voxel skipped (one fast pass; what a
  /// labeling that has its components' statistics still needs).
  bool background_only = false;
};

/// The statistics of one label: its voxel count, bounding box and exact coordinate sums (axes x,
/// y, z). A label without voxels has voxels 0, sums 0, lower INT64_MAX and upper -1 on every axis.
struct LabelRecord {
  std::uint64_t voxels = 0;
  std::array<std::uint64_t, 3> sums = {0, 0, 0};  ///< sums of the voxels' x, y and z
  std::array<std::int64_t, 3> lower = {INT64_MAX, INT64_MAX, INT64_MAX};
  std::array<std::int64_t, 3> upper = {-1, -1, -1};  ///< inclusive
  friend bool operator==(const LabelRecord&, const LabelRecord&) = default;
};

/// Per-label statistics: records[label] for labels 0..M-1 (0 the background).
struct LabelStatistics {
  std::vector<LabelRecord> records;
  [[nodiscard]] std::uint64_t labels() const { return records.size(); }
};

/// The sum type of intensity values: int64 for signed integers, uint64 for unsigned ones and
/// bool, double for floating point.
template <class V>
using IntensitySum = std::conditional_t<std::is_floating_point_v<V>, double,
                                        std::conditional_t<std::is_signed_v<V>, std::int64_t, std::uint64_t>>;

/// LabelStatistics plus, per label, the sum, minimum and maximum of an intensity volume's
/// values. Integer sums are exact (an InputError when a 64-bit type's sum leaves 64 bits);
/// floating-point values are summed in double. NaN values enter the sum; the minimum and maximum
/// ignore them (a label of NaN values alone has NaN for both). A label without voxels has sum 0
/// and minimum and maximum 0 (NaN for floating point).
template <class V>
struct LabelIntensityStatistics : LabelStatistics {
  std::vector<IntensitySum<V>> sum;  ///< [M]
  std::vector<V> minimum, maximum;   ///< [M]
};

/// The statistics of every label of `labels`. Labels are non-negative integers (InputError for a
/// negative one); M, unless given, is the largest label + 1, which must be below the number of
/// voxels + 2^20 (labels 0..N as labelings number them; InputError otherwise, rather than rows
/// for labels that cannot exist). Any strides. Runs of equal labels along x are summed at once,
/// so the cost follows the number of runs; several threads share the work when their tables
/// together stay small (few labels), one thread otherwise and below 2^16 voxels. Instantiated
/// for the eight integer types of 8 to 64 bits.
template <class L>
LabelStatistics label_statistics(VolumeView<const L> labels, const LabelStatisticsOptions& options = {});
template <class L>
requires(!std::is_const_v<L>) LabelStatistics
    label_statistics(VolumeView<L> labels, const LabelStatisticsOptions& options = {}) {
  return label_statistics<L>(VolumeView<const L>(labels), options);
}

/// The same with `intensity` (the labels' size, any strides). Instantiated for the eight label
/// types and the intensity types std::uint8_t, std::int8_t, std::uint16_t, std::int16_t,
/// std::uint32_t, std::int32_t, std::uint64_t, std::int64_t, float, double.
template <class L, class V>
LabelIntensityStatistics<V> label_statistics(VolumeView<const L> labels, VolumeView<const V> intensity,
                                             const LabelStatisticsOptions& options = {});
/// The same for views of non-const labels or values (Volume<T>::view() of a non-const volume).
template <class L, class V>
requires(!std::is_const_v<L> || !std::is_const_v<V>) LabelIntensityStatistics<std::remove_const_t<V>> label_statistics(
    VolumeView<L> labels, VolumeView<V> intensity, const LabelStatisticsOptions& options = {}) {
  return label_statistics<std::remove_const_t<L>, std::remove_const_t<V>>(
      VolumeView<const std::remove_const_t<L>>(labels), VolumeView<const std::remove_const_t<V>>(intensity), options);
}

/// The components that survive `min_area` (fewer voxels or pixels are removed) and then
/// `largest_k` (0: all; else the k largest, ties to the lower label), as map[old label] = new
/// label (0: removed; map[0] = 0). The survivors keep their order, so the new labels stay in
/// raster order. `size(i)` is the size of label i + 1. Returns the number kept. The rule
/// LabelOptions::min_area and largest_k apply in every labeling.
template <class Map, class Size>
std::uint64_t surviving_labels(std::uint64_t n, std::uint64_t min_area, std::uint64_t largest_k, const Size& size,
                               std::vector<Map>& map) {
  std::vector<std::uint64_t> kept;  // old labels - 1
  kept.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i)
    if (size(i) >= min_area) kept.push_back(i);
  if (largest_k > 0 && largest_k < kept.size()) {
    std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(largest_k), kept.end(),
                     [&](std::uint64_t a, std::uint64_t b) { return size(a) != size(b) ? size(a) > size(b) : a < b; });
    kept.resize(largest_k);
    std::sort(kept.begin(), kept.end());
  }
  map.assign(n + 1, Map{0});
  for (std::uint64_t j = 0; j < kept.size(); ++j) map[kept[j] + 1] = static_cast<Map>(j + 1);
  return kept.size();
}

/// The same over sizes[1..N] (sizes[0], the background's, is ignored): the map has N + 1 entries.
inline std::uint64_t surviving_labels(std::span<const std::uint64_t> sizes, std::uint64_t min_area,
                                      std::uint64_t largest_k, std::vector<std::uint64_t>& map) {
  const std::uint64_t n = sizes.empty() ? 0 : sizes.size() - 1;
  return surviving_labels(
      n, min_area, largest_k, [&](std::uint64_t i) { return sizes[i + 1]; }, map);
}

}  // namespace winnow
