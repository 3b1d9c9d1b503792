// Reading TIFF pages through libtiff: strips or tiles, samples interleaved or in separate
// planes, into contiguous rows. Shared by the image reader and the volume stack reader.
#include "io/tiff_read.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "io/io_detail.hpp"

namespace winnow::io::detail {

namespace fs = std::filesystem;

thread_local std::string g_tiff_error;
void tiff_error(const char* module, const char* fmt, va_list ap) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  if (g_tiff_error.empty()) g_tiff_error = (module ? std::string(module) + ": " : std::string()) + buf;
}
void tiff_warning(const char*, const char*, va_list) {}

TiffHandle open_tiff_for_reading(const fs::path& path) {
  TIFFSetErrorHandler(tiff_error);
  TIFFSetWarningHandler(tiff_warning);
  g_tiff_error.clear();
  TiffHandle tif(TIFFOpen(path.c_str(), "r"));
  if (!tif) fail(path, "corrupt TIFF: " + g_tiff_error);
  return tif;
}

void require_codec(TIFF* tif, const fs::path& path) {
  std::uint16_t compression = COMPRESSION_NONE;
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
  if (!TIFFIsCODECConfigured(compression))
    fail(path, "unsupported TIFF compression " + std::to_string(compression) + " (libtiff has no codec for it)");
}

std::uint64_t page_decoded_bound(TIFF* tif, std::uint64_t file_bytes) {
  std::uint16_t compression = COMPRESSION_NONE;
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
  // Expansion: LZW's 12-bit code stands for at most 4096 bytes, Deflate reaches 1032 and PackBits
  // 64; every other codec libtiff knows stays under 2^20 (ZSTD's RLE blocks: 2^17 bytes from 4;
  // LZMA about 7000; JPEG 64 samples per bit; 4096 would refuse valid ZSTD pages of constant
  // data) except the bilevel fax and JBIG codecs.
  std::uint64_t expansion = std::uint64_t{1} << 20;
  bool fax = false;
  switch (compression) {
    case COMPRESSION_NONE: expansion = 1; break;
    case COMPRESSION_LZW:
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE:
    case COMPRESSION_PACKBITS: expansion = 4096; break;
    case COMPRESSION_CCITTRLE:
    case COMPRESSION_CCITTRLEW:
    case COMPRESSION_CCITTFAX3:
    case COMPRESSION_CCITTFAX4:
    case COMPRESSION_JBIG: {
      // They code 1-bit pages only: any other page under them cannot decode (fuzz_tiff_stack: a
      // 16-bit page under fax 4 had its 3.7 GB allocated).
      std::uint16_t bits = 1;
      TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
      if (bits != 1) return 0;
      // JBIG's data bounds nothing (a stripe without data decodes to all its lines): an
      // absolute limit instead.
      if (compression == COMPRESSION_JBIG) return kJbigPageMaxPixels / 8;
      // Fax spends at least a bit on every line (a blank one under fax 4: one code), whatever its
      // width: its lines are bounded by its bits, not its bytes (fuzz_tiff: 58125 lines claimed
      // from 132 bytes had a 15 GB RGBA buffer allocated).
      fax = true;
      break;
    }
    default: break;
  }
  const bool tiled = TIFFIsTiled(tif);
  std::uint64_t* counts = nullptr;
  if (!TIFFGetField(tif, tiled ? TIFFTAG_TILEBYTECOUNTS : TIFFTAG_STRIPBYTECOUNTS, &counts) || !counts) return 0;
  const std::uint64_t n = tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n && sum < file_bytes; ++i) sum += std::min(counts[i], file_bytes);
  std::uint64_t bound = 0;
  if (fax) {
    std::uint32_t width = 0;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width);
    const std::uint64_t lines = std::min(sum, file_bytes) * 8, line_bytes = (std::uint64_t{width} + 7) / 8;
    return __builtin_mul_overflow(lines, line_bytes, &bound) ? UINT64_MAX : bound;
  }
  return __builtin_mul_overflow(std::min(sum, file_bytes), expansion, &bound) ? UINT64_MAX : bound;
}

namespace {
// Samples `s` of every pixel (PLANARCONFIG_SEPARATE: one plane per sample), or whole pixels
// (contiguous: sample_bytes == pixel_bytes, s == 0), into `out` as rows of w * pixel_bytes with
// samples interleaved, from strips or tiles.
void read_tiff_samples(TIFF* tif, const fs::path& path, std::uint32_t w, std::uint32_t h, std::size_t sample_bytes,
                       std::uint16_t s, std::size_t pixel_bytes, unsigned char* out) {
  auto put = [&](const unsigned char* src, std::uint32_t y, std::uint32_t x0, std::uint32_t count) {
    unsigned char* dst = out + (static_cast<std::size_t>(y) * w + x0) * pixel_bytes + s * sample_bytes;
    if (sample_bytes == pixel_bytes) return void(std::memcpy(dst, src, count * pixel_bytes));
    for (std::uint32_t i = 0; i < count; ++i) std::memcpy(dst + i * pixel_bytes, src + i * sample_bytes, sample_bytes);
  };
  if (TIFFIsTiled(tif)) {
    std::uint32_t tw = 0, th = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
    const tmsize_t tile_bytes = TIFFTileSize(tif);
    if (tw == 0 || th == 0 || tile_bytes < static_cast<tmsize_t>(static_cast<std::size_t>(tw) * th * sample_bytes))
      fail(path, "corrupt TIFF: bad tile size");
    // A tile may reach past the page (it is padded), so the page's claim does not bound it; it
    // decodes from its bytes in the file, as the page does (fuzz_tiff_stack: tiles of 3.4e9 x 8
    // pixels in a 443-byte file).
    std::error_code ec;
    const std::uint64_t file_bytes = fs::file_size(path, ec);
    if (!ec && static_cast<std::uint64_t>(tile_bytes) > page_decoded_bound(tif, file_bytes))
      fail(path, "corrupt TIFF: tiles of " + std::to_string(tw) + " x " + std::to_string(th) + " pixels (" +
                     std::to_string(tile_bytes) + " bytes) claim more than the page's data in the file can hold");
    std::vector<unsigned char> tile(static_cast<std::size_t>(tile_bytes));
    for (std::uint32_t ty = 0; ty < h; ty += th)
      for (std::uint32_t tx = 0; tx < w; tx += tw) {
        if (TIFFReadTile(tif, tile.data(), tx, ty, 0, s) < 0) fail(path, "corrupt or truncated TIFF: " + g_tiff_error);
        for (std::uint32_t r = 0; r < th && ty + r < h; ++r)
          put(tile.data() + static_cast<std::size_t>(r) * tw * sample_bytes, ty + r, tx, std::min(tw, w - tx));
      }
  } else {
    if (TIFFScanlineSize(tif) < static_cast<tmsize_t>(w * sample_bytes)) fail(path, "corrupt TIFF: bad row size");
    std::vector<unsigned char> line(static_cast<std::size_t>(TIFFScanlineSize(tif)));
    for (std::uint32_t y = 0; y < h; ++y) {
      if (TIFFReadScanline(tif, line.data(), y, s) < 0) fail(path, "corrupt or truncated TIFF: " + g_tiff_error);
      put(line.data(), y, 0, w);
    }
  }
}

}  // namespace

// The whole image's samples into `out` as contiguous rows of w * pixel_bytes (samples
// interleaved), from strips or tiles, interleaved or in separate planes.
void read_tiff_pixels(TIFF* tif, const fs::path& path, std::uint32_t w, std::uint32_t h, std::size_t pixel_bytes,
                      unsigned char* out) {
  std::uint16_t planar = PLANARCONFIG_CONTIG, spp = 1;
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  if (planar == PLANARCONFIG_SEPARATE && spp > 1) {
    for (std::uint16_t s = 0; s < spp; ++s) read_tiff_samples(tif, path, w, h, pixel_bytes / spp, s, pixel_bytes, out);
  } else {
    read_tiff_samples(tif, path, w, h, pixel_bytes, 0, pixel_bytes, out);
  }
}

}  // namespace winnow::io::detail
