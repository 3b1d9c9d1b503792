// Mesh files (write_mesh: PLY, OBJ, STL) and the preview renderer (render_mesh_preview).
// Writers: random meshes, with and without normals and values, read back by the small readers of
// tests/common/mesh_readers.hpp and compared exactly (STL's facet normals against a cross product
// computed here); empty meshes; the format chosen by extension in any case; bad names,
// unwritable paths and inconsistent meshes give one-line errors naming the file and leave nothing;
// binary STL's limit of 2^32 - 1 triangles.
// Preview: a sphere built here renders as a disc of the expected radius with background corners,
// lit brightest where it faces the viewer; a near triangle hides a far one in either drawing order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "common/input_error.hpp"
#include "common/mesh_readers.hpp"
#include "io/mesh_detail.hpp"
#include "winnow/error.hpp"
#include "winnow/mesh_io.hpp"

using namespace winnow;
using winnow::test::expect_input_error;
using winnow::test::TempDir;
namespace fs = std::filesystem;

namespace {

Mesh random_mesh(std::size_t vertices, std::size_t triangles, bool normals, bool values, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> coordinate(-50.0f, 250.0f);
  std::uniform_int_distribution<std::uint32_t> index(0, static_cast<std::uint32_t>(vertices - 1));
  Mesh mesh;
  for (std::size_t i = 0; i < vertices; ++i)
    mesh.vertices.push_back({coordinate(rng), coordinate(rng), coordinate(rng)});
  for (std::size_t i = 0; i < triangles; ++i) mesh.triangles.push_back({index(rng), index(rng), index(rng)});
  if (normals)
    for (std::size_t i = 0; i < vertices; ++i)
      mesh.normals.push_back({coordinate(rng), coordinate(rng), coordinate(rng)});
  if (values)
    for (std::size_t i = 0; i < vertices; ++i) mesh.values.push_back(coordinate(rng));
  return mesh;
}

std::vector<std::array<std::uint64_t, 3>> faces_of(const Mesh& mesh) {
  std::vector<std::array<std::uint64_t, 3>> faces;
  for (const auto& t : mesh.triangles) faces.push_back({t[0], t[1], t[2]});
  for (const auto& t : mesh.triangles64) faces.push_back(t);
  return faces;
}

struct WithWhat {
  bool normals, values;
};

class MeshWriters : public ::testing::TestWithParam<WithWhat> {};

TEST_P(MeshWriters, PlyRoundTripIsExact) {
  TempDir dir;
  const auto [normals, values] = GetParam();
  const Mesh mesh = random_mesh(157, 311, normals, values, 11 + 2 * normals + values);
  io::write_mesh(dir / "m.ply", mesh);
  const auto back = test::read_ply(dir / "m.ply");
  std::vector<std::string> expected_properties = {"x", "y", "z"};
  if (normals) expected_properties.insert(expected_properties.end(), {"nx", "ny", "nz"});
  if (values) expected_properties.push_back("value");
  EXPECT_EQ(back.vertex_properties, expected_properties);
  EXPECT_EQ(back.face_index_type, "uint");
  EXPECT_EQ(back.vertices, mesh.vertices);
  EXPECT_EQ(back.normals, mesh.normals);
  EXPECT_EQ(back.values, mesh.values);
  EXPECT_EQ(back.faces, faces_of(mesh));
  EXPECT_EQ(dir.files(), std::vector<std::string>{"m.ply"});  // no temporary left behind
}

TEST_P(MeshWriters, ObjRoundTripIsExact) {
  TempDir dir;
  const auto [normals, values] = GetParam();
  const Mesh mesh = random_mesh(143, 280, normals, values, 21 + 2 * normals + values);
  io::write_mesh(dir / "m.obj", mesh);
  const auto back = test::read_obj(dir / "m.obj");
  EXPECT_EQ(back.vertices, mesh.vertices);  // shortest round-trip text reads back to the same floats
  EXPECT_EQ(back.normals, mesh.normals);
  EXPECT_TRUE(back.values.empty());  // OBJ has no per-vertex scalar
  EXPECT_EQ(back.faces, faces_of(mesh));
  if (normals) EXPECT_NE(test::file_bytes(dir / "m.obj").find("//"), std::string::npos);
}

TEST_P(MeshWriters, StlHoldsTheCornersAndTheGeometricNormals) {
  TempDir dir;
  const auto [normals, values] = GetParam();
  Mesh mesh = random_mesh(90, 200, normals, values, 31 + 2 * normals + values);
  mesh.triangles.push_back({3, 3, 7});  // degenerate: a zero normal
  io::write_mesh(dir / "m.stl", mesh);
  const auto facets = test::read_stl(dir / "m.stl");
  ASSERT_EQ(facets.size(), mesh.triangles.size());
  for (std::size_t t = 0; t < facets.size(); ++t) {
    const auto& tri = mesh.triangles[t];
    std::array<double, 3> corner[3];
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(facets[t].corners[k], mesh.vertices[tri[k]]) << t;
      for (int d = 0; d < 3; ++d) corner[k][d] = mesh.vertices[tri[k]][d];
    }
    const double u[3] = {corner[1][0] - corner[0][0], corner[1][1] - corner[0][1], corner[1][2] - corner[0][2]};
    const double w[3] = {corner[2][0] - corner[0][0], corner[2][1] - corner[0][1], corner[2][2] - corner[0][2]};
    double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    const double len = std::hypot(n[0], n[1], n[2]);
    for (int d = 0; d < 3; ++d) EXPECT_NEAR(facets[t].normal[d], len > 0 ? n[d] / len : 0.0, 1e-5) << t;
    EXPECT_EQ(facets[t].attribute, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(All, MeshWriters,
                         ::testing::Values(WithWhat{false, false}, WithWhat{true, false}, WithWhat{false, true},
                                           WithWhat{true, true}),
                         [](const auto& info) {
                           return std::string(info.param.normals ? "Normals" : "NoNormals") +
                                  (info.param.values ? "Values" : "NoValues");
                         });

TEST(MeshWriters, SixtyFourBitIndicesGoToPlyAsDoubleAndToObjAsText) {
  TempDir dir;
  const Mesh narrow = random_mesh(60, 100, false, false, 41);
  Mesh wide = narrow;
  wide.triangles.clear();
  for (const auto& t : narrow.triangles) wide.triangles64.push_back({t[0], t[1], t[2]});
  io::write_mesh(dir / "w.ply", wide);
  const auto ply = test::read_ply(dir / "w.ply");
  EXPECT_EQ(ply.face_index_type, "double");
  EXPECT_EQ(ply.faces, faces_of(narrow));
  io::write_mesh(dir / "w.obj", wide);
  EXPECT_EQ(test::read_obj(dir / "w.obj").faces, faces_of(narrow));
  io::write_mesh(dir / "w.stl", wide);
  EXPECT_EQ(test::read_stl(dir / "w.stl").size(), narrow.triangles.size());
}

TEST(MeshWriters, EmptyMeshGivesEmptyButValidFiles) {
  TempDir dir;
  const Mesh empty;
  io::write_mesh(dir / "e.ply", empty);
  const auto ply = test::read_ply(dir / "e.ply");
  EXPECT_NE(ply.header.find("element vertex 0\n"), std::string::npos);
  EXPECT_NE(ply.header.find("element face 0\n"), std::string::npos);
  io::write_mesh(dir / "e.obj", empty);
  const auto obj = test::read_obj(dir / "e.obj");
  EXPECT_TRUE(obj.vertices.empty() && obj.faces.empty());
  io::write_mesh(dir / "e.stl", empty);
  EXPECT_EQ(test::file_bytes(dir / "e.stl").size(), 84u);
  EXPECT_TRUE(test::read_stl(dir / "e.stl").empty());
}

TEST(MeshWriters, FormatFollowsTheExtensionInAnyCase) {
  TempDir dir;
  const Mesh mesh = random_mesh(10, 12, false, false, 51);
  EXPECT_EQ(io::mesh_format_of("a/B.PLY"), io::MeshFormat::ply);
  EXPECT_EQ(io::mesh_format_of("x.Obj"), io::MeshFormat::obj);
  EXPECT_EQ(io::mesh_format_of("x.sTl"), io::MeshFormat::stl);
  io::write_mesh(dir / "A.PLY", mesh);
  io::write_mesh(dir / "B.Obj", mesh);
  io::write_mesh(dir / "C.sTL", mesh);
  EXPECT_EQ(test::file_bytes(dir / "A.PLY").substr(0, 4), "ply\n");
  EXPECT_EQ(test::read_obj(dir / "B.Obj").faces, faces_of(mesh));
  EXPECT_EQ(test::read_stl(dir / "C.sTL").size(), 12u);
  // An explicit format ignores the name (the CLI writes under a temporary name).
  io::write_mesh(dir / "D.tmp", mesh, io::MeshFormat::stl);
  EXPECT_EQ(test::read_stl(dir / "D.tmp").size(), 12u);
}

TEST(MeshWritersBadInput, UnknownExtensionNamesTheFileAndWritesNothing) {
  TempDir dir;
  const Mesh mesh = random_mesh(10, 12, false, false, 61);
  for (const char* name : {"m.off", "m", "m.ply.gz", "m.stla"})
    expect_input_error([&] { io::write_mesh(dir / name, mesh); }, dir / name, "PLY (.ply), OBJ (.obj) or STL (.stl)");
  EXPECT_TRUE(dir.files().empty());
}

TEST(MeshWritersBadInput, UnwritablePathNamesTheFileAndWritesNothing) {
  TempDir dir;
  const Mesh mesh = random_mesh(10, 12, false, false, 71);
  expect_input_error([&] { io::write_mesh(dir / "missing" / "m.ply", mesh); }, dir / "missing" / "m.ply",
                     "does not exist");
  fs::create_directory(dir / "d.stl");
  expect_input_error([&] { io::write_mesh(dir / "d.stl", mesh); }, dir / "d.stl", "is a directory");
  EXPECT_EQ(dir.files(), std::vector<std::string>{"d.stl"});
  EXPECT_TRUE(fs::is_empty(dir / "d.stl"));
}

TEST(MeshWritersBadInput, InconsistentMeshIsRefusedAndAnEarlierFileKept) {
  TempDir dir;
  const Mesh good = random_mesh(10, 12, true, true, 81);
  io::write_mesh(dir / "m.ply", good);
  const std::string before = test::file_bytes(dir / "m.ply");
  Mesh bad = good;
  bad.normals.pop_back();
  expect_input_error([&] { io::write_mesh(dir / "m.ply", bad); }, dir / "m.ply", "9 normals for 10 vertices");
  bad = good;
  bad.values.push_back(1.0f);
  expect_input_error([&] { io::write_mesh(dir / "m.ply", bad); }, dir / "m.ply", "11 values for 10 vertices");
  bad = good;
  bad.triangles[5][1] = 10;
  expect_input_error([&] { io::write_mesh(dir / "m.ply", bad); }, dir / "m.ply", "triangle 5 uses vertex 10");
  EXPECT_EQ(test::file_bytes(dir / "m.ply"), before);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"m.ply"});
}

// Binary STL counts its triangles in 32 bits: 4294967295 is the most it holds, and one more is
// refused with the one-line error naming the file and the formats that hold it. A mesh past the
// limit cannot be made here (2^32 triangles are over 100 GB of indices, and write_mesh's own
// check reads them all), so the check is tested by itself; write_mesh runs it before the file is
// opened, so a refused mesh leaves nothing behind, as the refusals above do.
TEST(MeshWritersBadInput, StlHoldsAtMost2Pow32Minus1Triangles) {
  TempDir dir;
  const fs::path target = dir / "big.stl";
  EXPECT_NO_THROW(io::detail::check_stl_triangle_count(0, target));
  EXPECT_NO_THROW(io::detail::check_stl_triangle_count(4294967295u, target));
  expect_input_error([&] { io::detail::check_stl_triangle_count(4294967296u, target); }, target,
                     "binary STL holds at most 4294967295 triangles, the mesh has 4294967296 (write PLY or OBJ)");
  expect_input_error([&] { io::detail::check_stl_triangle_count(UINT64_MAX, target); }, target,
                     "the mesh has 18446744073709551615 (write PLY or OBJ)");
  // A mesh within the limit is written under that name.
  io::write_mesh(target, random_mesh(20, 30, false, false, 91));
  EXPECT_EQ(test::read_stl(target).size(), 30u);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"big.stl"});
}

// ---- preview ----

// A UV sphere of radius `r` at `centre`, counter-clockwise seen from outside.
Mesh sphere(double r, std::array<double, 3> centre, int rings, int segments) {
  Mesh mesh;
  const double pi = std::numbers::pi;
  mesh.vertices.push_back({float(centre[0]), float(centre[1]), float(centre[2] + r)});  // north pole
  for (int i = 1; i < rings; ++i) {
    const double theta = pi * i / rings;
    for (int j = 0; j < segments; ++j) {
      const double phi = 2 * pi * j / segments;
      mesh.vertices.push_back({float(centre[0] + r * std::sin(theta) * std::cos(phi)),
                               float(centre[1] + r * std::sin(theta) * std::sin(phi)),
                               float(centre[2] + r * std::cos(theta))});
    }
  }
  mesh.vertices.push_back({float(centre[0]), float(centre[1]), float(centre[2] - r)});  // south pole
  const auto south = static_cast<std::uint32_t>(mesh.vertices.size() - 1);
  auto at = [&](int ring, int j) { return static_cast<std::uint32_t>(1 + (ring - 1) * segments + (j % segments)); };
  for (int j = 0; j < segments; ++j) {
    mesh.triangles.push_back({0, at(1, j), at(1, j + 1)});
    for (int i = 1; i + 1 < rings; ++i) {
      mesh.triangles.push_back({at(i, j), at(i + 1, j), at(i + 1, j + 1)});
      mesh.triangles.push_back({at(i, j), at(i + 1, j + 1), at(i, j + 1)});
    }
    mesh.triangles.push_back({at(rings - 1, j), south, at(rings - 1, j + 1)});
  }
  return mesh;
}

bool is_background(const Rgba8& p, const io::MeshPreviewOptions& o) { return p == o.background; }

TEST(MeshPreview, SphereSeenAlongZIsADiscOfTheFittedRadius) {
  io::MeshPreviewOptions options;
  options.view_from = {0, 0, 1};
  options.samples_per_axis = 1;
  const std::int64_t size = 201;
  const auto picture = io::render_mesh_preview(sphere(3.0, {10, -4, 7}, 48, 96), size, size, options);
  ASSERT_EQ(picture.width(), size);
  ASSERT_EQ(picture.height(), size);
  // The bounding box's square fills the picture less a 4 % margin on each side, so the disc's
  // radius is 0.92 * 201 / 2 = 92.5 pixels; the polygonal sphere's outline is within 0.1 % of it.
  const double radius = 0.92 * size / 2.0, centre = size / 2.0;
  int inside = 0, outside = 0;
  for (std::int64_t y = 0; y < size; ++y)
    for (std::int64_t x = 0; x < size; ++x) {
      const double d = std::hypot(x + 0.5 - centre, y + 0.5 - centre);
      if (d < radius - 1.5) {
        EXPECT_FALSE(is_background(picture(x, y), options)) << x << "," << y;
        ++inside;
      } else if (d > radius + 1.5) {
        EXPECT_TRUE(is_background(picture(x, y), options)) << x << "," << y;
        ++outside;
      }
    }
  EXPECT_GT(inside, 25000);
  EXPECT_GT(outside, 10000);
  // Lambert with the light at the viewer: the centre faces it (full colour), the rim is darker.
  const Rgba8 middle = picture(100, 100);
  EXPECT_NEAR(middle.r, options.colour.r, 2);
  EXPECT_NEAR(middle.g, options.colour.g, 2);
  EXPECT_NEAR(middle.b, options.colour.b, 2);
  EXPECT_EQ(middle.a, 255);
  const Rgba8 rim = picture(100 + static_cast<std::int64_t>(0.9 * radius), 100);
  EXPECT_LT(rim.r, middle.r - 50);  // |n . l| = sqrt(1 - 0.9^2) = 0.44 there
}

TEST(MeshPreview, SphereInTheDefaultViewIsACentredDiscWithBackgroundCorners) {
  const io::MeshPreviewOptions options;
  const std::int64_t w = 240, h = 180;
  const auto picture = io::render_mesh_preview(sphere(1.0, {0, 0, 0}, 32, 64), w, h, options);
  double count = 0, sum_x = 0, sum_y = 0;
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      if (!is_background(picture(x, y), options)) count += 1, sum_x += x + 0.5, sum_y += y + 0.5;
  ASSERT_GT(count, 0);
  const double cx = sum_x / count, cy = sum_y / count;
  EXPECT_NEAR(cx, w / 2.0, 1.0);
  EXPECT_NEAR(cy, h / 2.0, 1.0);
  // A disc: every foreground pixel within the radius its area implies (edge pixels aside).
  const double radius = std::sqrt(count / std::numbers::pi);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      if (!is_background(picture(x, y), options)) EXPECT_LT(std::hypot(x + 0.5 - cx, y + 0.5 - cy), radius + 1.5);
  EXPECT_GT(radius, 30);
  for (const auto [x, y] : {std::pair<int, int>{0, 0}, {w - 1, 0}, {0, h - 1}, {w - 1, h - 1}})
    EXPECT_TRUE(is_background(picture(x, y), options)) << x << "," << y;
  EXPECT_FALSE(is_background(picture(w / 2, h / 2), options));
}

// Seen along z: a square facing the viewer (full colour) at height `near_z`, and a larger square
// tilted by 60 degrees about y (half lit) around z = 0. Returns the colours at the centre (both
// squares) and at 7/8 of the width (the tilted square only).
std::pair<Rgba8, Rgba8> two_squares(float near_z, bool near_first, const io::MeshPreviewOptions& options) {
  Mesh mesh;
  const float slope = std::tan(static_cast<float>(std::numbers::pi / 3));  // z = slope * x / 4 stays within +-0.44
  auto quad = [&](std::array<std::array<float, 3>, 4> c) {
    const auto base = static_cast<std::uint32_t>(mesh.vertices.size());
    for (const auto& p : c) mesh.vertices.push_back(p);
    mesh.triangles.push_back({base, base + 1, base + 2});
    mesh.triangles.push_back({base, base + 2, base + 3});
  };
  auto tilted = [&] { quad({{{-1, -1, -slope / 4}, {1, -1, slope / 4}, {1, 1, slope / 4}, {-1, 1, -slope / 4}}}); };
  auto facing = [&] {
    quad({{{-0.5f, -0.5f, near_z}, {0.5f, -0.5f, near_z}, {0.5f, 0.5f, near_z}, {-0.5f, 0.5f, near_z}}});
  };
  if (near_first) facing(), tilted();
  else tilted(), facing();
  const std::int64_t size = 160;
  const auto picture = io::render_mesh_preview(mesh, size, size, options);
  return {picture(size / 2, size / 2), picture(size * 7 / 8, size / 2)};
}

TEST(MeshPreview, NearTriangleHidesFarOneInEitherOrder) {
  io::MeshPreviewOptions options;
  options.view_from = {0, 0, 1};
  // The tilted square's |n . l| = cos(atan(slope / 4)) = 0.917; so its shade is 0.938 of the colour.
  for (const bool near_first : {true, false}) {
    const auto [centre, tilted_only] = two_squares(1.0f, near_first, options);
    EXPECT_NEAR(centre.r, options.colour.r, 1) << near_first;  // the facing square, in front
    EXPECT_LT(tilted_only.r, options.colour.r - 5) << near_first;
    EXPECT_FALSE(is_background(tilted_only, options));
    // Behind the tilted square, the facing square does not show.
    const auto [centre_behind, tilted_only_behind] = two_squares(-1.0f, near_first, options);
    EXPECT_EQ(centre_behind, tilted_only_behind) << near_first;
    EXPECT_LT(centre_behind.r, options.colour.r - 5) << near_first;
  }
}

TEST(MeshPreview, EmptyMeshIsAllBackgroundAndBadSizesAreRefused) {
  const io::MeshPreviewOptions options;
  const auto picture = io::render_mesh_preview(Mesh{}, 7, 5, options);
  for (const Rgba8& p : picture.pixels()) EXPECT_EQ(p, options.background);
  const Mesh mesh = sphere(1.0, {0, 0, 0}, 8, 16);
  expect_input_error([&] { io::render_mesh_preview(mesh, 0, 10); }, "preview", "size 0x10");
  expect_input_error([&] { io::render_mesh_preview(mesh, 10, 20000); }, "preview", "size 10x20000");
  Mesh bad = mesh;
  bad.triangles[0][2] = 999;
  expect_input_error([&] { io::render_mesh_preview(bad, 10, 10); }, "preview", "uses vertex 999");
}

}  // namespace
