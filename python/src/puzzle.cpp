// Tile puzzles for Python (winnow.scramble, winnow.unscramble) over winnow/puzzle.hpp. Images
// arrive as float RGBA [H, W, 4] in 0..255 (the Python layer converts grey, RGB and 8-bit
// images); the restored image leaves as uint8 RGBA, the scrambled one as float RGBA.
#include "winnow/puzzle.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "arrays.hpp"

namespace winnow::python {
namespace {

namespace pz = winnow::puzzle;

ImageView<const RgbaF32> rgba_view(const Array& image) {
  require_device(image, false, "image");
  require_ndim(image, 3, "image");
  require_c_contiguous(image, "image");
  if (image.shape(2) != 4 || image.dtype() != nb::dtype<float>())
    throw nb::value_error("image: expected float32 RGBA [height, width, 4]");
  return {static_cast<const RgbaF32*>(image.data()), static_cast<std::int64_t>(image.shape(1)),
          static_cast<std::int64_t>(image.shape(0))};
}

/// rows and cols > 0: that grid; else tiles of `tile` pixels.
pz::Grid grid_for(ImageView<const RgbaF32> image, int rows, int cols, int tile) {
  if (rows > 0 || cols > 0) return pz::grid_from_shape(image.width, image.height, rows, cols, "grid");
  return pz::grid_from_tile(image.width, image.height, tile, "tile");
}

template <class T>
auto image_to_numpy(const Image<T>& image, std::size_t channels) {
  using Channel = std::remove_reference_t<decltype(image.view()(0, 0).r)>;
  const auto w = static_cast<std::size_t>(image.width()), h = static_cast<std::size_t>(image.height());
  std::vector<Channel> values(w * h * channels);
  if (!values.empty()) std::memcpy(values.data(), image.view().data, values.size() * sizeof(Channel));
  return to_numpy(std::move(values), {h, w, channels});
}

/// Returns (restored uint8 RGBA, tile_at, rows, cols, tile, method).
nb::tuple unscramble(const Array& image, int rows, int cols, int tile, std::string_view method,
                     std::string_view measure, std::string_view backend) {
  const ImageView<const RgbaF32> view = rgba_view(image);
  pz::SolveOptions options{
      .method = pz::parse_method(method), .measure = pz::parse_measure(measure), .backend = backend_from(backend)};
  const pz::Grid grid = grid_for(view, rows, cols, tile);
  if (options.method == pz::Method::exhaustive && grid.tiles() > pz::kMaxExhaustiveTiles)
    throw nb::value_error(("method: exhaustive search takes at most " + std::to_string(pz::kMaxExhaustiveTiles) +
                           " tiles; the grid has " + std::to_string(grid.tiles()))
                              .c_str());
  pz::Solution solution;
  Image<Rgba8> restored;
  {
    nb::gil_scoped_release unlocked;
    const pz::Tiles tiles = pz::extract_tiles(view, grid);
    solution = pz::solve(tiles, options);
    restored = pz::assemble(tiles, solution.tile_at);
  }
  return nb::make_tuple(image_to_numpy(restored, 4), solution.tile_at, grid.rows, grid.cols, grid.tile,
                        std::string(pz::to_string(solution.method)));
}

/// Returns (scrambled float RGBA, truth, rows, cols, tile).
nb::tuple scramble(const Array& image, int rows, int cols, int tile, std::uint64_t seed) {
  const ImageView<const RgbaF32> view = rgba_view(image);
  const pz::Grid grid = grid_for(view, rows, cols, tile);
  pz::Scrambled s;
  {
    nb::gil_scoped_release unlocked;
    s = pz::scramble(view, grid, seed);
  }
  return nb::make_tuple(image_to_numpy(s.image, 4), s.truth, grid.rows, grid.cols, grid.tile);
}

}  // namespace

void bind_puzzle(nb::module_& m) {
  m.def("unscramble", &unscramble, nb::arg("image"), nb::arg("rows"), nb::arg("cols"), nb::arg("tile"),
        nb::arg("method"), nb::arg("measure"), nb::arg("backend"),
        "Restores a scrambled float RGBA image; returns (restored uint8 RGBA, tile_at, rows, cols, tile, method).");
  m.def("scramble", &scramble, nb::arg("image"), nb::arg("rows"), nb::arg("cols"), nb::arg("tile"), nb::arg("seed"),
        "Cuts a float RGBA image into tiles and shuffles them; returns (image, truth, rows, cols, tile).");
}

}  // namespace winnow::python
