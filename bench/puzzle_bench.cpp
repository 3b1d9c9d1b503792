// Tile-puzzle benchmark.
// 1. MIT 432 (Cho et al. 2010): each of the 20 photos (672x504, 16-bit) is cut into 28-px tiles
//    (18 x 24 = 432), scrambled with a fixed seed (1000 + photo number), solved (greedy) and
//    scored, for each measure: a table per photo and the average (direct, neighbor, perfect,
//    time = compatibility + search, wall clock).
// 2. 3x3 exhaustive search timing, compatibility included (host call to host result: tiles in,
//    placement out), on the CPU and, when a device answers, on CUDA: warm-up, median of 50.
//
// usage: puzzle_bench [--data DIR] [--measures ssd,prediction,mgc] [--backend cpu|cuda|auto]
//                     [--images N] [--skip-mit] [--skip-exhaustive] [--energy] [--seams] [--dump DIR]
//                     [--extra]
// --energy adds the ratio of the solution's total dissimilarity to the true layout's (below 1:
// the measure prefers a wrong layout; above 1: the search missed a better one); --dump DIR writes
// each restored photo as DIR/<measure>_<photo>.png; --seams prints, per photo, the largest seam
// dissimilarities of the solution and of the truth, the number of pixel-identical tiles and a map
// of the misplaced tiles (offset to their true place, '=' for a tile identical to another);
// --extra solves astronaut, chelsea and coins at 16/24/32/48-px tiles (seed 7).
#include <algorithm>
#include <chrono>
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
  int images = 20;
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
    else if (a == "--skip-mit") mit = false;
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
      std::fprintf(stderr, "usage: puzzle_bench [--data DIR] [--measures ssd,prediction,mgc] [--backend B] "
                           "[--images N] [--skip-mit] [--skip-exhaustive] [--energy] [--seams] [--dump DIR] [--extra]\n");
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
    for (auto m : measures) {
      std::printf("\nMIT 432 (18 x 24 tiles of 28 px), measure %s, seeds 1000+k\n", std::string(pz::to_string(m)).c_str());
      std::printf("| photo | direct | neighbor | perfect | ms |\n|---|---|---|---|---|\n");
      double d = 0, nb = 0, ms = 0, worst = 0;
      int perfect = 0;
      std::vector<std::string> rows;
      {
        winnow::Progress progress(std::string("MIT 432 ") + std::string(pz::to_string(m)), photos.size());
        for (int k = 0; k < images; ++k) {
          const auto grid = pz::grid_from_tile(photos[k].width(), photos[k].height(), 28);
          const auto s = pz::scramble(photos[k].view(), grid, 1000 + k + 1);
          const auto tiles = pz::extract_tiles(s.image.view(), grid);
          pz::SolveOptions o;
          o.method = pz::Method::greedy;
          o.measure = m;
          o.backend = resolved;
          const auto sol = pz::solve(tiles, o);
          const auto sc = pz::score(grid.rows, grid.cols, sol.tile_at, s.truth);
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
                    if (cc + 1 < grid.cols) v.push_back(c.left_right(at[r * grid.cols + cc], at[r * grid.cols + cc + 1]));
                    if (r + 1 < grid.rows) v.push_back(c.top_bottom(at[r * grid.cols + cc], at[(r + 1) * grid.cols + cc]));
                  }
                std::sort(v.rbegin(), v.rend());
                double tot = 0; for (float x : v) tot += x;
                std::printf("  total %.1f top:", tot);
                for (int i = 0; i < 12; ++i) std::printf(" %.0f", v[i]);
                int z = 0; for (float x : v) z += x < 1; std::printf(" (<1: %d)\n", z);
              };
              {
                const std::size_t sz = std::size_t(grid.tile) * grid.tile * 3;
                int dup = 0, groups = 0;
                std::vector<int> seen(tiles.count(), 0);
                for (int a = 0; a < tiles.count(); ++a) {
                  if (seen[a]) continue;
                  int g = 1;
                  for (int b = a + 1; b < tiles.count(); ++b)
                    if (!seen[b] && std::equal(tiles.tile(a), tiles.tile(a) + sz, tiles.tile(b))) { seen[b] = 1; ++g; }
                  if (g > 1) { dup += g; ++groups; }
                }
                std::printf("photo %d: %d tiles in %d groups of identical tiles\n", k + 1, dup, groups);
              }
              std::printf("photo %d sol:", k + 1); seams(sol.tile_at);
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
              std::printf("photo %d tru:", k + 1); seams(truth_at);
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
    std::printf("\nMIT 432 summary (target: direct >= 96.0%%, neighbor >= 95.6%%, < 1000 ms)\n");
    std::printf("| measure | direct | neighbor | perfect | ms per puzzle |\n|---|---|---|---|---|\n");
    for (const auto& s : summary) std::printf("%s\n", s.c_str());
  }
  if (extra) {
    // Photos outside the MIT set, several tile sizes, seed 7: a check that the solver is general.
    std::printf("\nOther photos (greedy, seed 7)\n| photo | tile px | grid | measure | direct | neighbor | perfect | ms |\n"
                "|---|---|---|---|---|---|---|---|\n");
    for (const char* name : {"astronaut.png", "chelsea.png", "coins.png"}) {
      const auto img = winnow::io::read_rgbaf(data / name);
      for (int px : {16, 24, 32, 48}) {
        const auto grid = pz::grid_from_tile(img.width(), img.height(), px);
        if (grid.tiles() <= pz::kMaxExhaustiveTiles) continue;
        const auto s = pz::scramble(img.view(), grid, 7);
        const auto tiles = pz::extract_tiles(s.image.view(), grid);
        for (auto m : measures) {
          pz::SolveOptions o;
          o.method = pz::Method::greedy;
          o.measure = m;
          o.backend = resolved;
          const auto sol = pz::solve(tiles, o);
          const auto sc = pz::score(grid.rows, grid.cols, sol.tile_at, s.truth);
          std::printf("| %s | %d | %dx%d | %s | %.1f%% | %.1f%% | %s | %.0f |\n", name, px, grid.rows, grid.cols,
                      std::string(pz::to_string(m)).c_str(), 100 * sc.direct, 100 * sc.neighbor,
                      sc.perfect ? "yes" : "no", sol.milliseconds);
        }
      }
    }
  }
  if (exhaustive) exhaustive_timing(data);
  return 0;
}
