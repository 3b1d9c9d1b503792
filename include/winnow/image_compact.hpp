#pragma once
/// @file image_compact.hpp
/// Image compaction: the pixels brighter than a threshold packed together, then sorted by
/// luminance (e.g. the bright sources of a Hubble image).
#include <cstdint>
#include <vector>

#include "winnow/backend.hpp"
#include "winnow/image.hpp"

namespace winnow {

enum class PixelKey { luminance, alpha };
enum class SortOrder { descending, ascending, none };

struct ImageCompactOptions {
  double threshold = 40.0;  ///< keep pixels with key > threshold; 0..255
  PixelKey key = PixelKey::luminance;
  SortOrder sort = SortOrder::descending;
  Backend backend = Backend::automatic;
};

struct ImageCompactResult {
  /// Raster indices (y * width + x) of the kept pixels in input order ("packed" order).
  std::vector<std::uint32_t> packed_index;
  /// The same indices ordered by key (stable: ties keep raster order). Empty for SortOrder::none.
  std::vector<std::uint32_t> sorted_index;
  Backend backend = Backend::cpu;  ///< the backend that ran
  double milliseconds = 0;         ///< compaction + sort, excluding file I/O and host<->device copies of the image
};

/// Key of a pixel as compared and sorted: luminance_milli (thousandths) or alpha * 1000.
constexpr std::uint32_t pixel_key_milli(const Rgba8& p, PixelKey key) {
  return key == PixelKey::luminance ? luminance_milli(p) : 1000u * p.a;
}

/// Compacts `image` (at most 2^32 - 1 pixels; more throws InputError).
ImageCompactResult compact_image(ImageView<const Rgba8> image, const ImageCompactOptions& options);

/// Renders pixels `index` (raster indices into `image`) row-major into an image of the input's
/// width and height, the rest transparent black.
Image<Rgba8> render_packed(ImageView<const Rgba8> image, const std::vector<std::uint32_t>& index);

}  // namespace winnow
