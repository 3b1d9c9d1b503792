#pragma once
// Reference labeling of volumes for the tests: breadth-first search from every unlabelled
// foreground voxel in raster order (x fastest, then y, then z), so components are numbered by
// their first voxel, as scipy.ndimage.label and cc3d number them. 6-connectivity joins voxels
// that share a face, 18 also an edge, 26 also a corner. Binary: non-zero voxels are foreground
// and all touch; multi-label: neighbours join only when their values are equal (and non-zero).
// Slow and obviously right: an oracle, not an implementation.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <limits>
#include <vector>

#include "winnow/volume.hpp"

namespace winnow::test {

struct OracleComponent {
  std::uint64_t voxels = 0;
  std::int64_t min_x = std::numeric_limits<std::int64_t>::max(), min_y = min_x, min_z = min_x;
  std::int64_t max_x = -1, max_y = -1, max_z = -1;
  std::uint64_t sum_x = 0, sum_y = 0, sum_z = 0;
  std::uint64_t value = 0;
};

struct OracleLabeling {
  std::vector<std::uint64_t> labels;        ///< nx * ny * nz, contiguous, 0 background
  std::vector<OracleComponent> components;  ///< components[i] is label i + 1
};

/// The neighbour offsets of a connectivity (6, 18 or 26), all 26 directions filtered by how many
/// axes they move along (1: face, 2: edge, 3: corner).
inline std::vector<std::array<int, 3>> oracle_offsets(int connectivity) {
  std::vector<std::array<int, 3>> offsets;
  const int max_axes = connectivity == 6 ? 1 : connectivity == 18 ? 2 : 3;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int axes = std::abs(dx) + std::abs(dy) + std::abs(dz);
        if (axes >= 1 && axes <= max_axes) offsets.push_back({dx, dy, dz});
      }
  return offsets;
}

template <class T>
OracleLabeling oracle_label_volume(VolumeView<const T> v, int connectivity, bool multilabel) {
  OracleLabeling out;
  const std::int64_t nx = v.nx, ny = v.ny, nz = v.nz;
  out.labels.assign(static_cast<std::size_t>(nx * ny * nz), 0);
  const auto offsets = oracle_offsets(connectivity);
  auto at = [&](std::int64_t x, std::int64_t y, std::int64_t z) -> std::uint64_t& {
    return out.labels[static_cast<std::size_t>((z * ny + y) * nx + x)];
  };
  std::deque<std::array<std::int64_t, 3>> queue;
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        if (v(x, y, z) == T{} || at(x, y, z) != 0) continue;
        const std::uint64_t label = out.components.size() + 1;
        OracleComponent c;
        c.value = multilabel ? static_cast<std::uint64_t>(v(x, y, z)) : 1;
        at(x, y, z) = label;
        queue.push_back({x, y, z});
        while (!queue.empty()) {
          const auto [px, py, pz] = queue.front();
          queue.pop_front();
          ++c.voxels;
          c.min_x = std::min(c.min_x, px), c.max_x = std::max(c.max_x, px);
          c.min_y = std::min(c.min_y, py), c.max_y = std::max(c.max_y, py);
          c.min_z = std::min(c.min_z, pz), c.max_z = std::max(c.max_z, pz);
          c.sum_x += static_cast<std::uint64_t>(px), c.sum_y += static_cast<std::uint64_t>(py);
          c.sum_z += static_cast<std::uint64_t>(pz);
          for (const auto& d : offsets) {
            const std::int64_t qx = px + d[0], qy = py + d[1], qz = pz + d[2];
            if (qx < 0 || qy < 0 || qz < 0 || qx >= nx || qy >= ny || qz >= nz) continue;
            const T value = v(qx, qy, qz);
            if (value == T{} || at(qx, qy, qz) != 0) continue;
            if (multilabel && value != v(px, py, pz)) continue;
            at(qx, qy, qz) = label;
            queue.push_back({qx, qy, qz});
          }
        }
        out.components.push_back(c);
      }
  return out;
}

}  // namespace winnow::test
