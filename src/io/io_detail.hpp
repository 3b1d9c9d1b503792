// Private helpers shared by the image and volume readers.
#pragma once
#include <filesystem>
#include <string>

#include "winnow/error.hpp"
#include "winnow/image.hpp"
#include "winnow/io.hpp"

namespace winnow::io::detail {

/// Throws InputError "<path>: <what>" (one line, naming the file).
[[noreturn]] inline void fail(const std::filesystem::path& path, const std::string& what) {
  throw InputError(path.string() + ": " + what);
}

/// The image formats read_rgbaf tells apart by their first bytes.
enum class ImageFormat { png, jpeg, tiff, fits, unknown };

/// read_rgbaf with the format given instead of sniffed: each format's decoder on any bytes (the
/// per-format fuzz targets' entry; image_io.cpp). `unknown` is the "unsupported format" error.
Image<RgbaF32> read_rgbaf_as(const std::filesystem::path& path, ImageFormat format, ImageInfo* info = nullptr);

}  // namespace winnow::io::detail
