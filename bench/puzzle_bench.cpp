// Tile-puzzle benchmark.
// 1. MIT 432 (Cho et al. 2010): each of the 20 photos (672x504, 16-bit) is cut into 28-px tiles
//    (18 x 24 = 432), scrambled with a fixed seed (1000 + photo number), solved (greedy) and
//    scored, for each measure: a table per photo and the average (direct, neighbor, perfect,
//    time = compatibility + search, wall clock).
// 2. 3x3 exhaustive search timing, compatibility included (host call to host result: tiles in,
//    placement out), on the CPU and, when a device answers, on CUDA: warm-up, median of 50.
//
// usage: puzzle_bench [--data DIR] [--measures ssd,prediction,mgc] [--backend cpu|cuda|auto]
//                     [--images N] [--seeds N] [--skip-mit] [--skip-exhaustive] [--energy] [--seams]
//                     [--dump DIR] [--extra]
// --energy adds the ratio of the solution's total dissimilarity to the true layout's (below 1:
// the measure prefers a wrong layout; above 1: the search missed a better one); --dump DIR writes
// each restored photo as DIR/<measure>_<photo>.png; --seams prints, per photo, the largest seam
// dissimilarities of the solution and of the truth, the number of pixel-identical tiles and a map
// of the misplaced tiles (offset to their true place, '=' for a tile identical to another);
// --extra solves astronaut, chelsea and coins at 16/24/32/48-px tiles (seed 7), photos the
// solver's parameters were not chosen on.
// --seeds N (N > 1) scrambles every photo N times instead of once: photo k with seed
// 1000 + k + 10000 s, s = 0..N-1 (s = 0 is the single-seed puzzle), the --extra photos with
// 7 + 10000 s. It reports per photo the mean, min, max and standard deviation (sample, N - 1) of
// direct and neighbor accuracy over the seeds and the number solved perfectly; then the MIT
// average of each seed set s (the number comparable with published single-scramble results) and
// the mean, min, max and standard deviation of those N averages and perfect counts.
// (--energy, --seams and --dump apply to the single-seed run only.)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "winnow/backend.hpp"
#include "winnow/io.hpp"
#include "winnow/progress.hpp"
#include "winnow/puzzle.hpp"

namespace pz = winnow::puzzle;
using winnow::Backend;

#ifndef WINNOW_PUZZLE_BENCH_DATA
#define WINNOW_PUZZLE_BENCH_DATA "examples/data"
#endif

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One benchmark puzzle: `img` cut into `tile`-px tiles, scrambled with `seed`, solved greedily
// with `measure` (compatibility on `backend`), scored.
struct Trial {
  pz::Grid grid;
  pz::Scrambled scrambled;
  pz::Tiles tiles;
  pz::Solution solution;
  pz::Score score;
};

Trial run_trial(const winnow::Image<winnow::RgbaF32>& img, int tile, std::uint64_t seed, pz::Measure measure,
                Backend backend) {
  Trial t;
  t.grid = pz::grid_from_tile(img.width(), img.height(), tile);
  t.scrambled = pz::scramble(img.view(), t.grid, seed);
  t.tiles = pz::extract_tiles(t.scrambled.image.view(), t.grid);
  pz::SolveOptions o;
  o.method = pz::Method::greedy;
  o.measure = measure;
  o.backend = backend;
  t.solution = pz::solve(t.tiles, o);
  t.score = pz::score(t.grid.rows, t.grid.cols, t.solution.tile_at, t.scrambled.truth);
  return t;
}

// Mean, min, max and sample standard deviation (divisor n - 1; 0 for a single value).
struct Spread {
  double mean = 0, min = 0, max = 0, sd = 0;
};

Spread spread(const std::vector<double>& v) {
  Spread s;
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  for (double x : v) s.mean += x;
  s.mean /= v.size();
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.sd = std::sqrt(ss / (v.size() - 1));
  }
  return s;
}

// "mean (min-max, sd)" of fractions, in percent.
std::string percent(const Spread& s) {
  char text[96];
  std::snprintf(text, sizeof text, "%.2f%% (%.1f-%.1f, sd %.2f)", 100 * s.mean, 100 * s.min, 100 * s.max, 100 * s.sd);
  return text;
}

// Direct and neighbor accuracy, perfect count and time of a set of trials.
struct Tally {
  std::vector<double> direct, neighbor, ms;
  int perfect = 0;
  void add(const Trial& t) {
    direct.push_back(t.score.direct);
    neighbor.push_back(t.score.neighbor);
    ms.push_back(t.solution.milliseconds);
    perfect += t.score.perfect;
  }
};

// MIT 432 over `seeds` scrambles per photo (seed 1000 + k + 10000 s): per-photo spread, the
// average of each seed set, and the spread of those averages.
void mit_seeds(const std::vector<winnow::Image<winnow::RgbaF32>>& photos, int seeds, pz::Measure m, Backend backend) {
  const int images = static_cast<int>(photos.size());
  std::printf(
      "\nMIT 432 (18 x 24 tiles of 28 px), measure %s, %d seeds per photo: seed 1000 + k + 10000 s, s = 0..%d\n",
      std::string(pz::to_string(m)).c_str(), seeds, seeds - 1);
  std::vector<Tally> per_photo(images), per_set(seeds);
  {
    winnow::Progress progress(std::string("MIT 432 seeds ") + std::string(pz::to_string(m)),
                              std::uint64_t(images) * seeds);
    for (int k = 0; k < images; ++k)
      for (int s = 0; s < seeds; ++s) {
        const auto t = run_trial(photos[k], 28, 1000 + (k + 1) + 10000ull * s, m, backend);
        per_photo[k].add(t);
        per_set[s].add(t);
        progress.advance();
      }
  }
  std::printf(
      "| photo | direct mean (min-max, sd) | neighbor mean (min-max, sd) | perfect | ms mean |\n"
      "|---|---|---|---|---|\n");
  for (int k = 0; k < images; ++k)
    std::printf("| %02d | %s | %s | %d/%d | %.0f |\n", k + 1, percent(spread(per_photo[k].direct)).c_str(),
                percent(spread(per_photo[k].neighbor)).c_str(), per_photo[k].perfect, seeds,
                spread(per_photo[k].ms).mean);
  std::printf(
      "\nAverage over the %d photos, per seed set\n| s | direct | neighbor | perfect | ms mean |\n"
      "|---|---|---|---|---|\n",
      images);
  std::vector<double> set_direct, set_neighbor, set_perfect;
  for (int s = 0; s < seeds; ++s) {
    set_direct.push_back(spread(per_set[s].direct).mean);
    set_neighbor.push_back(spread(per_set[s].neighbor).mean);
    set_perfect.push_back(per_set[s].perfect);
    std::printf("| %d | %.2f%% | %.2f%% | %d/%d | %.0f |\n", s, 100 * set_direct.back(), 100 * set_neighbor.back(),
                per_set[s].perfect, images, spread(per_set[s].ms).mean);
  }
  const Spread p = spread(set_perfect);
  std::printf(
      "\nOver the %d seed sets (mean (min-max, sd) of the %d-photo averages), measure %s\n"
      "| direct | neighbor | perfect of %d |\n|---|---|---|\n| %s | %s | %.1f (%.0f-%.0f, sd %.2f) |\n",
      seeds, images, std::string(pz::to_string(m)).c_str(), images, percent(spread(set_direct)).c_str(),
      percent(spread(set_neighbor)).c_str(), p.mean, p.min, p.max, p.sd);
}

// Photos outside the MIT set (the solver's parameters were chosen on MIT 432 only), several tile
// sizes, seeds 7 + 10000 s.
void held_out(const std::filesystem::path& data, const std::vector<pz::Measure>& measures, int seeds, Backend backend) {
  std::printf(
      "\nOther photos (held out), greedy, %d seed(s): 7 + 10000 s\n"
      "| photo | tile px | grid | measure | direct mean (min-max, sd) | neighbor mean (min-max, sd) | perfect | ms "
      "mean |\n"
      "|---|---|---|---|---|---|---|---|\n",
      seeds);
  for (const char* name : {"astronaut.png", "chelsea.png", "coins.png"}) {
    const auto img = winnow::io::read_rgbaf(data / name);
    for (int px : {16, 24, 32, 48}) {
      const auto grid = pz::grid_from_tile(img.width(), img.height(), px);
      if (grid.tiles() <= pz::kMaxExhaustiveTiles) continue;
      for (auto m : measures) {
        Tally tally;
        for (int s = 0; s < seeds; ++s) tally.add(run_trial(img, px, 7 + 10000ull * s, m, backend));
        std::printf("| %s | %d | %dx%d | %s | %s | %s | %d/%d | %.0f |\n", name, px, grid.rows, grid.cols,
                    std::string(pz::to_string(m)).c_str(), percent(spread(tally.direct)).c_str(),
                    percent(spread(tally.neighbor)).c_str(), tally.perfect, seeds, spread(tally.ms).mean);
      }
    }
  }
}

void exhaustive_timing(const std::filesystem::path& data) {
  const auto img = winnow::io::read_rgbaf(data / "mit432" / "01.png");
  const auto grid = pz::grid_from_shape(img.width(), img.height(), 3, 3);
  const auto s = pz::scramble(img.view(), grid, 5);
  const auto tiles = pz::extract_tiles(s.image.view(), grid);
  std::printf("\n3x3 exhaustive search (9! = 362,880 permutations), compatibility included, %d-px tiles\n", grid.tile);
  std::printf("| backend | measure | median ms | min ms | perfect | same as CPU |\n|---|---|---|---|---|---|\n");
  std::vector<Backend> backends{Backend::cpu};
  if (winnow::cuda_available()) backends.push_back(Backend::cuda);
  for (auto m : {pz::Measure::ssd, pz::Measure::mgc}) {
    std::vector<int> cpu_answer;
    for (Backend b : backends) {
      pz::SolveOptions o;
      o.method = pz::Method::exhaustive;
      o.measure = m;
      o.backend = b;
      std::vector<double> t;
      std::vector<int> answer;
      for (int i = 0; i < 55; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto sol = pz::solve(tiles, o);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (i >= 5) t.push_back(ms);  // warm-up
        answer = sol.tile_at;
      }
      if (b == Backend::cpu) cpu_answer = answer;
      const auto sc = pz::score(grid.rows, grid.cols, answer, s.truth);
      std::printf("| %s | %s | %.3f | %.3f | %s | %s |\n", std::string(winnow::to_string(b)).c_str(),
                  std::string(pz::to_string(m)).c_str(), median(t), *std::min_element(t.begin(), t.end()),
                  sc.perfect ? "yes" : "no", answer == cpu_answer ? "yes" : "NO");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path data = WINNOW_PUZZLE_BENCH_DATA;
  std::vector<pz::Measure> measures{pz::Measure::ssd, pz::Measure::prediction, pz::Measure::mgc};
  Backend backend = Backend::automatic;
  int images = 20, seeds = 1;
  bool mit = true, exhaustive = true, energy = false, extra = false, seams_dump = false;
  std::filesystem::path dump;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--data") data = next();
    else if (a == "--backend") backend = winnow::parse_backend(next());
    else if (a == "--images") images = std::atoi(next().c_str());
    else if (a == "--seeds") {
      seeds = std::atoi(next().c_str());
      if (seeds < 1) {
        std::fprintf(stderr, "--seeds needs a whole number of at least 1\n");
        return 2;
      }
    } else if (a == "--skip-mit") mit = false;
    else if (a == "--skip-exhaustive") exhaustive = false;
    else if (a == "--energy") energy = true;
    else if (a == "--extra") extra = true;
    else if (a == "--seams") energy = seams_dump = true;
    else if (a == "--dump") dump = next();
    else if (a == "--measures") {
      measures.clear();
      std::string s = next();
      for (std::size_t p = 0; p <= s.size();) {
        const std::size_t q = std::min(s.find(',', p), s.size());
        measures.push_back(pz::parse_measure(s.substr(p, q - p)));
        p = q + 1;
      }
    } else {
      std::fprintf(
          stderr,
          "usage: puzzle_bench [--data DIR] [--measures ssd,prediction,mgc] [--backend B] "
          "[--images N] [--seeds N] [--skip-mit] [--skip-exhaustive] [--energy] [--seams] [--dump DIR] [--extra]\n");
      return 2;
    }
  }
  const Backend resolved = winnow::resolve_backend(backend);
  std::printf("winnow puzzle benchmark; compatibility backend %s; greedy on the CPU\n",
              std::string(winnow::to_string(resolved)).c_str());
  if (mit) {
    std::vector<winnow::Image<winnow::RgbaF32>> photos;
    for (int k = 1; k <= images; ++k) {
      char name[32];
      std::snprintf(name, sizeof name, "%02d.png", k);
      photos.push_back(winnow::io::read_rgbaf(data / "mit432" / name));
    }
    std::vector<std::string> summary;
    // One scramble per photo, with the diagnostics; several seeds go to mit_seeds below.
    const std::vector<pz::Measure> single_seed_measures = seeds > 1 ? std::vector<pz::Measure>{} : measures;
    for (auto m : single_seed_measures) {
      std::printf("\nMIT 432 (18 x 24 tiles of 28 px), measure %s, seeds 1000+k\n",
                  std::string(pz::to_string(m)).c_str());
      std::printf("| photo | direct | neighbor | perfect | ms |\n|---|---|---|---|---|\n");
      double d = 0, nb = 0, ms = 0, worst = 0;
      int perfect = 0;
      std::vector<std::string> rows;
      {
        winnow::Progress progress(std::string("MIT 432 ") + std::string(pz::to_string(m)), photos.size());
        for (int k = 0; k < images; ++k) {
          const Trial trial = run_trial(photos[k], 28, 1000 + k + 1, m, resolved);
          const auto& grid = trial.grid;
          const auto& s = trial.scrambled;
          const auto& tiles = trial.tiles;
          const auto& sol = trial.solution;
          const auto& sc = trial.score;
          char line[200];
          std::snprintf(line, sizeof line, "| %02d | %.1f%% | %.1f%% | %s | %.0f |", k + 1, 100 * sc.direct,
                        100 * sc.neighbor, sc.perfect ? "yes" : "no", sol.milliseconds);
          if (energy) {
            const auto c = pz::compatibility(tiles, m, resolved);
            std::vector<int> truth_at(s.truth.size());
            for (std::size_t t = 0; t < s.truth.size(); ++t) truth_at[s.truth[t]] = static_cast<int>(t);
            const double ratio = pz::placement_cost(c, grid.rows, grid.cols, sol.tile_at) /
                                 pz::placement_cost(c, grid.rows, grid.cols, truth_at);
            std::snprintf(line + std::strlen(line), sizeof line - std::strlen(line), " E/E_truth %.5f |", ratio);
            if (seams_dump) {
              auto seams = [&](const std::vector<int>& at) {
                std::vector<float> v;
                for (int r = 0; r < grid.rows; ++r)
                  for (int cc = 0; cc < grid.cols; ++cc) {
                    if (cc + 1 < grid.cols)
                      v.push_back(c.left_right(at[r * grid.cols + cc], at[r * grid.cols + cc + 1]));
                    if (r + 1 < grid.rows)
                      v.push_back(c.top_bottom(at[r * grid.cols + cc], at[(r + 1) * grid.cols + cc]));
                  }
                std::sort(v.rbegin(), v.rend());
                double tot = 0;
                for (float x : v) tot += x;
                std::printf("  total %.1f top:", tot);
                for (int i = 0; i < 12; ++i) std::printf(" %.0f", v[i]);
                int z = 0;
                for (float x : v) z += x < 1;
                std::printf(" (<1: %d)\n", z);
              };
              {
                const std::size_t sz = std::size_t(grid.tile) * grid.tile * 3;
                int dup = 0, groups = 0;
                std::vector<int> seen(tiles.count(), 0);
                for (int a = 0; a < tiles.count(); ++a) {
                  if (seen[a]) continue;
                  int g = 1;
                  for (int b = a + 1; b < tiles.count(); ++b)
                    if (!seen[b] && std::equal(tiles.tile(a), tiles.tile(a) + sz, tiles.tile(b))) {
                      seen[b] = 1;
                      ++g;
                    }
                  if (g > 1) {
                    dup += g;
                    ++groups;
                  }
                }
                std::printf("photo %d: %d tiles in %d groups of identical tiles\n", k + 1, dup, groups);
              }
              std::printf("photo %d sol:", k + 1);
              seams(sol.tile_at);
              if (sc.direct < 1) {
                std::vector<int> ident(tiles.count(), 0);
                const std::size_t sz = std::size_t(grid.tile) * grid.tile * 3;
                for (int a = 0; a < tiles.count(); ++a)
                  for (int b = 0; b < tiles.count(); ++b)
                    if (a != b && std::equal(tiles.tile(a), tiles.tile(a) + sz, tiles.tile(b))) ident[a] = 1;
                for (int r = 0; r < grid.rows; ++r) {
                  std::printf("   ");
                  for (int cc = 0; cc < grid.cols; ++cc) {
                    const int q = r * grid.cols + cc, t = sol.tile_at[q], tq = s.truth[t];
                    const int dr = tq / grid.cols - r, dc = tq % grid.cols - cc;
                    if (dr == 0 && dc == 0) std::printf(" .  ");
                    else if (ident[t]) std::printf(" =  ");
                    else std::printf("%+d%+d ", dr, dc);
                  }
                  std::printf("\n");
                }
              }
              std::printf("photo %d tru:", k + 1);
              seams(truth_at);
            }
          }
          if (!dump.empty()) {
            std::filesystem::create_directories(dump);
            char name[64];
            std::snprintf(name, sizeof name, "%s_%02d.png", std::string(pz::to_string(m)).c_str(), k + 1);
            winnow::io::write_png(dump / name, pz::assemble(tiles, sol.tile_at).view());
          }
          rows.push_back(line);
          d += sc.direct;
          nb += sc.neighbor;
          perfect += sc.perfect;
          ms += sol.milliseconds;
          worst = std::max(worst, sol.milliseconds);
          progress.advance();
        }
      }
      for (const auto& r : rows) std::printf("%s\n", r.c_str());
      char line[200];
      std::snprintf(line, sizeof line, "| %s | %.2f%% | %.2f%% | %d/%d | %.0f (max %.0f) |",
                    std::string(pz::to_string(m)).c_str(), 100 * d / images, 100 * nb / images, perfect, images,
                    ms / images, worst);
      std::printf("| **average** | **%.2f%%** | **%.2f%%** | **%d/%d** | **%.0f** |\n", 100 * d / images,
                  100 * nb / images, perfect, images, ms / images);
      summary.push_back(line);
    }
    if (seeds > 1) {
      for (auto m : measures) mit_seeds(photos, seeds, m, resolved);
    } else {
      std::printf("\nMIT 432 summary (target: direct >= 96.0%%, neighbor >= 95.6%%, < 1000 ms)\n");
      std::printf("| measure | direct | neighbor | perfect | ms per puzzle |\n|---|---|---|---|---|\n");
      for (const auto& s : summary) std::printf("%s\n", s.c_str());
    }
  }
  if (extra) held_out(data, measures, seeds, resolved);
  if (exhaustive) exhaustive_timing(data);
  return 0;
}
