#pragma once
/// @file isosurface.hpp
/// Isosurfaces of 3D scalar fields as welded, watertight, consistently oriented triangle meshes
/// (marching cubes), on the CPU (OpenMP) or a CUDA device, with the same mesh on every backend.
///
/// The output contract (src/isosurface/isosurface.cpp's essay says how it is met):
/// - A voxel is *above* when its value > level. Every cell edge (between 6-neighbour voxels) with
///   one end above and the other not is crossed by the surface once; its vertex lies at the linear
///   interpolation t = (level - a) / (b - a) along the edge, in voxel index units times the
///   spacing, x, y, z order: the points of scikit-image's `marching_cubes` (its verts reversed).
/// - Welded: one vertex per crossed edge, shared by every triangle that uses it; every vertex is
///   used by a triangle and no triangle repeats a vertex.
/// - Levels equal to voxel values (integer levels on CT or MRI volumes): a voxel equal to the
///   level is not above, so the mesh has the topology of a level a hair above it, and a crossing
///   whose non-above end equals the level (t = 0) lies on that voxel. Such a crossing is placed at
///   the next float inside its edge: the vertices of the edges around one voxel are distinct
///   points within float rounding of it (about 1e-7 relative), never merged. No two vertices
///   share a position: any crossing whose float position rounds onto an end voxel is moved the
///   same way.
/// - Watertight: ambiguous cell faces (two above corners on a diagonal) are decided by one rule
///   that depends on the face alone (the above corners are kept apart), so the two cells that
///   share a face cut it the same way; every mesh edge is used by exactly two triangles, once in
///   each direction, except on the volume's border, where an edge whose two vertices lie on one
///   face of the volume is used by one triangle (the surface is open there).
/// - Oriented: triangles wind counter-clockwise seen from the side the normal points to, which by
///   default is toward decreasing values (out of the above region); `flip` reverses both.
/// - Order: vertices in raster order (x fastest, then y, then z) of the voxel that owns them, and
///   within a voxel: its +x, +y, +z edges; triangles in
///   raster order of their cell (the cell at voxel (x, y, z) spans x..x+1, y..y+1, z..z+1), then
///   in the order of the case table.
/// - NaN voxels count as not above; a crossing with a NaN end lies at the edge's midpoint, and
///   a normal whose gradient is not finite (a NaN neighbour) is (0, 0, 0).
/// - A volume with fewer than 2 voxels along an axis has no cells: the mesh is empty.
///
/// Voxel types: u8, u16, i16, f32, f64 (compared and interpolated in double; positions stored as
/// float). Any strides. Sizes: 64-bit voxel counts; more than 2^32 - 1 vertices switch the
/// triangles to 64-bit indices (`Mesh::triangles64`).
/// Device API for CUDA users (device pointers and a stream): `winnow/cuda/isosurface.hpp`.
#include <array>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "winnow/backend.hpp"
#include "winnow/progress.hpp"
#include "winnow/volume.hpp"

namespace winnow {

struct IsosurfaceOptions {
  bool normals = false;  ///< fill Mesh::normals: the unit negative gradient (central differences) at each vertex
  bool values = false;   ///< fill Mesh::values: the level at each vertex (the interpolated field)
  bool flip = false;     ///< reverse the orientation: normals and winding toward increasing values
  Backend backend = Backend::automatic;
  /// Process at most this many voxels per pass (slabs of z, welded across the seams; 0: as many as
  /// fit the device, or the whole volume on the CPU). The mesh is the same for every value.
  std::int64_t max_slab_voxels = 0;
  /// Told the layers done of twice the volume's depth (two passes over it), as slabs finish.
  ProgressSink progress;
  /// The index (x, y, z) of the view's first voxel in a larger volume the view is a piece of:
  /// positions are (origin + index) times spacing, so that pieces meshed apart have the whole
  /// volume's positions bit for bit (normals too, where the view holds two voxels of context
  /// around the piece: gradients are one-sided at the view's border).
  std::array<std::int64_t, 3> origin{0, 0, 0};
  /// Fill Mesh::vertex_keys: which edge of which voxel each vertex lies on.
  bool vertex_keys = false;
};

/// An indexed triangle mesh. Exactly one of `triangles` / `triangles64` is used: the 64-bit one
/// only when there are more than 2^32 - 1 vertices.
struct Mesh {
  std::vector<std::array<float, 3>> vertices;           ///< x, y, z (voxel index times spacing)
  std::vector<std::array<std::uint32_t, 3>> triangles;  ///< vertex indices, counter-clockwise
  std::vector<std::array<std::uint64_t, 3>> triangles64;
  std::vector<std::array<float, 3>> normals;  ///< one per vertex when asked for
  std::vector<float> values;                  ///< one per vertex when asked for
  /// One per vertex when asked for: 3 x (the raster index in the view of the voxel that owns it)
  /// + its slot (0, 1, 2: the owner's +x, +y, +z edge). Ascending: the vertices' order.
  std::vector<std::uint64_t> vertex_keys;
  Backend backend = Backend::cpu;  ///< the backend that ran
  double milliseconds = 0;         ///< wall time of the extraction (a CUDA run's copies included)

  std::uint64_t vertex_count() const { return vertices.size(); }
  std::uint64_t triangle_count() const { return triangles64.empty() ? triangles.size() : triangles64.size(); }
  /// Triangle i's vertex indices, whichever width holds them.
  std::array<std::uint64_t, 3> triangle(std::uint64_t i) const {
    if (!triangles64.empty()) return triangles64[i];
    const auto& t = triangles[i];
    return {t[0], t[1], t[2]};
  }
};

/// The isosurface of `volume` at `level`, spacing from the view (sx, sy, sz). Throws InputError
/// for a NaN level or an empty volume, BackendError when cuda is asked for and none answers.
/// Instantiated for std::uint8_t, std::uint16_t, std::int16_t, float, double.
template <class T>
Mesh isosurface(VolumeView<const T> volume, double level, const IsosurfaceOptions& options = {});

/// The same for a view of non-const voxels (Volume<T>::view() of a non-const volume).
template <class T>
requires(!std::is_const_v<T>) Mesh
    isosurface(VolumeView<T> volume, double level, const IsosurfaceOptions& options = {}) {
  return isosurface<T>(VolumeView<const T>(volume), level, options);
}

}  // namespace winnow

// ---- mesh coordinates ------------------------------------------------------------------------
// (src/isosurface/mesh_transform.cpp)
namespace winnow {

/// Moves `mesh` into another frame by the 4 x 4 affine `affine` (row-major, last row 0 0 0 1),
/// e.g. from voxel index coordinates to a volume file's world coordinates
/// (io::SpatialHeader::affine()): every vertex p becomes A p + t, computed in double and rounded
/// to float; every normal n becomes (A^-1)^T n, renormalised (a zero normal stays zero); when
/// det A < 0 (a mirroring frame, as radiological and LPS ones are) every triangle's winding is
/// reversed, so a surface oriented outward stays outward. InputError for an affine with a
/// non-finite element, a last row other than 0 0 0 1, or a singular 3 x 3 part.
void transform_mesh(Mesh& mesh, const std::array<double, 16>& affine);

}  // namespace winnow

// ---- pieces of a volume ----------------------------------------------------------------------
// (src/isosurface/piece.cpp)
namespace winnow {

/// One piece of a volume's mesh, for meshing a volume chunk by chunk (winnow.dask): the vertices
/// owned by the piece's voxels (a vertex is owned by the lower end of its edge) and the triangles
/// of its cells (a triangle's cell is the least owner of its vertices along each axis).
struct MeshPiece {
  std::vector<std::array<float, 3>> vertices, normals;  ///< normals when asked for
  std::vector<float> values;                            ///< when asked for
  /// Each vertex's key in the whole volume: 3 x its owner's raster index + its slot; ascending,
  /// the whole call's vertex order.
  std::vector<std::uint64_t> vertex_keys;
  /// Each triangle's vertices, in the whole call's triangle order: a vertex the piece owns by its
  /// index in `vertices`, one owned by a piece after it (along x, y, z) by its key | kForeignVertex.
  std::vector<std::array<std::uint64_t, 3>> triangles;
  static constexpr std::uint64_t kForeignVertex = std::uint64_t{1} << 63;
};

/// The piece [lo, hi) (voxel indices x, y, z in a whole volume of `shape` voxels) of the whole
/// volume's isosurface at `level`, from `view`, the voxels of [view_origin, view_origin + view
/// size) of the whole volume: it must hold the piece and two voxels of context on every side
/// (clipped to the whole volume), and then gives the piece's part of the whole call's mesh bit for
/// bit (positions, normals, values). options.origin and options.vertex_keys are set here.
/// InputError when the view does not hold that. Instantiated as isosurface().
template <class T>
MeshPiece isosurface_piece(VolumeView<const T> view, const std::array<std::int64_t, 3>& view_origin,
                           const std::array<std::int64_t, 3>& lo, const std::array<std::int64_t, 3>& hi,
                           const std::array<std::int64_t, 3>& shape, double level, const IsosurfaceOptions& options);

/// Joins the pieces of a grid meshed apart: the joined mesh's index of every triangle vertex, its
/// vertices being the pieces' in grid order (x fastest, then y, then z). `bounds[a]` are the
/// pieces' boundaries along axis a (x, y, z; from 0 to the volume's size), `vertex_keys[p]` piece
/// p's (ascending), `triangles[p]` its MeshPiece::triangles (3 per triangle), written as indices to
/// `indices[p]` (as many). InputError for a foreign key no piece owns.
void join_mesh_pieces(const std::array<std::vector<std::int64_t>, 3>& bounds,
                      const std::vector<std::span<const std::uint64_t>>& vertex_keys,
                      const std::vector<std::span<const std::uint64_t>>& triangles,
                      const std::vector<std::span<std::uint64_t>>& indices);

}  // namespace winnow
