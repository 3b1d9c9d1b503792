// Tile puzzles: scorer, exhaustive search against a brute-force oracle, CPU vs CUDA
// compatibility, round trips on bundled photos (library and CLI), bad CLI input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "common/gpu_guard.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"
#include "winnow/puzzle.hpp"

namespace {

namespace pz = winnow::puzzle;
using winnow::Backend;
using winnow::test::data_path;
using winnow::test::run_cli;
using winnow::test::TempDir;

std::vector<int> iota_vec(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Scorer on hand-made placements (2 x 3 grid: 7 adjacent pairs)

TEST(PuzzleScore, Perfect) {
  const auto s = pz::score(2, 3, iota_vec(6), iota_vec(6));
  EXPECT_DOUBLE_EQ(s.direct, 1.0);
  EXPECT_DOUBLE_EQ(s.neighbor, 1.0);
  EXPECT_TRUE(s.perfect);
}

TEST(PuzzleScore, PerfectThroughScrambledTruth) {
  // puzzle tile t came from truth[t]; the right answer puts tile t at truth[t]
  const std::vector<int> truth = {4, 0, 5, 2, 1, 3};
  std::vector<int> at(6);
  for (int t = 0; t < 6; ++t) at[truth[t]] = t;
  const auto s = pz::score(2, 3, at, truth);
  EXPECT_TRUE(s.perfect);
  EXPECT_DOUBLE_EQ(s.neighbor, 1.0);
}

TEST(PuzzleScore, Swapped) {
  // tiles 0 and 1 swapped:  1 0 2 / 3 4 5
  const auto s = pz::score(2, 3, {1, 0, 2, 3, 4, 5}, iota_vec(6));
  EXPECT_DOUBLE_EQ(s.direct, 4.0 / 6.0);
  // correct pairs: 3-4, 4-5 (horizontal), 2-5 (vertical) = 3 of 7
  EXPECT_DOUBLE_EQ(s.neighbor, 3.0 / 7.0);
  EXPECT_FALSE(s.perfect);
}

TEST(PuzzleScore, ShiftedColumns) {
  // every row rotated right by one: 2 0 1 / 5 3 4
  const auto s = pz::score(2, 3, {2, 0, 1, 5, 3, 4}, iota_vec(6));
  EXPECT_DOUBLE_EQ(s.direct, 0.0);
  // horizontal 0-1 and 3-4 kept; 1-2 and 4-5 broken; all 3 vertical kept
  EXPECT_DOUBLE_EQ(s.neighbor, 5.0 / 7.0);
}

TEST(PuzzleScore, RejectsNonPermutations) {
  EXPECT_THROW(pz::score(2, 2, {0, 0, 1, 2}, iota_vec(4)), winnow::InputError);
  EXPECT_THROW(pz::score(2, 2, iota_vec(3), iota_vec(4)), winnow::InputError);
}

// ---------------------------------------------------------------------------------------------
// Exhaustive search == brute force (std::next_permutation), on every backend

std::vector<Backend> backends() {
  std::vector<Backend> b{Backend::cpu};
  if (winnow::cuda_available()) b.push_back(Backend::cuda);
  return b;
}

pz::Compatibility random_compat(int n, std::uint32_t seed, int levels = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.5f, 100.f);
  std::uniform_int_distribution<int> q(1, std::max(1, levels));
  pz::Compatibility c;
  c.n = n;
  c.lr.resize(n * n);
  c.tb.resize(n * n);
  for (int k = 0; k < n * n; ++k) {
    c.lr[k] = levels ? float(q(rng)) : u(rng);
    c.tb[k] = levels ? float(q(rng)) : u(rng);
  }
  for (int i = 0; i < n; ++i) c.lr[i * n + i] = c.tb[i * n + i] = std::numeric_limits<float>::infinity();
  return c;
}

std::vector<int> brute_force(const pz::Compatibility& c, int rows, int cols) {
  std::vector<int> p = iota_vec(rows * cols), best = p;
  float best_cost = std::numeric_limits<float>::infinity();
  do {
    const float cost = pz::placement_cost(c, rows, cols, p);
    if (cost < best_cost) {  // strict: the first (lowest lexicographic) optimum wins
      best_cost = cost;
      best = p;
    }
  } while (std::next_permutation(p.begin(), p.end()));
  return best;
}

TEST(PuzzleExhaustive, MatchesBruteForceOnRandomMatrices) {
  const std::pair<int, int> shapes[] = {{1, 2}, {2, 2}, {1, 5}, {2, 3}, {2, 4}, {3, 3}};
  for (Backend b : backends()) {
    std::uint32_t seed = 11;
    for (auto [r, c] : shapes)
      for (int levels : {0, 3}) {  // continuous costs, and few distinct values (many ties)
        const auto m = random_compat(r * c, seed++, levels);
        const auto oracle = brute_force(m, r, c);
        EXPECT_EQ(pz::solve_exhaustive(m, r, c, b), oracle)
            << r << "x" << c << " levels " << levels << " backend " << winnow::to_string(b);
      }
  }
}

TEST(PuzzleExhaustive, AllTiesGiveIdentity) {
  pz::Compatibility c;
  c.n = 9;
  c.lr.assign(81, 1.f);
  c.tb.assign(81, 1.f);
  for (Backend b : backends()) EXPECT_EQ(pz::solve_exhaustive(c, 3, 3, b), iota_vec(9));
}

TEST(PuzzleExhaustive, RejectsLargeGrids) {
  const auto m = random_compat(10, 1);
  EXPECT_THROW(pz::solve_exhaustive(m, 2, 5, Backend::cpu), winnow::InputError);
}

TEST(PuzzleExhaustive, GpuEqualsCpu) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  for (std::uint32_t seed = 100; seed < 104; ++seed) {
    const auto m = random_compat(9, seed);
    EXPECT_EQ(pz::solve_exhaustive(m, 3, 3, Backend::cuda), pz::solve_exhaustive(m, 3, 3, Backend::cpu));
  }
}

// ---------------------------------------------------------------------------------------------
// Compatibility

winnow::Image<winnow::RgbaF32> load(const std::string& name) { return winnow::io::read_rgbaf(data_path(name)); }

TEST(PuzzleCompat, GpuMatchesCpu) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const auto img = load("astronaut.png");
  const auto grid = pz::grid_from_shape(img.width(), img.height(), 6, 7);
  const auto tiles = pz::extract_tiles(img.view(), grid);
  for (auto m : {pz::Measure::ssd, pz::Measure::prediction, pz::Measure::mgc}) {
    const auto cpu = pz::compatibility(tiles, m, Backend::cpu);
    auto gpu = pz::compatibility(tiles, m, Backend::cuda);
    ASSERT_EQ(gpu.lr.size(), cpu.lr.size());
    int bad = 0;
    for (std::size_t k = 0; k < cpu.lr.size(); ++k)
      for (auto [a, b] : {std::pair{cpu.lr[k], gpu.lr[k]}, std::pair{cpu.tb[k], gpu.tb[k]}}) {
        if (std::isinf(a)) {
          bad += !std::isinf(b);
        } else {
          bad += !(std::fabs(a - b) <= 1e-3f * std::max(1.f, std::fabs(a)));
        }
      }
    EXPECT_EQ(bad, 0) << pz::to_string(m);
  }
}

TEST(PuzzleCompat, TrueNeighboursFitBest) {
  // On an unscrambled photo most tiles' best right partner is their true right neighbour.
  const auto img = load("chelsea.png");
  const auto grid = pz::grid_from_tile(img.width(), img.height(), 30);
  const auto tiles = pz::extract_tiles(img.view(), grid);
  for (auto m : {pz::Measure::ssd, pz::Measure::prediction, pz::Measure::mgc}) {
    const auto c = pz::compatibility(tiles, m, Backend::cpu);
    int right = 0, pairs = 0;
    for (int r = 0; r < grid.rows; ++r)
      for (int col = 0; col + 1 < grid.cols; ++col) {
        const int i = r * grid.cols + col;
        int best = -1;
        float bv = std::numeric_limits<float>::infinity();
        for (int j = 0; j < c.n; ++j)
          if (c.left_right(i, j) < bv) bv = c.left_right(i, j), best = j;
        right += best == i + 1;
        ++pairs;
      }
    EXPECT_GT(double(right) / pairs, 0.6) << pz::to_string(m);
  }
}

// ---------------------------------------------------------------------------------------------
// Round trips through the library

pz::Score round_trip(const winnow::Image<winnow::RgbaF32>& img, pz::Grid grid, std::uint64_t seed, pz::SolveOptions o) {
  const auto s = pz::scramble(img.view(), grid, seed);
  const auto tiles = pz::extract_tiles(s.image.view(), grid);
  const auto sol = pz::solve(tiles, o);
  return pz::score(grid.rows, grid.cols, sol.tile_at, s.truth);
}

TEST(PuzzleRoundTrip, ExhaustiveIsPerfectOnPhotos) {
  const std::pair<int, int> shapes[] = {{2, 2}, {3, 3}, {2, 4}};
  for (const char* name : {"astronaut.png", "chelsea.png", "mit432/01.png", "mit432/08.png", "mit432/14.png"}) {
    const auto img = load(name);
    for (auto [r, c] : shapes)
      for (Backend b : backends())
        for (auto m : {pz::Measure::prediction, pz::Measure::mgc}) {
          pz::SolveOptions o;
          o.method = pz::Method::exhaustive;
          o.measure = m;
          o.backend = b;
          const auto grid = pz::grid_from_shape(img.width(), img.height(), r, c);
          const auto s = round_trip(img, grid, 7 + r * 10 + c, o);
          EXPECT_TRUE(s.perfect) << name << " " << r << "x" << c << " " << pz::to_string(m) << " "
                                 << winnow::to_string(b) << " direct " << s.direct;
        }
  }
}

TEST(PuzzleRoundTrip, GreedyOnLargerGrids) {
  struct Case {
    const char* name;
    int tile;
    double floor_direct, floor_neighbor;
  };
  const Case cases[] = {
      {"astronaut.png", 64, 0.9, 0.9},     // 8 x 8
      {"chelsea.png", 30, 0.8, 0.8},       // 10 x 15
      {"mit432/08.png", 28, 0.95, 0.95},   // 18 x 24, the benchmark's size
      {"mit432/10.png", 28, 0.95, 0.95},
  };
  for (const auto& cs : cases) {
    const auto img = load(cs.name);
    const auto grid = pz::grid_from_tile(img.width(), img.height(), cs.tile);
    pz::SolveOptions o;
    o.method = pz::Method::automatic;  // > 9 tiles: greedy
    o.measure = pz::Measure::mgc;
    o.backend = Backend::cpu;
    const auto s = round_trip(img, grid, 3, o);
    EXPECT_GE(s.direct, cs.floor_direct) << cs.name;
    EXPECT_GE(s.neighbor, cs.floor_neighbor) << cs.name;
  }
}

TEST(PuzzleRoundTrip, GreedySolvesSmallGridsToo) {
  const auto img = load("astronaut.png");
  pz::SolveOptions o;
  o.method = pz::Method::greedy;
  o.backend = Backend::cpu;
  const auto s = round_trip(img, pz::grid_from_shape(img.width(), img.height(), 3, 3), 5, o);
  EXPECT_TRUE(s.perfect);
}

TEST(PuzzleGrid, Shapes) {
  EXPECT_EQ(pz::grid_from_shape(672, 504, 18, 24), (pz::Grid{18, 24, 28}));
  EXPECT_EQ(pz::grid_from_tile(672, 504, 28), (pz::Grid{18, 24, 28}));
  EXPECT_EQ(pz::grid_from_tile(100, 50, 30), (pz::Grid{1, 3, 30}));
  EXPECT_THROW(pz::grid_from_tile(100, 50, 0), winnow::InputError);
  EXPECT_THROW(pz::grid_from_tile(100, 50, 60), winnow::InputError);
  EXPECT_THROW(pz::grid_from_shape(10, 10, 6, 6), winnow::InputError);
  EXPECT_EQ(pz::parse_grid("3x4"), (std::pair<int, int>{3, 4}));
  EXPECT_THROW(pz::parse_grid("3x"), winnow::InputError);
  EXPECT_THROW(pz::parse_grid("0x3"), winnow::InputError);
}

TEST(PuzzleScramble, DeterministicPermutation) {
  const auto img = load("chelsea.png");
  const auto g = pz::grid_from_shape(img.width(), img.height(), 4, 5);
  const auto a = pz::scramble(img.view(), g, 42), b = pz::scramble(img.view(), g, 42), c = pz::scramble(img.view(), g, 43);
  EXPECT_EQ(a.truth, b.truth);
  EXPECT_NE(a.truth, c.truth);
  auto sorted = a.truth;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota_vec(20));
  EXPECT_EQ(a.image.width(), 5 * g.tile);
  EXPECT_EQ(a.image.height(), 4 * g.tile);
}

// ---------------------------------------------------------------------------------------------
// CLI


TEST(PuzzleCli, ScrambleUnscrambleScore) {
  TempDir dir;
  const std::string img = data_path("chelsea.png").string();
  auto r = run_cli({"scramble", img, "--grid", "3x3", "--seed", "9", "--out", (dir / "p.png").string(), "--truth",
                    (dir / "p.truth.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli({"unscramble", (dir / "p.png").string(), "--grid", "3x3", "--backend", "cpu", "--out",
               (dir / "r.png").string(), "--placement", (dir / "p.placement.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("grid 3x3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("method exhaustive"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("backend cpu"), std::string::npos) << r.out;
  r = run_cli({"puzzle-score", (dir / "p.placement.json").string(), (dir / "p.truth.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("perfect yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("direct 1.0000"), std::string::npos) << r.out;

  // a second pair, greedy on a larger grid, then the directory form
  r = run_cli({"scramble", img, "--tile", "50", "--seed", "2", "--out", (dir / "q.png").string(), "--truth",
               (dir / "q.truth.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli({"unscramble", (dir / "q.png").string(), "--tile", "50", "--method", "greedy", "--measure", "mgc",
               "--backend", "cpu", "--out", (dir / "q.restored.png").string(), "--placement",
               (dir / "q.placement.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli({"puzzle-score", "-q", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("average of 2"), std::string::npos) << r.out;

  // the restored image is the cropped original (8-bit rounding of the same pixels)
  const auto restored = winnow::io::read_rgba8(dir / "r.png");
  const auto orig = winnow::io::read_rgba8(data_path("chelsea.png"));
  int diff = 0;
  for (std::int64_t y = 0; y < restored.height(); ++y)
    for (std::int64_t x = 0; x < restored.width(); ++x) diff += !(restored(x, y) == orig(x, y));
  EXPECT_EQ(diff, 0);
}

void expect_bad(const std::vector<std::string>& args, const TempDir& dir, const std::string& names) {
  const auto before = dir.files();
  const auto r = run_cli(args);
  expect_one_line_error(r, names);
  EXPECT_EQ(dir.files(), before) << "output left behind";
}

TEST(PuzzleCli, BadInput) {
  TempDir dir;
  const std::string img = data_path("chelsea.png").string();
  const std::string out = (dir / "out.png").string();
  expect_bad({"scramble", img, "--grid", "400x400", "--out", out}, dir, "chelsea.png");
  expect_bad({"scramble", img, "--tile", "0", "--out", out}, dir, "chelsea.png");
  expect_bad({"scramble", img, "--grid", "3by3", "--out", out}, dir, "3by3");
  expect_bad({"scramble", (dir / "missing.png").string(), "--grid", "3x3", "--out", out}, dir, "missing.png");
  {
    std::ofstream(dir / "garbage.png") << "not an image";
  }
  expect_bad({"unscramble", (dir / "garbage.png").string(), "--grid", "3x3", "--out", out}, dir, "garbage.png");
  expect_bad({"unscramble", img, "--grid", "4x4", "--method", "exhaustive", "--out", out}, dir, "chelsea.png");

  // mismatched truth: a 3x3 truth against a 2x2 placement
  ASSERT_EQ(run_cli({"scramble", img, "--grid", "3x3", "--out", (dir / "a.png").string(), "--truth",
                     (dir / "a.truth.json").string()})
                .exit_code,
            0);
  ASSERT_EQ(run_cli({"scramble", img, "--grid", "2x2", "--out", (dir / "b.png").string()}).exit_code, 0);
  ASSERT_EQ(run_cli({"unscramble", (dir / "b.png").string(), "--grid", "2x2", "--backend", "cpu", "--out",
                     (dir / "b.r.png").string(), "--placement", (dir / "b.placement.json").string()})
                .exit_code,
            0);
  expect_bad({"puzzle-score", (dir / "b.placement.json").string(), (dir / "a.truth.json").string()}, dir,
             "a.truth.json");
  expect_bad({"puzzle-score", (dir / "b.placement.json").string(), img}, dir, "chelsea.png");

  // Placements that are not whole numbers, or an empty grid.
  const std::string head = R"({"format": "winnow-puzzle-placement", "version": 1, )";
  std::ofstream(dir / "half.placement.json") << head << R"("rows": 2, "cols": 2, "tile_at": [0.5, 1, 2, 3]})";
  expect_bad({"puzzle-score", (dir / "half.placement.json").string(), (dir / "a.truth.json").string()}, dir,
             "half.placement.json");
  std::ofstream(dir / "empty.placement.json") << head << R"("rows": 0, "cols": 0, "tile_at": []})";
  const auto r = run_cli({"puzzle-score", (dir / "empty.placement.json").string(), (dir / "a.truth.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("at least 1"), std::string::npos) << r.err;
}

}  // namespace
