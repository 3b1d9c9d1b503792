// `winnow isosurface`, end to end, against computations of this file: for random raw volumes the
// test writes, the mesh's vertices are exactly the crossed voxel edges the test counts (one per
// edge with one end > level and the other not, none equal to the level), at the linear
// interpolation along the edge times the spacing; the PLY header, the OBJ and STL files and the
// summary line agree with that count; --normals point away from the above region (outward for a
// ball) and --flip reverses the winding and the normals; types the library lacks are converted;
// --coordinates index and world: the index mesh's crossings, and the world mesh the file's affine
// (written here) applied to them, normals perpendicular to the moved surface, the winding reversed
// by a mirroring affine; an empty mesh is written with a warning. Bad arguments give one line,
// exit 2 and no file.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "common/mesh_readers.hpp"
#include "winnow/backend.hpp"
#include "winnow/io.hpp"
#include "winnow/volume_io.hpp"

using namespace winnow;
using winnow::test::expect_one_line_error;
using winnow::test::run_cli;
using winnow::test::TempDir;
namespace fs = std::filesystem;

namespace {

struct Grid {
  int nx, ny, nz;
  std::vector<double> values;  // x fastest
  double at(int x, int y, int z) const { return values[(std::size_t(z) * ny + y) * nx + x]; }
};

Grid random_grid(int nx, int ny, int nz, unsigned seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(lo, hi);
  Grid g{nx, ny, nz, {}};
  for (int i = 0; i < nx * ny * nz; ++i) g.values.push_back(value(rng));
  return g;
}

// Writes the grid as a raw little-endian file of V (this test runs on little-endian machines).
template <class V>
void write_raw(const fs::path& path, const Grid& g) {
  std::vector<V> voxels;
  for (const double v : g.values) voxels.push_back(static_cast<V>(v));
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(voxels.data()), static_cast<std::streamsize>(voxels.size() * sizeof(V)));
}

// The crossing of every edge between 6-neighbours with one end above the level and the other
// not, at t = (level - a) / (b - a) from the non-above end a, in index units times spacing.
std::vector<std::array<double, 3>> crossings(const Grid& g, double level, std::array<double, 3> spacing) {
  std::vector<std::array<double, 3>> points;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x)
        for (int axis = 0; axis < 3; ++axis) {
          const int x1 = x + (axis == 0), y1 = y + (axis == 1), z1 = z + (axis == 2);
          if (x1 >= g.nx || y1 >= g.ny || z1 >= g.nz) continue;
          const double p = g.at(x, y, z), q = g.at(x1, y1, z1);
          if ((p > level) == (q > level)) continue;
          // From the lower end: its distance along the axis, whichever end is above.
          const double t = (level - p) / (q - p);
          std::array<double, 3> point = {double(x), double(y), double(z)};
          point[axis] += t;
          for (int k = 0; k < 3; ++k) point[k] *= spacing[k];
          points.push_back(point);
        }
  return points;
}

std::string header_line(const std::string& header, const std::string& prefix) {
  const std::size_t at = header.find(prefix);
  return at == std::string::npos ? "" : header.substr(at, header.find('\n', at) - at);
}

// Both lists as sorted points, compared with a tolerance of float rounding.
void expect_same_points(std::vector<std::array<double, 3>> expected, const std::vector<std::array<float, 3>>& got) {
  std::vector<std::array<double, 3>> actual;
  for (const auto& p : got) actual.push_back({p[0], p[1], p[2]});
  ASSERT_EQ(actual.size(), expected.size());
  std::sort(expected.begin(), expected.end());
  std::sort(actual.begin(), actual.end());
  for (std::size_t i = 0; i < actual.size(); ++i)
    for (int k = 0; k < 3; ++k) ASSERT_NEAR(actual[i][k], expected[i][k], 1e-5 * (1 + std::abs(expected[i][k]))) << i;
}

TEST(CliIsosurface, VerticesAreTheCrossedEdgesAtTheirInterpolatedPoints) {
  TempDir dir;
  const Grid g = random_grid(9, 7, 6, 1, 0.0, 1.0);
  write_raw<float>(dir / "v.raw", g);
  const auto r = run_cli({"isosurface", (dir / "v.raw").string(), "--dims", "9,7,6", "--dtype", "f32", "--level", "0.5",
                          "--spacing", "2,1,0.5", "--out", (dir / "m.ply").string(), "--backend", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The level is compared with the f32 voxels as the file holds them.
  Grid stored = g;
  for (double& v : stored.values) v = static_cast<float>(v);
  const auto expected = crossings(stored, 0.5, {2, 1, 0.5});
  ASSERT_GT(expected.size(), 100u);
  const auto mesh = test::read_ply(dir / "m.ply");
  EXPECT_EQ(header_line(mesh.header, "element vertex"), "element vertex " + std::to_string(expected.size()));
  expect_same_points(expected, mesh.vertices);
  EXPECT_FALSE(mesh.faces.empty());
  for (const auto& f : mesh.faces) {
    for (const auto i : f) ASSERT_LT(i, expected.size());
    EXPECT_TRUE(f[0] != f[1] && f[1] != f[2] && f[0] != f[2]);
  }
  EXPECT_NE(r.out.find("9x7x6 f32, level 0.5, " + std::to_string(expected.size()) + " vertices, " +
                       std::to_string(mesh.faces.size()) + " triangles, backend cpu, "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" ms\n"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(CliIsosurface, ObjStlAndPreviewHoldTheSameMesh) {
  TempDir dir;
  const Grid g = random_grid(8, 8, 5, 2, -1.0, 1.0);
  write_raw<double>(dir / "v.raw", g);
  const std::vector<std::string> common = {
      "isosurface", (dir / "v.raw").string(), "--dims", "8,8,5", "--dtype", "f64", "--level", "0.25", "--quiet"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  ASSERT_EQ(with({"--out", (dir / "m.ply").string()}).exit_code, 0);
  const auto r = with({"--out", (dir / "m.OBJ").string(), "--preview", (dir / "p.png").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;  // --quiet
  ASSERT_EQ(with({"--out", (dir / "m.stl").string()}).exit_code, 0);
  const auto ply = test::read_ply(dir / "m.ply");
  const auto obj = test::read_obj(dir / "m.OBJ");
  const auto stl = test::read_stl(dir / "m.stl");
  expect_same_points(crossings(g, 0.25, {1, 1, 1}), ply.vertices);
  EXPECT_EQ(obj.vertices, ply.vertices);
  EXPECT_EQ(obj.faces, ply.faces);
  ASSERT_EQ(stl.size(), ply.faces.size());
  for (std::size_t t = 0; t < stl.size(); ++t)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(stl[t].corners[k], ply.vertices[ply.faces[t][k]]);
  const auto preview = io::read_rgba8(dir / "p.png");
  EXPECT_EQ(preview.width(), 800);
  EXPECT_EQ(preview.height(), 800);
  const Rgba8 white{255, 255, 255, 255};
  EXPECT_EQ(preview(0, 0), white);
  EXPECT_EQ(preview(799, 799), white);
  EXPECT_GT(std::count_if(preview.pixels().begin(), preview.pixels().end(), [&](Rgba8 p) { return p != white; }),
            800 * 800 / 10);
}

// A ball: the field is minus the distance from the centre, so the inside is above the level.
Grid ball(int n, double centre) {
  Grid g{n, n, n, {}};
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) g.values.push_back(-std::hypot(x - centre, y - centre, z - centre));
  return g;
}

TEST(CliIsosurface, NormalsPointOutOfTheAboveRegionAndFlipReversesThem) {
  TempDir dir;
  const double centre = 6.3;
  write_raw<float>(dir / "ball.raw", ball(13, centre));
  auto extract = [&](const char* name, bool flip) {
    std::vector<std::string> args = {"isosurface",
                                     (dir / "ball.raw").string(),
                                     "--dims",
                                     "13,13,13",
                                     "--dtype",
                                     "f32",
                                     "--level",
                                     "-4.5",
                                     "--normals",
                                     "--out",
                                     (dir / name).string()};
    if (flip) args.push_back("--flip");
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return test::read_ply(dir / name);
  };
  const auto plain = extract("plain.ply", false);
  const auto flipped = extract("flipped.ply", true);
  ASSERT_EQ(plain.normals.size(), plain.vertices.size());
  ASSERT_GT(plain.vertices.size(), 200u);
  for (std::size_t i = 0; i < plain.vertices.size(); ++i) {
    double outward = 0;
    for (int k = 0; k < 3; ++k) outward += plain.normals[i][k] * (plain.vertices[i][k] - centre) / 4.5;
    EXPECT_GT(outward, 0.9) << i;  // the unit normal and the unit radius agree
    for (int k = 0; k < 3; ++k) EXPECT_EQ(flipped.normals[i][k], -plain.normals[i][k]);
  }
  // Triangles wind counter-clockwise seen from outside: the signed volume they enclose is positive.
  auto signed_volume = [](const test::ReadMesh& m) {
    double v = 0;
    for (const auto& f : m.faces) {
      const auto& a = m.vertices[f[0]];
      const auto& b = m.vertices[f[1]];
      const auto& c = m.vertices[f[2]];
      v += (double(a[0]) * (double(b[1]) * c[2] - double(b[2]) * c[1]) -
            double(a[1]) * (double(b[0]) * c[2] - double(b[2]) * c[0]) +
            double(a[2]) * (double(b[0]) * c[1] - double(b[1]) * c[0])) /
           6.0;
    }
    return v;
  };
  const double sphere_volume = 4.0 / 3.0 * 3.14159265358979 * 4.5 * 4.5 * 4.5;
  EXPECT_NEAR(signed_volume(plain), sphere_volume, 0.05 * sphere_volume);
  EXPECT_NEAR(signed_volume(flipped), -sphere_volume, 0.05 * sphere_volume);
  ASSERT_EQ(flipped.faces.size(), plain.faces.size());
  std::set<std::array<std::uint64_t, 3>> reversed;
  for (const auto& f : plain.faces) reversed.insert({f[0], f[2], f[1]});
  for (const auto& f : flipped.faces) {
    // The same triangle with the other winding, starting at any corner.
    const bool found = reversed.count(f) || reversed.count({f[1], f[2], f[0]}) || reversed.count({f[2], f[0], f[1]});
    EXPECT_TRUE(found);
  }
}

TEST(CliIsosurface, TypesWithoutAnIsosurfaceAreConvertedToF64) {
  TempDir dir;
  Grid g = random_grid(7, 6, 5, 3, -100000.0, 100000.0);
  for (double& v : g.values) v = std::round(v);
  write_raw<std::int32_t>(dir / "v.raw", g);
  const auto r = run_cli({"isosurface", (dir / "v.raw").string(), "--dims", "7,6,5", "--dtype", "i32", "--level",
                          "10.5", "--out", (dir / "m.ply").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("7x6x5 i32 (as f64), level 10.5, "), std::string::npos) << r.out;
  expect_same_points(crossings(g, 10.5, {1, 1, 1}), test::read_ply(dir / "m.ply").vertices);
}

TEST(CliIsosurface, NoCrossingGivesAnEmptyMeshAndABlankPreview) {
  TempDir dir;
  const Grid g = random_grid(5, 5, 5, 4, 0.0, 100.0);
  write_raw<std::uint8_t>(dir / "v.raw", g);
  int lowest = 255, highest = 0;
  for (const double x : g.values) {
    const int stored = std::uint8_t(x);
    lowest = std::min(lowest, stored), highest = std::max(highest, stored);
  }
  const auto r = run_cli({"isosurface", (dir / "v.raw").string(), "--dims", "5,5,5", "--dtype", "u8", "--level", "200",
                          "--out", (dir / "m.ply").string(), "--preview", (dir / "p.png").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("0 vertices, 0 triangles (an empty mesh)"), std::string::npos) << r.out;
  // Said on stderr too, in one line with the volume's range, whatever --quiet says.
  const std::string warning = "winnow: warning: empty mesh: no voxel of " + (dir / "v.raw").string() +
                              " is above level 200 (values " + std::to_string(lowest) + ".." + std::to_string(highest) +
                              ")\n";
  EXPECT_EQ(r.err, warning);
  const auto quiet = run_cli({"isosurface", (dir / "v.raw").string(), "--dims", "5,5,5", "--dtype", "u8", "--level",
                              "200", "--out", (dir / "m.ply").string(), "--quiet"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_TRUE(quiet.out.empty());
  EXPECT_EQ(quiet.err, warning);
  const auto mesh = test::read_ply(dir / "m.ply");
  EXPECT_TRUE(mesh.vertices.empty() && mesh.faces.empty());
  const auto preview = io::read_rgba8(dir / "p.png");
  for (const Rgba8 p : preview.pixels()) ASSERT_EQ(p, (Rgba8{255, 255, 255, 255}));
}

// A NIfTI whose oblique sform mirrors x (det < 0), with spacing 2 x 3 x 4 in pixdim:
// index coordinates ignore the spacing, world ones are the sform applied to them.
TEST(CliIsosurface, IndexAndWorldCoordinates) {
  TempDir dir;
  const Grid g = ball(12, 5.4);
  Volume<float> v(12, 12, 12);
  for (std::size_t i = 0; i < g.values.size(); ++i) v.data()[i] = static_cast<float>(g.values[i]);
  v.set_spacing(2, 3, 4);
  io::SpatialHeader header;
  header.source = io::SpatialHeader::Source::nifti;
  header.nifti.sform_code = 1;
  header.nifti.pixdim = {1, 2, 3, 4};  // a header written as is: its pixdim is the spacing
  const float srow[3][4] = {{-2, 0.25f, 0, 90.5f}, {0.1f, 3, 0, -126}, {0, 0.5f, 4, -72.25f}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) header.nifti.srow[r][c] = srow[r][c];
  io::VolumeWriteOptions options;
  options.like = header;
  io::write_volume(dir / "ball.nii.gz", v.view(), options);
  auto extract = [&](const char* coordinates, const char* name) {
    const auto r = run_cli({"isosurface", (dir / "ball.nii.gz").string(), "--level", "-3.5", "--normals",
                            "--coordinates", coordinates, "--out", (dir / name).string(), "--backend", "cpu"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return test::read_ply(dir / name);
  };
  const auto index = extract("index", "index.ply");
  Grid stored = g;
  for (double& x : stored.values) x = static_cast<float>(x);
  expect_same_points(crossings(stored, -3.5, {1, 1, 1}), index.vertices);
  const auto world = extract("world", "world.ply");
  ASSERT_EQ(world.vertices.size(), index.vertices.size());
  for (std::size_t i = 0; i < index.vertices.size(); ++i)
    for (int r = 0; r < 3; ++r) {
      const double want = double(srow[r][0]) * index.vertices[i][0] + double(srow[r][1]) * index.vertices[i][1] +
                          double(srow[r][2]) * index.vertices[i][2] + double(srow[r][3]);
      ASSERT_EQ(world.vertices[i][r], static_cast<float>(want)) << i;
    }
  // det < 0: every triangle wound the other way, so the ball's surface still faces out.
  ASSERT_EQ(world.faces.size(), index.faces.size());
  for (std::size_t t = 0; t < index.faces.size(); ++t) {
    const auto& f = index.faces[t];
    EXPECT_EQ(world.faces[t], (std::array<std::uint64_t, 3>{f[0], f[2], f[1]}));
  }
  // Normals: unit, perpendicular to the moved surface (a tangent of the index mesh, moved by A),
  // and pointing out of the ball as in index space.
  for (std::size_t i = 0; i < index.normals.size(); i += 7) {
    const auto& n = index.normals[i];
    const std::array<double, 3> tangent = {n[1], -n[0], 0};  // perpendicular to n
    std::array<double, 3> moved{}, radius{};
    for (int r = 0; r < 3; ++r) {
      moved[r] = srow[r][0] * tangent[0] + srow[r][1] * tangent[1] + srow[r][2] * tangent[2];
      radius[r] = world.vertices[i][r] - (srow[r][0] * 5.4 + srow[r][1] * 5.4 + srow[r][2] * 5.4 + srow[r][3]);
    }
    const auto& m = world.normals[i];
    EXPECT_NEAR(m[0] * m[0] + m[1] * m[1] + m[2] * m[2], 1.0, 1e-5);
    const double moved_length = std::hypot(moved[0], moved[1], moved[2]);
    EXPECT_NEAR(m[0] * moved[0] + m[1] * moved[1] + m[2] * moved[2], 0.0, 1e-4 * moved_length);
    EXPECT_GT(m[0] * radius[0] + m[1] * radius[1] + m[2] * radius[2], 0.0) << i;
  }
  // An orientation-less volume has no world; --spacing goes with scaled coordinates only.
  io::write_volume(dir / "ball.npy", v.view());
  expect_one_line_error(run_cli({"isosurface", (dir / "ball.npy").string(), "--level", "-3.5", "--coordinates", "world",
                                 "--out", (dir / "x.ply").string()}),
                        "ball.npy");
  expect_one_line_error(run_cli({"isosurface", (dir / "ball.nii.gz").string(), "--level", "-3.5", "--coordinates",
                                 "world", "--spacing", "1,1,1", "--out", (dir / "x.ply").string()}),
                        "--spacing");
  expect_one_line_error(run_cli({"isosurface", (dir / "ball.nii.gz").string(), "--level", "-3.5", "--coordinates",
                                 "lps", "--out", (dir / "x.ply").string()}),
                        "--coordinates");
  EXPECT_FALSE(fs::exists(dir / "x.ply"));
}

TEST(CliIsosurfaceBadInput, OneLineNamingTheProblemAndNoOutput) {
  TempDir dir;
  write_raw<float>(dir / "v.raw", random_grid(4, 4, 4, 5, 0.0, 1.0));
  const std::string volume = (dir / "v.raw").string(), out = (dir / "m.ply").string();
  const std::vector<std::string> raw = {"--dims", "4,4,4", "--dtype", "f32"};
  auto run = [&](std::vector<std::string> args, bool with_raw = true) {
    args.insert(args.begin(), "isosurface");
    if (with_raw) args.insert(args.end(), raw.begin(), raw.end());
    return run_cli(args);
  };
  expect_one_line_error(run({volume, "--level", "0.5", "--out", (dir / "m.off").string()}), "m.off");
  expect_one_line_error(run({volume, "--level", "nan", "--out", out}), "--level 'nan'");
  expect_one_line_error(run({volume, "--out", out}), "--level");
  expect_one_line_error(run({volume, "--level", "0.5", "--spacing", "1,0,1", "--out", out}), "--spacing '1,0,1'");
  expect_one_line_error(run({volume, "--level", "0.5", "--spacing", "1,1", "--out", out}), "--spacing '1,1'");
  expect_one_line_error(run({volume, "--level", "0.5", "--out", out, "--preview", (dir / "p.jpg").string()}), "p.jpg");
  expect_one_line_error(run({volume, "--level", "0.5", "--out", (dir / "no" / "m.ply").string()}), "m.ply");
  expect_one_line_error(run({volume, "--level", "0.5", "--out", volume}), "v.raw");  // the input itself
  // A raw volume has no world.
  expect_one_line_error(run({volume, "--level", "0.5", "--coordinates", "world", "--out", out}), "v.raw");
  expect_one_line_error(run({(dir / "missing.nii").string(), "--level", "0.5", "--out", out}, false), "missing.nii");
  expect_one_line_error(run({volume, "--level", "0.5", "--out", out, "--dims", "5,4,4"}, false), "--dtype");
  expect_one_line_error(
      run_cli({"isosurface", volume, "--level", "0.5", "--out", out, "--dims", "5,4,4", "--dtype", "f32"}), "v.raw");
  if (!cuda_available())  // an explicit backend that is not there is an error, never a fallback
    expect_one_line_error(run({volume, "--level", "0.5", "--out", out, "--backend", "cuda"}), "cuda");
  EXPECT_EQ(dir.files(), std::vector<std::string>{"v.raw"});  // nothing written, no temporary left
}

}  // namespace
