#pragma once
/// @file puzzle.hpp
/// Square-tile jigsaw puzzles: a photo cut into an R x C grid of square tiles, shuffled, and
/// restored from the tiles alone (known orientation: tiles are never rotated).
///
/// Pipeline: `extract_tiles` -> `compatibility` (how well each tile edge fits each other tile's
/// opposite edge) -> `solve_exhaustive` (every permutation, grids of at most 9 tiles) or
/// `solve_greedy` (best buddies, placement by confidence, segment refinement; any size) ->
/// `assemble`. `scramble` and `score` make and grade benchmark puzzles.
///
/// Conventions
/// - Positions are raster indices r * cols + c.
/// - A puzzle image holds tile t at position t ("puzzle tile t").
/// - Truth: `truth[t]` = the original position of puzzle tile t.
/// - Placement: `tile_at[q]` = the puzzle tile placed at position q of the restored image.
/// - Compatibilities are dissimilarities: smaller is a better fit.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "winnow/backend.hpp"
#include "winnow/image.hpp"

namespace winnow::puzzle {

/// An R x C grid of square tiles of `tile` pixels.
struct Grid {
  int rows = 0, cols = 0;
  int tile = 0;  ///< side of a tile in pixels (0: not yet known)
  int tiles() const { return rows * cols; }
  friend bool operator==(const Grid&, const Grid&) = default;
};

/// Grid of `rows` x `cols` tiles cut from a width x height image: the tile side is the largest
/// square that fits, min(width / cols, height / rows); the image is cropped to whole tiles.
/// Throws InputError (naming `what`) when rows/cols < 1, or tiles would be smaller than 2 px.
Grid grid_from_shape(std::int64_t width, std::int64_t height, int rows, int cols, std::string_view what = "image");
/// Grid of `tile`-pixel tiles cut from a width x height image (floor(width/tile) columns ...).
/// Throws InputError when tile < 2 or not even one tile fits.
Grid grid_from_tile(std::int64_t width, std::int64_t height, int tile, std::string_view what = "image");
/// Parses "RxC" (e.g. "18x24"); throws InputError otherwise.
std::pair<int, int> parse_grid(std::string_view text);

/// The tiles of a puzzle, float RGB in [0, 255] (alpha dropped), each tile contiguous:
/// pixel (x, y) channel c of tile t is `rgb[((t * tile + y) * tile + x) * 3 + c]`.
struct Tiles {
  Grid grid;
  std::vector<float> rgb;
  int count() const { return grid.tiles(); }
  const float* tile(int t) const { return rgb.data() + static_cast<std::size_t>(t) * grid.tile * grid.tile * 3; }
};

/// Cuts the top-left grid.rows*tile x grid.cols*tile region of `image` into tiles.
/// Use io::read_rgbaf for images so 16-bit files keep their precision.
Tiles extract_tiles(ImageView<const RgbaF32> image, const Grid& grid);
Tiles extract_tiles(ImageView<const Rgba8> image, const Grid& grid);
/// The image with tile `tile_at[q]` at position q (8-bit, rounded; alpha 255).
Image<Rgba8> assemble(const Tiles& tiles, const std::vector<int>& tile_at);

// ---------------------------------------------------------------------------------------------
// Compatibility

enum class Measure {
  ssd,         ///< sum of squared grey-level differences across the seam (the GPGPU demo's)
  prediction,  ///< Pomeranz et al. 2011: (L_p)^q norm of linear-prediction errors, p=3/10, q=1/16
  mgc,         ///< Gallagher 2012: Mahalanobis gradient compatibility, colour, both directions
};
std::string_view to_string(Measure m);
/// "ssd", "prediction" or "mgc"; throws InputError otherwise.
Measure parse_measure(std::string_view name);

/// Dissimilarities of every ordered tile pair for the two relations; the other two sides are the
/// transposes (i right of j == j left of i). Diagonal entries are +infinity.
struct Compatibility {
  int n = 0;
  Measure measure = Measure::ssd;
  std::vector<float> lr;  ///< lr[i * n + j]: tile i immediately left of tile j
  std::vector<float> tb;  ///< tb[i * n + j]: tile i immediately above tile j
  float left_right(int i, int j) const { return lr[static_cast<std::size_t>(i) * n + j]; }
  float top_bottom(int i, int j) const { return tb[static_cast<std::size_t>(i) * n + j]; }
};

/// All ordered pairs. Backend `cuda` computes on the GPU (results agree with the CPU to float
/// rounding); `automatic` resolves through resolve_backend.
Compatibility compatibility(const Tiles& tiles, Measure measure, Backend backend = Backend::automatic);

// ---------------------------------------------------------------------------------------------
// Solvers

enum class Method { automatic, exhaustive, greedy };
std::string_view to_string(Method m);
/// "auto", "exhaustive" or "greedy"; throws InputError otherwise.
Method parse_method(std::string_view name);

/// Largest number of tiles the exhaustive search accepts (9! = 362,880 permutations).
inline constexpr int kMaxExhaustiveTiles = 9;

/// Sum of the dissimilarities of all 2RC-R-C adjacent pairs of a placement, added row pairs
/// first (raster order), then column pairs (raster order), in float: the objective of the
/// exhaustive search, bit-identical on every backend.
float placement_cost(const Compatibility& compat, int rows, int cols, const std::vector<int>& tile_at);

/// Every permutation of rows*cols <= 9 tiles; the one of least placement_cost, ties to the lowest
/// permutation index (lexicographic order of tile_at). CPU and CUDA return the same placement.
/// Throws InputError when the grid has more than kMaxExhaustiveTiles tiles.
std::vector<int> solve_exhaustive(const Compatibility& compat, int rows, int cols,
                                  Backend backend = Backend::automatic);

/// Greedy assembly for any size (CPU): confidence-normalised compatibilities, best buddies,
/// placement by confidence inside the grid's bounds, then re-placement of the segments that
/// disagree while it lowers the total dissimilarity.
std::vector<int> solve_greedy(const Compatibility& compat, int rows, int cols);

struct SolveOptions {
  Method method = Method::automatic;  ///< automatic: exhaustive when tiles <= 9, else greedy
  Measure measure = Measure::mgc;
  Backend backend = Backend::automatic;  ///< compatibility and exhaustive search; greedy is CPU
};
struct Solution {
  std::vector<int> tile_at;
  Method method = Method::greedy;  ///< the method that ran
  Backend backend = Backend::cpu;  ///< the backend that computed compatibility
  double milliseconds = 0;         ///< compatibility + search
};
/// Compatibility then search.
Solution solve(const Tiles& tiles, const SolveOptions& options = {});

// ---------------------------------------------------------------------------------------------
// Benchmark puzzles

/// A scrambled puzzle: `image` (grid.cols*tile x grid.rows*tile, tiles shuffled) and the truth.
struct Scrambled {
  Grid grid;
  Image<RgbaF32> image;
  std::vector<int> truth;  ///< truth[t] = original position of puzzle tile t
};
/// Crops `image` to whole tiles and shuffles them with a Fisher-Yates shuffle driven by a
/// SplitMix64 generator seeded with `seed` (the same puzzle on every platform).
Scrambled scramble(ImageView<const RgbaF32> image, const Grid& grid, std::uint64_t seed);

struct Score {
  double direct = 0;    ///< fraction of tiles in their true position
  double neighbor = 0;  ///< fraction of the 2RC-R-C true adjacent pairs adjacent on the same side
  bool perfect = false;
};
/// Grades a placement against the truth (both for the same rows x cols grid; each a permutation
/// of 0..rows*cols-1, else InputError).
Score score(int rows, int cols, const std::vector<int>& tile_at, const std::vector<int>& truth);

}  // namespace winnow::puzzle
