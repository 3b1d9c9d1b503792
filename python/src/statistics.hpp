#pragma once
// cc3d.statistics' arrays as the extension returns them (statistics.cpp builds them from the
// library's statistics of a label array, label.cpp from a labeling's): the Python layer only
// wraps them (winnow/statistics.py).
#include <array>
#include <cstdint>
#include <vector>

#include "arrays.hpp"

namespace winnow::python {

/// cc3d.statistics' three arrays for the M labels 0..M-1 of an array of `ndim` dimensions (2: y,
/// x; 3: z, y, x), `voxels` voxels and largest side `side`, in the dtypes cc3d gives:
/// - voxel_counts [M]: uint32 (uint64 from 2^32 voxels);
/// - bounding_boxes [M, 2 ndim], cc3d's no_slice_conversion form: per array axis its first and
///   last index (inclusive); uint16 for sides up to 65535, uint32 up to 2^32 - 1, else uint64; a
///   label without voxels has the type's largest value and 0 (cc3d's values there);
/// - centroids float64 [M, ndim], the mean index along each axis (NaN without voxels).
/// Every row must be written by set() (from several threads at once, a row each) before the
/// arrays are handed to NumPy, without a copy, by release().
class Cc3dArrays {
 public:
  Cc3dArrays(std::size_t m, std::size_t ndim, std::uint64_t voxels, std::int64_t side);
  /// Row `label`: its voxel count, box (x, y, z, inclusive) and centroid (x, y, z).
  void set(std::size_t label, std::uint64_t count, const std::array<std::int64_t, 3>& lower,
           const std::array<std::int64_t, 3>& upper, const std::array<double, 3>& centroid);
  /// The same a column at a time (every column of every row before release()): the count; one
  /// end of the box (upper: its last index, else its first); the centroid. `empty`: the label
  /// has no voxels (cc3d's values are written).
  void set_count(std::size_t label, std::uint64_t count);
  void set_box_end(std::size_t label, bool upper, const std::array<std::int64_t, 3>& at, bool empty);
  void set_centroid(std::size_t label, const std::array<double, 3>& centroid, bool empty);
  [[nodiscard]] std::size_t rows() const { return m_; }
  /// (voxel_counts, bounding_boxes, centroids).
  nb::tuple release();

 private:
  std::size_t m_, ndim_;
  int count_bytes_, box_bytes_;
  // Not zeroed: every row is set() before release().
  HostBuffer<std::uint32_t> counts32_;
  HostBuffer<std::uint64_t> counts64_;
  HostBuffer<std::uint16_t> boxes16_;
  HostBuffer<std::uint32_t> boxes32_;
  HostBuffer<std::uint64_t> boxes64_;
  HostBuffer<double> centroids_;
};

/// The largest side of a shape (the bounding boxes' dtype follows it).
std::int64_t largest_side(std::int64_t nx, std::int64_t ny, std::int64_t nz);

}  // namespace winnow::python
