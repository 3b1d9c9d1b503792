// Private: reading TIFF pages through libtiff, shared by the image reader (image_io.cpp) and the
// volume stack reader (tiff_stack.cpp).
#pragma once
#include <tiffio.h>

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace winnow::io::detail {

/// The first libtiff error message since it was last cleared (tiff_error records it).
extern thread_local std::string g_tiff_error;
/// libtiff error and warning handlers: the first error is kept in g_tiff_error, warnings dropped.
void tiff_error(const char* module, const char* fmt, va_list ap);
void tiff_warning(const char* module, const char* fmt, va_list ap);

struct TiffCloser {
  void operator()(TIFF* t) const {
    if (t) TIFFClose(t);
  }
};

using TiffHandle = std::unique_ptr<TIFF, TiffCloser>;
/// Opens `path` for reading with winnow's error handlers installed; a file libtiff refuses is an
/// InputError naming `path` ("corrupt TIFF: ..." with libtiff's first message).
TiffHandle open_tiff_for_reading(const std::filesystem::path& path);

/// The current page's samples into `out` as contiguous rows of w * pixel_bytes (samples
/// interleaved), from strips or tiles, interleaved or in separate planes. A corrupt page is an
/// InputError naming `path`.
void read_tiff_pixels(TIFF* tif, const std::filesystem::path& path, std::uint32_t w, std::uint32_t h,
                      std::size_t pixel_bytes, unsigned char* out);

/// InputError naming `path` unless libtiff has a codec for the current page's compression (it
/// would otherwise skip every strip and leave the page empty, without an error).
void require_codec(TIFF* tif, const std::filesystem::path& path);

/// The most pixels a 1-bit JBIG page may have: 2^30 (an A0 sheet at 800 dpi; 128 MiB of 1-bit
/// data, 4 GiB as RGBA). JBIG's data cannot bound a page's size: its arithmetic decoder pads a
/// stripe's data with zero bytes, which encoders drop, so a stripe of any number of blank lines
/// takes 2 bytes (jbigkit codes a blank 4000 x 3000 page in 92), and a stripe's lines are set by
/// the JBIG header alone. Pages beyond this are refused before anything is allocated for them.
inline constexpr std::uint64_t kJbigPageMaxPixels = std::uint64_t{1} << 30;

/// The most bytes the current page can decode to: its strips' (or tiles') bytes in the file (each
/// at most `file_bytes`) times the largest expansion of its compression. A header that claims
/// more is corrupt, and is refused before anything is allocated for it. 0 when the page lists no
/// strip or tile byte counts. CCITT fax codes a blank line of any width in a bit: its 1-bit pages
/// are bounded by 8 lines a byte; 1-bit JBIG pages by kJbigPageMaxPixels samples whatever their
/// data; other pages under them cannot decode (0).
std::uint64_t page_decoded_bound(TIFF* tif, std::uint64_t file_bytes);

}  // namespace winnow::io::detail
