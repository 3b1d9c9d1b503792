#pragma once
// The CUDA isosurface's plan: what one slab of the volume is (its layers, tiles and the voxel
// index space the passes share), how its temporary storage is laid out, how voxels are compared
// with the level in their own type, and the tuning of the passes' launches, apart from the
// algorithm. Part of src/isosurface/cuda/isosurface.cu, which alone includes it.
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "common/cuda/check.cuh"
#include "isosurface/cell.hpp"
#include "winnow/error.hpp"
#include "winnow/isosurface.hpp"

namespace winnow::detail::cuda {

/// The launch shapes of the passes (bench/results/isosurface.md has the measurements behind
/// them). A tile is a piece of a row; tiles follow raster order.
struct IsosurfaceTuning {
  static constexpr int kTileVoxels = 256;     ///< voxels per tile; threads per block of the tile and dense passes
  static constexpr int kRowsPerBlock = 8;     ///< classification: warps per block, one row each
  static constexpr int kLayersPerBlock = 32;  ///< classification: the layers a block marches through
  static constexpr int kVoxelsPerLane = 8;    ///< classification: 8 voxels per lane (one info word)
  /// A piece: the voxels of a row one classification warp decides per layer, and whose vertex and
  /// triangle counts it sums; the scan runs over pieces, and a tile of the key passes is one.
  static constexpr int kPieceVoxels = 32 * kVoxelsPerLane;
  static constexpr int kKeyTilesPerWarp = 1;               ///< key passes: tiles per warp (their stores dominate)
  static constexpr int kDenseBlocksPerMultiprocessor = 8;  ///< dense passes: blocks looping over the outputs
};
static_assert(IsosurfaceTuning::kTileVoxels == IsosurfaceTuning::kPieceVoxels, "a tile is one piece");

namespace {

namespace iso = winnow::detail::iso;
using Tuning = IsosurfaceTuning;

/// The voxels of a device buffer holding layers [z_first, z_first + layers) of the volume.
template <class T>
struct DeviceField {
  const T* data;
  std::int64_t row_stride, slice_stride, z_first;
  __device__ __forceinline__ double operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return static_cast<double>(data[(z - z_first) * slice_stride + y * row_stride + x]);
  }
};

/// One slab: own layers [z0, z1), plus the extra layer z1 when z1 < nz. Voxel index space
/// v = ((z - z0) ny + y) nx + x runs over the own layers and then the extra one.
struct Slab {
  iso::Grid grid;
  std::int64_t z0 = 0, z1 = 0;
  std::uint64_t own_voxels = 0, extra_voxels = 0;
  /// Pieces of rows (IsosurfaceTuning::kPieceVoxels voxels; the key passes' tiles too), in raster
  /// order: those of the own layers, all of them with the extra layer's, those of a row.
  unsigned own_pieces = 0, pieces = 0, pieces_per_row = 1;
  double level = 0;
  bool flip = false, normals = false, values = false;
};

struct Sums {
  unsigned long long vertices, triangles;
};
struct AddSums {
  __device__ __forceinline__ Sums operator()(const Sums& a, const Sums& b) const {
    return {a.vertices + b.vertices, a.triangles + b.triangles};
  }
};

/// A voxel of the slab: v = ((z - z0) ny + y) nx + x over the own layers, then the extra one.
/// Tiles are the pieces of rows (row r, own layers' rows first, cut into `pieces_per_row`), so they
/// follow raster order.
struct Locus {
  bool valid;
  std::uint64_t v;  ///< ((z - z0) ny + y) nx + x: own layers, then the extra layer
  std::int64_t x, y, z;
};

/// Whether a voxel is above, compared in the voxel's own type: exactly iso::above(double(v), level),
/// without converting every voxel to double. Floats compare against the largest float <= level
/// (v > it exactly when double(v) > level); 8- and 16-bit integers against floor(level) as an int.
template <class T>
struct Classifier {
  using Key =
      std::conditional_t<std::is_same_v<T, double>, double, std::conditional_t<std::is_same_v<T, float>, float, int>>;
  Key threshold;
  __device__ __forceinline__ bool above(T v) const { return static_cast<Key>(v) > threshold; }
};

template <class T>
Classifier<T> make_classifier(double level) {
  Classifier<T> c{};
  if constexpr (std::is_same_v<T, double>) {
    c.threshold = level;
  } else if constexpr (std::is_same_v<T, float>) {
    constexpr double kMax = std::numeric_limits<float>::max();
    float f;
    if (level == std::numeric_limits<double>::infinity()) f = std::numeric_limits<float>::infinity();
    else if (level >= kMax) f = std::numeric_limits<float>::max();
    else if (level < -kMax) f = -std::numeric_limits<float>::infinity();
    else {
      f = static_cast<float>(level);
      if (static_cast<double>(f) > level) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
    }
    c.threshold = f;
  } else {  // 8- and 16-bit integers: any threshold beyond +-2^20 acts like one at +-2^20
    const double t = std::floor(std::clamp(level, -1048576.0, 1048576.0));
    c.threshold = static_cast<int>(t);
  }
  return c;
}

Slab make_slab(const iso::Grid& grid, std::int64_t z0, std::int64_t z1, double level, const IsosurfaceOptions& o) {
  Slab s;
  s.grid = grid;
  s.z0 = z0, s.z1 = z1;
  const std::uint64_t layer = static_cast<std::uint64_t>(grid.nx) * static_cast<std::uint64_t>(grid.ny);
  s.own_voxels = layer * static_cast<std::uint64_t>(z1 - z0);
  s.extra_voxels = z1 < grid.nz ? layer : 0;
  s.pieces_per_row = static_cast<unsigned>((grid.nx + Tuning::kPieceVoxels - 1) / Tuning::kPieceVoxels);
  const std::uint64_t own_rows = static_cast<std::uint64_t>(grid.ny) * static_cast<std::uint64_t>(z1 - z0);
  const std::uint64_t rows = own_rows + (s.extra_voxels != 0 ? static_cast<std::uint64_t>(grid.ny) : 0);
  const std::uint64_t own_pieces = own_rows * s.pieces_per_row, pieces = rows * s.pieces_per_row;
  if (pieces >= static_cast<std::uint64_t>(std::numeric_limits<int>::max()) || grid.nx >= (std::int64_t{1} << 31))
    throw InputError("isosurface: a slab of " + std::to_string(s.own_voxels) + " voxels is too large for one grid");
  if (grid.nx >= (std::int64_t{1} << 30) || grid.ny >= (std::int64_t{1} << 32) || grid.nz >= (std::int64_t{1} << 29))
    throw InputError("isosurface: the CUDA backend takes at most 2^30 x 2^32 x 2^29 voxels");
  s.own_pieces = static_cast<unsigned>(own_pieces), s.pieces = static_cast<unsigned>(pieces);
  s.level = level;
  s.flip = o.flip, s.normals = o.normals, s.values = o.values;
  return s;
}

/// Bump layout of a slab's temporary storage, 256-byte aligned parts (from a base the device API
/// aligns: `bytes` holds the slack).
struct Layout {
  std::size_t at_sums = 0, at_offsets = 0, at_scan = 0, at_fits = 0, at_first = 0, at_masks = 0, bytes = 0;
  std::size_t scan_bytes = 0;
};
Layout layout_for(const Slab& s) {
  auto round = [](std::size_t b) { return (b + 255) & ~std::size_t{255}; };
  Layout l;
  const std::size_t entries = static_cast<std::size_t>(s.pieces) + 1;
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, l.scan_bytes, static_cast<const Sums*>(nullptr),
                                                   static_cast<Sums*>(nullptr), AddSums{}, Sums{0, 0},
                                                   static_cast<int>(entries)));
  const std::uint64_t voxels = s.own_voxels + s.extra_voxels;
  l.at_sums = 0;
  l.at_offsets = l.at_sums + round(entries * sizeof(Sums));
  l.at_scan = l.at_offsets + round(entries * sizeof(Sums));
  l.at_fits = l.at_scan + round(std::max<std::size_t>(l.scan_bytes, 1));
  l.at_first = l.at_fits + 256;
  l.at_masks = l.at_first + round(voxels * sizeof(std::uint32_t));
  l.bytes = l.at_masks + round(voxels) + 255;  // + room to align a caller's storage to 256 bytes
  return l;
}

}  // namespace
}  // namespace winnow::detail::cuda
