// Tile puzzles, front end: grids and tiles, backend choice and dispatch, scrambling and scoring,
// and the side strips both backends measure. The CPU backend is in cpu/ (puzzle.cpp:
// compatibility and exhaustive search; greedy.cpp: greedy assembly), the CUDA one in cuda/puzzle.cu.
//
// Compatibility. Every tile side is reduced to a strip (its two outermost pixel lines, see
// puzzle_measures.hpp); the dissimilarity of each ordered pair (i, j) is computed for "i left of
// j" and "i above j" — O(n^2 K) for n tiles of K pixels, the dominant cost of a large puzzle
// (432 tiles: 373,248 pairs). OpenMP over the first tile.
//
// Exhaustive search (the GPGPU demo's). For n <= 9 tiles every permutation of 0..n-1 is a
// placement; permutation k (lexicographic rank, factorial number system) is scored with
// permutation_cost and the least (cost, k) wins, so ties go to the lowest rank on every backend.
// The CPU splits the n! ranks into chunks, decodes each chunk's first permutation and walks the
// rest with std::next_permutation (which enumerates ranks in order). O(n! * 2n).
//
#include "winnow/puzzle.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "puzzle/backends.hpp"
#include "puzzle/measures.hpp"
#include "winnow/error.hpp"

namespace winnow::puzzle {

namespace dp = winnow::detail::puzzle;

// ---------------------------------------------------------------------------------------------
// Grids and tiles

Grid grid_from_shape(std::int64_t width, std::int64_t height, int rows, int cols, std::string_view what) {
  if (rows < 1 || cols < 1)
    throw InputError(std::string(what) + ": grid " + std::to_string(rows) + "x" + std::to_string(cols) +
                     " must have at least one row and one column");
  const std::int64_t t = std::min(width / cols, height / rows);
  if (t < 2)
    throw InputError(std::string(what) + ": a " + std::to_string(rows) + "x" + std::to_string(cols) +
                     " grid does not fit a " + std::to_string(width) + "x" + std::to_string(height) +
                     " image (tiles would be smaller than 2 px)");
  return Grid{rows, cols, static_cast<int>(t)};
}

Grid grid_from_tile(std::int64_t width, std::int64_t height, int tile, std::string_view what) {
  if (tile < 2) throw InputError(std::string(what) + ": tile size " + std::to_string(tile) + " px must be at least 2");
  if (width / tile < 1 || height / tile < 1)
    throw InputError(std::string(what) + ": " + std::to_string(tile) + "-px tiles do not fit a " +
                     std::to_string(width) + "x" + std::to_string(height) + " image");
  return Grid{static_cast<int>(height / tile), static_cast<int>(width / tile), tile};
}

std::pair<int, int> parse_grid(std::string_view text) {
  const auto x = text.find_first_of("xX");
  int r = 0, c = 0;
  bool ok = x != std::string_view::npos;
  if (ok) {
    auto [p1, e1] = std::from_chars(text.data(), text.data() + x, r);
    auto [p2, e2] = std::from_chars(text.data() + x + 1, text.data() + text.size(), c);
    ok = e1 == std::errc() && p1 == text.data() + x && e2 == std::errc() && p2 == text.data() + text.size();
  }
  if (!ok || r < 1 || c < 1)
    throw InputError("grid '" + std::string(text) + "' is not ROWSxCOLS with both at least 1 (e.g. 3x3)");
  return {r, c};
}

namespace {
template <class P>
Tiles extract(ImageView<const P> image, const Grid& grid) {
  if (grid.rows < 1 || grid.cols < 1 || grid.tile < 2 || image.width < std::int64_t(grid.cols) * grid.tile ||
      image.height < std::int64_t(grid.rows) * grid.tile)
    throw InputError("puzzle grid " + std::to_string(grid.rows) + "x" + std::to_string(grid.cols) + " of " +
                     std::to_string(grid.tile) + "-px tiles does not fit a " + std::to_string(image.width) + "x" +
                     std::to_string(image.height) + " image");
  Tiles t;
  t.grid = grid;
  const int K = grid.tile;
  t.rgb.resize(static_cast<std::size_t>(grid.tiles()) * K * K * 3);
  for (int tr = 0; tr < grid.rows; ++tr)
    for (int tc = 0; tc < grid.cols; ++tc) {
      float* out = t.rgb.data() + static_cast<std::size_t>(tr * grid.cols + tc) * K * K * 3;
      for (int y = 0; y < K; ++y)
        for (int x = 0; x < K; ++x) {
          const P& p = image(std::int64_t(tc) * K + x, std::int64_t(tr) * K + y);
          *out++ = static_cast<float>(p.r);
          *out++ = static_cast<float>(p.g);
          *out++ = static_cast<float>(p.b);
        }
    }
  return t;
}
}  // namespace

Tiles extract_tiles(ImageView<const RgbaF32> image, const Grid& grid) { return extract(image, grid); }
Tiles extract_tiles(ImageView<const Rgba8> image, const Grid& grid) { return extract(image, grid); }

Image<Rgba8> assemble(const Tiles& tiles, const std::vector<int>& tile_at) {
  const Grid& g = tiles.grid;
  const int K = g.tile;
  if (static_cast<int>(tile_at.size()) != g.tiles()) throw InputError("placement size does not match the puzzle grid");
  Image<Rgba8> img(std::int64_t(g.cols) * K, std::int64_t(g.rows) * K);
  for (int q = 0; q < g.tiles(); ++q) {
    const int t = tile_at[q];
    if (t < 0 || t >= g.tiles()) throw InputError("placement names tile " + std::to_string(t) + " out of range");
    const float* in = tiles.tile(t);
    const std::int64_t x0 = std::int64_t(q % g.cols) * K, y0 = std::int64_t(q / g.cols) * K;
    for (int y = 0; y < K; ++y)
      for (int x = 0; x < K; ++x, in += 3) {
        auto cv = [](float v) { return static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.f, 255.f))); };
        img(x0 + x, y0 + y) = Rgba8{cv(in[0]), cv(in[1]), cv(in[2]), 255};
      }
  }
  return img;
}

// ---------------------------------------------------------------------------------------------
// Names

std::string_view to_string(Measure m) {
  switch (m) {
    case Measure::ssd: return "ssd";
    case Measure::prediction: return "prediction";
    case Measure::mgc: return "mgc";
  }
  return "?";
}
Measure parse_measure(std::string_view name) {
  for (auto m : {Measure::ssd, Measure::prediction, Measure::mgc})
    if (name == to_string(m)) return m;
  throw InputError("unknown puzzle measure '" + std::string(name) + "' (expected ssd, prediction or mgc)");
}
std::string_view to_string(Method m) {
  switch (m) {
    case Method::automatic: return "auto";
    case Method::exhaustive: return "exhaustive";
    case Method::greedy: return "greedy";
  }
  return "?";
}
Method parse_method(std::string_view name) {
  if (name == "auto" || name == "automatic") return Method::automatic;
  if (name == "exhaustive") return Method::exhaustive;
  if (name == "greedy") return Method::greedy;
  throw InputError("unknown puzzle method '" + std::string(name) + "' (expected auto, exhaustive or greedy)");
}

// ---------------------------------------------------------------------------------------------
// Front end

Compatibility compatibility(const Tiles& tiles, Measure measure, Backend backend) {
  if (tiles.count() < 1 || tiles.grid.tile < 2) throw InputError("puzzle has no tiles");
  const Backend b = resolve_backend(backend);
#ifdef WINNOW_HAVE_CUDA
  if (b == Backend::cuda) return dp::cuda::compatibility(tiles, measure);
#else
  (void)b;
#endif
  return dp::cpu::compatibility(tiles, measure);
}

float placement_cost(const Compatibility& compat, int rows, int cols, const std::vector<int>& tile_at) {
  return dp::permutation_cost(tile_at.data(), rows, cols, compat.lr.data(), compat.tb.data(), compat.n);
}

std::vector<int> solve_exhaustive(const Compatibility& compat, int rows, int cols, Backend backend) {
  if (rows < 1 || cols < 1 || rows * cols != compat.n)
    throw InputError("exhaustive search: grid does not match the compatibility matrix");
  if (compat.n > kMaxExhaustiveTiles)
    throw InputError("exhaustive search takes at most " + std::to_string(kMaxExhaustiveTiles) +
                     " tiles; this grid has " + std::to_string(compat.n) + " (use the greedy method)");
  const Backend b = resolve_backend(backend);
#ifdef WINNOW_HAVE_CUDA
  if (b == Backend::cuda) return dp::cuda::exhaustive(compat, rows, cols);
#else
  (void)b;
#endif
  return dp::cpu::exhaustive(compat, rows, cols);
}

std::vector<int> solve_greedy(const Compatibility& compat, int rows, int cols) {
  if (rows < 1 || cols < 1 || rows * cols != compat.n)
    throw InputError("greedy assembly: grid does not match the compatibility matrix");
  return dp::cpu::greedy(compat, rows, cols);
}

Solution solve(const Tiles& tiles, const SolveOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Solution s;
  s.backend = resolve_backend(options.backend);
  s.method = options.method;
  if (s.method == Method::automatic)
    s.method = tiles.count() <= kMaxExhaustiveTiles ? Method::exhaustive : Method::greedy;
  const Compatibility c = compatibility(tiles, options.measure, s.backend);
  s.tile_at = s.method == Method::exhaustive ? solve_exhaustive(c, tiles.grid.rows, tiles.grid.cols, s.backend)
                                             : solve_greedy(c, tiles.grid.rows, tiles.grid.cols);
  s.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

// ---------------------------------------------------------------------------------------------
// Benchmark puzzles

namespace {
struct SplitMix64 {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // uniform in [0, bound) by rejection (no modulo bias)
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t limit = ~std::uint64_t(0) - (~std::uint64_t(0) % bound);
    std::uint64_t v;
    do v = next();
    while (v >= limit);
    return v % bound;
  }
};

void check_permutation(const std::vector<int>& v, int n, const char* what) {
  if (static_cast<int>(v.size()) != n)
    throw InputError(std::string(what) + " has " + std::to_string(v.size()) + " entries, the grid has " +
                     std::to_string(n) + " tiles");
  std::vector<char> seen(n, 0);
  for (int x : v) {
    if (x < 0 || x >= n || seen[x]) throw InputError(std::string(what) + " is not a permutation of the tiles");
    seen[x] = 1;
  }
}
}  // namespace

Scrambled scramble(ImageView<const RgbaF32> image, const Grid& grid, std::uint64_t seed) {
  const Tiles tiles = extract_tiles(image, grid);  // validates the grid
  const int n = grid.tiles(), K = grid.tile;
  Scrambled s;
  s.grid = grid;
  s.truth.resize(n);
  for (int i = 0; i < n; ++i) s.truth[i] = i;
  SplitMix64 rng{seed};
  for (int i = n - 1; i > 0; --i) std::swap(s.truth[i], s.truth[rng.below(static_cast<std::uint64_t>(i) + 1)]);
  s.image = Image<RgbaF32>(std::int64_t(grid.cols) * K, std::int64_t(grid.rows) * K);
  for (int t = 0; t < n; ++t) {
    const float* in = tiles.tile(s.truth[t]);
    const std::int64_t x0 = std::int64_t(t % grid.cols) * K, y0 = std::int64_t(t / grid.cols) * K;
    for (int y = 0; y < K; ++y)
      for (int x = 0; x < K; ++x, in += 3) s.image(x0 + x, y0 + y) = RgbaF32{in[0], in[1], in[2], 255.f};
  }
  return s;
}

Score score(int rows, int cols, const std::vector<int>& tile_at, const std::vector<int>& truth) {
  const int n = rows * cols;
  if (rows < 1 || cols < 1) throw InputError("score: empty grid");
  check_permutation(tile_at, n, "placement");
  check_permutation(truth, n, "truth");
  // where[o] = result position of the tile whose original position is o
  std::vector<int> where(n);
  int direct = 0;
  for (int q = 0; q < n; ++q) {
    const int o = truth[tile_at[q]];
    where[o] = q;
    direct += o == q;
  }
  int good = 0, pairs = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const int o = r * cols + c, q = where[o];
      if (c + 1 < cols) {
        ++pairs;
        const int q2 = where[o + 1];
        good += (q % cols) + 1 < cols && q2 == q + 1;
      }
      if (r + 1 < rows) {
        ++pairs;
        good += where[o + cols] == q + cols;
      }
    }
  Score s;
  s.direct = static_cast<double>(direct) / n;
  s.neighbor = pairs ? static_cast<double>(good) / pairs : 1.0;
  s.perfect = direct == n;
  return s;
}

}  // namespace winnow::puzzle

// ---------------------------------------------------------------------------------------------
// Strips: shared by the CPU and CUDA compatibility

namespace winnow::detail::puzzle {

using winnow::puzzle::Compatibility;
using winnow::puzzle::Measure;
using winnow::puzzle::Tiles;

std::vector<float> make_strips(const Tiles& tiles) {
  const int n = tiles.count(), K = tiles.grid.tile;
  std::vector<float> strips(static_cast<std::size_t>(n) * 4 * 2 * K * 3);
  for (int t = 0; t < n; ++t) {
    const float* px = tiles.tile(t);
    auto at = [&](int x, int y) { return px + (static_cast<std::size_t>(y) * K + x) * 3; };
    for (int side = 0; side < 4; ++side)
      for (int line = 0; line < 2; ++line) {
        float* out = strips.data() + ((static_cast<std::size_t>(t) * 4 + side) * 2 + line) * K * 3;
        for (int k = 0; k < K; ++k) {
          const float* p = side == kLeft    ? at(line, k)
                           : side == kRight ? at(K - 1 - line, k)
                           : side == kTop   ? at(k, line)
                                            : at(k, K - 1 - line);
          out[3 * k] = p[0];
          out[3 * k + 1] = p[1];
          out[3 * k + 2] = p[2];
        }
      }
  }
  return strips;
}

}  // namespace winnow::detail::puzzle
