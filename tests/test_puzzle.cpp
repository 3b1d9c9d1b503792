// Tile puzzles: scorer, placement_cost on hand-worked cases, exhaustive search against a
// brute-force oracle with its own cost (per backend; CUDA skipped without a device), CPU vs CUDA
// compatibility, round trips on bundled photos (library and CLI), bad CLI input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
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
// placement_cost on hand-worked cases. Convention (puzzle.hpp): tile_at[q] is the tile at raster
// position q; lr[i * n + j] is tile i immediately left of tile j, tb[i * n + j] tile i
// immediately above tile j. The matrices are asymmetric and lr differs from tb, so reading either
// matrix transposed, or one for the other, gives a different number.

pz::Compatibility hand_compat(int n) {
  // lr(i, j) = 10 i + j, tb(i, j) = 100 i + j; the diagonal (a tile beside itself) is +inf.
  pz::Compatibility c;
  c.n = n;
  c.lr.resize(n * n);
  c.tb.resize(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const float inf = std::numeric_limits<float>::infinity();
      c.lr[i * n + j] = i == j ? inf : float(10 * i + j);
      c.tb[i * n + j] = i == j ? inf : float(100 * i + j);
    }
  return c;
}

TEST(PuzzlePlacementCost, OneRowOfTwo) {
  const auto c = hand_compat(2);
  // [0 1]: one horizontal pair, 0 left of 1: lr(0,1) = 1. No vertical pair.
  EXPECT_EQ(pz::placement_cost(c, 1, 2, {0, 1}), 1.f);
  // [1 0]: lr(1,0) = 10.
  EXPECT_EQ(pz::placement_cost(c, 1, 2, {1, 0}), 10.f);
}

TEST(PuzzlePlacementCost, OneColumnOfTwo) {
  const auto c = hand_compat(2);
  // 0 above 1: tb(0,1) = 1; no horizontal pair.
  EXPECT_EQ(pz::placement_cost(c, 2, 1, {0, 1}), 1.f);
  // 1 above 0: tb(1,0) = 100.
  EXPECT_EQ(pz::placement_cost(c, 2, 1, {1, 0}), 100.f);
}

TEST(PuzzlePlacementCost, TwoByTwo) {
  const auto c = hand_compat(4);
  // 2 0      horizontal: lr(2,0) + lr(3,1) = 20 + 31 = 51
  // 3 1      vertical:   tb(2,3) + tb(0,1) = 203 + 1 = 204      total 255
  // (transposed lookups would give 2 + 13 + 302 + 100 = 417; lr and tb exchanged 200 + 301 + 23 + 1 = 525)
  EXPECT_EQ(pz::placement_cost(c, 2, 2, {2, 0, 3, 1}), 255.f);
  // 0 1      horizontal: lr(0,1) + lr(2,3) = 1 + 23 = 24
  // 2 3      vertical:   tb(0,2) + tb(1,3) = 2 + 103 = 105      total 129
  EXPECT_EQ(pz::placement_cost(c, 2, 2, {0, 1, 2, 3}), 129.f);
}

TEST(PuzzlePlacementCost, TwoByThree) {
  const auto c = hand_compat(6);
  // 5 4 3    horizontal: lr(5,4) + lr(4,3) + lr(0,1) + lr(1,2) = 54 + 43 + 1 + 12 = 110
  // 0 1 2    vertical:   tb(5,0) + tb(4,1) + tb(3,2) = 500 + 401 + 302 = 1203   total 1313
  EXPECT_EQ(pz::placement_cost(c, 2, 3, {5, 4, 3, 0, 1, 2}), 1313.f);
}

// ---------------------------------------------------------------------------------------------
// Exhaustive search == brute force (std::next_permutation), once per backend: the CUDA instance
// is reported as skipped without a device (and fails under WINNOW_REQUIRE_GPU=1).

class PuzzleExhaustiveBackend : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::cuda) WINNOW_REQUIRE_CUDA_OR_SKIP();
  }
};

std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
  return std::string(winnow::to_string(info.param));
}

enum class Costs {
  continuous,  // uniform floats in [0.5, 100): sums round differently in different orders
  dyadic,      // multiples of 1/64 in [0.5, 100]: every sum of <= 12 of them is exact in float
  few_levels,  // 1, 2 or 3: many exact ties
};

pz::Compatibility random_compat(int n, std::uint32_t seed, Costs costs = Costs::continuous) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.5f, 100.f);
  std::uniform_int_distribution<int> sixty_fourths(32, 6400);
  std::uniform_int_distribution<int> level(1, 3);
  auto draw = [&]() -> float {
    switch (costs) {
      case Costs::dyadic: return float(sixty_fourths(rng)) / 64.f;
      case Costs::few_levels: return float(level(rng));
      default: return u(rng);
    }
  };
  pz::Compatibility c;
  c.n = n;
  c.lr.resize(n * n);
  c.tb.resize(n * n);
  for (int k = 0; k < n * n; ++k) {
    c.lr[k] = draw();
    c.tb[k] = draw();
  }
  for (int i = 0; i < n; ++i) c.lr[i * n + i] = c.tb[i * n + i] = std::numeric_limits<float>::infinity();
  return c;
}

// The oracle's own objective, not the library's: for every position, the seam to its right
// neighbour (lr[left * n + right]) and to the neighbour below (tb[top * n + bottom]), in double.
// With dyadic or few-level costs every partial sum is exact, so this and the library's float sum
// agree bit for bit whatever the order, and equal costs are true ties.
double oracle_cost(const pz::Compatibility& c, int rows, int cols, const std::vector<int>& tile_at) {
  double sum = 0;
  for (int r = 0; r < rows; ++r)
    for (int col = 0; col < cols; ++col) {
      const int here = tile_at[r * cols + col];
      if (col + 1 < cols) sum += c.lr[static_cast<std::size_t>(here) * c.n + tile_at[r * cols + col + 1]];
      if (r + 1 < rows) sum += c.tb[static_cast<std::size_t>(here) * c.n + tile_at[(r + 1) * cols + col]];
    }
  return sum;
}

std::vector<int> brute_force(const pz::Compatibility& c, int rows, int cols) {
  std::vector<int> p = iota_vec(rows * cols), best = p;
  double best_cost = std::numeric_limits<double>::infinity();
  do {
    const double cost = oracle_cost(c, rows, cols, p);
    if (cost < best_cost) {  // strict: the first (lowest lexicographic) optimum wins
      best_cost = cost;
      best = p;
    }
  } while (std::next_permutation(p.begin(), p.end()));
  return best;
}

TEST(PuzzleOracle, CostAgreesWithPlacementCostOnExactValues) {
  // The brute force stands on oracle_cost; on exact (dyadic) values both formulas must give the
  // same number for every placement of a 2x3 grid (720 of them), or one of them is wrong.
  const auto m = random_compat(6, 5, Costs::dyadic);
  std::vector<int> p = iota_vec(6);
  int differ = 0;
  do differ += double(pz::placement_cost(m, 2, 3, p)) != oracle_cost(m, 2, 3, p);
  while (std::next_permutation(p.begin(), p.end()));
  EXPECT_EQ(differ, 0);
}

TEST_P(PuzzleExhaustiveBackend, MatchesBruteForceOnRandomMatrices) {
  const std::pair<int, int> shapes[] = {{1, 2}, {2, 1}, {2, 2}, {1, 5}, {2, 3}, {3, 2}, {2, 4}, {3, 3}};
  std::uint32_t seed = 11;
  for (auto [r, c] : shapes)
    for (Costs costs : {Costs::dyadic, Costs::few_levels}) {  // distinct costs, and many ties
      const auto m = random_compat(r * c, seed++, costs);
      const auto oracle = brute_force(m, r, c);
      EXPECT_EQ(pz::solve_exhaustive(m, r, c, GetParam()), oracle)
          << r << "x" << c << (costs == Costs::dyadic ? " dyadic" : " few levels");
    }
}

TEST_P(PuzzleExhaustiveBackend, AllTiesGiveIdentity) {
  pz::Compatibility c;
  c.n = 9;
  c.lr.assign(81, 1.f);
  c.tb.assign(81, 1.f);
  EXPECT_EQ(pz::solve_exhaustive(c, 3, 3, GetParam()), iota_vec(9));
}

INSTANTIATE_TEST_SUITE_P(Backends, PuzzleExhaustiveBackend, ::testing::Values(Backend::cpu, Backend::cuda),
                         backend_name);

TEST(PuzzleExhaustive, RejectsLargeGrids) {
  const auto m = random_compat(10, 1);
  EXPECT_THROW(pz::solve_exhaustive(m, 2, 5, Backend::cpu), winnow::InputError);
}

TEST(PuzzleExhaustive, GpuEqualsCpu) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  for (std::uint32_t seed = 100; seed < 104; ++seed) {
    const auto m = random_compat(9, seed, Costs::continuous);  // float rounding: both must add alike
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

class PuzzleRoundTripBackend : public PuzzleExhaustiveBackend {};

TEST_P(PuzzleRoundTripBackend, ExhaustiveIsPerfectOnPhotos) {
  const std::pair<int, int> shapes[] = {{2, 2}, {3, 3}, {2, 4}};
  for (const char* name : {"astronaut.png", "chelsea.png", "mit432/01.png", "mit432/08.png", "mit432/14.png"}) {
    const auto img = load(name);
    for (auto [r, c] : shapes)
      for (auto m : {pz::Measure::prediction, pz::Measure::mgc}) {
        pz::SolveOptions o;
        o.method = pz::Method::exhaustive;
        o.measure = m;
        o.backend = GetParam();
        const auto grid = pz::grid_from_shape(img.width(), img.height(), r, c);
        const auto s = round_trip(img, grid, 7 + r * 10 + c, o);
        EXPECT_TRUE(s.perfect) << name << " " << r << "x" << c << " " << pz::to_string(m) << " direct " << s.direct;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, PuzzleRoundTripBackend, ::testing::Values(Backend::cpu, Backend::cuda),
                         backend_name);

TEST(PuzzleRoundTrip, GreedyOnLargerGrids) {
  struct Case {
    const char* name;
    int tile;
    double floor_direct, floor_neighbor;
  };
  const Case cases[] = {
      {"astronaut.png", 64, 0.9, 0.9},    // 8 x 8
      {"chelsea.png", 30, 0.8, 0.8},      // 10 x 15
      {"mit432/08.png", 28, 0.95, 0.95},  // 18 x 24, the benchmark's size
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
  const auto a = pz::scramble(img.view(), g, 42), b = pz::scramble(img.view(), g, 42),
             c = pz::scramble(img.view(), g, 43);
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
  { std::ofstream(dir / "garbage.png") << "not an image"; }
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
