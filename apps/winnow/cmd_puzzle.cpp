// winnow scramble / unscramble / puzzle-score: square-tile jigsaw puzzles.
//
// Files
//   truth.json (scramble --truth):
//     {"format": "winnow-puzzle-truth", "version": 1, "source": "photo.png", "seed": 7,
//      "rows": 18, "cols": 24, "tile": 28, "truth": [t0, t1, ...]}
//     truth[t] = original position (raster index r*cols+c) of the tile at position t of the
//     scrambled image.
//   placement.json (unscramble --placement):
//     {"format": "winnow-puzzle-placement", "version": 1, "source": "scrambled.png",
//      "rows": 18, "cols": 24, "tile": 28, "method": "greedy", "measure": "mgc",
//      "backend": "cpu", "milliseconds": 41.5, "tile_at": [p0, p1, ...]}
//     tile_at[q] = position in the scrambled image of the tile placed at position q.
//   puzzle-score DIR: every NAME.placement.json with a NAME.truth.json beside it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "puzzle_json.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"
#include "winnow/progress.hpp"
#include "winnow/puzzle.hpp"

namespace winnow::cli {
namespace {

namespace fs = std::filesystem;
namespace pz = winnow::puzzle;
using nlohmann::json;

struct GridArgs {
  std::string grid;
  int tile = -1;
};

void add_grid_options(CLI::App* cmd, GridArgs& g) {
  auto* og = cmd->add_option("--grid", g.grid, "ROWSxCOLS tiles (e.g. 3x3); the tile side is the largest that fits");
  auto* ot =
      cmd->add_option("--tile", g.tile, "tile side in pixels; the grid is as many whole tiles as fit")->check(kCount);
  og->excludes(ot);
  ot->excludes(og);
}

pz::Grid resolve_grid(const GridArgs& g, std::int64_t w, std::int64_t h, const std::string& what) {
  if (!g.grid.empty()) {
    const auto [r, c] = pz::parse_grid(g.grid);
    return pz::grid_from_shape(w, h, r, c, what);
  }
  if (g.tile == -1) throw InputError(what + ": give --grid ROWSxCOLS or --tile PX");
  return pz::grid_from_tile(w, h, g.tile, what);
}

Image<Rgba8> to_rgba8(const Image<RgbaF32>& in) {
  Image<Rgba8> out(in.width(), in.height());
  auto cv = [](float v) { return static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.f, 255.f))); };
  for (std::int64_t i = 0; i < in.size(); ++i) {
    const RgbaF32& p = in.data()[i];
    out.data()[i] = Rgba8{cv(p.r), cv(p.g), cv(p.b), 255};
  }
  return out;
}

pz::Score score_pair(const fs::path& placement, const fs::path& truth) {
  const PuzzleFile p = read_puzzle_json(placement, "winnow-puzzle-placement", "tile_at");
  const PuzzleFile t = read_puzzle_json(truth, "winnow-puzzle-truth", "truth");
  if (p.rows != t.rows || p.cols != t.cols)
    throw InputError(truth.string() + ": grid " + std::to_string(t.rows) + "x" + std::to_string(t.cols) +
                     " does not match the placement's " + std::to_string(p.rows) + "x" + std::to_string(p.cols) + " (" +
                     placement.string() + ")");
  return pz::score(p.rows, p.cols, p.values, t.values);
}

std::string format_score(const pz::Score& s) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "direct %.4f  neighbor %.4f  perfect %s", s.direct, s.neighbor,
                s.perfect ? "yes" : "no");
  return buf;
}

}  // namespace

void register_puzzle(CLI::App& app) {
  // ---------------------------------------------------------------- scramble
  {
    struct Args {
      std::string image, out, truth;
      GridArgs grid;
      std::uint64_t seed = 1;
      CommonOptions common;  // scrambling is a copy of tiles: it runs on the CPU whatever the backend
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand("scramble", "cut an image into square tiles and shuffle them (a puzzle)");
    cmd->add_option("IMAGE", args->image, "image to cut (PNG, JPEG, TIFF, FITS)")->required()->check(kFileName);
    add_grid_options(cmd, args->grid);
    cmd->add_option("--seed", args->seed, "shuffle seed (default 1)")->check(kCount);
    cmd->add_option("--out", args->out, "scrambled image (8-bit PNG)")->required()->check(kFileName);
    cmd->add_option("--truth", args->truth, "where every tile came from (JSON)")->check(kFileName);
    add_common_options(cmd, args->common);
    cmd->callback([args] {
      resolve_backend(args->common.requested());  // cuda where there is none is still an error
      refuse_overwriting({args->image}, {&args->out, &args->truth});
      io::check_writable(args->out);
      if (!args->truth.empty()) io::check_writable(args->truth);
      check_output_name(args->out, {".png"}, "PNG");
      check_output_name(args->truth, {".json"}, "JSON");
      const Image<RgbaF32> img = io::read_rgbaf(args->image);
      const pz::Grid grid = resolve_grid(args->grid, img.width(), img.height(), args->image);
      const pz::Scrambled s = pz::scramble(img.view(), grid, args->seed);
      const Image<Rgba8> out = to_rgba8(s.image);
      std::string truth_text;
      if (!args->truth.empty()) {
        json j = {{"format", "winnow-puzzle-truth"},
                  {"version", 1},
                  {"source", fs::path(args->image).filename().string()},
                  {"seed", args->seed},
                  {"rows", grid.rows},
                  {"cols", grid.cols},
                  {"tile", grid.tile},
                  {"truth", s.truth}};
        truth_text = j.dump() + "\n";
      }
      write_outputs({{args->out, [&](const std::string& p) { io::write_png(p, out.view()); }},
                     {args->truth, [&](const std::string& p) { io::write_text(p, truth_text); }}});
    });
  }
  // ---------------------------------------------------------------- unscramble
  {
    struct Args {
      std::string puzzle, out, placement, method = "auto", measure = "mgc";
      GridArgs grid;
      CommonOptions common;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand("unscramble", "restore a scrambled square-tile puzzle");
    cmd->add_option("PUZZLE", args->puzzle, "scrambled image")->required()->check(kFileName);
    add_grid_options(cmd, args->grid);
    cmd->add_option("--method", args->method, "auto (exhaustive up to 9 tiles, else greedy) | exhaustive | greedy")
        ->check(CLI::IsMember({"auto", "exhaustive", "greedy"}));
    cmd->add_option("--measure", args->measure, "edge compatibility: ssd | prediction | mgc (default mgc)")
        ->check(CLI::IsMember({"ssd", "prediction", "mgc"}));
    cmd->add_option("--out", args->out, "restored image (8-bit PNG)")->required()->check(kFileName);
    cmd->add_option("--placement", args->placement, "where every tile went (JSON)")->check(kFileName);
    add_common_options(cmd, args->common);
    cmd->callback([args] {
      refuse_overwriting({args->puzzle}, {&args->out, &args->placement});
      io::check_writable(args->out);
      if (!args->placement.empty()) io::check_writable(args->placement);
      check_output_name(args->out, {".png"}, "PNG");
      check_output_name(args->placement, {".json"}, "JSON");
      pz::SolveOptions opt;
      opt.method = pz::parse_method(args->method);
      opt.measure = pz::parse_measure(args->measure);
      opt.backend = resolve_backend(args->common.requested());
      const Image<RgbaF32> img = io::read_rgbaf(args->puzzle);
      const pz::Grid grid = resolve_grid(args->grid, img.width(), img.height(), args->puzzle);
      if (opt.method == pz::Method::exhaustive && grid.tiles() > pz::kMaxExhaustiveTiles)
        throw InputError(args->puzzle + ": exhaustive search takes at most " + std::to_string(pz::kMaxExhaustiveTiles) +
                         " tiles; the grid has " + std::to_string(grid.tiles()) + " (use --method greedy)");
      const pz::Tiles tiles = pz::extract_tiles(img.view(), grid);
      const pz::Solution sol = pz::solve(tiles, opt);
      const Image<Rgba8> out = pz::assemble(tiles, sol.tile_at);
      std::string placement_text;
      if (!args->placement.empty()) {
        json j = {{"format", "winnow-puzzle-placement"},
                  {"version", 1},
                  {"source", fs::path(args->puzzle).filename().string()},
                  {"rows", grid.rows},
                  {"cols", grid.cols},
                  {"tile", grid.tile},
                  {"method", std::string(pz::to_string(sol.method))},
                  {"measure", std::string(pz::to_string(opt.measure))},
                  {"backend", std::string(to_string(sol.backend))},
                  {"milliseconds", sol.milliseconds},
                  {"tile_at", sol.tile_at}};
        placement_text = j.dump() + "\n";
      }
      write_outputs({{args->out, [&](const std::string& p) { io::write_png(p, out.view()); }},
                     {args->placement, [&](const std::string& p) { io::write_text(p, placement_text); }}});
      if (!args->common.quiet)
        std::printf("unscramble: grid %dx%d (%d px tiles), method %s, measure %s, backend %s, %.1f ms\n", grid.rows,
                    grid.cols, grid.tile, std::string(pz::to_string(sol.method)).c_str(),
                    std::string(pz::to_string(opt.measure)).c_str(), std::string(to_string(sol.backend)).c_str(),
                    sol.milliseconds);
    });
  }
  // ---------------------------------------------------------------- puzzle-score
  {
    struct Args {
      std::string first, truth;
      CommonOptions common;  // grading compares two JSON files: it runs on the CPU whatever the backend
    };
    auto args = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "puzzle-score",
        "grade a placement against the truth: puzzle-score placement.json truth.json, or puzzle-score DIR "
        "(every NAME.placement.json with its NAME.truth.json; prints averages)");
    cmd->add_option("PLACEMENT_OR_DIR", args->first, "placement.json, or a directory of pairs")
        ->required()
        ->check(kFileName);
    cmd->add_option("TRUTH", args->truth, "truth.json (not with a directory)")->check(kFileName);
    add_common_options(cmd, args->common);
    cmd->callback([args] {
      resolve_backend(args->common.requested());
      const fs::path first(args->first);
      std::error_code ec;
      if (fs::is_directory(first, ec)) {
        if (!args->truth.empty()) throw InputError(args->truth + ": give no truth file with a directory");
        std::vector<fs::path> placements;
        for (const auto& e : fs::directory_iterator(first, ec)) {
          const std::string name = e.path().filename().string();
          const std::string suffix = ".placement.json";
          if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            placements.push_back(e.path());
        }
        if (ec) throw InputError(first.string() + ": cannot list (" + ec.message() + ")");
        std::sort(placements.begin(), placements.end());
        if (placements.empty()) throw InputError(first.string() + ": no NAME.placement.json files");
        double d = 0, nb = 0;
        int perfect = 0;
        std::vector<std::string> lines;
        {
          Progress progress("puzzle-score", placements.size(), args->common.quiet);
          for (const auto& p : placements) {
            const std::string name = p.filename().string();
            const std::string stem = name.substr(0, name.size() - std::string(".placement.json").size());
            const fs::path truth = p.parent_path() / (stem + ".truth.json");
            if (!fs::exists(truth)) throw InputError(truth.string() + ": missing (needed for " + p.string() + ")");
            const pz::Score s = score_pair(p, truth);
            d += s.direct;
            nb += s.neighbor;
            perfect += s.perfect;
            lines.push_back(stem + ": " + format_score(s));
            progress.advance();
          }
        }
        for (const auto& l : lines) std::printf("%s\n", l.c_str());
        const double k = static_cast<double>(placements.size());
        std::printf("average of %zu: direct %.4f  neighbor %.4f  perfect %d/%zu\n", placements.size(), d / k, nb / k,
                    perfect, placements.size());
      } else {
        if (args->truth.empty())
          throw InputError(first.string() + ": give a truth file (puzzle-score placement.json truth.json)");
        const pz::Score s = score_pair(first, args->truth);
        std::printf("%s\n", format_score(s).c_str());
      }
    });
  }
}

}  // namespace winnow::cli
