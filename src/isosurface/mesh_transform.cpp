// transform_mesh: a mesh moved into another frame by an affine (winnow/isosurface.hpp), the step
// from voxel index coordinates to a volume file's world coordinates.
//
// Positions: p' = A p + t in double, rounded to float once. Normals are covectors of the surface
// (gradients), so they map by the inverse transpose of A's 3 x 3 part, not by A: under a shear or
// unequal scaling A n is no longer perpendicular to the surface; renormalised afterwards. An affine
// with det A < 0 mirrors space and so turns counter-clockwise triangles clockwise as seen from
// their normals' side: swapping two corners of every triangle restores the winding rule.
// Complexity: O(vertices + triangles), in parallel.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/threads.hpp"
#include "winnow/error.hpp"
#include "winnow/isosurface.hpp"

namespace winnow {
namespace {

template <class Triangle>
void reverse_winding(std::vector<Triangle>& triangles) {
  const auto n = static_cast<std::int64_t>(triangles.size());
#pragma omp parallel for schedule(static) num_threads(detail::cpu_threads()) if (n >= 65536)
  for (std::int64_t i = 0; i < n; ++i) {
    auto& t = triangles[static_cast<std::size_t>(i)];
    std::swap(t[1], t[2]);
  }
}

}  // namespace

void transform_mesh(Mesh& mesh, const std::array<double, 16>& affine) {
  for (const double a : affine)
    if (!std::isfinite(a)) throw InputError("transform_mesh: the affine has a non-finite element");
  if (affine[12] != 0 || affine[13] != 0 || affine[14] != 0 || affine[15] != 1)
    throw InputError("transform_mesh: the affine's last row must be 0 0 0 1");
  const std::array<double, 16>& a = affine;
  // The cofactor matrix of the 3 x 3 part: (A^-1)^T = cofactor(A) / det A.
  const double c[9] = {a[5] * a[10] - a[6] * a[9], a[6] * a[8] - a[4] * a[10], a[4] * a[9] - a[5] * a[8],
                       a[2] * a[9] - a[1] * a[10], a[0] * a[10] - a[2] * a[8], a[1] * a[8] - a[0] * a[9],
                       a[1] * a[6] - a[2] * a[5],  a[2] * a[4] - a[0] * a[6],  a[0] * a[5] - a[1] * a[4]};
  const double det = a[0] * c[0] + a[1] * c[1] + a[2] * c[2];
  double column_norms = 1;
  for (int col = 0; col < 3; ++col)
    column_norms *= std::sqrt(a[col] * a[col] + a[4 + col] * a[4 + col] + a[8 + col] * a[8 + col]);
  if (!(std::fabs(det) > 1e-12 * column_norms))
    throw InputError("transform_mesh: the affine's 3 x 3 part is singular (determinant " + std::to_string(det) + ")");

  const auto vertices = static_cast<std::int64_t>(mesh.vertices.size());
#pragma omp parallel for schedule(static) num_threads(detail::cpu_threads()) if (vertices >= 65536)
  for (std::int64_t i = 0; i < vertices; ++i) {
    auto& p = mesh.vertices[static_cast<std::size_t>(i)];
    const double x = p[0], y = p[1], z = p[2];
    for (int r = 0; r < 3; ++r)
      p[r] = static_cast<float>(a[4 * r] * x + a[4 * r + 1] * y + a[4 * r + 2] * z + a[4 * r + 3]);
  }
  const auto normals = static_cast<std::int64_t>(mesh.normals.size());
  // The sign of det goes with the cofactors so that normals keep their side: (A^-1)^T n up to a
  // positive factor is cofactor(A) n times sign(det).
  const double sign = det < 0 ? -1.0 : 1.0;
#pragma omp parallel for schedule(static) num_threads(detail::cpu_threads()) if (normals >= 65536)
  for (std::int64_t i = 0; i < normals; ++i) {
    auto& n = mesh.normals[static_cast<std::size_t>(i)];
    const double x = n[0], y = n[1], z = n[2];
    double m[3];
    for (int r = 0; r < 3; ++r) m[r] = sign * (c[3 * r] * x + c[3 * r + 1] * y + c[3 * r + 2] * z);
    const double length = std::sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
    for (int r = 0; r < 3; ++r) n[r] = length > 0 ? static_cast<float>(m[r] / length) : 0.0f;
  }
  if (det < 0) {
    reverse_winding(mesh.triangles);
    reverse_winding(mesh.triangles64);
  }
}

}  // namespace winnow
