// The CUDA tile pass of tile_merge (src/cuda/kernels/label_tile_runs.cuh) run on the host: its
// phases are plain functions, so running each phase for every thread in turn is one legal
// interleaving of the kernel. Its outputs -- per 2x2 block the tile-local root key, roots per
// (pixel row, tile column), per-root statistics records and the list of roots that touch another
// tile -- are checked against tile-local components found by breadth-first search.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cuda/kernels/label_tile_runs.cuh"

namespace {

namespace runs = winnow::detail::cuda::runs;

struct Mask {
  int W = 0, H = 0;
  std::int64_t stride = 0;
  std::vector<std::uint8_t> storage;
  std::uint8_t* data = nullptr;
  std::uint8_t at(int x, int y) const { return data[y * stride + x]; }
};

// Rows of `stride` bytes from a 16-byte aligned base plus `offset`; padding bytes are non-zero
// (they must not be read as pixels).
Mask make_mask(int W, int H, std::int64_t stride, int offset, const std::vector<std::uint8_t>& pixels) {
  Mask m;
  m.W = W, m.H = H, m.stride = stride;
  m.storage.assign(static_cast<std::size_t>(stride * H + 64), 0xAB);
  auto base = reinterpret_cast<std::uintptr_t>(m.storage.data());
  m.data = m.storage.data() + ((16 - base % 16) % 16) + offset;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) m.data[y * stride + x] = pixels[static_cast<std::size_t>(y) * W + x];
  return m;
}

struct Out {
  std::vector<std::uint32_t> P, S, xlist, xcount, rc;
  int shift = 0, bw = 0, bh = 0, ntx = 0, nty = 0;
};

Out run_tile_pass(const Mask& m, bool stats) {
  Out o;
  while ((1 << o.shift) < m.W) ++o.shift;
  o.bw = (m.W + 1) / 2, o.bh = (m.H + 1) / 2;
  o.ntx = (m.W + runs::kSide - 1) / runs::kSide, o.nty = (m.H + runs::kSide - 1) / runs::kSide;
  const std::size_t nodes = static_cast<std::size_t>(o.bw) * o.bh, tiles = static_cast<std::size_t>(o.ntx) * o.nty;
  o.P.assign(nodes, 0xDEADBEEFu);  // poison: every block must be written
  o.S.assign(nodes * 4, 0xDEADBEEFu);
  o.xlist.assign(tiles * runs::kXCap, 0xDEADBEEFu);
  o.xcount.assign(tiles, 0xDEADBEEFu);
  o.rc.assign(static_cast<std::size_t>(m.H) * o.ntx, 0xDEADBEEFu);
  runs::TileArgs a{};
  a.mask = m.data;
  a.mstride = m.stride;
  a.W = m.W, a.H = m.H, a.shift = o.shift, a.bw = o.bw, a.bh = o.bh, a.ntx = o.ntx;
  const auto addr = reinterpret_cast<std::uintptr_t>(m.data);
  a.v16 = ((addr | static_cast<std::uintptr_t>(m.stride)) & 15u) == 0;
  a.v4 = ((addr | static_cast<std::uintptr_t>(m.stride)) & 3u) == 0;
  a.P = o.P.data(), a.S = o.S.data(), a.xlist = o.xlist.data(), a.xcount = o.xcount.data(), a.rc = o.rc.data();
  auto sh = std::make_unique<runs::TileShared>();
  auto st = std::make_unique<runs::TileStats>();
  runs::TileStats* stp = stats ? st.get() : nullptr;
  for (int ty = 0; ty < o.nty; ++ty)
    for (int tx = 0; tx < o.ntx; ++tx) {
      // stale state from the previous tile, as on the device
      for (int t = 0; t < runs::kThreads; ++t)
        stats ? runs::phase_load<true>(a, tx, ty, *sh, stp, t) : runs::phase_load<false>(a, tx, ty, *sh, stp, t);
      for (int t = 0; t < runs::kThreads; ++t)
        stats ? runs::phase_unite<true>(a, tx, ty, *sh, t) : runs::phase_unite<false>(a, tx, ty, *sh, t);
      for (bool changed = true; changed;) {
        changed = false;
        for (int t = runs::kThreads - 1; t >= 0; --t) changed = runs::phase_jump(*sh, t) || changed;
      }
      for (int t = 0; t < runs::kThreads; ++t)
        stats ? runs::phase_resolve<true>(*sh, stp, t) : runs::phase_resolve<false>(*sh, stp, t);
      for (int t = 0; t < runs::kThreads; ++t)
        stats ? runs::phase_emit<true>(a, tx, ty, *sh, stp, t) : runs::phase_emit<false>(a, tx, ty, *sh, stp, t);
      if (stats) o.xcount[static_cast<std::size_t>(ty) * o.ntx + tx] = sh->listed;
    }
  return o;
}

struct Component {
  int fx = 0, fy = 0;  // first pixel (raster order), image coordinates
  std::uint32_t area = 0, sx = 0, sy = 0, cmin = 255, cmax = 0, rmax = 0;  // tile-relative
  bool ext = false;
};

// Checks every output of the tile pass against breadth-first search inside each tile.
void check(const Mask& m, bool stats, const std::string& what) {
  SCOPED_TRACE(what + (stats ? " (statistics)" : ""));
  const Out o = run_tile_pass(m, stats);
  const int S = runs::kSide;
  std::vector<int> comp(static_cast<std::size_t>(m.W) * m.H, -1);
  for (int ty = 0; ty < o.nty; ++ty)
    for (int tx = 0; tx < o.ntx; ++tx) {
      const int x0 = tx * S, y0 = ty * S, x1 = std::min(x0 + S, m.W), y1 = std::min(y0 + S, m.H);
      std::vector<Component> cs;
      for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) {
          if (!m.at(x, y) || comp[y * m.W + x] >= 0) continue;
          Component c;
          c.fx = x, c.fy = y;
          const int id = static_cast<int>(cs.size());
          std::queue<std::pair<int, int>> q;
          q.push({x, y});
          comp[y * m.W + x] = id;
          while (!q.empty()) {
            const auto [px, py] = q.front();
            q.pop();
            const std::uint32_t lx = static_cast<std::uint32_t>(px - x0), ly = static_cast<std::uint32_t>(py - y0);
            ++c.area, c.sx += lx, c.sy += ly;
            c.cmin = std::min(c.cmin, lx), c.cmax = std::max(c.cmax, lx), c.rmax = std::max(c.rmax, ly);
            for (int dy = -1; dy <= 1; ++dy)
              for (int dx = -1; dx <= 1; ++dx) {
                const int nx = px + dx, ny = py + dy;
                if ((dx == 0 && dy == 0) || nx < 0 || ny < 0 || nx >= m.W || ny >= m.H || !m.at(nx, ny)) continue;
                if (nx < x0 || ny < y0 || nx >= x1 || ny >= y1) {
                  c.ext = true;
                  continue;
                }
                if (comp[ny * m.W + nx] < 0) {
                  comp[ny * m.W + nx] = id;
                  q.push({nx, ny});
                }
              }
          }
          cs.push_back(c);
        }
      auto key = [&](const Component& c) { return (static_cast<std::uint32_t>(c.fy) << o.shift) | static_cast<std::uint32_t>(c.fx); };
      // P: every block of the tile
      for (int by = y0 / 2; by < (y1 + 1) / 2; ++by)
        for (int bx = x0 / 2; bx < (x1 + 1) / 2; ++bx) {
          std::uint32_t want = runs::kNone;
          for (int d = 0; d < 4 && want == runs::kNone; ++d) {
            const int x = 2 * bx + (d & 1), y = 2 * by + (d >> 1);
            if (x < m.W && y < m.H && m.at(x, y)) want = key(cs[comp[y * m.W + x]]);
          }
          ASSERT_EQ(o.P[static_cast<std::size_t>(by) * o.bw + bx], want) << "block " << bx << "," << by;
        }
      // roots per pixel row
      for (int y = y0; y < y1; ++y) {
        std::uint32_t want = 0;
        for (const Component& c : cs) want += c.fy == y;
        ASSERT_EQ(o.rc[static_cast<std::size_t>(y) * o.ntx + tx], want) << "row " << y << " tile column " << tx;
      }
      if (!stats) continue;
      std::set<std::uint32_t> want_listed;
      for (const Component& c : cs) {
        const std::size_t n = static_cast<std::size_t>(c.fy / 2) * o.bw + c.fx / 2;
        const std::uint32_t* r = &o.S[4 * n];
        ASSERT_EQ(r[0], c.area | (c.ext ? 0x80000000u : 0u)) << "component at " << c.fx << "," << c.fy;
        ASSERT_EQ(r[1], c.sx);
        ASSERT_EQ(r[2], c.sy);
        ASSERT_EQ(r[3], c.cmin | c.cmax << 8 | c.rmax << 16 | static_cast<std::uint32_t>(c.fy - y0) << 24);
        if (c.ext) want_listed.insert(static_cast<std::uint32_t>(n));
      }
      const std::size_t tile = static_cast<std::size_t>(ty) * o.ntx + tx;
      ASSERT_EQ(o.xcount[tile], want_listed.size());
      const std::set<std::uint32_t> listed(o.xlist.begin() + tile * runs::kXCap,
                                           o.xlist.begin() + tile * runs::kXCap + o.xcount[tile]);
      ASSERT_EQ(listed, want_listed);
    }
}

std::vector<std::uint8_t> random_pixels(int W, int H, double density, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution on(density);
  std::vector<std::uint8_t> p(static_cast<std::size_t>(W) * H);
  for (auto& v : p) v = on(rng) ? static_cast<std::uint8_t>(1 + rng() % 255) : 0;
  return p;
}

void check_all_layouts(int W, int H, const std::vector<std::uint8_t>& px, const std::string& what) {
  const std::int64_t s16 = (W + 15) / 16 * 16 + 16;
  check(make_mask(W, H, s16, 0, px), true, what + ", 16-byte rows");
  check(make_mask(W, H, s16, 0, px), false, what + ", 16-byte rows");
  check(make_mask(W, H, s16 + 4, 4, px), true, what + ", 4-byte rows");
  check(make_mask(W, H, W + 3, 1, px), true, what + ", unaligned rows");
}

TEST(LabelTileRuns, RandomDensities) {
  std::uint32_t seed = 1;
  for (const double d : {0.05, 0.3, 0.5, 0.62, 0.8, 0.95})
    for (const auto& [W, H] : std::vector<std::pair<int, int>>{{64, 64}, {200, 131}, {129, 65}, {256, 192}})
      check_all_layouts(W, H, random_pixels(W, H, d, seed++), "random " + std::to_string(W) + "x" + std::to_string(H) +
                                                                  " d" + std::to_string(d));
}

TEST(LabelTileRuns, SmallAndThin) {
  for (const auto& [W, H] : std::vector<std::pair<int, int>>{{1, 1}, {1, 200}, {200, 1}, {2, 2}, {3, 70}, {65, 3}, {33, 33}})
    for (const double d : {0.5, 1.0})
      check_all_layouts(W, H, random_pixels(W, H, d, static_cast<std::uint32_t>(W * 1000 + H)),
                        "size " + std::to_string(W) + "x" + std::to_string(H));
}

TEST(LabelTileRuns, Patterns) {
  const int W = 192, H = 160;
  std::vector<std::uint8_t> chess(W * H), hstripes(W * H), vstripes(W * H), diag(W * H), full(W * H, 9), empty(W * H, 0),
      alt(W * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      chess[y * W + x] = (x + y) % 2 ? 255 : 0;                 // 8-connected everywhere, 16 runs per word
      hstripes[y * W + x] = y % 2 ? 1 : 0;                       // one run per word, separate rows
      vstripes[y * W + x] = x % 2 ? 1 : 0;                       // 16 runs per word, one component per column
      diag[y * W + x] = (x - y + 1000) % 7 == 0 ? 1 : 0;         // diagonal chains across words and tiles
      alt[y * W + x] = (x % 4 == 0 && y % 2 == 0) ? 1 : 0;       // isolated pixels
    }
  check_all_layouts(W, H, chess, "chessboard");
  check_all_layouts(W, H, hstripes, "horizontal stripes");
  check_all_layouts(W, H, vstripes, "vertical stripes");
  check_all_layouts(W, H, diag, "diagonals");
  check_all_layouts(W, H, full, "all on");
  check_all_layouts(W, H, empty, "all off");
  check_all_layouts(W, H, alt, "isolated pixels");
}

// Components that wind through a tile: a spiral (one component, long union chains) and
// concentric rings (many nested components).
TEST(LabelTileRuns, SpiralAndRings) {
  const int W = 128, H = 128;
  std::vector<std::uint8_t> spiral(W * H, 0), rings(W * H, 0);
  int x = 0, y = 0, dx = 1, dy = 0, lo = 0, hi = W - 1, top = 2;
  for (int step = 0; step < W * H; ++step) {
    spiral[y * W + x] = 1;
    const int nx = x + dx, ny = y + dy;
    if (dx == 1 && nx > hi) dx = 0, dy = 1;
    else if (dy == 1 && ny > hi) dx = -1, dy = 0, hi -= 2;
    else if (dx == -1 && nx < lo) dx = 0, dy = -1, lo += 2;
    else if (dy == -1 && ny < top) dx = 1, dy = 0, top += 2;
    if (lo > hi || top > hi + 2) break;
    x += dx, y += dy;
    if (x < 0 || y < 0 || x >= W || y >= H) break;
  }
  for (int yy = 0; yy < H; ++yy)
    for (int xx = 0; xx < W; ++xx) rings[yy * W + xx] = std::max(std::abs(xx - 64), std::abs(yy - 64)) % 3 == 0;
  check_all_layouts(W, H, spiral, "spiral");
  check_all_layouts(W, H, rings, "rings");
}

}  // namespace
