// Isosurfaces (winnow::isosurface) against this file's own oracles: analytic fields (sphere,
// torus, gyroid, two touching spheres, levels on grid values, random noise that reaches all 256
// cases and every ambiguous face) checked for watertightness and orientation (every directed edge
// once, its reverse once), welding (no two vertices at one position), no degenerate triangles,
// Euler characteristic, area and enclosed volume against the analytic values, vertex positions and
// order against an interpolation written here, outward normals; slabbed = one pass bit for bit;
// thin, empty, NaN, strided, spaced and every voxel type; rows across 64-voxel word boundaries;
// levels between and beyond a voxel type's values; levels equal to voxel values on thousands of
// small random integer volumes of every type (a 2-manifold: every edge used twice, once each way,
// or once on the volume's border; every vertex used, its triangles one fan); CPU = CUDA (skipped
// without a device).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/gpu_guard.hpp"
#include "winnow/backend.hpp"
#include "winnow/error.hpp"
#include "winnow/isosurface.hpp"
#include "winnow/volume.hpp"
#include "winnow/volume_io.hpp"

using namespace winnow;

namespace {

constexpr double kPi = 3.14159265358979323846;

template <class T, class F>
Volume<T> sample(std::int64_t nx, std::int64_t ny, std::int64_t nz, F&& field) {
  Volume<T> v(nx, ny, nz);
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) v(x, y, z) = static_cast<T>(field(double(x), double(y), double(z)));
  return v;
}

using Point = std::array<double, 3>;
Point point(const Mesh& m, std::uint64_t i) { return {m.vertices[i][0], m.vertices[i][1], m.vertices[i][2]}; }
Point minus(Point a, Point b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Point cross(Point a, Point b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(Point a, Point b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// Directed edges of all triangles, with their multiplicity.
std::map<std::pair<std::uint64_t, std::uint64_t>, int> directed_edges(const Mesh& m) {
  std::map<std::pair<std::uint64_t, std::uint64_t>, int> edges;
  for (std::uint64_t t = 0; t < m.triangle_count(); ++t) {
    const auto v = m.triangle(t);
    for (int k = 0; k < 3; ++k) ++edges[{v[k], v[(k + 1) % 3]}];
  }
  return edges;
}

using Edge = std::pair<std::uint64_t, std::uint64_t>;

// The directed edges of all triangles, sorted (repeats kept): the checks below search them, which
// stays fast on meshes of millions of triangles.
std::vector<Edge> sorted_directed_edges(const Mesh& m) {
  std::vector<Edge> edges;
  edges.reserve(3 * m.triangle_count());
  for (std::uint64_t t = 0; t < m.triangle_count(); ++t) {
    const auto v = m.triangle(t);
    for (int k = 0; k < 3; ++k) edges.push_back({v[k], v[(k + 1) % 3]});
  }
  std::sort(edges.begin(), edges.end());
  return edges;
}
bool contains(const std::vector<Edge>& sorted, Edge e) { return std::binary_search(sorted.begin(), sorted.end(), e); }

// Closed and consistently oriented: every directed edge once and its reverse once.
void expect_closed_and_oriented(const Mesh& m) {
  const auto edges = sorted_directed_edges(m);
  int bad = 0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const bool repeated = (i > 0 && edges[i - 1] == edges[i]) || (i + 1 < edges.size() && edges[i + 1] == edges[i]);
    bad += repeated || !contains(edges, {edges[i].second, edges[i].first});
  }
  EXPECT_EQ(bad, 0) << "directed edges not used once each way, of " << edges.size();
}

// Welded: no two vertices share a position (crossings that round onto a voxel are moved one float
// inside their edge), every vertex is used, and no triangle repeats a vertex or points past the
// vertices.
void expect_welded_and_valid(const Mesh& m) {
  std::vector<std::array<float, 3>> positions(m.vertices);
  std::sort(positions.begin(), positions.end());
  const auto shared = std::adjacent_find(positions.begin(), positions.end()) != positions.end();
  EXPECT_FALSE(shared) << "positions held by more than one vertex, of " << positions.size();
  int degenerate = 0, out_of_range = 0;
  std::vector<bool> used(m.vertex_count());
  for (std::uint64_t t = 0; t < m.triangle_count(); ++t) {
    const auto v = m.triangle(t);
    degenerate += v[0] == v[1] || v[1] == v[2] || v[0] == v[2];
    for (auto i : v) {
      out_of_range += i >= m.vertex_count();
      if (i < m.vertex_count()) used[i] = true;
    }
  }
  EXPECT_EQ(degenerate, 0);
  EXPECT_EQ(out_of_range, 0);
  EXPECT_EQ(std::count(used.begin(), used.end(), false), 0) << "vertices no triangle uses";
}

// A 2-manifold with border: every directed edge once; every undirected edge used by two
// triangles in opposite directions, or by one when both its vertices lie on one face of the
// volume (`faces`: the float coordinates of the volume's faces per axis, the surface is open
// there); every vertex's triangles form one fan (its link is one cycle, or one path on the border).
void expect_manifold(const Mesh& m, const std::array<std::array<float, 2>, 3>& faces) {
  const auto edges = sorted_directed_edges(m);
  const auto on_one_face = [&](std::uint64_t a, std::uint64_t b) {
    for (int axis = 0; axis < 3; ++axis)
      for (float face : faces[axis])
        if (m.vertices[a][axis] == face && m.vertices[b][axis] == face) return true;
    return false;
  };
  int repeated = 0, unpaired = 0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    repeated += i > 0 && edges[i - 1] == edges[i];
    if (!contains(edges, {edges[i].second, edges[i].first}) && !on_one_face(edges[i].first, edges[i].second))
      ++unpaired;
  }
  EXPECT_EQ(repeated, 0) << "directed edges used more than once";
  EXPECT_EQ(unpaired, 0) << "edges used by one triangle away from the volume's border";
  // The link of vertex a: for each triangle (a, b, c) the directed link edge b -> c, grouped by a.
  struct LinkEdge {
    std::uint64_t a, b, c;
    bool operator<(const LinkEdge& o) const { return a != o.a ? a < o.a : b < o.b; }
  };
  std::vector<LinkEdge> link;
  link.reserve(3 * m.triangle_count());
  for (std::uint64_t t = 0; t < m.triangle_count(); ++t) {
    const auto v = m.triangle(t);
    for (int k = 0; k < 3; ++k) link.push_back({v[k], v[(k + 1) % 3], v[(k + 2) % 3]});
  }
  std::sort(link.begin(), link.end());
  int not_a_fan = 0;
  for (std::size_t begin = 0, end; begin < link.size(); begin = end) {
    for (end = begin; end < link.size() && link[end].a == link[begin].a; ++end) {}
    // One cycle or one path: each link vertex starts at most one link edge and ends at most one;
    // a walk from the start (a link vertex no edge ends at, else any) covers every edge.
    std::vector<std::uint64_t> ends;
    bool ok = true;
    for (std::size_t i = begin; i < end; ++i) {
      ok &= i == begin || link[i - 1].b != link[i].b;
      ends.push_back(link[i].c);
    }
    std::sort(ends.begin(), ends.end());
    ok &= std::adjacent_find(ends.begin(), ends.end()) == ends.end();
    std::uint64_t start = link[begin].b;
    for (std::size_t i = begin; i < end; ++i)
      if (!std::binary_search(ends.begin(), ends.end(), link[i].b)) start = link[i].b;
    const auto next = [&](std::uint64_t b) {  // the link edge starting at b, or end
      const auto it = std::lower_bound(link.begin() + begin, link.begin() + end, LinkEdge{link[begin].a, b, 0});
      return it != link.begin() + end && it->b == b ? it : link.begin() + end;
    };
    std::size_t steps = 0;
    for (auto it = next(start); ok && it != link.begin() + end && steps <= end - begin; it = next(it->c)) {
      ++steps;
      if (it->c == start) break;  // back at the start: a cycle
    }
    ok &= steps == end - begin;
    not_a_fan += !ok;
  }
  EXPECT_EQ(not_a_fan, 0) << "vertices whose triangles are not one fan";
}

template <class T>
std::array<std::array<float, 2>, 3> faces_of(const VolumeView<T>& v) {
  return {{{0.0f, static_cast<float>((v.nx - 1) * v.sx)},
           {0.0f, static_cast<float>((v.ny - 1) * v.sy)},
           {0.0f, static_cast<float>((v.nz - 1) * v.sz)}}};
}

// V - E + F over the vertices the triangles use.
std::int64_t euler_characteristic(const Mesh& m) {
  std::set<std::pair<std::uint64_t, std::uint64_t>> undirected;
  std::set<std::uint64_t> used;
  for (std::uint64_t t = 0; t < m.triangle_count(); ++t) {
    const auto v = m.triangle(t);
    for (int k = 0; k < 3; ++k) {
      used.insert(v[k]);
      undirected.insert({std::min(v[k], v[(k + 1) % 3]), std::max(v[k], v[(k + 1) % 3])});
    }
  }
  return static_cast<std::int64_t>(used.size()) - static_cast<std::int64_t>(undirected.size()) +
         static_cast<std::int64_t>(m.triangle_count());
}

double area(const Mesh& m) {
  double a = 0;
  for (std::uint64_t t = 0; t < m.triangle_count(); ++t) {
    const auto v = m.triangle(t);
    const Point n = cross(minus(point(m, v[1]), point(m, v[0])), minus(point(m, v[2]), point(m, v[0])));
    a += std::sqrt(dot(n, n)) / 2;
  }
  return a;
}
// Signed volume enclosed (divergence theorem): positive when the normals point out of it.
double enclosed_volume(const Mesh& m) {
  double vol = 0;
  for (std::uint64_t t = 0; t < m.triangle_count(); ++t) {
    const auto v = m.triangle(t);
    vol += dot(point(m, v[0]), cross(point(m, v[1]), point(m, v[2]))) / 6;
  }
  return vol;
}

// The contract's vertices, written out independently: raster order of the owning voxel, then its
// +x, +y, +z crossings (one end above the level, the other not), interpolated from the lower
// voxel in long double.
template <class T>
std::vector<Point> expected_vertices(const VolumeView<T>& v, double level) {
  std::vector<Point> out;
  if (v.nx < 2 || v.ny < 2 || v.nz < 2) return out;
  const long double L = level;
  const auto val = [&](std::int64_t x, std::int64_t y, std::int64_t z) { return static_cast<long double>(v(x, y, z)); };
  const auto inside = [&](std::int64_t x, std::int64_t y, std::int64_t z) {
    return x >= 0 && y >= 0 && z >= 0 && x < v.nx && y < v.ny && z < v.nz;
  };
  const double s[3] = {v.sx, v.sy, v.sz};
  for (std::int64_t z = 0; z < v.nz; ++z)
    for (std::int64_t y = 0; y < v.ny; ++y)
      for (std::int64_t x = 0; x < v.nx; ++x) {
        const long double f = val(x, y, z);
        const std::int64_t c[3] = {x, y, z};
        for (int axis = 0; axis < 3; ++axis) {
          std::int64_t q[3] = {x, y, z};
          q[axis] += 1;
          if (!inside(q[0], q[1], q[2])) continue;
          const long double g = val(q[0], q[1], q[2]);
          if ((f > L) == (g > L)) continue;
          const long double u = (std::isnan(f) || std::isnan(g)) ? 0.5L : (L - f) / (g - f);
          Point p = {x * s[0], y * s[1], z * s[2]};
          p[axis] = static_cast<double>((c[axis] + u) * s[axis]);
          out.push_back(p);
        }
      }
  return out;
}

template <class T>
void expect_vertices_match(const Mesh& m, const VolumeView<T>& v, double level) {
  const auto expected = expected_vertices(v, level);
  ASSERT_EQ(m.vertex_count(), expected.size());
  int far = 0;
  for (std::size_t i = 0; i < expected.size(); ++i)
    for (int k = 0; k < 3; ++k) {
      const double tolerance = 1e-6 * std::max(1.0, std::abs(expected[i][k]));
      far += std::abs(m.vertices[i][k] - expected[i][k]) > tolerance;
    }
  EXPECT_EQ(far, 0) << "vertex components away from the interpolation";
}

void expect_same_mesh(const Mesh& a, const Mesh& b) {
  EXPECT_TRUE(a.vertices == b.vertices);
  EXPECT_TRUE(a.triangles == b.triangles);
  EXPECT_TRUE(a.triangles64 == b.triangles64);
  EXPECT_TRUE(a.normals == b.normals);
  EXPECT_EQ(a.values.size(), b.values.size());
  if (!a.values.empty() && a.values.size() == b.values.size())  // memcmp: NaN-safe; never on null
    EXPECT_EQ(0, std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)));
  EXPECT_TRUE(a.vertex_keys == b.vertex_keys);
}

// Normals and winding point away from `centre` (outward for a surface around it).
void expect_outward(const Mesh& m, Point centre) {
  ASSERT_EQ(m.normals.size(), m.vertex_count());
  int inward_normals = 0, inward_triangles = 0;
  for (std::uint64_t i = 0; i < m.vertex_count(); ++i) {
    const Point r = minus(point(m, i), centre);
    const Point n = {m.normals[i][0], m.normals[i][1], m.normals[i][2]};
    inward_normals += dot(n, r) < 0.9 * std::sqrt(dot(r, r)) || std::abs(dot(n, n) - 1) > 1e-5;
  }
  for (std::uint64_t t = 0; t < m.triangle_count(); ++t) {
    const auto v = m.triangle(t);
    const Point n = cross(minus(point(m, v[1]), point(m, v[0])), minus(point(m, v[2]), point(m, v[0])));
    inward_triangles += dot(n, minus(point(m, v[0]), centre)) <= 0;
  }
  EXPECT_EQ(inward_normals, 0);
  EXPECT_EQ(inward_triangles, 0);
}

// Distance to the nearest face of the volume, in voxels.
double border_distance(double x, double y, double z, double n) {
  return std::min({x, y, z, n - 1 - x, n - 1 - y, n - 1 - z});
}

const IsosurfaceOptions kCpuNormals{.normals = true, .values = true, .backend = Backend::cpu};

// ---- analytic fields --------------------------------------------------------------------------

TEST(Isosurface, SphereIsClosedWithOutwardNormalsAndAnalyticAreaAndVolume) {
  const double R = 15, cx = 23.3, cy = 24.1, cz = 22.7;
  const auto vol = sample<float>(48, 48, 48, [&](double x, double y, double z) {
    return R - std::sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz));
  });
  const Mesh m = isosurface(vol.view(), 0.0, kCpuNormals);
  ASSERT_GT(m.triangle_count(), 1000u);
  expect_closed_and_oriented(m);
  expect_welded_and_valid(m);
  EXPECT_EQ(euler_characteristic(m), 2);
  EXPECT_NEAR(area(m), 4 * kPi * R * R, 0.01 * 4 * kPi * R * R);
  EXPECT_NEAR(enclosed_volume(m), 4.0 / 3 * kPi * R * R * R, 0.01 * 4.0 / 3 * kPi * R * R * R);
  expect_vertices_match(m, vol.view(), 0.0);
  expect_outward(m, {cx, cy, cz});
  for (float v : m.values) EXPECT_NEAR(v, 0.0, 1e-5);
}

TEST(Isosurface, TorusHasEulerZeroAndAnalyticAreaAndVolume) {
  const double R = 14, r = 5, c = 24.4;
  const auto vol = sample<double>(50, 50, 30, [&](double x, double y, double z) {
    const double q = std::sqrt((x - c) * (x - c) + (y - c) * (y - c)) - R;
    return r - std::sqrt(q * q + (z - 14.6) * (z - 14.6));
  });
  const Mesh m = isosurface(vol.view(), 0.0, {.backend = Backend::cpu});
  expect_closed_and_oriented(m);
  expect_welded_and_valid(m);
  EXPECT_EQ(euler_characteristic(m), 0);
  EXPECT_NEAR(area(m), 4 * kPi * kPi * R * r, 0.01 * 4 * kPi * kPi * R * r);
  EXPECT_NEAR(enclosed_volume(m), 2 * kPi * kPi * R * r * r, 0.015 * 2 * kPi * kPi * R * r * r);
  expect_vertices_match(m, vol.view(), 0.0);
}

TEST(Isosurface, ClosedGyroidIsWatertightAndOpenGyroidPairsItsInnerEdges) {
  const double n = 40, k = 2 * kPi / 13;
  const auto gyroid = [&](double x, double y, double z) {
    return std::sin(k * x) * std::cos(k * y) + std::sin(k * y) * std::cos(k * z) + std::sin(k * z) * std::cos(k * x);
  };
  const auto closed = sample<float>(40, 40, 40, [&](double x, double y, double z) {
    return std::min(gyroid(x, y, z), 0.25 * border_distance(x, y, z, n) - 0.3);
  });
  const Mesh m = isosurface(closed.view(), 0.0, kCpuNormals);
  expect_closed_and_oriented(m);
  expect_welded_and_valid(m);
  EXPECT_EQ(euler_characteristic(m) % 2, 0);
  expect_vertices_match(m, closed.view(), 0.0);

  // Left open at the border: an edge is unpaired only where both its ends lie on one face.
  const auto open = sample<float>(40, 40, 40, gyroid);
  const Mesh o = isosurface(open.view(), 0.1, {.backend = Backend::cpu});
  const auto edges = directed_edges(o);
  const auto on_one_face = [&](std::uint64_t a, std::uint64_t b) {
    for (int axis = 0; axis < 3; ++axis)
      for (float face : {0.0f, 39.0f})
        if (o.vertices[a][axis] == face && o.vertices[b][axis] == face) return true;
    return false;
  };
  int bad = 0, border = 0;
  for (const auto& [e, count] : edges) {
    const bool paired = edges.count({e.second, e.first}) == 1 && edges.at({e.second, e.first}) == 1;
    if (count != 1) ++bad;
    else if (!paired && on_one_face(e.first, e.second)) ++border;
    else if (!paired) ++bad;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(border, 100);
  expect_welded_and_valid(o);
}

TEST(Isosurface, TwoTouchingSpheresAreWatertight) {
  const double R = 8;
  const auto vol = sample<float>(42, 28, 28, [&](double x, double y, double z) {
    const double d1 = std::sqrt((x - 12.6) * (x - 12.6) + (y - 13.3) * (y - 13.3) + (z - 13.8) * (z - 13.8));
    const double d2 = std::sqrt((x - 28.6) * (x - 28.6) + (y - 13.3) * (y - 13.3) + (z - 13.8) * (z - 13.8));
    return std::max(R - d1, R - d2);
  });
  const Mesh m = isosurface(vol.view(), 0.0, kCpuNormals);
  expect_closed_and_oriented(m);
  expect_welded_and_valid(m);
  const auto chi = euler_characteristic(m);
  EXPECT_TRUE(chi == 2 || chi == 4) << chi;  // joined at the touching point or two spheres
  EXPECT_NEAR(enclosed_volume(m), 2 * 4.0 / 3 * kPi * R * R * R, 0.02 * 2 * 4.0 / 3 * kPi * R * R * R);
}

// ---- every case, ambiguous faces, levels on grid values ------------------------------------------

TEST(Isosurface, RandomNoiseReachesEveryCaseAndStaysWatertight) {
  std::mt19937 rng(15);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  const std::int64_t n = 26;
  Volume<float> vol(n, n, n);
  for (std::int64_t z = 0; z < n; ++z)
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x)
        vol(x, y, z) = border_distance(double(x), double(y), double(z), double(n)) < 1 ? 0.0f : uniform(rng);
  // The oracle's own classification of the cells: all 256 cases, so every ambiguous face.
  std::set<int> cases;
  for (std::int64_t z = 0; z + 1 < n; ++z)
    for (std::int64_t y = 0; y + 1 < n; ++y)
      for (std::int64_t x = 0; x + 1 < n; ++x) {
        int c = 0, bit = 0;
        for (auto [dx, dy, dz] :
             {std::array{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}})
          c |= (vol(x + dx, y + dy, z + dz) > 0.5f) << bit++;
        cases.insert(c);
      }
  ASSERT_EQ(cases.size(), 256u);
  const Mesh m = isosurface(vol.view(), 0.5, kCpuNormals);
  expect_closed_and_oriented(m);
  expect_welded_and_valid(m);
  EXPECT_EQ(euler_characteristic(m) % 2, 0);
  expect_vertices_match(m, vol.view(), 0.5);
}

TEST(Isosurface, LevelOnGridValuesKeepsEveryCrossingApart) {
  // Small integers, level 2: many voxels lie on the level, so crossings land on them. Each
  // crossed edge keeps its own vertex, one float inside the edge: closed, oriented, manifold.
  std::mt19937 rng(16);
  std::uniform_int_distribution<int> values(0, 4);
  const std::int64_t n = 24;
  Volume<std::uint8_t> vol(n, n, n);
  for (std::int64_t z = 0; z < n; ++z)
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x)
        vol(x, y, z) = border_distance(double(x), double(y), double(z), double(n)) < 1 ? 0 : std::uint8_t(values(rng));
  const Mesh m = isosurface(vol.view(), 2.0, kCpuNormals);
  ASSERT_GT(m.triangle_count(), 1000u);
  expect_closed_and_oriented(m);
  expect_welded_and_valid(m);
  expect_manifold(m, faces_of(vol.view()));
  expect_vertices_match(m, vol.view(), 2.0);
  EXPECT_EQ(euler_characteristic(m) % 2, 0);
  // The mesh of the level equals the mesh of a level a hair above it, but for the positions of
  // the crossings on the voxels equal to the level, which lie within a float's rounding of them.
  const Mesh above = isosurface(vol.view(), 2.0 + 1e-9, kCpuNormals);
  EXPECT_TRUE(above.triangles == m.triangles);
  ASSERT_EQ(above.vertex_count(), m.vertex_count());
  int far = 0, on_voxel = 0;
  for (std::size_t i = 0; i < m.vertices.size(); ++i)
    for (int k = 0; k < 3; ++k) {
      far += std::abs(m.vertices[i][k] - above.vertices[i][k]) > 1e-5f;
      on_voxel += m.vertices[i][k] != std::round(m.vertices[i][k]) &&
                  std::abs(m.vertices[i][k] - std::round(m.vertices[i][k])) < 1e-5f;
    }
  EXPECT_EQ(far, 0);
  EXPECT_GT(on_voxel, 100) << "crossings on voxels equal to the level";
}

TEST(Isosurface, MinimalIntegerLevelCaseIsManifold) {
  // The 2x2x2 block [[[2,1],[2,1]],[[1,2],[0,1]]] (z, y, x), padded by one voxel of 0 on every
  // side, float32, level 1.0: merging the crossings that land on the voxels equal to 1 into one
  // vertex each would put one edge in four triangles. Kept apart, the surface is closed.
  const int block[2][2][2] = {{{2, 1}, {2, 1}}, {{1, 2}, {0, 1}}};
  Volume<float> vol(4, 4, 4, 0.0f);
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x) vol(x + 1, y + 1, z + 1) = static_cast<float>(block[z][y][x]);
  const Mesh m = isosurface(vol.view(), 1.0, kCpuNormals);
  ASSERT_GT(m.triangle_count(), 0u);
  expect_closed_and_oriented(m);
  expect_welded_and_valid(m);
  expect_manifold(m, faces_of(vol.view()));
  expect_vertices_match(m, vol.view(), 1.0);
  // Above: the voxels of value 2, (1,1,1) and (1,2,1), 6-neighbours, and (2,1,2), which meets
  // (1,1,1) along a cell edge only: the face rule keeps above corners on a diagonal apart, so two
  // closed surfaces, each a sphere.
  EXPECT_EQ(euler_characteristic(m), 4);
}

TEST(Isosurface, CrossingsRoundingOntoAVoxelStayApart) {
  // One voxel a hair below the level among voxels above it (and then the mirror case): its six
  // crossings lie within 1e-12 of it, so in float they round onto it; each is moved one float
  // inside its own edge, giving six distinct vertices on a closed, oriented surface.
  for (bool inner_above : {false, true}) {
    SCOPED_TRACE(inner_above);
    Volume<double> vol(5, 5, 5);
    for (auto& v : vol.voxels()) v = inner_above ? 0.0 : 1.0;
    vol(2, 2, 2) = inner_above ? 0.5 + 1e-12 : 0.5 - 1e-12;
    const Mesh m = isosurface(vol.view(), 0.5, kCpuNormals);
    ASSERT_EQ(m.vertex_count(), 6u);
    expect_welded_and_valid(m);
    expect_closed_and_oriented(m);
    expect_vertices_match(m, vol.view(), 0.5);
    for (const auto& v : m.vertices) {
      int off_centre = 0;
      for (int k = 0; k < 3; ++k) {
        EXPECT_NEAR(v[k], 2.0f, 1e-6f);
        off_centre += v[k] != 2.0f;
      }
      EXPECT_EQ(off_centre, 1) << "a crossing moves along its own edge only";
    }
  }
}

TEST(Isosurface, SphereWithLevelOnGridValuesIsClosed) {
  // Integer squared distances, level on one of them: a sphere whose surface passes through voxels.
  const auto vol = sample<std::int16_t>(30, 30, 30, [](double x, double y, double z) {
    return 100 - ((x - 15) * (x - 15) + (y - 14) * (y - 14) + (z - 15) * (z - 15));
  });
  const Mesh m = isosurface(vol.view(), 19.0, kCpuNormals);  // 100 - 81: radius 9 hits grid points
  expect_closed_and_oriented(m);
  expect_welded_and_valid(m);
  EXPECT_EQ(euler_characteristic(m), 2);
  expect_vertices_match(m, vol.view(), 19.0);
  expect_outward(m, {15, 14, 15});
}

// ---- slabs, shapes, special values -------------------------------------------------------------

TEST(Isosurface, SlabbedIsOnePassBitForBit) {
  const double k = 2 * kPi / 11;
  const auto vol = sample<float>(37, 29, 31, [&](double x, double y, double z) {
    return std::sin(k * x) * std::cos(k * y) + std::sin(k * y) * std::cos(k * z) + std::sin(k * z) * std::cos(k * x);
  });
  const Mesh whole = isosurface(vol.view(), 0.2, kCpuNormals);
  ASSERT_GT(whole.triangle_count(), 1000u);
  for (std::int64_t slab :
       std::vector<std::int64_t>{1, 37 * 29 - 1, 37 * 29, 2 * 37 * 29 + 5, 7 * 37 * 29, 30 * 37 * 29}) {
    IsosurfaceOptions o = kCpuNormals;
    o.max_slab_voxels = slab;
    SCOPED_TRACE(slab);
    expect_same_mesh(isosurface(vol.view(), 0.2, o), whole);
  }
}

TEST(Isosurface, RowsAcrossWordBoundariesAndLayerRuns) {
  // The CPU backend classifies 64 voxels to a word and, for rows that follow each other in
  // memory, a whole layer in one run cut into rows; widths around and beyond 64 put cells, edges
  // and row ends on every side of a word boundary. The strided copy takes the row-by-row path.
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (std::int64_t nx : {63, 64, 65, 127, 130, 200}) {
    SCOPED_TRACE(nx);
    const std::int64_t ny = 7, nz = 6;
    Volume<float> vol(nx, ny, nz);
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < ny; ++y)
        for (std::int64_t x = 0; x < nx; ++x) {
          const bool border = x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1;
          vol(x, y, z) = border ? 0.0f : (rng() % 5 == 0 ? 0.5f : uniform(rng));  // some voxels on the level
        }
    const Mesh m = isosurface(vol.view(), 0.5, kCpuNormals);
    ASSERT_GT(m.triangle_count(), 100u);
    expect_closed_and_oriented(m);
    expect_welded_and_valid(m);
    expect_manifold(m, faces_of(vol.view()));
    expect_vertices_match(m, vol.view(), 0.5);
    const std::int64_t row = nx + 3, slice = row * ny + 5;
    std::vector<float> padded(static_cast<std::size_t>(slice * nz), 0.5f);
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < ny; ++y)
        for (std::int64_t x = 0; x < nx; ++x) padded[z * slice + y * row + x] = vol(x, y, z);
    expect_same_mesh(isosurface(VolumeView<const float>(padded.data(), nx, ny, nz, row, slice), 0.5, kCpuNormals), m);
    IsosurfaceOptions slabbed = kCpuNormals;
    slabbed.max_slab_voxels = nx * ny;
    expect_same_mesh(isosurface(vol.view(), 0.5, slabbed), m);
  }
}

TEST(Isosurface, LevelsBetweenAndBeyondTheVoxelTypeCompareAsDoubles) {
  // Voxels are compared with the level as doubles; the CPU backend compares in the voxel's own
  // type, so levels that are not values of the type (between two floats, fractional or out of
  // range for integers) must give what the double comparison gives: the mesh of the same values
  // held as doubles, and the vertices of this file's interpolation.
  std::mt19937 rng(20);
  const float tenth = 0.1f;  // 0.100000001490116..., just above the double 0.1
  const float near[] = {tenth, std::nextafter(tenth, 0.0f), std::nextafter(tenth, 1.0f), 0.0f, 0.3f};
  Volume<float> f(70, 9, 8);
  for (float& v : f.voxels()) v = near[rng() % 5];
  Volume<double> f_as_double(70, 9, 8);
  for (std::size_t i = 0; i < f.voxels().size(); ++i) f_as_double.voxels()[i] = f.voxels()[i];
  for (double level :
       {0.1, static_cast<double>(tenth), static_cast<double>(std::nextafter(tenth, 0.0f)), 0.0, -1e300, 1e300}) {
    SCOPED_TRACE(level);
    const Mesh m = isosurface(f.view(), level, kCpuNormals);
    expect_same_mesh(m, isosurface(f_as_double.view(), level, kCpuNormals));
    expect_vertices_match(m, f.view(), level);
  }
  EXPECT_GT(isosurface(f.view(), 0.1, kCpuNormals).triangle_count(), 100u);

  Volume<std::uint8_t> u8(66, 8, 9);
  Volume<std::uint16_t> u16(66, 8, 9);
  Volume<std::int16_t> i16(66, 8, 9);
  Volume<double> as_double(66, 8, 9);
  for (std::size_t i = 0; i < u8.voxels().size(); ++i) {
    const int v = static_cast<int>(rng() % 4);
    u8.voxels()[i] = static_cast<std::uint8_t>(v == 3 ? 255 : v);  // 0, 1, 2 and the type's largest
    u16.voxels()[i] = static_cast<std::uint16_t>(v == 3 ? 65535 : v);
    i16.voxels()[i] = static_cast<std::int16_t>(v == 3 ? -32768 : v);
  }
  for (double level : {-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 254.5, 255.0, 300.0, 65534.5, 65535.0, 70000.0, -32768.0,
                       -32767.5, 1e300, -1e300}) {
    SCOPED_TRACE(level);
    for (std::size_t i = 0; i < u8.voxels().size(); ++i) as_double.voxels()[i] = u8.voxels()[i];
    expect_same_mesh(isosurface(u8.view(), level, kCpuNormals), isosurface(as_double.view(), level, kCpuNormals));
    expect_vertices_match(isosurface(u8.view(), level, kCpuNormals), u8.view(), level);
    for (std::size_t i = 0; i < u16.voxels().size(); ++i) as_double.voxels()[i] = u16.voxels()[i];
    expect_same_mesh(isosurface(u16.view(), level, kCpuNormals), isosurface(as_double.view(), level, kCpuNormals));
    expect_vertices_match(isosurface(u16.view(), level, kCpuNormals), u16.view(), level);
    for (std::size_t i = 0; i < i16.voxels().size(); ++i) as_double.voxels()[i] = i16.voxels()[i];
    expect_same_mesh(isosurface(i16.view(), level, kCpuNormals), isosurface(as_double.view(), level, kCpuNormals));
    expect_vertices_match(isosurface(i16.view(), level, kCpuNormals), i16.view(), level);
  }
}

TEST(Isosurface, OneCellHasOneTriangle) {
  Volume<float> vol(2, 2, 2, 0.0f);
  vol(0, 0, 0) = 1;
  const Mesh m = isosurface(vol.view(), 0.25, kCpuNormals);
  ASSERT_EQ(m.vertex_count(), 3u);
  ASSERT_EQ(m.triangle_count(), 1u);
  // Owner (0,0,0): +x, +y, +z edges, each 0.25 from the non-above end (the far corner).
  EXPECT_EQ(m.vertices[0], (std::array<float, 3>{0.75f, 0, 0}));
  EXPECT_EQ(m.vertices[1], (std::array<float, 3>{0, 0.75f, 0}));
  EXPECT_EQ(m.vertices[2], (std::array<float, 3>{0, 0, 0.75f}));
  EXPECT_EQ(m.triangles[0], (std::array<std::uint32_t, 3>{0, 1, 2}));  // normal (1,1,1): away from the above corner
  for (const auto& n : m.normals) EXPECT_TRUE(n[0] > 0 && n[1] > 0 && n[2] > 0 && n[0] + n[1] + n[2] > 1.3f);
  IsosurfaceOptions flip = kCpuNormals;
  flip.flip = true;
  const Mesh f = isosurface(vol.view(), 0.25, flip);
  EXPECT_EQ(f.triangles[0], (std::array<std::uint32_t, 3>{0, 2, 1}));
  for (std::size_t i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(f.normals[i][k], -m.normals[i][k]);
}

TEST(Isosurface, ThinEmptyAndUniformVolumes) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  Volume<float> slab(9, 7, 2);
  for (float& v : slab.voxels()) v = uniform(rng);
  const Mesh m = isosurface(slab.view(), 0.5, {.backend = Backend::cpu});
  EXPECT_GT(m.triangle_count(), 0u);
  expect_welded_and_valid(m);
  expect_vertices_match(m, slab.view(), 0.5);
  for (const auto& [e, count] : directed_edges(m)) EXPECT_EQ(count, 1);
  for (auto [nx, ny, nz] : {std::array<std::int64_t, 3>{9, 7, 1}, {1, 7, 9}, {9, 1, 7}}) {
    Volume<float> flat(nx, ny, nz);
    for (float& v : flat.voxels()) v = uniform(rng);
    const Mesh e = isosurface(flat.view(), 0.5, {.backend = Backend::cpu});
    EXPECT_EQ(e.vertex_count(), 0u);  // no cells
    EXPECT_EQ(e.triangle_count(), 0u);
  }
  Volume<std::uint16_t> uniform_volume(5, 6, 7, 300);
  for (double level : {299.5, 300.0, 300.5}) {
    const Mesh u = isosurface(uniform_volume.view(), level, {.backend = Backend::cpu});
    EXPECT_EQ(u.vertex_count(), 0u) << level;
    EXPECT_EQ(u.triangle_count(), 0u) << level;
  }
}

TEST(Isosurface, NanVoxelsAreNotAboveAndCrossAtTheMidpoint) {
  Volume<float> cell(2, 2, 2, 0.0f);
  cell(0, 0, 0) = 1;
  cell(1, 0, 0) = std::numeric_limits<float>::quiet_NaN();
  cell(0, 1, 0) = 0.25f;
  const Mesh m = isosurface(cell.view(), 0.5, kCpuNormals);
  ASSERT_EQ(m.vertex_count(), 3u);
  EXPECT_EQ(m.vertices[0], (std::array<float, 3>{0.5f, 0, 0}));  // the NaN end: midpoint
  EXPECT_FLOAT_EQ(m.vertices[1][1], 1.0f - 1.0f / 3);            // t = (0.5 - 0.25) / (1 - 0.25) from y = 1
  EXPECT_EQ(m.vertices[2], (std::array<float, 3>{0, 0, 0.5f}));
  EXPECT_EQ(m.values[0], 0.5f);

  // Isolated NaN voxels inside a sphere: each is a small closed bubble, oriented into it.
  const double R = 11, c = 15.4;
  auto vol = sample<float>(32, 32, 32, [&](double x, double y, double z) {
    return R - std::sqrt((x - c) * (x - c) + (y - c) * (y - c) + (z - c) * (z - c));
  });
  vol(15, 15, 15) = vol(11, 17, 14) = std::numeric_limits<float>::quiet_NaN();
  const Mesh s = isosurface(vol.view(), 0.0, kCpuNormals);
  expect_closed_and_oriented(s);
  expect_welded_and_valid(s);
  EXPECT_EQ(euler_characteristic(s), 2 + 2 + 2);
  expect_vertices_match(s, vol.view(), 0.0);
}

TEST(Isosurface, StridedViewsGiveTheSameMesh) {
  const auto vol = sample<std::uint16_t>(21, 17, 19, [](double x, double y, double z) {
    return 1000 + 400 * std::sin(x * 0.5) * std::cos(y * 0.4) + 300 * std::sin(z * 0.3 + x * 0.1);
  });
  const Mesh dense = isosurface(vol.view(), 1100.5, kCpuNormals);
  ASSERT_GT(dense.triangle_count(), 100u);
  const std::int64_t row = 21 + 5, slice = row * 17 + 11;
  std::vector<std::uint16_t> padded(static_cast<std::size_t>(slice * 19), 7);
  for (std::int64_t z = 0; z < 19; ++z)
    for (std::int64_t y = 0; y < 17; ++y)
      for (std::int64_t x = 0; x < 21; ++x) padded[z * slice + y * row + x] = vol(x, y, z);
  const VolumeView<const std::uint16_t> view(padded.data(), 21, 17, 19, row, slice);
  expect_same_mesh(isosurface(view, 1100.5, kCpuNormals), dense);
}

TEST(Isosurface, SpacingScalesPositionsAndKeepsNormalsOutward) {
  const double sx = 0.8, sy = 1.1, sz = 1.3, R = 12, c[3] = {16.3, 17.2, 18.1};
  auto vol = sample<float>(42, 32, 29, [&](double x, double y, double z) {
    const double p[3] = {x * sx - c[0], y * sy - c[1], z * sz - c[2]};
    return R - std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
  });
  vol.set_spacing(sx, sy, sz);
  const Mesh m = isosurface(vol.view(), 0.0, kCpuNormals);
  expect_closed_and_oriented(m);
  expect_welded_and_valid(m);
  expect_vertices_match(m, vol.view(), 0.0);
  EXPECT_NEAR(area(m), 4 * kPi * R * R, 0.01 * 4 * kPi * R * R);
  EXPECT_NEAR(enclosed_volume(m), 4.0 / 3 * kPi * R * R * R, 0.01 * 4.0 / 3 * kPi * R * R * R);
  expect_outward(m, {c[0], c[1], c[2]});
}

TEST(Isosurface, EveryVoxelTypeGivesTheSameMeshForTheSameValues) {
  const auto field = [](double x, double y, double z) {
    return std::round(
        100 + 9 * (9.5 - std::sqrt((x - 12.2) * (x - 12.2) + (y - 11.7) * (y - 11.7) + (z - 10.9) * (z - 10.9))));
  };
  for (double level : {100.0, 100.5}) {
    SCOPED_TRACE(level);
    const Mesh reference = isosurface(sample<double>(25, 24, 23, field).view(), level, kCpuNormals);
    ASSERT_GT(reference.triangle_count(), 500u);
    expect_closed_and_oriented(reference);
    expect_same_mesh(isosurface(sample<float>(25, 24, 23, field).view(), level, kCpuNormals), reference);
    expect_same_mesh(isosurface(sample<std::uint8_t>(25, 24, 23, field).view(), level, kCpuNormals), reference);
    expect_same_mesh(isosurface(sample<std::uint16_t>(25, 24, 23, field).view(), level, kCpuNormals), reference);
    expect_same_mesh(isosurface(sample<std::int16_t>(25, 24, 23, field).view(), level, kCpuNormals), reference);
  }
}

TEST(Isosurface, BadInputIsAnError) {
  Volume<float> vol(4, 4, 4, 1.0f);
  EXPECT_THROW(isosurface(vol.view(), std::nan(""), {.backend = Backend::cpu}), InputError);
  EXPECT_THROW(isosurface(Volume<float>().view(), 0.0, {.backend = Backend::cpu}), InputError);
  auto zero_spacing = vol.view();
  zero_spacing.sy = 0;
  EXPECT_THROW(isosurface(zero_spacing, 0.0, {.backend = Backend::cpu}), InputError);
  const VolumeView<const float> short_rows(vol.data(), 4, 4, 4, 3, 16);
  EXPECT_THROW(isosurface(short_rows, 0.0, {.backend = Backend::cpu}), InputError);
  if (!cuda_available()) EXPECT_THROW(isosurface(vol.view(), 0.0, {.backend = Backend::cuda}), BackendError);
}

// ---- pieces of a volume --------------------------------------------------------------------------

// The owner (x, y, z in the whole volume) and slot of a vertex from its key in a view of nx x ny
// voxels at `origin`.
std::array<std::int64_t, 4> owner_of(std::uint64_t key, std::int64_t nx, std::int64_t ny,
                                     const std::array<std::int64_t, 3>& origin) {
  const auto voxel = static_cast<std::int64_t>(key / 3);
  return {voxel % nx + origin[0], voxel / nx % ny + origin[1], voxel / (nx * ny) + origin[2],
          static_cast<std::int64_t>(key % 3)};
}

TEST(IsosurfacePieces, KeysNameEachVertexsEdge) {
  std::mt19937 rng(41);
  std::uniform_int_distribution<int> values(0, 3);
  Volume<std::uint8_t> vol(9, 7, 6);
  for (auto& v : vol.voxels()) v = static_cast<std::uint8_t>(values(rng));
  IsosurfaceOptions o = kCpuNormals;
  o.vertex_keys = true;
  const Mesh m = isosurface(vol.view(), 1.0, o);
  ASSERT_EQ(m.vertex_keys.size(), m.vertex_count());
  ASSERT_GT(m.vertex_count(), 50u);
  EXPECT_TRUE(std::is_sorted(m.vertex_keys.begin(), m.vertex_keys.end()));
  for (std::size_t i = 0; i < m.vertex_count(); ++i) {
    const auto [x, y, z, slot] = owner_of(m.vertex_keys[i], 9, 7, {0, 0, 0});
    std::int64_t q[3] = {x, y, z};
    ++q[slot];
    ASSERT_TRUE(q[0] < 9 && q[1] < 7 && q[2] < 6);
    EXPECT_NE(vol(x, y, z) > 1, vol(q[0], q[1], q[2]) > 1) << "the key's edge is crossed";
    for (int axis = 0; axis < 3; ++axis)  // the vertex lies on that edge
      if (axis == slot) EXPECT_TRUE(m.vertices[i][axis] > float(q[axis] - 1) && m.vertices[i][axis] < float(q[axis]));
      else EXPECT_EQ(m.vertices[i][axis], float(axis == 0 ? x : axis == 1 ? y : z));
  }
}

// Meshing a piece of a volume in a view with two voxels of context on every side (clipped at the
// volume's border) and the piece's origin gives the whole mesh's vertices owned by the piece's
// voxels, bit for bit (positions, normals, values), and the whole mesh's triangles of the
// piece's cells (a cell's origin is the least owner of its vertices along each axis).
template <class T>
void expect_pieces_match_the_whole(const Volume<T>& vol, double level, const IsosurfaceOptions& base) {
  IsosurfaceOptions o = base;
  o.vertex_keys = true;
  const Mesh whole = isosurface(vol.view(), level, o);
  ASSERT_GT(whole.triangle_count(), 100u);
  const std::int64_t n[3] = {vol.nx(), vol.ny(), vol.nz()};
  const auto cell_of = [](const std::array<std::array<std::int64_t, 4>, 3>& owners) {
    std::array<std::int64_t, 3> c{};
    for (int axis = 0; axis < 3; ++axis) c[axis] = std::min({owners[0][axis], owners[1][axis], owners[2][axis]});
    return c;
  };
  const std::int64_t step[3] = {11, 9, 7};
  for (std::int64_t z0 = 0; z0 < n[2]; z0 += step[2])
    for (std::int64_t y0 = 0; y0 < n[1]; y0 += step[1])
      for (std::int64_t x0 = 0; x0 < n[0]; x0 += step[0]) {
        const std::int64_t lo[3] = {x0, y0, z0};
        std::int64_t hi[3], begin[3], end[3];
        for (int a = 0; a < 3; ++a) {
          hi[a] = std::min(n[a], lo[a] + step[a]);
          begin[a] = std::max<std::int64_t>(0, lo[a] - 2), end[a] = std::min(n[a], hi[a] + 2);
        }
        const auto inside = [&](const std::array<std::int64_t, 4>& p) {
          return p[0] >= lo[0] && p[0] < hi[0] && p[1] >= lo[1] && p[1] < hi[1] && p[2] >= lo[2] && p[2] < hi[2];
        };
        VolumeView<const T> view = vol.view();
        view.data = &vol(begin[0], begin[1], begin[2]);
        view.nx = end[0] - begin[0], view.ny = end[1] - begin[1], view.nz = end[2] - begin[2];
        IsosurfaceOptions po = o;
        po.origin = {begin[0], begin[1], begin[2]};
        const Mesh piece = isosurface(view, level, po);
        // Vertices owned by the piece, in order, from both meshes.
        std::vector<std::size_t> mine, theirs;
        for (std::size_t i = 0; i < piece.vertex_count(); ++i)
          if (inside(owner_of(piece.vertex_keys[i], view.nx, view.ny, po.origin))) mine.push_back(i);
        for (std::size_t i = 0; i < whole.vertex_count(); ++i)
          if (inside(owner_of(whole.vertex_keys[i], n[0], n[1], {0, 0, 0}))) theirs.push_back(i);
        ASSERT_EQ(mine.size(), theirs.size());
        for (std::size_t k = 0; k < mine.size(); ++k) {
          const std::size_t i = mine[k], j = theirs[k];
          EXPECT_EQ(owner_of(piece.vertex_keys[i], view.nx, view.ny, po.origin),
                    owner_of(whole.vertex_keys[j], n[0], n[1], {0, 0, 0}));
          EXPECT_EQ(piece.vertices[i], whole.vertices[j]);
          if (!whole.normals.empty()) EXPECT_EQ(piece.normals[i], whole.normals[j]);
          if (!whole.values.empty()) EXPECT_EQ(0, std::memcmp(&piece.values[i], &whole.values[j], sizeof(float)));
        }
        // Triangles of the piece's cells, as owner triples, in order.
        using Owners = std::array<std::array<std::int64_t, 4>, 3>;
        std::vector<Owners> piece_triangles, whole_triangles;
        for (std::uint64_t t = 0; t < piece.triangle_count(); ++t) {
          const auto v = piece.triangle(t);
          Owners owners;
          for (int j = 0; j < 3; ++j) owners[j] = owner_of(piece.vertex_keys[v[j]], view.nx, view.ny, po.origin);
          const auto c = cell_of(owners);
          if (inside({c[0], c[1], c[2], 0})) piece_triangles.push_back(owners);
        }
        for (std::uint64_t t = 0; t < whole.triangle_count(); ++t) {
          const auto v = whole.triangle(t);
          Owners owners;
          for (int j = 0; j < 3; ++j) owners[j] = owner_of(whole.vertex_keys[v[j]], n[0], n[1], {0, 0, 0});
          const auto c = cell_of(owners);
          if (inside({c[0], c[1], c[2], 0})) whole_triangles.push_back(owners);
        }
        EXPECT_TRUE(piece_triangles == whole_triangles) << "piece at " << x0 << "," << y0 << "," << z0;
        if (::testing::Test::HasFailure()) return;
      }
}

TEST(IsosurfacePieces, PiecesWithContextMatchTheWholeMeshBitForBit) {
  const double k = 2 * kPi / 13;
  auto gyroid = sample<float>(31, 26, 23, [&](double x, double y, double z) {
    return std::sin(k * x) * std::cos(k * y) + std::sin(k * y) * std::cos(k * z) + std::sin(k * z) * std::cos(k * x);
  });
  gyroid.set_spacing(0.7, 1.1, 1.3);
  expect_pieces_match_the_whole(gyroid, 0.1, kCpuNormals);
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> values(0, 4);
  Volume<std::uint8_t> noise(29, 24, 21);
  for (auto& v : noise.voxels()) v = static_cast<std::uint8_t>(values(rng));
  expect_pieces_match_the_whole(noise, 2.0, kCpuNormals);  // a level equal to voxel values
}

// ---- levels equal to voxel values --------------------------------------------------------------

// Small random volumes of integers in type T (shapes 1..8 per side, a few distinct values so that
// many voxels share one, the type's extremes among them), each with every level equal to one of
// its values: check(volume, level) for each. `padded`: one voxel of 0 around (closed surfaces).
template <class T, class Check>
void for_random_integer_volumes(std::uint64_t seed, int count, bool padded, Check&& check) {
  std::vector<double> pool;
  if constexpr (std::is_same_v<T, std::uint8_t>) pool = {0, 1, 2, 3, 80, 128, 255};
  else if constexpr (std::is_same_v<T, std::uint16_t>) pool = {0, 1, 2, 3, 1000, 65535};
  else if constexpr (std::is_same_v<T, std::int16_t>) pool = {-32768, -2, -1, 0, 1, 2, 32767};
  else pool = {-2, -1, 0, 1, 2, 3, 16777216};
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    const int pad = padded ? 1 : 0;
    const std::int64_t nx = 1 + static_cast<std::int64_t>(rng() % 8), ny = 1 + static_cast<std::int64_t>(rng() % 8),
                       nz = 1 + static_cast<std::int64_t>(rng() % 8);
    std::vector<double> values(pool);  // 2 to 4 of the pool's values for this volume
    std::shuffle(values.begin(), values.end(), rng);
    values.resize(2 + rng() % 3);
    Volume<T> v(nx + 2 * pad, ny + 2 * pad, nz + 2 * pad, T{0});
    std::set<double> levels;
    if (padded) levels.insert(0.0);
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t y = 0; y < ny; ++y)
        for (std::int64_t x = 0; x < nx; ++x) {
          const double value = values[rng() % values.size()];
          v(x + pad, y + pad, z + pad) = static_cast<T>(value);
          levels.insert(value);
        }
    for (double level : levels) {
      check(v, level, i);
      if (::testing::Test::HasFailure()) return;  // the first failing volume is enough to read
    }
  }
}

template <class T>
void expect_integer_levels_manifold(std::uint64_t seed, bool padded) {
  int meshes = 0;
  std::uint64_t triangles = 0;
  for_random_integer_volumes<T>(seed, 300, padded, [&](const Volume<T>& v, double level, int i) {
    SCOPED_TRACE("volume " + std::to_string(i) + " " + std::to_string(v.nx()) + "x" + std::to_string(v.ny()) + "x" +
                 std::to_string(v.nz()) + ", level " + std::to_string(level));
    const Mesh m = isosurface(v.view(), level, kCpuNormals);
    expect_welded_and_valid(m);
    expect_manifold(m, faces_of(v.view()));
    expect_vertices_match(m, v.view(), level);
    if (padded) {
      expect_closed_and_oriented(m);
      EXPECT_EQ(euler_characteristic(m) % 2, 0);
    }
    ++meshes, triangles += m.triangle_count();
  });
  EXPECT_GT(meshes, 600);
  EXPECT_GT(triangles, 10000u);
}

TEST(IsosurfaceIntegerLevels, U8) {
  expect_integer_levels_manifold<std::uint8_t>(21, false);
  expect_integer_levels_manifold<std::uint8_t>(22, true);
}
TEST(IsosurfaceIntegerLevels, U16) {
  expect_integer_levels_manifold<std::uint16_t>(23, false);
  expect_integer_levels_manifold<std::uint16_t>(24, true);
}
TEST(IsosurfaceIntegerLevels, I16) {
  expect_integer_levels_manifold<std::int16_t>(25, false);
  expect_integer_levels_manifold<std::int16_t>(26, true);
}
TEST(IsosurfaceIntegerLevels, F32HoldingIntegers) {
  expect_integer_levels_manifold<float>(27, false);
  expect_integer_levels_manifold<float>(28, true);
}

std::string volume_path(const char* file) { return std::string(WINNOW_DATA_DIR) + "/volumes/" + file; }

TEST(IsosurfaceIntegerLevels, BundledMriAtIntegerLevels) {
  // The MNI152 grey-matter map (u8) at levels equal to its values, as CT and MRI users call
  // marching cubes: closed where the map is zero at the border, and a 2-manifold throughout.
  const auto any = io::read_volume(volume_path("mni152_gm.nii.gz"));
  const auto& vol = std::get<Volume<std::uint8_t>>(any);
  for (double level : {50.0, 100.0, 127.0, 128.0}) {
    SCOPED_TRACE(level);
    const Mesh m = isosurface(vol.view(), level, {.backend = Backend::cpu});
    ASSERT_GT(m.triangle_count(), 100000u);
    expect_welded_and_valid(m);
    expect_manifold(m, faces_of(vol.view()));
    expect_closed_and_oriented(m);
  }
  // The motor activation map (f32) at an integer level.
  const auto motor = io::read_volume(volume_path("motor_activation.nii.gz"));
  const auto& f = std::get<Volume<float>>(motor);
  const Mesh m = isosurface(f.view(), 2.0, {.backend = Backend::cpu});
  ASSERT_GT(m.triangle_count(), 100u);
  expect_welded_and_valid(m);
  expect_manifold(m, faces_of(f.view()));
}

// ---- backends ----------------------------------------------------------------------------------

TEST(IsosurfaceBackends, CudaMeshIsTheCpuMeshBitForBit) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  std::mt19937 rng(18);
  std::uniform_int_distribution<int> values(0, 255);
  Volume<std::uint8_t> noise(33, 30, 29);
  for (auto& v : noise.voxels()) v = static_cast<std::uint8_t>(values(rng));
  const double k = 2 * kPi / 17;
  auto gyroid = sample<float>(70, 66, 61, [&](double x, double y, double z) {
    return std::sin(k * x) * std::cos(k * y) + std::sin(k * y) * std::cos(k * z) + std::sin(k * z) * std::cos(k * x);
  });
  gyroid(5, 5, 5) = std::numeric_limits<float>::quiet_NaN();
  gyroid(20, 20, 20) = 0.1f - 1e-7f;  // crossings that round onto their voxel
  gyroid(40, 30, 20) = 0.1f + 1e-7f;
  gyroid.set_spacing(0.7, 1.0, 1.3);
  for (bool flip : {false, true}) {
    SCOPED_TRACE(flip);
    IsosurfaceOptions cpu{.normals = true, .values = true, .flip = flip, .backend = Backend::cpu};
    IsosurfaceOptions gpu = cpu;
    gpu.backend = Backend::cuda;
    const Mesh a = isosurface(noise.view(), 128.0, gpu);
    EXPECT_EQ(a.backend, Backend::cuda);
    expect_same_mesh(a, isosurface(noise.view(), 128.0, cpu));
    expect_same_mesh(isosurface(gyroid.view(), 0.1, gpu), isosurface(gyroid.view(), 0.1, cpu));
    gpu.max_slab_voxels = 70 * 66 * 4;
    expect_same_mesh(isosurface(gyroid.view(), 0.1, gpu), isosurface(gyroid.view(), 0.1, cpu));
  }
  // Keys and an origin, whole and slabbed.
  IsosurfaceOptions cpu{.normals = true, .values = true, .backend = Backend::cpu};
  cpu.vertex_keys = true;
  cpu.origin = {5, -3, 1000};
  IsosurfaceOptions gpu = cpu;
  gpu.backend = Backend::cuda;
  const Mesh a = isosurface(gyroid.view(), 0.1, cpu);
  const Mesh b = isosurface(gyroid.view(), 0.1, gpu);
  expect_same_mesh(b, a);
  EXPECT_TRUE(b.vertex_keys == a.vertex_keys);
  gpu.max_slab_voxels = 70 * 66 * 5;
  EXPECT_TRUE(isosurface(gyroid.view(), 0.1, gpu).vertex_keys == a.vertex_keys);
}

template <class T>
void expect_integer_levels_same_on_cuda(std::uint64_t seed, bool padded) {
  int meshes = 0;
  for_random_integer_volumes<T>(seed, 300, padded, [&](const Volume<T>& v, double level, int i) {
    SCOPED_TRACE("volume " + std::to_string(i) + ", level " + std::to_string(level));
    IsosurfaceOptions gpu = kCpuNormals;
    gpu.backend = Backend::cuda;
    expect_same_mesh(isosurface(v.view(), level, gpu), isosurface(v.view(), level, kCpuNormals));
    ++meshes;
  });
  EXPECT_GT(meshes, 600);
}

TEST(IsosurfaceBackends, IntegerLevelsOnRandomIntegerVolumesCudaIsCpu) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  for (bool padded : {false, true}) {
    expect_integer_levels_same_on_cuda<std::uint8_t>(31 + padded, padded);
    expect_integer_levels_same_on_cuda<std::uint16_t>(33 + padded, padded);
    expect_integer_levels_same_on_cuda<std::int16_t>(35 + padded, padded);
    expect_integer_levels_same_on_cuda<float>(37 + padded, padded);
  }
  // The bundled MRI at an integer level.
  const auto any = io::read_volume(volume_path("mni152_gm.nii.gz"));
  const auto& vol = std::get<Volume<std::uint8_t>>(any);
  IsosurfaceOptions gpu = kCpuNormals;
  gpu.backend = Backend::cuda;
  expect_same_mesh(isosurface(vol.view(), 128.0, gpu), isosurface(vol.view(), 128.0, kCpuNormals));
}

}  // namespace
