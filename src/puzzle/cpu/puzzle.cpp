// Tile puzzles on the CPU: the compatibility of every ordered pair of tile sides (OpenMP over the
// first tile; see ../puzzle.cpp for the measures and their cost) and the exhaustive search (the n!
// ranks split into chunks, each chunk's first permutation decoded and the rest walked with
// std::next_permutation, least (cost, rank) wins).
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

namespace winnow::detail::puzzle {

using winnow::puzzle::Compatibility;
using winnow::puzzle::Measure;
using winnow::puzzle::Tiles;

namespace cpu {

Compatibility compatibility(const Tiles& tiles, Measure measure) {
  const int n = tiles.count(), K = tiles.grid.tile;
  const std::vector<float> strips = make_strips(tiles);
  const std::size_t stride = static_cast<std::size_t>(2) * K * 3;
  auto strip = [&](int t, int side) { return strips.data() + (static_cast<std::size_t>(t) * 4 + side) * stride; };
  std::vector<float> stats;
  if (measure == Measure::mgc) {
    stats.resize(static_cast<std::size_t>(n) * 4 * kStatsFloats);
    for (int t = 0; t < n; ++t)
      for (int side = 0; side < 4; ++side)
        mgc_stats(strip(t, side), K, stats.data() + (static_cast<std::size_t>(t) * 4 + side) * kStatsFloats);
  }
  auto st = [&](int t, int side) { return stats.data() + (static_cast<std::size_t>(t) * 4 + side) * kStatsFloats; };
  Compatibility c;
  c.n = n;
  c.measure = measure;
  c.lr.assign(static_cast<std::size_t>(n) * n, 0.f);
  c.tb.assign(static_cast<std::size_t>(n) * n, 0.f);
  const float inf = std::numeric_limits<float>::infinity();
#pragma omp parallel for schedule(dynamic, 4)
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      float lr, tb;
      if (i == j) {
        lr = tb = inf;
      } else if (measure == Measure::ssd) {
        lr = measure_ssd(strip(i, kRight), strip(j, kLeft), K);
        tb = measure_ssd(strip(i, kBottom), strip(j, kTop), K);
      } else if (measure == Measure::prediction) {
        lr = measure_prediction(strip(i, kRight), strip(j, kLeft), K);
        tb = measure_prediction(strip(i, kBottom), strip(j, kTop), K);
      } else {
        lr = measure_mgc(strip(i, kRight), strip(j, kLeft), st(i, kRight), st(j, kLeft), K);
        tb = measure_mgc(strip(i, kBottom), strip(j, kTop), st(i, kBottom), st(j, kTop), K);
      }
      c.lr[static_cast<std::size_t>(i) * n + j] = lr;
      c.tb[static_cast<std::size_t>(i) * n + j] = tb;
    }
  }
  return c;
}

std::vector<int> exhaustive(const Compatibility& compat, int rows, int cols) {
  const int n = rows * cols;
  std::uint64_t total = 1;
  for (int i = 2; i <= n; ++i) total *= i;
  const std::uint64_t chunk = 4096;
  const std::int64_t chunks = static_cast<std::int64_t>((total + chunk - 1) / chunk);
  std::uint64_t best_key = ~std::uint64_t(0);
#pragma omp parallel
  {
    std::uint64_t local = ~std::uint64_t(0);
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < chunks; ++ch) {
      int p[16];
      const std::uint64_t begin = static_cast<std::uint64_t>(ch) * chunk;
      const std::uint64_t end = std::min(total, begin + chunk);
      decode_permutation(begin, n, p);
      for (std::uint64_t k = begin; k < end; ++k) {
        const float cost = permutation_cost(p, rows, cols, compat.lr.data(), compat.tb.data(), n);
        const std::uint64_t key = (static_cast<std::uint64_t>(orderable(cost)) << 32) | k;
        local = std::min(local, key);
        std::next_permutation(p, p + n);
      }
    }
#pragma omp critical
    best_key = std::min(best_key, local);
  }
  std::vector<int> out(n);
  decode_permutation(best_key & 0xFFFFFFFFull, n, out.data());
  return out;
}

}  // namespace cpu
}  // namespace winnow::detail::puzzle
