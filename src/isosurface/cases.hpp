#pragma once
// The marching-cubes case table, generated at compile time from a rule on the cell's faces (no
// table copied from anywhere), shared by the CPU and CUDA backends.
//
// Cell geometry. Corners 0:(0,0,0) 1:(1,0,0) 2:(1,1,0) 3:(0,1,0) 4:(0,0,1) 5:(1,0,1) 6:(1,1,1)
// 7:(0,1,1); edges 0:0-1 1:1-2 2:2-3 3:3-0 4:4-5 5:5-6 6:6-7 7:7-4 8:0-4 9:1-5 10:2-6 11:3-7.
// Case bit i is set when corner i is above the level.
//
// Generation, per case:
// 1. On each of the 6 faces, the crossed edges (one end above, the other not) are paired into
//    segments. Two crossed edges: one segment. Four (an ambiguous face: the two above corners on
//    a diagonal): the above corners are kept apart, each cut off by a segment joining its two
//    edges. The rule looks at the face alone, so the two cells sharing a face cut it alike.
// 2. Each segment p->q is oriented so that (q - p) x n_out points toward the above side of the
//    face (n_out: the face's outward normal; points are edge midpoints, doubled to stay integer).
//    The neighbour across the face sees the opposite n_out and so walks the segment q->p: the
//    surface is consistently oriented, with normals toward decreasing values.
// 3. Every crossed edge lies on exactly two faces, where it starts one segment and ends another,
//    so the segments chain into disjoint closed loops. Loops are taken in order of their lowest
//    edge and walked from it.
// 4. Each loop of k vertices becomes a fan of k - 2 triangles (v0, vi, vi+1). The apex v0 is the
//    first vertex, in walking order from the lowest edge, whose fan has no diagonal between two
//    edges of one face: such a diagonal would lie in the shared face, where the neighbouring
//    cell could lay the same one. (Every case has such an apex; a static_assert checks it.)
// Complexity: 256 cases x 6 faces, done once by the compiler.
#include <cstdint>

namespace winnow::detail::iso {

/// The most triangles of any case: generation fails (static_assert below) if a case needs more.
inline constexpr int kMaxTriangles = 5;

// All the constants a backend needs, in one struct of plain arrays so CUDA can copy it whole to
// __constant__ memory.
struct CaseTable {
  std::uint8_t corner[8][3];                     // corner offsets (x, y, z)
  std::uint8_t edge_corner[12][2];               // the two corners of each edge, lower one first
  std::uint8_t edge_axis[12];                    // 0: x, 1: y, 2: z
  std::uint8_t triangle_count[256];              // triangles per case (before dropping degenerate ones)
  std::uint8_t triangle[256][kMaxTriangles][3];  // edge ids, counter-clockwise seen from the non-above side
  std::uint8_t max_triangles;                    // the largest triangle_count
  bool valid;                                    // generation found every case consistent
};

namespace cases_detail {

inline constexpr int kCorner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                      {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
inline constexpr int kEdge[12][2] = {{0, 1}, {1, 2}, {3, 2}, {0, 3}, {4, 5}, {5, 6},
                                     {7, 6}, {4, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
struct Face {
  int corner[4];  // in cyclic order
  int normal[3];  // outward
};
inline constexpr Face kFaces[6] = {
    {{0, 1, 2, 3}, {0, 0, -1}}, {{4, 5, 6, 7}, {0, 0, 1}},  {{0, 1, 5, 4}, {0, -1, 0}},
    {{3, 2, 6, 7}, {0, 1, 0}},  {{0, 3, 7, 4}, {-1, 0, 0}}, {{1, 2, 6, 5}, {1, 0, 0}},
};

constexpr int edge_between(int a, int b) {
  for (int e = 0; e < 12; ++e)
    if ((kEdge[e][0] == a && kEdge[e][1] == b) || (kEdge[e][0] == b && kEdge[e][1] == a)) return e;
  return -1;
}
constexpr bool on_face(int edge, const Face& f) {
  int hits = 0;
  for (int k = 0; k < 4; ++k) hits += (f.corner[k] == kEdge[edge][0]) + (f.corner[k] == kEdge[edge][1]);
  return hits == 2;
}
constexpr bool share_a_face(int e1, int e2) {
  for (const Face& f : kFaces)
    if (on_face(e1, f) && on_face(e2, f)) return true;
  return false;
}
// Twice the edge's midpoint, component i.
constexpr int mid2(int edge, int i) { return kCorner[kEdge[edge][0]][i] + kCorner[kEdge[edge][1]][i]; }

// Records the segment between edges a and b, oriented toward the above corner `above_corner`
// of face f; false when the orientation is undecided or an edge already starts a segment.
constexpr bool add_segment(int a, int b, int above_corner, const Face& f, int (&next)[12]) {
  int d[3], r[3];
  for (int i = 0; i < 3; ++i) d[i] = mid2(b, i) - mid2(a, i), r[i] = 2 * kCorner[above_corner][i] - mid2(a, i);
  const int* n = f.normal;
  const int c[3] = {d[1] * n[2] - d[2] * n[1], d[2] * n[0] - d[0] * n[2], d[0] * n[1] - d[1] * n[0]};
  const int dot = c[0] * r[0] + c[1] * r[1] + c[2] * r[2];
  if (dot == 0) return false;
  const int from = dot > 0 ? a : b, to = dot > 0 ? b : a;
  if (next[from] != -1) return false;
  next[from] = to;
  return true;
}

constexpr CaseTable generate() {
  CaseTable t{};
  t.valid = true;
  for (int c = 0; c < 8; ++c)
    for (int i = 0; i < 3; ++i) t.corner[c][i] = static_cast<std::uint8_t>(kCorner[c][i]);
  for (int e = 0; e < 12; ++e) {
    t.edge_corner[e][0] = static_cast<std::uint8_t>(kEdge[e][0]);
    t.edge_corner[e][1] = static_cast<std::uint8_t>(kEdge[e][1]);
    for (int i = 0; i < 3; ++i)
      if (kCorner[kEdge[e][0]][i] != kCorner[kEdge[e][1]][i]) t.edge_axis[e] = static_cast<std::uint8_t>(i);
  }
  for (int cs = 0; cs < 256; ++cs) {
    auto above = [cs](int corner) { return ((cs >> corner) & 1) != 0; };
    int next[12] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    int crossed_total = 0;
    for (int e = 0; e < 12; ++e) crossed_total += above(kEdge[e][0]) != above(kEdge[e][1]);
    for (const Face& f : kFaces) {
      int crossed[4] = {}, n = 0;
      for (int k = 0; k < 4; ++k)
        if (above(f.corner[k]) != above(f.corner[(k + 1) % 4]))
          crossed[n++] = edge_between(f.corner[k], f.corner[(k + 1) % 4]);
      if (n == 2) {
        int ref = -1;
        for (int k = 0; k < 4; ++k)
          if (above(f.corner[k])) ref = f.corner[k];
        t.valid &= add_segment(crossed[0], crossed[1], ref, f, next);
      } else if (n == 4) {  // ambiguous: cut off each above corner by the segment of its two edges
        for (int k = 0; k < 4; ++k)
          if (above(f.corner[k]))
            t.valid &= add_segment(edge_between(f.corner[(k + 3) % 4], f.corner[k]),
                                   edge_between(f.corner[k], f.corner[(k + 1) % 4]), f.corner[k], f, next);
      }
    }
    bool visited[12] = {};
    int triangles = 0, used = 0;
    for (int start = 0; start < 12; ++start) {
      if (next[start] == -1 || visited[start]) continue;
      int loop[12] = {}, k = 0;
      for (int e = start; !visited[e] && k < 12; e = next[e]) {
        if (next[e] == -1) {
          t.valid = false;
          break;
        }
        visited[e] = true;
        loop[k++] = e;
      }
      if (loop[0] != next[loop[k - 1]] || k < 3) t.valid = false;
      used += k;
      int apex = -1;  // the first rotation whose fan lays no diagonal in a face
      for (int r = 0; r < k && apex < 0; ++r) {
        bool clean = true;
        for (int i = 2; i <= k - 2; ++i) clean &= !share_a_face(loop[r], loop[(r + i) % k]);
        if (clean) apex = r;
      }
      if (apex < 0) {
        t.valid = false;
        apex = 0;
      }
      for (int i = 1; i + 1 < k; ++i) {
        if (triangles >= kMaxTriangles) {
          t.valid = false;
          break;
        }
        t.triangle[cs][triangles][0] = static_cast<std::uint8_t>(loop[apex]);
        t.triangle[cs][triangles][1] = static_cast<std::uint8_t>(loop[(apex + i) % k]);
        t.triangle[cs][triangles][2] = static_cast<std::uint8_t>(loop[(apex + i + 1) % k]);
        ++triangles;
      }
    }
    if (used != crossed_total) t.valid = false;
    t.triangle_count[cs] = static_cast<std::uint8_t>(triangles);
    if (triangles > t.max_triangles) t.max_triangles = static_cast<std::uint8_t>(triangles);
  }
  return t;
}

}  // namespace cases_detail

/// The table, built by the compiler.
inline constexpr CaseTable kCaseTable = cases_detail::generate();

static_assert(kCaseTable.valid, "every case chains into closed loops with a clean fan");
static_assert(kCaseTable.max_triangles == kMaxTriangles, "the bound is tight");
static_assert(kCaseTable.triangle_count[0] == 0 && kCaseTable.triangle_count[255] == 0);
// Corner 0 above: one triangle (edge 0, edge 3, edge 8), counter-clockwise seen from outside.
static_assert(kCaseTable.triangle_count[1] == 1 && kCaseTable.triangle[1][0][0] == 0 &&
              kCaseTable.triangle[1][0][1] == 3 && kCaseTable.triangle[1][0][2] == 8);

}  // namespace winnow::detail::iso
