#pragma once
/// @file mesh_io.hpp
/// Triangle meshes (winnow::Mesh, from isosurface()) out: binary little-endian PLY, OBJ and
/// binary STL files, and a shaded preview picture of a mesh. Every writer goes through
/// AtomicFile, so a failed write leaves nothing behind; errors are InputError with a one-line
/// message that names the file.
#include <array>
#include <cstdint>
#include <filesystem>

#include "winnow/image.hpp"
#include "winnow/isosurface.hpp"
#include "winnow/progress.hpp"

namespace winnow::io {

/// The mesh file formats.
enum class MeshFormat {
  /// Binary little-endian PLY: `float x y z`, then `float nx ny nz` when the mesh has normals and
  /// `float value` when it has values; faces as `list uchar uint vertex_indices`. PLY has no
  /// 64-bit integers: a mesh with 64-bit indices (Mesh::triangles64) writes them as
  /// `list uchar double vertex_indices`, exact up to 2^53 vertices.
  ply,
  /// Wavefront OBJ text: `v x y z`, `vn nx ny nz` when the mesh has normals, faces `f a b c` with
  /// 1-based indices (`f a//a b//b c//c` with normals). OBJ has no per-vertex scalar: values are
  /// not written.
  obj,
  /// Binary STL: an 80-byte header, the triangle count (uint32), then per triangle its unit
  /// normal from its geometry (counter-clockwise winding; zero for a degenerate triangle), its
  /// three corners and a zero attribute word. STL has no shared vertices, normals per vertex or
  /// values; it holds at most 2^32 - 1 triangles.
  stl,
};

/// The format named by `path`'s extension: .ply, .obj or .stl, in any letter case. Anything else
/// is an InputError naming the file.
MeshFormat mesh_format_of(const std::filesystem::path& path);

/// Writes `mesh` in the format its name asks for (mesh_format_of).
void write_mesh(const std::filesystem::path& path, const Mesh& mesh);
/// Writes `mesh` as `format`, whatever `path` is called. InputError naming the file when the
/// mesh is inconsistent (normals or values not one per vertex, an index out of range), does not
/// fit the format, or the file cannot be written.
void write_mesh(const std::filesystem::path& path, const Mesh& mesh, MeshFormat format);
/// The same, telling `progress` (when set) the vertices and triangles written so far and their
/// sum, every 65536 of them (a large mesh takes seconds to write).
void write_mesh(const std::filesystem::path& path, const Mesh& mesh, MeshFormat format, const ProgressSink& progress);

/// How render_mesh_preview looks at a mesh.
struct MeshPreviewOptions {
  /// Direction from the mesh toward the viewer (any length): by default a three-quarter view
  /// from +x, +y and above (+z is up in the picture; +y when looking along z).
  std::array<double, 3> view_from = {1.0, 1.4, 0.9};
  Rgba8 colour = {214, 196, 170, 255};      ///< the surface's colour where it faces the light
  Rgba8 background = {255, 255, 255, 255};  ///< where no triangle is
  double ambient = 0.25;                    ///< the share of the colour that unlit surfaces keep
  int samples_per_axis = 2;                 ///< supersampling (1: none; 2: 4 samples per pixel)
};

/// A `width` x `height` picture of `mesh`: an orthographic projection along `view_from` scaled
/// so the mesh's bounding rectangle in the picture fills it (less a 4 % margin), drawn with a z-buffer and
/// shaded by Lambert's law plus ambient light, the light coming from the viewer. Shading is
/// two-sided (a surface seen from its back is lit the same) and smooth (vertex normals are the
/// area-weighted sums of their triangles' normals). An empty mesh gives the background.
/// InputError when the size is not in 1..16384 or the mesh is inconsistent.
Image<Rgba8> render_mesh_preview(const Mesh& mesh, std::int64_t width, std::int64_t height,
                                 const MeshPreviewOptions& options = {});

}  // namespace winnow::io
