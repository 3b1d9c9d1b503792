// Image files in and out. Each decoder produces a Decoded raster (interleaved 8/16-bit samples,
// or floats for FITS) that the two public readers convert. Library error callbacks record the
// message and long-jump back so a corrupt file becomes one InputError naming the file.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

// jpeglib.h needs size_t and FILE (<cstdio>) first, jerror.h needs jpeglib.h: kept in this order.
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on
#include <png.h>
#ifdef WINNOW_HAVE_TIFF
#include <tiffio.h>
#endif
#ifdef WINNOW_HAVE_FITS
#include <fitsio.h>
#endif

#include "io/io_detail.hpp"
#ifdef WINNOW_HAVE_TIFF
#include "io/tiff_read.hpp"
#endif
#include "winnow/error.hpp"
#include "winnow/io.hpp"

namespace winnow::io {
namespace {

namespace fs = std::filesystem;

struct Decoded {
  std::int64_t width = 0, height = 0;
  int channels = 0;                    // 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA
  int bits = 8;                        // 8 or 16 for `samples`
  std::vector<std::uint16_t> samples;  // interleaved, row-major
  std::vector<float> values;           // FITS, float / 32-bit TIFF: grey already scaled to [0, 255]; NaN -> 0
  ImageInfo info;
};

using detail::fail;

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_for_read(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(path, "no such file");
  if (fs::is_directory(path, ec)) fail(path, "is a directory, not an image file");
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) fail(path, std::string("cannot open: ") + std::strerror(errno));
  return f;
}

using Format = detail::ImageFormat;

Format sniff(const fs::path& path) {
  File f = open_for_read(path);
  unsigned char m[9] = {};
  const std::size_t got = std::fread(m, 1, sizeof m, f.get());
  if (got == 0) fail(path, "empty file");
  if (got >= 8 && std::memcmp(m, "\x89PNG\r\n\x1a\n", 8) == 0) return Format::png;
  if (got >= 3 && m[0] == 0xFF && m[1] == 0xD8 && m[2] == 0xFF) return Format::jpeg;
  // TIFF (42) and BigTIFF (43), little- or big-endian.
  if (got >= 4 && ((m[0] == 'I' && m[1] == 'I' && (m[2] == 42 || m[2] == 43) && m[3] == 0) ||
                   (m[0] == 'M' && m[1] == 'M' && m[2] == 0 && (m[3] == 42 || m[3] == 43))))
    return Format::tiff;
  if (got >= 9 && std::memcmp(m, "SIMPLE  =", 9) == 0) return Format::fits;
  return Format::unknown;
}

void check_size(const fs::path& path, std::int64_t w, std::int64_t h) {
  if (w <= 0 || h <= 0) fail(path, "image has zero width or height");
}

// The size of the file at `path`, or nullopt where it cannot be told (then no claim is bounded).
std::optional<std::uint64_t> file_bytes_of(const fs::path& path) {
  std::error_code ec;
  const std::uintmax_t n = fs::file_size(path, ec);
  if (ec) return std::nullopt;
  return n;
}

// The refusal of a header whose pixels its file cannot hold (checked before allocating for them).
[[noreturn]] void fail_claim(const fs::path& path, const char* format, std::uint64_t w, std::uint64_t h,
                             std::uint64_t file_bytes) {
  fail(path, std::string("corrupt ") + format + ": the header's " + std::to_string(w) + " x " + std::to_string(h) +
                 " pixels cannot come from a file of " + std::to_string(file_bytes) + " bytes");
}

// ---- PNG (classic API: keeps 16-bit samples as they are, no gamma conversion) ---------------
struct PngErr {
  std::jmp_buf jump;
  char message[256] = {};
};
void png_error_fn(png_structp png, png_const_charp msg) {
  auto* e = static_cast<PngErr*>(png_get_error_ptr(png));
  std::snprintf(e->message, sizeof e->message, "%s", msg);
  std::longjmp(e->jump, 1);
}
void png_warning_fn(png_structp, png_const_charp) {}

Decoded read_png(const fs::path& path) {
  File f = open_for_read(path);
  Decoded d;
  PngErr err;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &err, png_error_fn, png_warning_fn);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) fail(path, "out of memory");
  std::vector<png_bytep> rows;  // declared before setjmp so a long jump skips no constructor
  std::vector<unsigned char> raw;
  if (setjmp(err.jump)) {
    png_destroy_read_struct(&png, &info, nullptr);
    fail(path, std::string("corrupt or truncated PNG: ") + err.message);
  }
  png_init_io(png, f.get());
  png_read_info(png, info);
  const auto w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  const int depth = png_get_bit_depth(png, info), color = png_get_color_type(png, info);
  d.info = {"png", 0, depth};
  // Deflate packs at most ~1032 bytes into one: a header claiming more stored rows (as packed in
  // the file, before any expansion: 1-bit and palette images are small there) than that is
  // corrupt, and is refused before gigabytes are allocated for it.
  const auto file_bytes = file_bytes_of(path);
  const double packed_bytes = (static_cast<double>(png_get_rowbytes(png, info)) + 1.0) * h;
  if (file_bytes && packed_bytes > 1100.0 * static_cast<double>(*file_bytes) + 65536.0) {
    png_destroy_read_struct(&png, &info, nullptr);
    fail_claim(path, "PNG", w, h, *file_bytes);
  }
  png_set_expand(png);                 // palette -> RGB, grey < 8 bits -> 8 bits, tRNS -> alpha
  if (depth == 16) png_set_swap(png);  // host (little-endian) order for uint16_t
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  d.width = w;
  d.height = h;
  d.channels = png_get_channels(png, info);
  d.bits = png_get_bit_depth(png, info);
  d.info.channels = (color == PNG_COLOR_TYPE_PALETTE) ? (png_get_valid(png, info, PNG_INFO_tRNS) ? 4 : 3) : d.channels;
  if (w == 0 || h == 0) {
    png_destroy_read_struct(&png, &info, nullptr);
    check_size(path, w, h);
  }
  const std::size_t rowbytes = png_get_rowbytes(png, info);
  try {
    raw.resize(rowbytes * h);
    rows.resize(h);
  } catch (const std::bad_alloc&) {
    png_destroy_read_struct(&png, &info, nullptr);
    fail(path, "not enough memory for a " + std::to_string(w) + " x " + std::to_string(h) + " image");
  }
  for (png_uint_32 y = 0; y < h; ++y) rows[y] = raw.data() + y * rowbytes;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  const std::size_t count = static_cast<std::size_t>(w) * h * d.channels;
  d.samples.resize(count);
  if (d.bits == 16) {
    std::memcpy(d.samples.data(), raw.data(), count * 2);
  } else {
    for (std::size_t i = 0; i < count; ++i) d.samples[i] = raw[i];
  }
  return d;
}

// ---- JPEG ------------------------------------------------------------------------------------
struct JpegErr {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
  int warnings = 0;
  bool unsupported = false;
};
void jpeg_error_exit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegErr*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  e->unsupported = cinfo->err->msg_code == JERR_BAD_PRECISION;  // 12-bit JPEG: a valid file we cannot read
  std::longjmp(e->jump, 1);
}
void jpeg_emit(j_common_ptr cinfo, int level) {
  auto* e = reinterpret_cast<JpegErr*>(cinfo->err);
  // Stray bytes between segments (before a header marker, or before EOI after the scan) are
  // common in camera files and lose no image data. Before a restart marker they sit inside the
  // scan, where they mean damaged data, as does every other warning (a premature end above all).
  const int marker = cinfo->err->msg_parm.i[1];
  if (level < 0 && cinfo->err->msg_code == JWRN_EXTRANEOUS_DATA && !(marker >= 0xD0 && marker <= 0xD7)) return;
  if (level < 0 && e->warnings++ == 0) (*cinfo->err->format_message)(cinfo, e->message);
}

Decoded read_jpeg(const fs::path& path) {
  File f = open_for_read(path);
  Decoded d;
  jpeg_decompress_struct cinfo{};
  JpegErr err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  err.mgr.emit_message = jpeg_emit;
  std::vector<unsigned char> raw;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    if (err.unsupported) fail(path, std::string("unsupported JPEG (only 8-bit samples are read): ") + err.message);
    fail(path, std::string("corrupt or truncated JPEG: ") + err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f.get());
  jpeg_read_header(&cinfo, TRUE);
  // Huffman coding spends at least one bit on every 8x8 block of a component it codes, and no
  // component has fewer than 1/16 of the image's blocks (sampling factors are 1 to 4): a header
  // claiming more than 8192 pixels per byte of its file is corrupt (fuzz_jpeg's inputs of a few
  // KB had gigabytes allocated and zeroed that way before libjpeg met the end of their data).
  // Arithmetic coding has no useful bound (its adaptive coder can spend far less than a bit on a
  // block), yet fuzz_jpeg's 258-byte arithmetic file claiming 65496 x 65281 pixels had libjpeg
  // allocate 8.5 GB: those are held to a limit, 65536 pixels a byte, refused as such. Both are
  // checked before libjpeg or we allocate for the image.
  if (const auto file_bytes = file_bytes_of(path)) {
    const double pixels = static_cast<double>(cinfo.image_width) * cinfo.image_height;
    const double file = static_cast<double>(*file_bytes);
    if (!cinfo.arith_code && pixels > 8192.0 * file + 1048576.0) {
      jpeg_destroy_decompress(&cinfo);
      fail_claim(path, "JPEG", cinfo.image_width, cinfo.image_height, *file_bytes);
    }
    if (cinfo.arith_code && pixels > 65536.0 * file + 1048576.0) {
      const std::string claim = std::to_string(cinfo.image_width) + " x " + std::to_string(cinfo.image_height);
      jpeg_destroy_decompress(&cinfo);
      fail(path, "refused: an arithmetic-coded JPEG claiming " + claim + " pixels from " + std::to_string(*file_bytes) +
                     " bytes (more than 65536 pixels a byte; corrupt?)");
    }
  }
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    jpeg_destroy_decompress(&cinfo);
    fail(path, "unsupported JPEG colour space (CMYK)");
  }
  const bool grey = cinfo.num_components == 1;
  cinfo.out_color_space = grey ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  d.width = cinfo.output_width;
  d.height = cinfo.output_height;
  d.channels = cinfo.output_components;
  d.bits = 8;
  d.info = {"jpeg", d.channels, 8};
  const std::size_t stride = static_cast<std::size_t>(d.width) * d.channels;
  try {
    raw.resize(stride * d.height);
  } catch (const std::bad_alloc&) {
    jpeg_destroy_decompress(&cinfo);
    fail(path, "not enough memory for a " + std::to_string(d.width) + " x " + std::to_string(d.height) + " image");
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = raw.data() + cinfo.output_scanline * stride;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  // libjpeg pads a truncated stream with grey and only warns: we call that corrupt.
  if (err.warnings) fail(path, std::string("corrupt or truncated JPEG: ") + err.message);
  d.samples.assign(raw.begin(), raw.end());
  return d;
}

// Linear map of the finite values of `v` from their minimum..maximum onto 0..top (all 0 when
// constant); NaN and infinities map to 0. FITS and scientific TIFF data.
struct MinMaxScale {
  double lo = 0, scale = 0;
  MinMaxScale(const std::vector<double>& v, double top) {
    double l = std::numeric_limits<double>::infinity(), h = -l;
    for (double x : v)
      if (std::isfinite(x)) l = std::min(l, x), h = std::max(h, x);
    if (h > l) lo = l, scale = top / (h - l);
  }
  double operator()(double x) const { return std::isfinite(x) ? (x - lo) * scale : 0.0; }
};

// ---- TIFF ------------------------------------------------------------------------------------
#ifdef WINNOW_HAVE_TIFF
// Pages, error text and closing come from tiff_read.cpp (shared with TIFF volume stacks).
using detail::g_tiff_error;
using detail::open_tiff_for_reading;
using detail::read_tiff_pixels;
using detail::tiff_error;
using detail::TiffCloser;
using detail::TiffHandle;

// A premultiplied colour sample c with alpha a (both 0..top) as straight colour, rounded.
std::uint16_t unpremultiply(std::uint32_t c, std::uint32_t a, std::uint32_t top) {
  return static_cast<std::uint16_t>(a == 0 || a == top ? c : std::min<std::uint32_t>(top, (c * top + a / 2) / a));
}

// Sample i of a raw buffer as a double (format and bits as in the TIFF tags).
double tiff_sample(const unsigned char* raw, std::size_t i, std::uint16_t fmt, std::uint16_t bps) {
  auto get = [&](auto t) {
    decltype(t) v;
    std::memcpy(&v, raw + i * sizeof v, sizeof v);
    return static_cast<double>(v);
  };
  if (fmt == SAMPLEFORMAT_IEEEFP) return bps == 32 ? get(float{}) : get(double{});
  if (fmt == SAMPLEFORMAT_INT)
    return bps == 8 ? get(std::int8_t{}) : bps == 16 ? get(std::int16_t{}) : get(std::int32_t{});
  return bps == 8 ? get(std::uint8_t{}) : bps == 16 ? get(std::uint16_t{}) : get(std::uint32_t{});
}

Decoded read_tiff(const fs::path& path) {
  const TiffHandle tif = open_tiff_for_reading(path);
  std::uint32_t w = 0, h = 0;
  std::uint16_t spp = 1, bps = 8, planar = PLANARCONFIG_CONTIG, fmt = SAMPLEFORMAT_UINT, photometric = 0;
  TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &h);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_BITSPERSAMPLE, &bps);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLEFORMAT, &fmt);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_PHOTOMETRIC, &photometric);
  check_size(path, w, h);
  detail::require_codec(tif.get(), path);
  // What the page claims against what its data in the file can decode to (as the volume stack
  // reader checks), and against memory: the largest buffer below is 32 bytes per pixel. YCbCr
  // may store its chroma subsampled: only luma is counted.
  const double stored_samples = photometric == PHOTOMETRIC_YCBCR ? 1.0 : spp;
  const double claimed_bytes = static_cast<double>(w) * h * stored_samples * bps / 8.0;
  // A 1-bit JBIG page's data cannot bound its size: it is held to an absolute limit instead.
  std::uint16_t compression = COMPRESSION_NONE;
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_COMPRESSION, &compression);
  if (compression == COMPRESSION_JBIG && bps == 1 &&
      static_cast<double>(w) * h * stored_samples > static_cast<double>(detail::kJbigPageMaxPixels))
    fail(path, "refused: a 1-bit JBIG page of " + std::to_string(w) + " x " + std::to_string(h) +
                   " pixels, more than the " + std::to_string(detail::kJbigPageMaxPixels) +
                   " pixels read from a JBIG page (its data cannot bound its size; corrupt?)");
  if (const auto file_bytes = file_bytes_of(path);
      file_bytes && claimed_bytes > static_cast<double>(detail::page_decoded_bound(tif.get(), *file_bytes)))
    fail_claim(path, "TIFF", w, h, *file_bytes);
  if (static_cast<double>(w) * h * 32.0 > static_cast<double>(std::numeric_limits<std::size_t>::max()))
    fail(path,
         "a TIFF of " + std::to_string(w) + " x " + std::to_string(h) + " pixels is larger than any memory can hold");
  Decoded d;
  d.width = w;
  d.height = h;
  d.info = {"tiff", spp, bps};
  const std::size_t n = static_cast<std::size_t>(w) * h;
  // Grey (black or white is zero) with optional alpha, or RGB with optional alpha; interleaved
  // or in planes. The rest goes through libtiff's RGBA rendering below.
  const bool direct =
      ((photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_RGB) && spp >= 1 && spp <= 4) ||
      (photometric == PHOTOMETRIC_MINISWHITE && (spp == 1 || spp == 2));
  const bool white_is_zero = photometric == PHOTOMETRIC_MINISWHITE;
  // Premultiplied (associated) alpha is divided out: winnow works on straight colour.
  bool premultiplied = false;
  {
    std::uint16_t extra_count = 0;
    std::uint16_t* extra = nullptr;
    if ((spp == 2 || spp == 4) && TIFFGetField(tif.get(), TIFFTAG_EXTRASAMPLES, &extra_count, &extra) &&
        extra_count > 0 && extra)
      premultiplied = extra[extra_count - 1] == EXTRASAMPLE_ASSOCALPHA;
  }
  const bool uint_8_16 = fmt == SAMPLEFORMAT_UINT && (bps == 8 || bps == 16);
  // Scientific data: 32-bit integers, signed integers and floats (grey or RGB, no alpha).
  const bool scaled = (spp == 1 || spp == 3) && ((fmt == SAMPLEFORMAT_IEEEFP && (bps == 32 || bps == 64)) ||
                                                 (fmt == SAMPLEFORMAT_INT && (bps == 8 || bps == 16 || bps == 32)) ||
                                                 (fmt == SAMPLEFORMAT_UINT && bps == 32));
  const std::size_t pixel_bytes = static_cast<std::size_t>(spp) * bps / 8;
  if (direct && uint_8_16) {  // strips or tiles; 16-bit precision kept
    d.channels = spp;
    d.bits = bps;
    d.samples.resize(n * spp);
    if (bps == 16) {  // straight into the samples (host byte order, as libtiff gives them)
      read_tiff_pixels(tif.get(), path, w, h, pixel_bytes, reinterpret_cast<unsigned char*>(d.samples.data()));
    } else {
      std::vector<unsigned char> raw(n * pixel_bytes);
      read_tiff_pixels(tif.get(), path, w, h, pixel_bytes, raw.data());
      std::copy(raw.begin(), raw.end(), d.samples.begin());
    }
    const std::uint32_t top = bps == 16 ? 65535u : 255u;
    if (white_is_zero)
      for (std::size_t i = 0; i < n; ++i) d.samples[i * spp] = static_cast<std::uint16_t>(top - d.samples[i * spp]);
    if (premultiplied) {
      const int colours = spp - 1;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t* px = &d.samples[i * spp];
        for (int c = 0; c < colours; ++c) px[c] = unpremultiply(px[c], px[colours], top);
      }
    }
  } else if (direct && scaled && !white_is_zero) {  // min-max scaled like FITS; NaN and infinities -> 0
    std::vector<unsigned char> raw(n * pixel_bytes);
    read_tiff_pixels(tif.get(), path, w, h, pixel_bytes, raw.data());
    std::vector<double> v(n * spp);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = tiff_sample(raw.data(), i, fmt, bps);
    if (spp == 1) {  // grey: floats in [0, 255], as FITS
      const MinMaxScale to(v, 255.0);
      d.channels = 1;
      d.values.resize(n);
      for (std::size_t i = 0; i < n; ++i) d.values[i] = static_cast<float>(to(v[i]));
    } else {  // RGB: one scale for the three channels, as 16-bit samples
      const MinMaxScale to(v, 65535.0);
      d.channels = 3;
      d.bits = 16;
      d.samples.resize(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) d.samples[i] = static_cast<std::uint16_t>(std::lround(to(v[i])));
    }
  } else if (fmt != SAMPLEFORMAT_UINT && fmt != SAMPLEFORMAT_VOID) {
    fail(path, "unsupported TIFF: " + std::to_string(spp) + " samples per pixel of " + std::to_string(bps) + "-bit " +
                   (fmt == SAMPLEFORMAT_IEEEFP ? "floats" : "signed integers") +
                   (planar != PLANARCONFIG_CONTIG ? " in separate planes" : ""));
  } else {  // anything else libtiff can render (palette, YCbCr, bilevel, planes, ...) as 8-bit RGBA
    std::vector<std::uint32_t> rgba(n);
    // Stop at the first strip that fails: libtiff would otherwise leave it blank and go on.
    if (!TIFFReadRGBAImageOriented(tif.get(), w, h, rgba.data(), ORIENTATION_TOPLEFT, 1))
      fail(path, "unsupported or corrupt TIFF: " + g_tiff_error);
    d.channels = 4;
    d.bits = 8;
    d.samples.resize(rgba.size() * 4);
    for (std::size_t i = 0; i < rgba.size(); ++i) {
      // libtiff renders alpha premultiplied (it multiplies unassociated alpha in): divided out.
      const std::uint32_t a = TIFFGetA(rgba[i]);
      d.samples[4 * i + 0] = unpremultiply(TIFFGetR(rgba[i]), a, 255);
      d.samples[4 * i + 1] = unpremultiply(TIFFGetG(rgba[i]), a, 255);
      d.samples[4 * i + 2] = unpremultiply(TIFFGetB(rgba[i]), a, 255);
      d.samples[4 * i + 3] = static_cast<std::uint16_t>(a);
    }
  }
  return d;
}
#endif

// ---- FITS ------------------------------------------------------------------------------------
#ifdef WINNOW_HAVE_FITS
Decoded read_fits(const fs::path& path) {
  fitsfile* fp = nullptr;
  int status = 0;
  auto fits_fail = [&](const char* what) {
    char text[FLEN_STATUS] = {};
    fits_get_errstatus(status, text);
    int ignored = 0;
    if (fp) fits_close_file(fp, &ignored);
    fail(path, std::string(what) + ": " + text);
  };
  // "[...]"-style extended names are not wanted: open the file exactly as named.
  if (fits_open_diskfile(&fp, path.c_str(), READONLY, &status)) fits_fail("corrupt FITS");
  int hdutype = 0, naxis = 0, bitpix = 0;
  long axes[3] = {0, 0, 0};
  // The first HDU with image data (the primary may be empty with the image in an extension).
  for (int hdu = 1;; ++hdu) {
    if (fits_movabs_hdu(fp, hdu, &hdutype, &status)) {
      status = 0;
      int ignored = 0;
      fits_close_file(fp, &ignored);
      fail(path, "FITS file has no image data");
    }
    if (hdutype != IMAGE_HDU) continue;
    if (fits_get_img_param(fp, 3, &bitpix, &naxis, axes, &status)) fits_fail("corrupt FITS header");
    if (naxis >= 2 && axes[0] > 0 && axes[1] > 0) break;
  }
  if (naxis > 3 || (naxis == 3 && axes[2] != 1)) {
    int ignored = 0;
    fits_close_file(fp, &ignored);
    fail(path, "unsupported FITS image with " + std::to_string(naxis) + " axes (expected a 2-D image)");
  }
  // The header's size, checked before allocating: the two buffers below hold 12 bytes a pixel,
  // and an uncompressed image's data lie in the file itself, so a plain (not gzip-compressed)
  // file with fewer bytes than its header claims is corrupt.
  std::int64_t pixels = 0;
  if (__builtin_mul_overflow(std::int64_t{axes[0]}, std::int64_t{axes[1]}, &pixels) ||
      pixels > std::numeric_limits<std::int64_t>::max() / 12) {
    int ignored = 0;
    fits_close_file(fp, &ignored);
    fail(path, "a FITS image of " + std::to_string(axes[0]) + " x " + std::to_string(axes[1]) +
                   " pixels is larger than any memory can hold (corrupt header?)");
  }
  {
    int compressed_status = 0;
    const bool tile_compressed = fits_is_compressed_image(fp, &compressed_status) != 0;
    char magic[6] = {};
    const bool plain = [&] {
      std::ifstream in(path, std::ios::binary);
      return in.read(magic, sizeof magic) && std::memcmp(magic, "SIMPLE", sizeof magic) == 0;
    }();
    const auto file_bytes = file_bytes_of(path);
    const double claimed_bytes = static_cast<double>(pixels) * std::abs(bitpix) / 8.0;
    if (!tile_compressed && plain && file_bytes && claimed_bytes > static_cast<double>(*file_bytes)) {
      int ignored = 0;
      fits_close_file(fp, &ignored);
      fail_claim(path, "FITS", static_cast<std::uint64_t>(axes[0]), static_cast<std::uint64_t>(axes[1]), *file_bytes);
    }
  }
  Decoded d;
  d.width = axes[0];
  d.height = axes[1];
  d.channels = 1;
  d.info = {"fits", 1, bitpix};
  const std::size_t n = static_cast<std::size_t>(d.width) * d.height;
  std::vector<double> v(n);
  long first[3] = {1, 1, 1};
  double nan = std::numeric_limits<double>::quiet_NaN();
  int anynul = 0;
  // cfitsio applies BSCALE/BZERO itself.
  if (fits_read_pix(fp, TDOUBLE, first, static_cast<LONGLONG>(n), &nan, v.data(), &anynul, &status))
    fits_fail("corrupt or truncated FITS data");
  fits_close_file(fp, &status);
  const MinMaxScale to(v, 255.0);
  d.values.resize(n);
  // FITS stores the bottom row first (row 1 at the bottom, as astronomy viewers show it).
  for (std::int64_t y = 0; y < d.height; ++y)
    for (std::int64_t x = 0; x < d.width; ++x) {
      d.values[static_cast<std::size_t>(y * d.width + x)] =
          static_cast<float>(to(v[static_cast<std::size_t>((d.height - 1 - y) * d.width + x)]));
    }
  return d;
}
#endif

Decoded decode_format(const fs::path& path, Format format) {
  switch (format) {
    case Format::png: return read_png(path);
    case Format::jpeg: return read_jpeg(path);
    case Format::tiff:
#ifdef WINNOW_HAVE_TIFF
      return read_tiff(path);
#else
      fail(path, "TIFF support is not compiled into this build");
#endif
    case Format::fits:
#ifdef WINNOW_HAVE_FITS
      return read_fits(path);
#else
      fail(path, "FITS support is not compiled into this build");
#endif
    case Format::unknown: break;
  }
  fail(path, "unsupported image format (expected PNG, JPEG, TIFF or FITS)");
}

// Sample -> [0, 255] as float, and as rounded 8-bit.
inline float to_float(std::uint16_t s, int bits) { return bits == 16 ? s * (255.0f / 65535.0f) : s; }
inline std::uint8_t to_u8(std::uint16_t s, int bits) {
  return bits == 16 ? static_cast<std::uint8_t>((s * 255u + 32767u) / 65535u) : static_cast<std::uint8_t>(s);
}

template <class Pixel, class Conv>
Image<Pixel> convert(const Decoded& d, Conv conv, float opaque) {
  Image<Pixel> out(d.width, d.height);
  Pixel* px = out.data();
  const std::size_t n = static_cast<std::size_t>(d.width) * d.height;
  if (!d.values.empty()) {  // FITS grey floats
    for (std::size_t i = 0; i < n; ++i) {
      const float v = d.values[i];
      px[i] = Pixel{conv.from_float(v), conv.from_float(v), conv.from_float(v), conv.from_float(opaque)};
    }
    return out;
  }
  const int c = d.channels;
  const std::uint16_t* s = d.samples.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
    const std::uint16_t* p = s + i * c;
    auto v = [&](int k) { return conv(p[k], d.bits); };
    switch (c) {
      case 1: px[i] = Pixel{v(0), v(0), v(0), conv.from_float(opaque)}; break;
      case 2: px[i] = Pixel{v(0), v(0), v(0), v(1)}; break;
      case 3: px[i] = Pixel{v(0), v(1), v(2), conv.from_float(opaque)}; break;
      default: px[i] = Pixel{v(0), v(1), v(2), v(3)}; break;
    }
  }
  return out;
}

struct ToU8 {
  std::uint8_t operator()(std::uint16_t s, int bits) const { return to_u8(s, bits); }
  std::uint8_t from_float(float v) const { return static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0f, 255.0f))); }
};
struct ToF32 {
  float operator()(std::uint16_t s, int bits) const { return to_float(s, bits); }
  float from_float(float v) const { return v; }
};

// ---- PNG writing -------------------------------------------------------------------------------
void write_png_rows(const fs::path& path, std::int64_t w, std::int64_t h, int color_type, int channels,
                    const std::vector<const unsigned char*>& rows) {
  if (w <= 0 || h <= 0) throw InputError(path.string() + ": cannot write an image of zero size");
  AtomicFile file(path);
  {
    File f(std::fopen(file.temp_path().c_str(), "wb"));
    if (!f) throw InputError(path.string() + ": cannot write: " + std::strerror(errno));
    PngErr err;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &err, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : nullptr;
    if (!png || !info) throw InputError(path.string() + ": out of memory");
    if (setjmp(err.jump)) {
      png_destroy_write_struct(&png, &info);
      throw InputError(path.string() + ": cannot write PNG: " + err.message);
    }
    png_init_io(png, f.get());
    png_set_IHDR(png, info, static_cast<png_uint_32>(w), static_cast<png_uint_32>(h), 8, color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 6);
    png_write_info(png, info);
    for (const unsigned char* r : rows) png_write_row(png, r);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    (void)channels;
    if (std::fflush(f.get()) != 0) throw InputError(path.string() + ": cannot write: " + std::strerror(errno));
  }
  file.commit();
}

// Decodes and converts: allocation failure anywhere (the decoder's buffers or the converted
// image, e.g. for a corrupt header claiming an enormous image) is the one-line error.
template <class Pixel, class Conv>
Image<Pixel> read_image(const fs::path& path, Format format, ImageInfo* info, Conv conv) {
  try {
    const Decoded d = decode_format(path, format);
    check_size(path, d.width, d.height);
    if (info) *info = d.info;
    return convert<Pixel>(d, conv, 255.0f);
  } catch (const std::bad_alloc&) {
    fail(path, "too large to decode in this machine's memory (or a corrupt header claiming so)");
  }
}

}  // namespace

Image<Rgba8> read_rgba8(const std::filesystem::path& path, ImageInfo* info) {
  return read_image<Rgba8>(path, sniff(path), info, ToU8{});
}

Image<RgbaF32> read_rgbaf(const std::filesystem::path& path, ImageInfo* info) {
  return detail::read_rgbaf_as(path, sniff(path), info);
}

Image<RgbaF32> detail::read_rgbaf_as(const std::filesystem::path& path, ImageFormat format, ImageInfo* info) {
  return read_image<RgbaF32>(path, format, info, ToF32{});
}

void write_png(const std::filesystem::path& path, ImageView<const Rgba8> image) {
  std::vector<const unsigned char*> rows(static_cast<std::size_t>(std::max<std::int64_t>(image.height, 0)));
  for (std::int64_t y = 0; y < image.height; ++y) rows[y] = reinterpret_cast<const unsigned char*>(image.row(y));
  write_png_rows(path, image.width, image.height, PNG_COLOR_TYPE_RGB_ALPHA, 4, rows);
}

void write_png(const std::filesystem::path& path, ImageView<const std::uint8_t> image) {
  std::vector<const unsigned char*> rows(static_cast<std::size_t>(std::max<std::int64_t>(image.height, 0)));
  for (std::int64_t y = 0; y < image.height; ++y) rows[y] = image.row(y);
  write_png_rows(path, image.width, image.height, PNG_COLOR_TYPE_GRAY, 1, rows);
}

void write_tiff(const std::filesystem::path& path, ImageView<const std::uint32_t> image) {
#ifdef WINNOW_HAVE_TIFF
  if (image.width <= 0 || image.height <= 0) throw InputError(path.string() + ": cannot write an image of zero size");
  AtomicFile file(path);
  {
    TIFFSetErrorHandler(tiff_error);
    g_tiff_error.clear();
    // "w8": BigTIFF when the data could pass 4 GiB.
    const bool big = image.width * image.height * 4 > (std::int64_t{1} << 31);
    std::unique_ptr<TIFF, TiffCloser> tif(TIFFOpen(file.temp_path().c_str(), big ? "w8" : "w"));
    if (!tif) throw InputError(path.string() + ": cannot write TIFF: " + g_tiff_error);
    TIFFSetField(tif.get(), TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(image.width));
    TIFFSetField(tif.get(), TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(image.height));
    TIFFSetField(tif.get(), TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(tif.get(), TIFFTAG_BITSPERSAMPLE, 32);
    TIFFSetField(tif.get(), TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
    TIFFSetField(tif.get(), TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tif.get(), TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(tif.get(), TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
    TIFFSetField(tif.get(), TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif.get(), 0));
    for (std::int64_t y = 0; y < image.height; ++y) {
      if (TIFFWriteScanline(tif.get(), const_cast<std::uint32_t*>(image.row(y)), static_cast<std::uint32_t>(y), 0) < 0)
        throw InputError(path.string() + ": cannot write TIFF: " + g_tiff_error);
    }
    if (!TIFFFlush(tif.get())) throw InputError(path.string() + ": cannot write TIFF: " + g_tiff_error);
  }
  file.commit();
#else
  (void)image;
  throw InputError(path.string() + ": TIFF support is not compiled into this build");
#endif
}

}  // namespace winnow::io
