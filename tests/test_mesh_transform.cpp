// transform_mesh (winnow/isosurface.hpp): a mesh moved by an affine, checked by geometry computed
// here, not by the code under test: positions against A p + t in double; normals perpendicular to
// the moved surface (its moved tangents, from the triangles' edges) and on the side the triangles'
// winding says; a closed surface oriented outward (positive signed volume) stays outward under
// mirroring affines, its volume scaled by |det A|; bad affines refused. Also write_mesh's progress.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "common/cli_runner.hpp"
#include "common/input_error.hpp"
#include "winnow/error.hpp"
#include "winnow/isosurface.hpp"
#include "winnow/mesh_io.hpp"

namespace winnow {
namespace {

using Affine = std::array<double, 16>;
using Vec = std::array<double, 3>;

Vec sub(const Vec& a, const Vec& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec& a, const Vec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec as_vec(const std::array<float, 3>& p) { return {p[0], p[1], p[2]}; }

// A closed surface: the isosurface of a random bumpy blob (below the level at every border
// voxel), oriented out of it (toward decreasing values), with normals.
Mesh blob(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> bump(-1.5, 1.5);
  const double bx = bump(rng), by = bump(rng), bz = bump(rng);
  Volume<float> v(22, 20, 20);
  for (std::int64_t z = 0; z < 20; ++z)
    for (std::int64_t y = 0; y < 20; ++y)
      for (std::int64_t x = 0; x < 22; ++x) {
        const double dx = x - 10.5 - bx, dy = y - 9.5 - by, dz = z - 9.5 - bz;
        v(x, y, z) = static_cast<float>(40 - (dx * dx + 1.3 * dy * dy + 0.8 * dz * dz) + 3 * std::sin(x * 0.7 + y));
      }
  IsosurfaceOptions options;
  options.normals = true;
  options.backend = Backend::cpu;
  return isosurface(v.view(), 0.0, options);
}

// Sum over triangles of p0 . (p1 x p2) / 6: the enclosed volume, positive when the winding is
// counter-clockwise seen from outside.
double signed_volume(const Mesh& mesh) {
  double volume = 0;
  for (std::uint64_t t = 0; t < mesh.triangle_count(); ++t) {
    const auto [a, b, c] = mesh.triangle(t);
    volume += dot(as_vec(mesh.vertices[a]), cross(as_vec(mesh.vertices[b]), as_vec(mesh.vertices[c]))) / 6;
  }
  return volume;
}

double det3(const Affine& a) {
  return a[0] * (a[5] * a[10] - a[6] * a[9]) - a[1] * (a[4] * a[10] - a[6] * a[8]) + a[2] * (a[4] * a[9] - a[5] * a[8]);
}

void expect_moved(const Mesh& before, const Mesh& after, const Affine& a) {
  ASSERT_EQ(after.vertices.size(), before.vertices.size());
  ASSERT_EQ(after.triangle_count(), before.triangle_count());
  for (std::size_t i = 0; i < before.vertices.size(); ++i) {
    const Vec p = as_vec(before.vertices[i]);
    for (int r = 0; r < 3; ++r) {
      const double want = a[4 * r] * p[0] + a[4 * r + 1] * p[1] + a[4 * r + 2] * p[2] + a[4 * r + 3];
      ASSERT_EQ(after.vertices[i][r], static_cast<float>(want)) << "vertex " << i;  // one rounding, from double
    }
  }
  const bool mirrored = det3(a) < 0;
  for (std::uint64_t t = 0; t < before.triangle_count(); ++t) {
    const auto b = before.triangle(t), m = after.triangle(t);
    if (mirrored) EXPECT_TRUE(m[0] == b[0] && m[1] == b[2] && m[2] == b[1]) << "triangle " << t;
    else EXPECT_EQ(m, b) << "triangle " << t;
  }
  // Normals: unit, perpendicular to the moved triangles around them, on their outward side.
  double agreeing = 0;
  for (std::uint64_t t = 0; t < after.triangle_count(); ++t) {
    const auto [i, j, k] = after.triangle(t);
    const Vec p = as_vec(after.vertices[i]);
    const Vec e1 = sub(as_vec(after.vertices[j]), p), e2 = sub(as_vec(after.vertices[k]), p);
    const Vec face = cross(e1, e2);  // counter-clockwise: points out
    const double face_length = std::sqrt(dot(face, face));
    if (face_length < 1e-6) continue;
    for (const std::uint64_t v : {i, j, k}) {
      const Vec n = as_vec(after.normals[v]);
      EXPECT_NEAR(dot(n, n), 1.0, 1e-5);
      agreeing += dot(n, face) / face_length;
    }
  }
  // Vertex normals (field gradients) lean with their triangles on a smooth surface: the mean
  // cosine is close to 1 when they share the side, close to -1 when they do not.
  EXPECT_GT(agreeing / (3.0 * static_cast<double>(after.triangle_count())), 0.9);
  // The same check the other way round: a normal maps by the inverse transpose, so it stays
  // perpendicular to moved tangents. Each vertex's normal before, against a tangent there.
  for (std::size_t v = 0; v < before.normals.size(); v += 97) {
    const Vec n0 = as_vec(before.normals[v]);
    Vec tangent = cross(n0, std::fabs(n0[0]) < 0.9 ? Vec{1, 0, 0} : Vec{0, 1, 0});
    const Vec moved = {a[0] * tangent[0] + a[1] * tangent[1] + a[2] * tangent[2],
                       a[4] * tangent[0] + a[5] * tangent[1] + a[6] * tangent[2],
                       a[8] * tangent[0] + a[9] * tangent[1] + a[10] * tangent[2]};
    EXPECT_NEAR(dot(as_vec(after.normals[v]), moved) / std::sqrt(dot(moved, moved)), 0.0, 1e-5) << "vertex " << v;
  }
}

TEST(TransformMesh, ObliqueAndMirroringAffinesKeepTheSurfaceOutward) {
  const Mesh original = blob(1);
  ASSERT_GT(original.triangle_count(), 500u);
  const double volume = signed_volume(original);
  ASSERT_GT(volume, 0);  // oriented out of the blob
  const double c = std::cos(0.4), s = std::sin(0.4);
  const std::vector<Affine> affines = {
      {2, 0, 0, -90, 0, 2, 0, -126, 0, 0, 2, -72, 0, 0, 0, 1},  // scaling and a shift (MNI-like)
      {-3, 0, 0, 78, 0, 3, 0, -112, 0, 0, 3, -50, 0, 0, 0, 1},  // x mirrored (radiological)
      {c * 0.9, -s * 1.1, 0.3, 5, s * 0.9, c * 1.1, 0, -7, 0.1, 0, 1.7, 2.5, 0, 0, 0, 1},  // rotation, shear
      {-0.7, 0.2, 0, 1, 0, -1.2, 0.4, 2, 0.1, 0, -0.5, 3, 0, 0, 0, 1},                     // three mirrors: det < 0
  };
  for (const Affine& a : affines) {
    Mesh moved = original;
    transform_mesh(moved, a);
    expect_moved(original, moved, a);
    EXPECT_NEAR(signed_volume(moved), volume * std::fabs(det3(a)), volume * std::fabs(det3(a)) * 1e-4);
  }
  Mesh empty;
  transform_mesh(empty, affines[1]);
  EXPECT_EQ(empty.vertex_count(), 0u);
}

TEST(TransformMesh, RefusesAffinesThatAreNotOne) {
  Mesh mesh = blob(2);
  const Affine singular = {1, 2, 3, 0, 2, 4, 6, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  test::expect_input_error([&] { transform_mesh(mesh, singular); }, "transform_mesh", "singular");
  test::expect_input_error(
      [&] {
        transform_mesh(mesh, {1, 0, 0, NAN, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
      },
      "transform_mesh", "non-finite");
  test::expect_input_error(
      [&] {
        transform_mesh(mesh, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1});
      },
      "transform_mesh", "last row");
}

TEST(MeshProgress, WritersTellTheElementsWritten) {
  test::TempDir dir;
  const Mesh mesh = blob(3);
  for (const char* name : {"m.ply", "m.obj", "m.stl"}) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
    io::write_mesh(dir / name, mesh, io::mesh_format_of(name),
                   [&](std::uint64_t done, std::uint64_t total) { seen.emplace_back(done, total); });
    const std::uint64_t total = (std::string(name) == "m.stl" ? 0 : mesh.vertex_count()) + mesh.triangle_count();
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back(), std::make_pair(total, total)) << name;
  }
}

}  // namespace
}  // namespace winnow
