// Private pieces shared by the mesh writers (src/io/mesh_io.cpp) and the preview renderer
// (src/io/mesh_preview.cpp).
#pragma once
#include <string>

#include "winnow/isosurface.hpp"

namespace winnow::io::detail {

/// InputError "<name>: <problem>" unless normals and values are absent or one per vertex and
/// every triangle's indices are below the vertex count (one pass over the triangles).
void check_mesh(const Mesh& mesh, const std::string& name);

}  // namespace winnow::io::detail
