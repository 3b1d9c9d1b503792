// A preview picture of a triangle mesh: a small software rasteriser, so a user can look at an
// isosurface without a 3D viewer.
//
// The algorithm (the textbook one: Foley, van Dam et al., "Computer Graphics: Principles and
// Practice", z-buffer and Gouraud/Phong chapters; Pineda, "A Parallel Algorithm for Polygon
// Rasterization", SIGGRAPH 1988, for the edge functions):
// 1. Camera: an orthographic projection along `view_from`. The picture's right and up axes are
//    built from the world's +z (or +y when looking along z). The projection is scaled and centred
//    so the bounding rectangle of the projected vertices fills the picture less a 4 % margin:
//    any mesh, any units, is framed the same way.
// 2. Vertex normals: each triangle adds its cross product (b - a) x (c - a), whose length is
//    twice its area, to its three corners; the sums, normalised per pixel, shade the surface
//    smoothly whatever the mesh carries (Mesh::normals are not needed).
// 3. Rasterisation at `samples_per_axis` times the size: for each triangle, every sample centre
//    in its screen bounding box gets the three edge functions divided by the triangle's signed
//    area (its barycentric weights, positive inside whatever the winding); inside, the
//    interpolated depth is compared with the z-buffer and the nearer sample wins. The result
//    does not depend on the order of the triangles (ties aside).
// 4. Shading: Lambert with the light at the viewer plus ambient light,
//    colour * (ambient + (1 - ambient) * |n . l|); the absolute value makes it two-sided, so
//    open surfaces and inward-facing triangles are lit as well.
// 5. Each output pixel is the mean of its samples (box filter), which smooths the edges.
// Complexity: O(vertices + triangles + covered samples) time, O(vertices + samples) memory;
// single-threaded, which suffices for previews (about 1 s for a few million triangles).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "io/mesh_detail.hpp"
#include "winnow/error.hpp"
#include "winnow/mesh_io.hpp"

namespace winnow::io {
namespace {

struct Vec3 {
  double x = 0, y = 0, z = 0;
};
Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
Vec3 operator*(double s, Vec3 a) { return {s * a.x, s * a.y, s * a.z}; }
double dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
Vec3 cross(Vec3 a, Vec3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
double length(Vec3 a) { return std::sqrt(dot(a, a)); }
Vec3 unit(Vec3 a) {
  const double l = length(a);
  return l > 0 ? (1.0 / l) * a : Vec3{};
}
Vec3 vec(const std::array<float, 3>& p) { return {p[0], p[1], p[2]}; }

// The orthographic camera: `toward_viewer` is the depth axis (larger is nearer).
struct Camera {
  Vec3 right, up, toward_viewer;
};

Camera camera_looking_from(const std::array<double, 3>& view_from) {
  Camera c;
  c.toward_viewer = unit({view_from[0], view_from[1], view_from[2]});
  if (length(c.toward_viewer) == 0) throw InputError("preview: the view direction is zero");
  const Vec3 forward = -1.0 * c.toward_viewer;
  // +z is up unless the view runs (nearly) along z, where +y takes its place.
  const Vec3 world_up = std::abs(c.toward_viewer.z) > 0.99 ? Vec3{0, 1, 0} : Vec3{0, 0, 1};
  c.right = unit(cross(forward, world_up));
  c.up = cross(c.right, forward);
  return c;
}

}  // namespace

Image<Rgba8> render_mesh_preview(const Mesh& mesh, std::int64_t width, std::int64_t height,
                                 const MeshPreviewOptions& options) {
  constexpr std::int64_t kMaxSide = 16384;
  if (width < 1 || height < 1 || width > kMaxSide || height > kMaxSide)
    throw InputError("preview: size " + std::to_string(width) + "x" + std::to_string(height) +
                     " is not within 1..16384 on each side");
  if (options.samples_per_axis < 1 || options.samples_per_axis > 8)
    throw InputError("preview: samples_per_axis " + std::to_string(options.samples_per_axis) + " is not in 1..8");
  if (!(options.ambient >= 0 && options.ambient <= 1))
    throw InputError("preview: ambient " + std::to_string(options.ambient) + " is not in 0..1");
  detail::check_mesh(mesh, "preview");
  Image<Rgba8> picture(width, height, options.background);
  const std::uint64_t triangle_count = mesh.triangle_count();
  if (triangle_count == 0) return picture;

  const Camera camera = camera_looking_from(options.view_from);
  const int k = options.samples_per_axis;
  const std::int64_t sw = width * k, sh = height * k;  // the supersampled raster

  // Fit: the bounding rectangle of the projected vertices fills the raster less the margin.
  double u_lo = std::numeric_limits<double>::infinity(), u_hi = -u_lo, v_lo = u_lo, v_hi = -u_lo;
  for (const auto& vertex : mesh.vertices) {
    const Vec3 p = vec(vertex);
    u_lo = std::min(u_lo, dot(p, camera.right)), u_hi = std::max(u_hi, dot(p, camera.right));
    v_lo = std::min(v_lo, dot(p, camera.up)), v_hi = std::max(v_hi, dot(p, camera.up));
  }
  constexpr double kMargin = 0.04;
  const double usable = 1.0 - 2.0 * kMargin;
  double scale = std::numeric_limits<double>::infinity();
  if (u_hi > u_lo) scale = std::min(scale, usable * double(sw) / (u_hi - u_lo));
  if (v_hi > v_lo) scale = std::min(scale, usable * double(sh) / (v_hi - v_lo));
  if (!std::isfinite(scale)) scale = 1.0;  // every vertex at one point
  const double u_mid = 0.5 * (u_lo + u_hi), v_mid = 0.5 * (v_lo + v_hi);

  // Screen position (x right, y down, in samples) and depth (larger is nearer) of each vertex.
  struct ScreenVertex {
    double x, y, depth;
  };
  std::vector<ScreenVertex> screen(mesh.vertices.size());
  for (std::size_t i = 0; i < screen.size(); ++i) {
    const Vec3 p = vec(mesh.vertices[i]);
    screen[i] = {0.5 * double(sw) + (dot(p, camera.right) - u_mid) * scale,
                 0.5 * double(sh) - (dot(p, camera.up) - v_mid) * scale, dot(p, camera.toward_viewer)};
  }

  // Area-weighted vertex normals.
  std::vector<Vec3> vertex_normal(mesh.vertices.size());
  for (std::uint64_t t = 0; t < triangle_count; ++t) {
    const auto [a, b, c] = mesh.triangle(t);
    const Vec3 pa = vec(mesh.vertices[a]);
    const Vec3 n = cross(vec(mesh.vertices[b]) - pa, vec(mesh.vertices[c]) - pa);
    for (const std::uint64_t v : {a, b, c}) vertex_normal[v] = vertex_normal[v] + n;
  }

  std::vector<float> depth(static_cast<std::size_t>(sw * sh), -std::numeric_limits<float>::infinity());
  std::vector<float> brightness(depth.size(), -1.0f);  // -1: background
  const Vec3 light = camera.toward_viewer;
  for (std::uint64_t t = 0; t < triangle_count; ++t) {
    const auto [a, b, c] = mesh.triangle(t);
    const ScreenVertex& p0 = screen[a];
    const ScreenVertex& p1 = screen[b];
    const ScreenVertex& p2 = screen[c];
    // Twice the signed screen area; zero for a triangle seen edge-on (it covers nothing).
    const double area = (p1.x - p0.x) * (p2.y - p0.y) - (p1.y - p0.y) * (p2.x - p0.x);
    if (area == 0 || !std::isfinite(area)) continue;
    const auto x_first = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(std::min({p0.x, p1.x, p2.x}))));
    const auto x_last =
        std::min<std::int64_t>(sw - 1, static_cast<std::int64_t>(std::ceil(std::max({p0.x, p1.x, p2.x}))));
    const auto y_first = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(std::min({p0.y, p1.y, p2.y}))));
    const auto y_last =
        std::min<std::int64_t>(sh - 1, static_cast<std::int64_t>(std::ceil(std::max({p0.y, p1.y, p2.y}))));
    const Vec3 face_normal =
        unit(cross(vec(mesh.vertices[b]) - vec(mesh.vertices[a]), vec(mesh.vertices[c]) - vec(mesh.vertices[a])));
    for (std::int64_t y = y_first; y <= y_last; ++y) {
      const double sy = double(y) + 0.5;
      for (std::int64_t x = x_first; x <= x_last; ++x) {
        const double sx = double(x) + 0.5;
        // Barycentric weights from the edge functions; all >= 0 inside either winding.
        const double w0 = ((p2.x - p1.x) * (sy - p1.y) - (p2.y - p1.y) * (sx - p1.x)) / area;
        const double w1 = ((p0.x - p2.x) * (sy - p2.y) - (p0.y - p2.y) * (sx - p2.x)) / area;
        const double w2 = 1.0 - w0 - w1;
        if (w0 < 0 || w1 < 0 || w2 < 0) continue;
        const float z = static_cast<float>(w0 * p0.depth + w1 * p1.depth + w2 * p2.depth);
        const std::size_t at = static_cast<std::size_t>(y * sw + x);
        if (!(z > depth[at])) continue;
        depth[at] = z;
        Vec3 n = unit(w0 * vertex_normal[a] + w1 * vertex_normal[b] + w2 * vertex_normal[c]);
        if (length(n) == 0) n = face_normal;  // opposite normals cancelled at this point
        brightness[at] = static_cast<float>(options.ambient + (1.0 - options.ambient) * std::abs(dot(n, light)));
      }
    }
  }

  // Box filter: each pixel is the mean of its k x k samples.
  const double samples = double(k) * double(k);
  for (std::int64_t y = 0; y < height; ++y)
    for (std::int64_t x = 0; x < width; ++x) {
      double r = 0, g = 0, bl = 0;
      for (int dy = 0; dy < k; ++dy)
        for (int dx = 0; dx < k; ++dx) {
          const float s = brightness[static_cast<std::size_t>((y * k + dy) * sw + x * k + dx)];
          const Rgba8 colour = s < 0 ? options.background
                                     : Rgba8{static_cast<std::uint8_t>(std::lround(options.colour.r * s)),
                                             static_cast<std::uint8_t>(std::lround(options.colour.g * s)),
                                             static_cast<std::uint8_t>(std::lround(options.colour.b * s)), 255};
          r += colour.r, g += colour.g, bl += colour.b;
        }
      picture(x, y) = {static_cast<std::uint8_t>(std::lround(r / samples)),
                       static_cast<std::uint8_t>(std::lround(g / samples)),
                       static_cast<std::uint8_t>(std::lround(bl / samples)), 255};
    }
  return picture;
}

}  // namespace winnow::io
