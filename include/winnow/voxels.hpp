#pragma once
/// @file voxels.hpp
/// Voxel compaction: the positions and values of the voxels of a volume that pass a level (above
/// it, below it, or non-zero), in raster order (x fastest, then y, then z): the point cloud of
/// a thresholded scan. Runs on the stream compaction's index form (compact_indices), so on the
/// CPU or a CUDA device.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "winnow/backend.hpp"
#include "winnow/volume.hpp"

namespace winnow {

/// Which voxels are kept.
enum class VoxelMode {
  above,    ///< value > level
  below,    ///< value < level
  nonzero,  ///< value != 0 (level ignored; -0.0 is zero)
};

/// The selection, compared exactly in the voxel's own type. NaN voxels are never kept.
/// - Integer voxels: `above` keeps v > floor(level), `below` keeps v < ceil(level) (the same
///   voxels as comparing the exact values); a level beyond the type's range keeps all or none.
/// - Floating-point voxels: the comparison (double)v > level (or <), exactly: for f32 the level
///   is turned into the nearest float on the safe side (the largest float <= level for above,
///   the smallest float >= level for below), which selects the same voxels.
/// A NaN level is an InputError.
struct VoxelSelection {
  double level = 0;
  VoxelMode mode = VoxelMode::above;
};

struct VoxelOptions {
  Backend backend = Backend::automatic;  ///< where the compaction runs (automatic: CUDA when a device answers)
};

/// Integer coordinates of a voxel (x fastest in memory).
struct VoxelPosition {
  std::int64_t x = 0, y = 0, z = 0;
  friend bool operator==(const VoxelPosition&, const VoxelPosition&) = default;
};

/// The kept voxels: positions[i] holds values[i]; raster order.
template <class T>
struct Voxels {
  std::vector<VoxelPosition> positions;
  std::vector<T> values;
  Backend backend = Backend::cpu;  ///< the backend that ran the compaction
  double milliseconds = 0;         ///< host wall time of the whole call (copies to and from a device included)
};

/// The voxels of `volume` that `selection` keeps, on `options.backend` (BackendError when cuda is
/// asked for and none answers). Any strides; a strided view, and i8 and i16 voxels, are first
/// copied into a contiguous buffer (see src/voxels/voxels.cpp). Instantiated for the voxel types
/// of io::AnyVolume: std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t,
/// std::int32_t, std::uint64_t, std::int64_t, float, double.
template <class T>
Voxels<T> compact_voxels(VolumeView<const T> volume, const VoxelSelection& selection, const VoxelOptions& options = {});

/// The same for a view of non-const voxels (Volume<T>::view() of a non-const volume).
template <class T>
requires(!std::is_const_v<T>) Voxels<T> compact_voxels(VolumeView<T> volume, const VoxelSelection& selection,
                                                       const VoxelOptions& options = {}) {
  return compact_voxels<T>(VolumeView<const T>(volume), selection, options);
}

}  // namespace winnow
