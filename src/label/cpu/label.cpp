// CPU connected-component labeling: tiles (or full-width row stripes) labelled independently in
// parallel, then a union-find merge across the tile borders, then sequential relabelling.
// This file is the CPU `tile_merge` algorithm; `row_stripes` (the CPU default) is the run-based
// labeling of label_runs.cpp, which falls back to this pixel scan with full-width stripes only for
// images beyond its 31-bit run indices.
//
// Algorithm
//   1. Each tile (one OpenMP task) is scanned once in raster order with the SAUF decision tree
//      (Wu, Otoo, Suzuki 2009, "Optimizing two-pass connected-component labeling algorithms"):
//      8-connectivity looks at up, up-right, up-left, left in that order and merges at most two
//      provisional labels per pixel; 4-connectivity looks at up and left. Provisional labels are
//      tile-local numbers written straight into the output image; equivalences go into a
//      tile-local union-find array that always links the larger root to the smaller, so a root is
//      the provisional label created first, i.e. the one holding the tile-local component's first
//      pixel. Flattening the array in increasing order numbers the tile-local components in
//      raster order of their first pixels.
//   2. Every tile-local component gets a global id (prefix sum over tiles) and the raster index
//      of its first pixel as key. A sequential union-find over these ids (union by smaller key,
//      path halving) merges components that touch across a tile border; only border pixels are
//      looked at (the write-up's observation: the merge work grows with the tile perimeters).
//   3. A component's root is the piece holding its first pixel; ranking roots by key gives the
//      final numbers 1..N in raster order (row stripes: the ids are already in key order; square
//      tiles: a sort per tile row, in parallel).
//   4. One parallel pass rewrites every tile through a provisional->final lookup table and
//      accumulates the statistics per tile-local component (64-bit sums, merged afterwards).
//
// Complexity: O(W*H) work, O(W*H / threads) time for the two pixel passes, plus O(perimeters)
// sequential merge and O(N log N) ranking for square tiles. Indices are 64-bit throughout, so
// images beyond 2^31 pixels work (labels stay 32-bit; N >= 2^32 is an error).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "label/backends.hpp"
#include "label/cpu/label_runs.hpp"
#include "label/cpu/row_runs.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cpu {
namespace {

struct Tile {
  std::int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::vector<std::uint32_t> parent;     // provisional label -> union-find parent, then -> local comp
  std::vector<std::uint64_t> first_key;  // provisional label -> raster index of its first pixel
  std::uint32_t ncomp = 0;
  std::uint64_t offset = 0;  // global id of local component 0
};

inline std::uint32_t merge(std::vector<std::uint32_t>& p, std::uint32_t a, std::uint32_t b) {
  a = find_root(p.data(), a);
  b = find_root(p.data(), b);
  if (a < b) {
    p[b] = a;
    return a;
  }
  p[a] = b;
  return b;
}

template <int Conn>
void scan_tile(const ImageView<const std::uint8_t>& mask, const ImageView<std::uint32_t>& labels, Tile& t) {
  auto& p = t.parent;
  p.clear();
  t.first_key.clear();
  p.push_back(0);
  t.first_key.push_back(0);
  const std::int64_t W = mask.width;
  auto new_label = [&](std::int64_t x, std::int64_t y) -> std::uint32_t {
    const auto l = static_cast<std::uint32_t>(p.size());
    p.push_back(l);
    t.first_key.push_back(static_cast<std::uint64_t>(y) * static_cast<std::uint64_t>(W) +
                          static_cast<std::uint64_t>(x));
    return l;
  };
  for (std::int64_t y = t.y0; y < t.y1; ++y) {
    const std::uint8_t* m = mask.row(y);
    std::uint32_t* l = labels.row(y);
    if (y == t.y0) {  // first row: left neighbour only
      std::uint32_t left = 0;
      for (std::int64_t x = t.x0; x < t.x1; ++x) {
        std::uint32_t v = 0;
        if (m[x]) v = left ? left : new_label(x, y);
        l[x] = v;
        left = v;
      }
      continue;
    }
    const std::uint32_t* u = labels.row(y - 1);
    for (std::int64_t x = t.x0; x < t.x1; ++x) {
      if (!m[x]) {
        l[x] = 0;
        continue;
      }
      const std::uint32_t b = u[x];
      const std::uint32_t d = x > t.x0 ? l[x - 1] : 0;
      std::uint32_t v;
      if constexpr (Conn == 8) {
        const std::uint32_t a = x > t.x0 ? u[x - 1] : 0;
        const std::uint32_t c = x + 1 < t.x1 ? u[x + 1] : 0;
        if (b) {
          v = b;
        } else if (c) {
          if (a) v = merge(p, c, a);
          else if (d) v = merge(p, c, d);
          else v = c;
        } else if (a) {
          v = a;
        } else if (d) {
          v = d;
        } else {
          v = new_label(x, y);
        }
      } else {
        if (b) v = d && d != b ? merge(p, b, d) : b;
        else if (d) v = d;
        else v = new_label(x, y);
      }
      l[x] = v;
    }
  }
  // Flatten: parent[l] < l for non-roots, so one increasing pass resolves every label, and roots
  // (in creation = raster order of first pixels) get consecutive local component numbers.
  std::uint32_t n = 0;
  t.first_key.resize(p.size());
  for (std::size_t i = 1; i < p.size(); ++i) {
    if (p[i] == i) {
      t.first_key[n] = t.first_key[i];  // key of local component n (n <= i - 1 < i)
      p[i] = n++;
    } else {
      p[i] = p[p[i]];
    }
  }
  t.first_key.resize(n);
  t.ncomp = n;
}

inline std::uint64_t gfind(std::vector<std::uint64_t>& g, std::uint64_t a) {
  while (g[a] != a) {
    g[a] = g[g[a]];
    a = g[a];
  }
  return a;
}

}  // namespace

std::uint64_t label(const LabelRequest& req, std::vector<ComponentStats>* stats) {
  if (req.algorithm == LabelAlgorithm::row_stripes) {
    std::uint64_t n = 0;
    if (label_runs(req, stats, n)) return n;  // else: too large for 32-bit run indices
  }
  return label_pixels(req, stats);
}

std::uint64_t label_pixels(const LabelRequest& req, std::vector<ComponentStats>* stats) {
  const auto& mask = req.mask;
  const auto& labels = req.labels;
  const std::int64_t W = mask.width, H = mask.height;
  if (stats) stats->clear();
  if (W <= 0 || H <= 0) return 0;
  // Small images run on one thread: a parallel region costs more than labeling them (and on a
  // loaded machine a descheduled worker turns every barrier into a scheduler time slice).
  const bool par = W * H >= (std::int64_t{1} << 18);
  const int threads = par ? std::max(1, omp_get_max_threads()) : 1;

  // Tiling.
  std::int64_t tw, th;
  if (req.algorithm == LabelAlgorithm::row_stripes) {
    tw = W;
    const std::int64_t stripes = std::min<std::int64_t>(H, std::max<std::int64_t>(threads * 4, 1));
    th = std::max<std::int64_t>((H + stripes - 1) / stripes, std::min<std::int64_t>(H, 32));
  } else {
    tw = std::min<std::int64_t>(W, 256);
    th = std::min<std::int64_t>(H, 256);
  }
  const std::int64_t ntx = (W + tw - 1) / tw, nty = (H + th - 1) / th;
  std::vector<Tile> tiles(static_cast<std::size_t>(ntx * nty));
  for (std::int64_t ty = 0; ty < nty; ++ty)
    for (std::int64_t tx = 0; tx < ntx; ++tx) {
      Tile& t = tiles[static_cast<std::size_t>(ty * ntx + tx)];
      t.x0 = tx * tw;
      t.y0 = ty * th;
      t.x1 = std::min(W, t.x0 + tw);
      t.y1 = std::min(H, t.y0 + th);
    }
  const auto ntiles = static_cast<std::int64_t>(tiles.size());

  // 1. Independent tiles.
#pragma omp parallel for schedule(dynamic, 1) if (par)
  for (std::int64_t i = 0; i < ntiles; ++i) {
    if (req.connectivity == 8) scan_tile<8>(mask, labels, tiles[static_cast<std::size_t>(i)]);
    else scan_tile<4>(mask, labels, tiles[static_cast<std::size_t>(i)]);
  }

  // 2. Global ids, keys, merge across tile borders.
  std::uint64_t total = 0;
  for (auto& t : tiles) {
    t.offset = total;
    total += t.ncomp;
  }
  std::vector<std::uint64_t> g(total), key(total);
#pragma omp parallel for schedule(dynamic, 4) if (par)
  for (std::int64_t i = 0; i < ntiles; ++i) {
    const Tile& t = tiles[static_cast<std::size_t>(i)];
    for (std::uint32_t c = 0; c < t.ncomp; ++c) {
      g[t.offset + c] = t.offset + c;
      key[t.offset + c] = t.first_key[c];
    }
  }
  auto gid = [&](std::int64_t x, std::int64_t y) -> std::uint64_t {
    const Tile& t = tiles[static_cast<std::size_t>((y / th) * ntx + x / tw)];
    return t.offset + t.parent[labels(x, y)];
  };
  auto unite = [&](std::uint64_t a, std::uint64_t b) {
    a = gfind(g, a);
    b = gfind(g, b);
    if (a == b) return;
    if (key[a] < key[b]) g[b] = a;
    else g[a] = b;
  };
  auto link = [&](std::int64_t x, std::int64_t y, std::int64_t nx, std::int64_t ny) {
    if (nx < 0 || nx >= W || ny < 0) return;
    if (nx / tw == x / tw && ny / th == y / th) return;  // same tile: already merged
    if (!mask(nx, ny)) return;
    unite(gid(x, y), gid(nx, ny));
  };
  const bool eight = req.connectivity == 8;
  auto visit = [&](std::int64_t x, std::int64_t y) {  // backward neighbours that cross a border
    if (!mask(x, y)) return;
    link(x, y, x - 1, y);
    link(x, y, x, y - 1);
    if (eight) {
      link(x, y, x - 1, y - 1);
      link(x, y, x + 1, y - 1);
    }
  };
  for (const Tile& t : tiles) {
    if (t.y0 > 0)
      for (std::int64_t x = t.x0; x < t.x1; ++x) visit(x, t.y0);
    else if (t.x0 > 0) visit(t.x0, t.y0);  // first tile row: only the left neighbour crosses
    for (std::int64_t y = t.y0 + 1; y < t.y1; ++y) {
      if (t.x0 > 0) visit(t.x0, y);
      if (eight && t.x1 < W && t.x1 - 1 > t.x0) visit(t.x1 - 1, y);
    }
  }

  // 3. Final numbers: roots ranked by key (tile rows are in key order; within a tile row, sort).
  std::vector<std::uint64_t> final_label(total);
  std::vector<std::uint64_t> row_roots(static_cast<std::size_t>(nty) + 1, 0);
  {
    std::vector<std::vector<std::uint64_t>> roots(static_cast<std::size_t>(nty));
#pragma omp parallel for schedule(dynamic, 1) if (par)
    for (std::int64_t ty = 0; ty < nty; ++ty) {
      auto& r = roots[static_cast<std::size_t>(ty)];
      const Tile& first = tiles[static_cast<std::size_t>(ty * ntx)];
      const Tile& last = tiles[static_cast<std::size_t>(ty * ntx + ntx - 1)];
      for (std::uint64_t i = first.offset; i < last.offset + last.ncomp; ++i)
        if (g[i] == i) r.push_back(i);
      if (ntx > 1) std::sort(r.begin(), r.end(), [&](std::uint64_t a, std::uint64_t b) { return key[a] < key[b]; });
    }
    for (std::int64_t ty = 0; ty < nty; ++ty)
      row_roots[static_cast<std::size_t>(ty) + 1] =
          row_roots[static_cast<std::size_t>(ty)] + roots[static_cast<std::size_t>(ty)].size();
    const std::uint64_t n = row_roots.back();
    if (n > std::numeric_limits<std::uint32_t>::max())
      throw Error("label: " + std::to_string(n) + " components do not fit 32-bit labels");
#pragma omp parallel for schedule(dynamic, 1) if (par)
    for (std::int64_t ty = 0; ty < nty; ++ty) {
      const auto& r = roots[static_cast<std::size_t>(ty)];
      for (std::size_t k = 0; k < r.size(); ++k) final_label[r[k]] = row_roots[static_cast<std::size_t>(ty)] + k + 1;
    }
  }
  const std::uint64_t n = row_roots.back();
  // Non-roots: a root's final number; g is read-only here (roots were fixed above).
#pragma omp parallel for schedule(static) if (par)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(total); ++i) {
    std::uint64_t r = static_cast<std::uint64_t>(i);
    while (g[r] != r) r = g[r];
    if (r != static_cast<std::uint64_t>(i)) final_label[static_cast<std::size_t>(i)] = final_label[r];
  }

  // 4. Relabel (and statistics per tile-local component).
  const bool want = stats != nullptr;
  std::vector<std::vector<ComponentSums>> acc(want ? tiles.size() : 0);
#pragma omp parallel for schedule(dynamic, 1) if (par)
  for (std::int64_t i = 0; i < ntiles; ++i) {
    Tile& t = tiles[static_cast<std::size_t>(i)];
    std::vector<std::uint32_t> lut(t.parent.size());
    lut[0] = 0;
    for (std::size_t l = 1; l < lut.size(); ++l)
      lut[l] = static_cast<std::uint32_t>(final_label[t.offset + t.parent[l]]);
    if (want) {
      auto& a = acc[static_cast<std::size_t>(i)];
      a.assign(t.ncomp, ComponentSums{});
      for (std::int64_t y = t.y0; y < t.y1; ++y) {
        std::uint32_t* l = labels.row(y);
        for (std::int64_t x = t.x0; x < t.x1; ++x) {
          const std::uint32_t v = l[x];
          if (!v) continue;
          a[t.parent[v]].add_pixel(x, y);
          l[x] = lut[v];
        }
      }
    } else {
      for (std::int64_t y = t.y0; y < t.y1; ++y) {
        std::uint32_t* l = labels.row(y);
        for (std::int64_t x = t.x0; x < t.x1; ++x) l[x] = lut[l[x]];
      }
    }
    std::vector<std::uint32_t>().swap(t.parent);
  }
  if (want) {
    std::vector<ComponentSums> total(n);
    for (std::size_t i = 0; i < tiles.size(); ++i) {
      const Tile& t = tiles[i];
      for (std::uint32_t c = 0; c < t.ncomp; ++c) total[final_label[t.offset + c] - 1].add(acc[i][c]);
    }
    stats->resize(n);
    for (std::uint64_t k = 0; k < n; ++k) (*stats)[k] = to_component_stats(total[k]);
  }
  return n;
}

void remap_labels(ImageView<std::uint32_t> labels, const std::vector<std::uint32_t>& map) {
#pragma omp parallel for schedule(static)
  for (std::int64_t y = 0; y < labels.height; ++y) {
    std::uint32_t* l = labels.row(y);
    for (std::int64_t x = 0; x < labels.width; ++x) l[x] = map[l[x]];
  }
}

}  // namespace winnow::detail::cpu
