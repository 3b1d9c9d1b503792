#pragma once
// The per-voxel and per-cell evaluation of marching cubes, shared by the CPU and CUDA backends so
// both build the same mesh bit for bit: voxel classes, which vertices a voxel owns, the triangles
// of a cell and where their vertices live, and each vertex's position, value and normal. Plain values in, plain values
// out (no std:: containers), every function WINNOW_HD. The rules are the ones src/isosurface/isosurface.cpp's essay
// states.
//
// Precision: comparisons and interpolation in double, each operation rounded on its own. The
// library compiles C++ with -ffp-contract=off; under nvcc the helpers below use the _rn
// intrinsics, which are never fused into multiply-adds, so both sides round the same way.
#include <cstdint>
#ifndef __CUDACC__
#include <cmath>
#endif

#include "isosurface/cases.hpp"

#if defined(__CUDACC__)
#define WINNOW_HD __host__ __device__
#else
#define WINNOW_HD
#endif

namespace winnow::detail::iso {

// ---- arithmetic that rounds the same on host and device ----------------------------------------
WINNOW_HD inline double add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
WINNOW_HD inline double sub(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
WINNOW_HD inline double mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
WINNOW_HD inline double div(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
WINNOW_HD inline double sqrt_rn(double a) {
#ifdef __CUDA_ARCH__
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);  // IEEE 754: correctly rounded
#endif
}
WINNOW_HD inline bool is_nan(double v) { return v != v; }
/// The float next to `from` in the direction of `toward` (exact on host and device).
WINNOW_HD inline float next_float(float from, float toward) {
#ifdef __CUDACC__
  return ::nextafterf(from, toward);
#else
  return std::nextafter(from, toward);
#endif
}
WINNOW_HD inline double abs_of(double v) { return v < 0 ? -v : v; }

// ---- voxels ------------------------------------------------------------------------------------

/// A voxel's class: above the level or not. `kOutside` stands for a neighbour beyond the volume:
/// no edge leads to it.
inline constexpr std::uint8_t kNotAbove = 0, kAbove = 1, kOutside = 2;

/// value > level (NaN is never above).
WINNOW_HD inline bool above(double value, double level) { return value > level; }
WINNOW_HD inline std::uint8_t classify(double value, double level) { return above(value, level) ? kAbove : kNotAbove; }
/// An edge between two voxels of the volume is crossed when exactly one end is above.
WINNOW_HD inline bool crossed(std::uint8_t a, std::uint8_t b) { return a != kOutside && b != kOutside && a != b; }

/// Slots of a voxel's vertices, in the order the voxel numbers them: the crossings of its +x, +y
/// and +z edges (slot = axis).
enum VertexSlot : int { kEdgeXSlot = 0, kEdgeYSlot = 1, kEdgeZSlot = 2 };

/// Which vertices a voxel owns: bit `axis` when its +axis edge is crossed. Arguments: the
/// voxel's class and its +x, +y, +z neighbours' (kOutside beyond the volume).
WINNOW_HD inline unsigned owner_mask(std::uint8_t self, std::uint8_t xp, std::uint8_t yp, std::uint8_t zp) {
  return static_cast<unsigned>(crossed(self, xp)) | static_cast<unsigned>(crossed(self, yp)) << 1 |
         static_cast<unsigned>(crossed(self, zp)) << 2;
}
WINNOW_HD inline int popcount3(unsigned mask) {
  return static_cast<int>((mask & 1u) + ((mask >> 1) & 1u) + ((mask >> 2) & 1u));
}
/// Position of `slot` among the voxel's vertices (those of lower slots it owns come first).
WINNOW_HD inline int rank_in_voxel(unsigned mask, int slot) { return popcount3(mask & ((1u << slot) - 1u)); }

// ---- cells -------------------------------------------------------------------------------------

/// The case of a cell from its corners' classes (bit i: corner i above).
WINNOW_HD inline unsigned cell_case(const std::uint8_t (&corner)[8]) {
  unsigned c = 0;
  for (int i = 0; i < 8; ++i) c |= static_cast<unsigned>(corner[i] == kAbove) << i;
  return c;
}

/// Triangle `t` of case `c` as its three edges (0..11), wound for `flip`: every crossed edge is a
/// vertex of its own, so the table's triangles are the cell's, none collapsed.
WINNOW_HD inline void cell_triangle(const CaseTable& table, unsigned c, int t, bool flip, int (&edge)[3]) {
  edge[0] = table.triangle[c][t][0];
  edge[1] = table.triangle[c][t][flip ? 2 : 1];
  edge[2] = table.triangle[c][t][flip ? 1 : 2];
}

/// Where an edge's vertex lives: the owning voxel (the edge's lower corner) as an offset from the
/// cell's origin, and its slot (the edge's axis).
struct VertexHome {
  int dx, dy, dz, slot;
};
WINNOW_HD inline VertexHome vertex_home(const CaseTable& table, int edge) {
  const int lower = table.edge_corner[edge][0];
  return {table.corner[lower][0], table.corner[lower][1], table.corner[lower][2], table.edge_axis[edge]};
}

// ---- vertex attributes -------------------------------------------------------------------------

/// The crossing's parameter from the non-above end a toward the above end b:
/// t = (level - a) / (b - a); 0.5 when either is NaN.
WINNOW_HD inline double crossing_t(double a, double b, double level) {
  if (is_nan(a) || is_nan(b)) return 0.5;
  return div(sub(level, a), sub(b, a));
}

/// One component of the field's gradient at a voxel: central difference, one-sided at the
/// border (has_minus / has_plus: the neighbours exist), divided by the spacing.
WINNOW_HD inline double gradient_component(double minus, double self, double plus, bool has_minus, bool has_plus,
                                           double spacing) {
  if (has_minus && has_plus) return div(sub(plus, minus), mul(2.0, spacing));
  if (has_plus) return div(sub(plus, self), spacing);
  if (has_minus) return div(sub(self, minus), spacing);
  return 0.0;
}

/// The unit normal for a gradient g: -g / |g| (g / |g| with `flip`), scaled by its largest
/// component first so no square overflows; (0, 0, 0) for a zero or non-finite gradient.
WINNOW_HD inline void unit_normal(double gx, double gy, double gz, bool flip, float (&out)[3]) {
  double largest = abs_of(gx);
  if (abs_of(gy) > largest) largest = abs_of(gy);
  if (abs_of(gz) > largest) largest = abs_of(gz);
  if (!(largest > 0) || !(largest <= 1.7976931348623157e308)) {
    out[0] = out[1] = out[2] = 0.0f;
    return;
  }
  const double x = div(gx, largest), y = div(gy, largest), z = div(gz, largest);
  const double length = sqrt_rn(add(add(mul(x, x), mul(y, y)), mul(z, z)));
  const double sign = flip ? 1.0 : -1.0;
  out[0] = static_cast<float>(mul(sign, div(x, length)));
  out[1] = static_cast<float>(mul(sign, div(y, length)));
  out[2] = static_cast<float>(mul(sign, div(z, length)));
}

/// A volume's shape and spacing, for the attribute functions; (ox, oy, oz) is the index of its
/// first voxel in a larger volume it is a piece of (positions are taken there).
struct Grid {
  std::int64_t nx, ny, nz;
  double sx, sy, sz;
  std::int64_t ox = 0, oy = 0, oz = 0;
};

/// The gradient at voxel (x, y, z); `value(x, y, z)` returns a voxel as double.
template <class Value>
WINNOW_HD inline void voxel_gradient(const Value& value, const Grid& g, std::int64_t x, std::int64_t y, std::int64_t z,
                                     double (&out)[3]) {
  const double self = value(x, y, z);
  const bool xm = x > 0, xp = x + 1 < g.nx, ym = y > 0, yp = y + 1 < g.ny, zm = z > 0, zp = z + 1 < g.nz;
  out[0] = gradient_component(xm ? value(x - 1, y, z) : self, self, xp ? value(x + 1, y, z) : self, xm, xp, g.sx);
  out[1] = gradient_component(ym ? value(x, y - 1, z) : self, self, yp ? value(x, y + 1, z) : self, ym, yp, g.sy);
  out[2] = gradient_component(zm ? value(x, y, z - 1) : self, self, zp ? value(x, y, z + 1) : self, zm, zp, g.sz);
}

/// Position, value and (with `want_normal`) normal of the vertex in `slot` (its +slot edge) of
/// voxel (x, y, z). Position: the non-above end's coordinate plus or minus t along the edge,
/// float((c + t) s) or float((c + 1 - t) s), moved one float inward when it rounds onto an end
/// voxel's float(c s) or float((c + 1) s) -- which is always the case for t = 0, a non-above end
/// equal to the level; the other two components float(c s). Value: a + t (b - a), the level
/// itself for NaN ends. Normal: the ends' gradients interpolated by t from the non-above end,
/// normalised.
template <class Value>
WINNOW_HD inline void vertex_attributes(const Value& value, const Grid& g, double level, std::int64_t x, std::int64_t y,
                                        std::int64_t z, int slot, bool want_normal, bool flip, float (&position)[3],
                                        float& vertex_value, float (&normal)[3]) {
  const double spacing[3] = {g.sx, g.sy, g.sz};
  const double coord[3] = {static_cast<double>(x + g.ox), static_cast<double>(y + g.oy), static_cast<double>(z + g.oz)};
  for (int i = 0; i < 3; ++i) position[i] = static_cast<float>(mul(coord[i], spacing[i]));
  double gradient[3];
  const int axis = slot;
  const std::int64_t x1 = x + (axis == 0), y1 = y + (axis == 1), z1 = z + (axis == 2);
  const double lo = value(x, y, z), hi = value(x1, y1, z1);
  const bool lo_is_non_above = !above(lo, level);
  const double a = lo_is_non_above ? lo : hi, b = lo_is_non_above ? hi : lo;
  const double t = crossing_t(a, b, level);
  const double along = lo_is_non_above ? add(coord[axis], t) : sub(add(coord[axis], 1.0), t);
  position[axis] = static_cast<float>(mul(along, spacing[axis]));
  // A crossing whose float rounds onto an end voxel (or lies on it: t = 0) moves one float inside
  // its edge: edges' interiors are disjoint, so no two vertices share a position (welded by
  // position too, not only by index), and the move is within the rounding the contract allows.
  const float lo_end = static_cast<float>(mul(coord[axis], spacing[axis]));
  const float hi_end = static_cast<float>(mul(add(coord[axis], 1.0), spacing[axis]));
  if (position[axis] == lo_end) position[axis] = next_float(lo_end, hi_end);
  else if (position[axis] == hi_end) position[axis] = next_float(hi_end, lo_end);
  vertex_value = static_cast<float>(is_nan(a) || is_nan(b) ? level : add(a, mul(t, sub(b, a))));
  if (!want_normal) return;
  double g_lo[3], g_hi[3];
  voxel_gradient(value, g, x, y, z, g_lo);
  voxel_gradient(value, g, x1, y1, z1, g_hi);
  const double* ga = lo_is_non_above ? g_lo : g_hi;
  const double* gb = lo_is_non_above ? g_hi : g_lo;
  for (int i = 0; i < 3; ++i) gradient[i] = add(ga[i], mul(t, sub(gb[i], ga[i])));
  unit_normal(gradient[0], gradient[1], gradient[2], flip, normal);
}

}  // namespace winnow::detail::iso
