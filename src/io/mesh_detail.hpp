// Private pieces shared by the mesh writers (src/io/mesh_io.cpp) and the preview renderer
// (src/io/mesh_preview.cpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "winnow/isosurface.hpp"

namespace winnow::io::detail {

/// InputError "<name>: <problem>" unless normals and values are absent or one per vertex and
/// every triangle's indices are below the vertex count (one pass over the triangles).
void check_mesh(const Mesh& mesh, const std::string& name);

/// InputError naming `target` when a binary STL cannot hold `triangles` (its count is 32-bit: at
/// most 4294967295). write_mesh asks before it opens the file, so nothing is written.
void check_stl_triangle_count(std::uint64_t triangles, const std::filesystem::path& target);

}  // namespace winnow::io::detail
