// One piece of a volume's isosurface (winnow::isosurface_piece), for meshing a volume chunk by
// chunk: the mesh of a view holding the piece and two voxels of context around it, its positions
// taken at the view's place in the volume (IsosurfaceOptions::origin), keeps the vertices whose
// owner lies in the piece and the triangles whose cell does, and names every vertex by its key
// in the whole volume (3 x the owner's raster index + slot) so that pieces meshed apart join into
// the whole mesh by key.
//
// Why two voxels of context: a vertex owned by the piece lies on an edge from an owner in the
// piece to a neighbour at most one voxel beyond it; the normal interpolates the gradients at both
// ends, and a gradient reads one voxel further: the view must hold [lo - 1, hi + 1] as gradient
// centres and their neighbours, i.e. [lo - 2, hi + 2), so that gradients are one-sided only where
// the whole volume's are. A triangle's cell is the least owner of its vertices along each axis:
// its vertices lie on its cell's edges, whose lower corners are at the cell's origin or one past
// it along each axis, and no triangle has all three vertices on edges of one cell face (the case
// table's fans lay no diagonal in a face), so along each axis some vertex is owned at the origin.
//
// Complexity: the mesh of the view, then one pass over its vertices and triangles.
#include <algorithm>
#include <string>

#include "isosurface/backends.hpp"
#include "winnow/error.hpp"
#include "winnow/isosurface.hpp"

namespace winnow {

template <class T>
MeshPiece isosurface_piece(VolumeView<const T> view, const std::array<std::int64_t, 3>& view_origin,
                           const std::array<std::int64_t, 3>& lo, const std::array<std::int64_t, 3>& hi,
                           const std::array<std::int64_t, 3>& shape, double level, const IsosurfaceOptions& options) {
  const std::int64_t size[3] = {view.nx, view.ny, view.nz};
  for (int a = 0; a < 3; ++a) {
    const std::int64_t need_lo = std::max<std::int64_t>(0, lo[a] - 2), need_hi = std::min(shape[a], hi[a] + 2);
    if (!(0 <= lo[a] && lo[a] < hi[a] && hi[a] <= shape[a]) || view_origin[a] > need_lo ||
        view_origin[a] + size[a] < need_hi)
      throw InputError("isosurface_piece: the view does not hold the piece and two voxels of context around it");
  }
  IsosurfaceOptions o = options;
  o.origin = view_origin;
  o.vertex_keys = true;
  Mesh mesh = isosurface(view, level, o);

  MeshPiece piece;
  const auto nx = static_cast<std::uint64_t>(shape[0]), ny = static_cast<std::uint64_t>(shape[1]);
  const std::uint64_t vx = static_cast<std::uint64_t>(view.nx), vy = static_cast<std::uint64_t>(view.ny);
  const std::uint64_t n = mesh.vertex_count();
  // Each vertex's owner in the whole volume, and whether the piece owns it.
  std::vector<std::array<std::int64_t, 3>> owner(n);
  std::vector<std::uint64_t> key(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t voxel = mesh.vertex_keys[i] / 3, slot = mesh.vertex_keys[i] % 3;
    owner[i] = {static_cast<std::int64_t>(voxel % vx) + view_origin[0],
                static_cast<std::int64_t>(voxel / vx % vy) + view_origin[1],
                static_cast<std::int64_t>(voxel / (vx * vy)) + view_origin[2]};
    key[i] = ((static_cast<std::uint64_t>(owner[i][2]) * ny + static_cast<std::uint64_t>(owner[i][1])) * nx +
              static_cast<std::uint64_t>(owner[i][0])) *
                 3 +
             slot;
  }
  const auto inside = [&](const std::array<std::int64_t, 3>& p) {
    return p[0] >= lo[0] && p[0] < hi[0] && p[1] >= lo[1] && p[1] < hi[1] && p[2] >= lo[2] && p[2] < hi[2];
  };
  std::vector<std::uint64_t> reference(n);  // a vertex's entry in `triangles`
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!inside(owner[i])) {
      reference[i] = key[i] | MeshPiece::kForeignVertex;
      continue;
    }
    reference[i] = piece.vertices.size();
    piece.vertices.push_back(mesh.vertices[i]);
    if (!mesh.normals.empty()) piece.normals.push_back(mesh.normals[i]);
    if (!mesh.values.empty()) piece.values.push_back(mesh.values[i]);
    piece.vertex_keys.push_back(key[i]);
  }
  for (std::uint64_t t = 0; t < mesh.triangle_count(); ++t) {
    const auto v = mesh.triangle(t);
    std::array<std::int64_t, 3> cell = owner[v[0]];
    for (int j = 1; j < 3; ++j)
      for (int a = 0; a < 3; ++a) cell[a] = std::min(cell[a], owner[v[j]][a]);
    if (inside(cell)) piece.triangles.push_back({reference[v[0]], reference[v[1]], reference[v[2]]});
  }
  return piece;
}

void join_mesh_pieces(const std::array<std::vector<std::int64_t>, 3>& bounds,
                      const std::vector<std::span<const std::uint64_t>>& vertex_keys,
                      const std::vector<std::span<const std::uint64_t>>& triangles,
                      const std::vector<std::span<std::uint64_t>>& indices) {
  const std::int64_t grid[3] = {static_cast<std::int64_t>(bounds[0].size()) - 1,
                                static_cast<std::int64_t>(bounds[1].size()) - 1,
                                static_cast<std::int64_t>(bounds[2].size()) - 1};
  const auto pieces = static_cast<std::int64_t>(vertex_keys.size());
  if (grid[0] < 1 || grid[1] < 1 || grid[2] < 1 || grid[0] * grid[1] * grid[2] != pieces ||
      triangles.size() != vertex_keys.size() || indices.size() != vertex_keys.size())
    throw InputError("join_mesh_pieces: the bounds, keys and indices do not describe one grid of pieces");
  std::vector<std::uint64_t> first(static_cast<std::size_t>(pieces) + 1, 0);
  for (std::int64_t p = 0; p < pieces; ++p) first[p + 1] = first[p] + vertex_keys[p].size();
  const auto nx = static_cast<std::uint64_t>(bounds[0].back()), ny = static_cast<std::uint64_t>(bounds[1].back());
  // The piece along axis a that holds coordinate c: the last boundary <= c.
  const auto piece_along = [&](int a, std::uint64_t c) {
    return std::upper_bound(bounds[a].begin() + 1, bounds[a].end() - 1, static_cast<std::int64_t>(c)) -
           (bounds[a].begin() + 1);
  };
  bool missing = false;
#pragma omp parallel for schedule(dynamic, 1) reduction(|| : missing)
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::span<const std::uint64_t> refs = triangles[p];
    if (indices[p].size() != refs.size()) {
      missing = true;
      continue;
    }
    for (std::size_t i = 0; i < refs.size(); ++i) {
      if (!(refs[i] & MeshPiece::kForeignVertex)) {  // the piece's own vertex
        indices[p][i] = first[p] + refs[i];
        continue;
      }
      const std::uint64_t key = refs[i] & ~MeshPiece::kForeignVertex, voxel = key / 3;
      const std::int64_t owner =
          (piece_along(2, voxel / (nx * ny)) * grid[1] + piece_along(1, voxel / nx % ny)) * grid[0] +
          piece_along(0, voxel % nx);
      const std::span<const std::uint64_t> owned = vertex_keys[owner];
      const auto at = std::lower_bound(owned.begin(), owned.end(), key);
      if (at == owned.end() || *at != key) {
        missing = true;
        break;
      }
      indices[p][i] = first[owner] + static_cast<std::uint64_t>(at - owned.begin());
    }
  }
  if (missing) throw InputError("join_mesh_pieces: a triangle's vertex is owned by no piece");
}

#define WINNOW_INSTANTIATE(T)                                                                                    \
  template MeshPiece isosurface_piece<T>(VolumeView<const T>, const std::array<std::int64_t, 3>&,                \
                                         const std::array<std::int64_t, 3>&, const std::array<std::int64_t, 3>&, \
                                         const std::array<std::int64_t, 3>&, double, const IsosurfaceOptions&);
WINNOW_ISOSURFACE_TYPES(WINNOW_INSTANTIATE)
#undef WINNOW_INSTANTIATE

}  // namespace winnow
