// Image I/O: formats, conversions, bad input and atomic writes.
#include <gtest/gtest.h>
#include <png.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

#include "common/cli_runner.hpp"
#include "common/input_error.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"

#ifdef WINNOW_HAVE_TIFF
#include <tiffio.h>
#endif

using namespace winnow;
using winnow::test::data_path;
using winnow::test::expect_input_error;
using winnow::test::TempDir;

namespace {
void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
Image<Rgba8> random_image(int w, int h, unsigned seed) {
  std::mt19937 rng(seed);
  Image<Rgba8> img(w, h);
  for (auto& p : img.pixels()) p = {std::uint8_t(rng()), std::uint8_t(rng()), std::uint8_t(rng()), std::uint8_t(rng())};
  return img;
}
}  // namespace

TEST(Io, PngRoundTripIsLossless) {
  TempDir dir;
  const auto img = random_image(37, 23, 1);
  io::write_png(dir / "a.png", img.view());
  io::ImageInfo info;
  const auto back = io::read_rgba8(dir / "a.png", &info);
  EXPECT_EQ(info.format, "png");
  EXPECT_EQ(info.channels, 4);
  ASSERT_EQ(back.width(), 37);
  ASSERT_EQ(back.height(), 23);
  for (std::int64_t i = 0; i < img.size(); ++i) ASSERT_EQ(back.data()[i], img.data()[i]) << i;
  EXPECT_EQ(dir.files().size(), 1u);  // no temporary left behind
}

TEST(Io, GreyPngBecomesOpaqueGreyRgba) {
  TempDir dir;
  Image<std::uint8_t> g(5, 3);
  for (int i = 0; i < 15; ++i) g.data()[i] = static_cast<std::uint8_t>(i * 17);
  io::write_png(dir / "g.png", g.view());
  const auto back = io::read_rgba8(dir / "g.png");
  for (int i = 0; i < 15; ++i) {
    const auto v = static_cast<std::uint8_t>(i * 17);
    EXPECT_EQ(back.data()[i], (Rgba8{v, v, v, 255}));
  }
}

TEST(Io, SixteenBitPngKeepsPrecisionInFloatAndRoundsInRgba8) {
  io::ImageInfo info;
  const auto f = io::read_rgbaf(data_path("mit432/01.png"), &info);
  const auto b = io::read_rgba8(data_path("mit432/01.png"));
  EXPECT_EQ(info.bits, 16);
  EXPECT_EQ(f.width(), 672);
  EXPECT_EQ(f.height(), 504);
  bool fractional = false;
  for (std::int64_t i = 0; i < f.size(); ++i) {
    const auto& p = f.data()[i];
    fractional |= p.r != std::floor(p.r);
    EXPECT_EQ(b.data()[i].r, static_cast<std::uint8_t>(std::lround(p.r))) << i;
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_TRUE(fractional) << "16-bit samples should not all be multiples of 257";
}

TEST(Io, JpegDecodes) {
  io::ImageInfo info;
  const auto img = io::read_rgba8(data_path("hubble_deep_field.jpg"), &info);
  EXPECT_EQ(info.format, "jpeg");
  EXPECT_EQ(img.width(), 1000);  // the data README gives it as rows x columns
  EXPECT_EQ(img.height(), 872);
  EXPECT_EQ(img.data()[0].a, 255);
}

TEST(Io, FitsIsScaledMinMaxTo0_255) {
#ifndef WINNOW_HAVE_FITS
  GTEST_SKIP() << "FITS support not compiled in";
#else
  io::ImageInfo info;
  const auto img = io::read_rgbaf(data_path("simple.fits"), &info);
  EXPECT_EQ(info.format, "fits");
  EXPECT_EQ(img.width(), 256);
  EXPECT_EQ(img.height(), 256);
  float lo = 1e9f, hi = -1e9f;
  for (const auto& p : img.pixels()) lo = std::min(lo, p.r), hi = std::max(hi, p.r);
  EXPECT_FLOAT_EQ(lo, 0.0f);
  EXPECT_FLOAT_EQ(hi, 255.0f);
#endif
}

TEST(Io, TiffLabelImageRoundTrip) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  TempDir dir;
  Image<std::uint32_t> labels(19, 7);
  std::mt19937 rng(3);
  for (auto& v : labels.pixels()) v = rng();
  io::write_tiff(dir / "l.tif", labels.view());
  TIFF* t = TIFFOpen((dir / "l.tif").c_str(), "r");
  ASSERT_NE(t, nullptr);
  std::uint32_t w = 0, h = 0;
  std::uint16_t bps = 0;
  TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField(t, TIFFTAG_IMAGELENGTH, &h);
  TIFFGetField(t, TIFFTAG_BITSPERSAMPLE, &bps);
  EXPECT_EQ(w, 19u);
  EXPECT_EQ(h, 7u);
  EXPECT_EQ(bps, 32);
  std::vector<std::uint32_t> row(w);
  for (std::uint32_t y = 0; y < h; ++y) {
    ASSERT_EQ(TIFFReadScanline(t, row.data(), y), 1);
    for (std::uint32_t x = 0; x < w; ++x) ASSERT_EQ(row[x], labels(x, y));
  }
  TIFFClose(t);
  // An 8-bit RGB TIFF reads back through the scanline path.
  EXPECT_EQ(dir.files().size(), 1u);
#endif
}

#ifdef WINNOW_HAVE_TIFF
namespace {
// Writes a TIFF with libtiff: `samples` row-major interleaved, strips of 3 rows or tiles of 16 x 16.
template <class T>
void write_test_tiff(const std::filesystem::path& p, std::uint32_t w, std::uint32_t h, std::uint16_t spp,
                     std::uint16_t fmt, bool tiled, const std::vector<T>& samples) {
  TIFF* t = TIFFOpen(p.c_str(), "w");
  ASSERT_NE(t, nullptr);
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, spp);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(8 * sizeof(T)));
  TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, fmt);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
  const std::size_t px = static_cast<std::size_t>(spp);
  if (tiled) {
    const std::uint32_t tw = 16, th = 16;
    TIFFSetField(t, TIFFTAG_TILEWIDTH, tw);
    TIFFSetField(t, TIFFTAG_TILELENGTH, th);
    std::vector<T> tile(tw * th * px);
    for (std::uint32_t ty = 0; ty < h; ty += th)
      for (std::uint32_t tx = 0; tx < w; tx += tw) {
        std::fill(tile.begin(), tile.end(), T{});
        for (std::uint32_t r = 0; r < th && ty + r < h; ++r)
          for (std::uint32_t c = 0; c < tw && tx + c < w; ++c)
            for (std::size_t k = 0; k < px; ++k)
              tile[(r * tw + c) * px + k] = samples[((ty + r) * w + tx + c) * px + k];
        ASSERT_GE(TIFFWriteTile(t, tile.data(), tx, ty, 0, 0), 0);
      }
  } else {
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 3u);
    for (std::uint32_t y = 0; y < h; ++y)
      ASSERT_EQ(TIFFWriteScanline(t, const_cast<T*>(samples.data() + y * w * px), y, 0), 1);
  }
  TIFFClose(t);
}
}  // namespace
#endif

TEST(Io, TiledSixteenBitTiffKeepsPrecision) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  TempDir dir;
  const std::uint32_t w = 37, h = 23;  // not multiples of the 16 x 16 tiles
  std::vector<std::uint16_t> grey(w * h);
  std::mt19937 rng(11);
  for (auto& v : grey) v = static_cast<std::uint16_t>(rng());
  write_test_tiff(dir / "g.tif", w, h, 1, SAMPLEFORMAT_UINT, true, grey);
  io::ImageInfo info;
  const auto img = io::read_rgbaf(dir / "g.tif", &info);
  EXPECT_EQ(info.format, "tiff");
  ASSERT_EQ(img.width(), w);
  ASSERT_EQ(img.height(), h);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) {
      ASSERT_NEAR(img(x, y).r, grey[y * w + x] * 255.0 / 65535.0, 1e-3) << x << "," << y;
      ASSERT_FLOAT_EQ(img(x, y).a, 255.0f);
    }
  // Strips and tiles of an RGB image read the same.
  std::vector<std::uint8_t> rgb(w * h * 3);
  for (auto& v : rgb) v = static_cast<std::uint8_t>(rng());
  write_test_tiff(dir / "tiles.tif", w, h, 3, SAMPLEFORMAT_UINT, true, rgb);
  write_test_tiff(dir / "strips.tif", w, h, 3, SAMPLEFORMAT_UINT, false, rgb);
  const auto a = io::read_rgba8(dir / "tiles.tif"), b = io::read_rgba8(dir / "strips.tif");
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) {
      ASSERT_EQ(a(x, y).g, rgb[(y * w + x) * 3 + 1]);
      ASSERT_EQ(a(x, y).b, b(x, y).b);
    }
#endif
}

TEST(Io, FloatAndSignedTiffAreScaledMinMaxTo0_255) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  TempDir dir;
  const std::uint32_t w = 29, h = 18;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3.5f, 1200.0f);
  std::vector<float> f(w * h);
  for (auto& v : f) v = u(rng);
  f[7] = std::numeric_limits<float>::quiet_NaN();  // no data -> 0, and not in the range
  f[8] = -std::numeric_limits<float>::infinity();
  f[40] = -10.0f;   // the minimum
  f[41] = 5000.0f;  // the maximum
  for (bool tiled : {false, true}) {
    const auto path = dir / (tiled ? "ft.tif" : "fs.tif");
    write_test_tiff(path, w, h, 1, SAMPLEFORMAT_IEEEFP, tiled, f);
    const auto img = io::read_rgbaf(path);
    ASSERT_EQ(img.width(), w);
    for (std::uint32_t i = 0; i < w * h; ++i) {
      const float want = std::isfinite(f[i]) ? (f[i] + 10.0f) * 255.0f / 5010.0f : 0.0f;
      ASSERT_NEAR(img(i % w, i / w).r, want, 1e-3) << i;
    }
  }
  std::vector<std::int16_t> s(w * h);
  std::uniform_int_distribution<int> si(-32768, 32767);
  for (auto& v : s) v = static_cast<std::int16_t>(si(rng));
  write_test_tiff(dir / "s16.tif", w, h, 1, SAMPLEFORMAT_INT, false, s);
  const auto lo = *std::min_element(s.begin(), s.end()), hi = *std::max_element(s.begin(), s.end());
  const auto img = io::read_rgbaf(dir / "s16.tif");
  for (std::uint32_t i = 0; i < w * h; ++i)
    ASSERT_NEAR(img(i % w, i / w).g, (s[i] - lo) * 255.0 / (hi - lo), 1e-3) << i;
  // Float RGB: one scale for the three channels.
  std::vector<double> rgb(w * h * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<double>(i % 3) + 0.001 * static_cast<double>(i);
  write_test_tiff(dir / "rgb64.tif", w, h, 3, SAMPLEFORMAT_IEEEFP, true, rgb);
  const double rlo = *std::min_element(rgb.begin(), rgb.end()), rhi = *std::max_element(rgb.begin(), rgb.end());
  const auto c = io::read_rgbaf(dir / "rgb64.tif");
  for (std::uint32_t i = 0; i < w * h; ++i) {
    ASSERT_NEAR(c(i % w, i / w).r, (rgb[3 * i] - rlo) * 255.0 / (rhi - rlo), 0.01) << i;
    ASSERT_NEAR(c(i % w, i / w).b, (rgb[3 * i + 2] - rlo) * 255.0 / (rhi - rlo), 0.01) << i;
  }
  // Floats with alpha are refused with a one-line error naming the file.
  std::vector<float> ga(w * h * 2, 1.0f);
  write_test_tiff(dir / "ga.tif", w, h, 2, SAMPLEFORMAT_IEEEFP, false, ga);
  expect_input_error([&] { io::read_rgba8(dir / "ga.tif"); }, dir / "ga.tif", "unsupported TIFF");
#endif
}

TEST(Io, BadInputsAreOneLineErrorsNamingTheFile) {
  TempDir dir;
  expect_input_error([&] { io::read_rgba8(dir / "missing.png"); }, dir / "missing.png", "no such file");
  write_bytes(dir / "empty.png", "");
  expect_input_error([&] { io::read_rgba8(dir / "empty.png"); }, dir / "empty.png", "empty file");
  write_bytes(dir / "text.png", "this is not an image\n");
  expect_input_error([&] { io::read_rgba8(dir / "text.png"); }, dir / "text.png", "unsupported image format");
  const std::string png = read_bytes(data_path("coins.png"));
  write_bytes(dir / "trunc.png", png.substr(0, png.size() / 2));
  expect_input_error([&] { io::read_rgba8(dir / "trunc.png"); }, dir / "trunc.png", "PNG");
  std::string bad = png;
  for (std::size_t i = 100; i < 400; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  write_bytes(dir / "corrupt.png", bad);
  expect_input_error([&] { io::read_rgba8(dir / "corrupt.png"); }, dir / "corrupt.png", "PNG");
  const std::string jpg = read_bytes(data_path("hubble_deep_field.jpg"));
  write_bytes(dir / "trunc.jpg", jpg.substr(0, jpg.size() / 3));
  expect_input_error([&] { io::read_rgba8(dir / "trunc.jpg"); }, dir / "trunc.jpg", "JPEG");
#ifdef WINNOW_HAVE_FITS
  const std::string fits = read_bytes(data_path("simple.fits"));
  write_bytes(dir / "trunc.fits", fits.substr(0, 2880 + 1000));
  expect_input_error([&] { io::read_rgba8(dir / "trunc.fits"); }, dir / "trunc.fits", "FITS");
#endif
}

// fuzz_jpeg ran at 2.9 GB of memory on inputs of a few KB: frame headers claiming large images,
// which the reader allocated (and zeroed) before libjpeg met the end of the data. This file is
// the fuzzer's seed rgb.jpg (770 bytes) with its frame header set to 60000 x 60000 RGB pixels,
// a 10.8 GB claim (beyond the fuzzer's 4 GB allocation limit, which its inputs stayed under). A JPEG
// codes every 8x8 block of its first component in at least one bit, so the claim cannot come
// from 770 bytes: it must be refused as corrupt before anything is allocated (in a child limited
// to 1 GiB, an allocation of the claim would give the out-of-memory error instead).
TEST(Io, JpegHeaderClaimingMoreThanItsFileHoldsIsNotAllocated) {
  const auto path = winnow::test::test_data_path("fuzz/image-jpeg-claims-60000x60000.jpg");
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgba8(path); }, "cannot come from a file of");
  expect_input_error([&] { io::read_rgbaf(path); }, path, "60000 x 60000");
}

// Found by fuzz_jpeg (out of memory) minutes after the check above, which left arithmetic
// coding unbounded: a 258-byte progressive arithmetic-coded JPEG (SOF10) claiming 65496 x 65281
// grey pixels, for which libjpeg allocated its 8.5 GB coefficient buffer. Arithmetic coding has no
// useful lower bound of bits per block, so such files are held to a limit instead (65536 pixels
// a byte), refused with a message that says so.
TEST(Io, ArithmeticJpegClaimingFarMoreThanItsFileIsRefused) {
  const auto path = winnow::test::test_data_path("fuzz/image-jpeg-arithmetic-claims-65496x65281.jpg");
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgba8(path); }, "arithmetic-coded JPEG");
  expect_input_error([&] { io::read_rgbaf(path); }, path, "65281 x 65496");
}

// Found by fuzz_tiff (a timeout: 86 s under ASan): a 246-byte Deflate TIFF whose page claims
// 11014 x 21063 pixels. The reader allocated 2.8 GB for libtiff's RGBA rendering and converted
// every pixel before the corrupt data ended the read; the page's strips can decode to at most
// 4096 times their 246 bytes, so it must be refused before anything is allocated.
TEST(Io, TiffPageClaimingMoreThanItsStripsHoldIsNotAllocated) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  const auto path = winnow::test::test_data_path("fuzz/image-tiff-deflate-claims-large.tif");
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgba8(path); }, "cannot come from a file of");
  expect_input_error([&] { io::read_rgbaf(path); }, path, "11014 x 21063");
#endif
}

// Limits audit: a FITS header's size is checked before the reader allocates for it. A plain
// FITS file holds its image data uncompressed, so NAXIS1 x NAXIS2 samples of BITPIX bits must fit
// in the file; a header of 8-byte samples whose product overflows 64 bits is refused as well.
TEST(Io, FitsHeaderClaimingMoreThanItsFileHoldsIsNotAllocated) {
#ifndef WINNOW_HAVE_FITS
  GTEST_SKIP() << "FITS support not compiled in";
#else
  auto card = [](const std::string& key, const std::string& value) {
    std::string c = key;
    c.resize(8, ' ');
    if (!value.empty()) c += "= " + std::string(20 - value.size(), ' ') + value;
    c.resize(80, ' ');
    return c;
  };
  auto fits = [&](const std::string& width, const std::string& height) {
    std::string h = card("SIMPLE", "T") + card("BITPIX", "-64") + card("NAXIS", "2") + card("NAXIS1", width) +
                    card("NAXIS2", height) + card("END", "");
    h.resize(2880, ' ');
    std::mt19937 rng(5);
    std::string data(2880, '\0');
    for (auto& b : data) b = static_cast<char>(rng());
    return h + data;
  };
  TempDir dir;
  write_bytes(dir / "claims.fits", fits("20000", "20000"));  // 3.2 GB claimed by 5760 bytes
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgba8(dir / "claims.fits"); },
                                               "20000 x 20000 pixels cannot come from a file of 5760 bytes",
                                               dir.path());
  write_bytes(dir / "overflow.fits", fits("4294967296", "4294967296"));
  expect_input_error([&] { io::read_rgba8(dir / "overflow.fits"); }, dir / "overflow.fits", "FITS");
  // The data of a real header are read: 18 x 20 samples of 8 bytes fill exactly 2880 bytes.
  write_bytes(dir / "fits.fits", fits("18", "20"));
  EXPECT_EQ(io::read_rgba8(dir / "fits.fits").width(), 18);
#endif
}

// Limits audit: allocation failure anywhere in reading, the converted image included, is the
// one-line error. A valid 8000 x 8000 PNG (rows of random colours, so it compresses within the
// reader's claim check) decodes in a child limited to 1 GiB, but its 1 GB RgbaF32 image cannot
// be allocated there.
TEST(Io, ImageTooLargeForMemoryIsInputError) {
  TempDir dir;
  const auto path = dir / "large.png";
  {
    Image<Rgba8> big(8000, 8000);
    std::mt19937 rng(8);
    for (std::int64_t y = 0; y < big.height(); ++y) {
      const Rgba8 colour{static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng()),
                         static_cast<std::uint8_t>(rng()), 255};
      std::fill(big.data() + y * big.width(), big.data() + (y + 1) * big.width(), colour);
    }
    io::write_png(path, big.view());
  }
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgbaf(path); },
                                               "too large to decode in this machine's memory", dir.path());
}

// Found by fuzz_tiff (out of memory): a 278-byte bilevel TIFF under CCITT run-length coding
// claiming 65531 x 58125 pixels; fax pages were exempt from the claim check, and the 15 GB RGBA
// buffer was allocated. A fax page spends at least a bit on every line, whatever its width, so
// 132 bytes of strip cannot hold 58125 lines.
TEST(Io, TiffFaxPageClaimingMoreLinesThanItsStripsHoldIsNotAllocated) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  const auto path = winnow::test::test_data_path("fuzz/image-tiff-fax-claims-58125-lines.tif");
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgba8(path); }, "cannot come from a file of");
#endif
}

#ifdef WINNOW_HAVE_TIFF
namespace {
// A JBIG bi-level image entity (T.82) of one stripe without data: the 20-byte header (one layer,
// one plane, typical prediction on, L0 = YD) and ESC SDNORM, which ends the stripe. The arithmetic
// decoder pads a stripe's data with zero bytes (jbigkit's encoder drops them: a blank
// 4000 x 3000 page is 36 such stripes, 92 bytes), so these 22 bytes decode to a whole
// width x height page, whatever its size. Bits reversed, as libtiff stores JBIG strips under
// the default fill order.
std::string jbig_one_empty_stripe(std::uint32_t width, std::uint32_t height) {
  std::string b = {0, 0, 1, 0};                    // DL, D, P, fill
  for (std::uint32_t v : {width, height, height})  // XD, YD, L0 (big-endian)
    for (int shift = 24; shift >= 0; shift -= 8) b += static_cast<char>((v >> shift) & 0xff);
  b += {0, 0, 0, 0x08};                  // MX, MY, order, options (TPBON)
  b += {static_cast<char>(0xff), 0x02};  // ESC SDNORM
  for (char& c : b) {
    unsigned char v = static_cast<unsigned char>(c), r = 0;
    for (int i = 0; i < 8; ++i) r = static_cast<unsigned char>(r | (((v >> i) & 1) << (7 - i)));
    c = static_cast<char>(r);
  }
  return b;
}
// A TIFF open for writing one 1-bit JBIG page of width x height in one strip (libtiff's JBIG
// encoder codes whole strips); null when it cannot be created.
TIFF* open_jbig_tiff(const std::filesystem::path& p, std::uint32_t width, std::uint32_t height,
                     std::uint16_t photometric) {
  TIFF* t = TIFFOpen(p.c_str(), "w");
  if (!t) return nullptr;
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, width);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, height);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, std::uint16_t{1});
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, std::uint16_t{1});
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, photometric);
  TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_JBIG);
  TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, height);
  return t;
}
// A 1-bit JBIG TIFF page of width x height claimed by its tags, its one strip `strip` as is.
void write_jbig_tiff_raw(const std::filesystem::path& p, std::uint32_t width, std::uint32_t height,
                         const std::string& strip) {
  TIFF* t = open_jbig_tiff(p, width, height, PHOTOMETRIC_MINISWHITE);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(TIFFWriteRawStrip(t, 0, const_cast<char*>(strip.data()), static_cast<tmsize_t>(strip.size())),
            static_cast<tmsize_t>(strip.size()));
  TIFFClose(t);
}
}  // namespace
#endif

// Limits audit: a 1-bit JBIG page's data does not bound its size (the arithmetic decoder pads a
// stripe with zero bytes, so a stripe without data decodes to all its lines), and 1-bit JBIG
// pages were exempt from the claim check: a 144-byte file claiming 100000 x 100000 pixels had its
// 40 GB RGBA buffer allocated, with only the bad_alloc handling between it and the machine's
// memory. 1-bit JBIG pages are held to an absolute limit instead, 2^30 pixels.
TEST(Io, TiffJbigPageBeyondTheLimitIsNotAllocated) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  if (!TIFFIsCODECConfigured(COMPRESSION_JBIG)) GTEST_SKIP() << "this libtiff has no JBIG codec";
  TempDir dir;
  const auto path = dir / "claims.tif";
  write_jbig_tiff_raw(path, 100000, 100000, jbig_one_empty_stripe(100000, 100000));
  EXPECT_LT(std::filesystem::file_size(path), 400u);
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgba8(path); },
                                               "more than the 1073741824 pixels read from a JBIG page", dir.path());
  // Only once the child showed it refused before allocating: the message names the file.
  if (!::testing::Test::HasFailure()) expect_input_error([&] { io::read_rgba8(path); }, path, "100000 x 100000");
  // Just over the limit (32769 x 32768 pixels) is refused; a page at the limit passes the check
  // and fails only for the 1 GiB the child has (its RGBA buffer is 4 GiB).
  write_jbig_tiff_raw(dir / "over.tif", 32769, 32768, jbig_one_empty_stripe(32769, 32768));
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgba8(dir / "over.tif"); },
                                               "more than the 1073741824 pixels", dir.path());
  write_jbig_tiff_raw(dir / "limit.tif", 32768, 32768, jbig_one_empty_stripe(32768, 32768));
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgba8(dir / "limit.tif"); },
                                               "too large to decode in this machine's memory", dir.path());
#endif
}

// 1-bit JBIG pages within the limit are read: one written by libtiff's encoder reads back
// exactly, and a 4000 x 3000 page from a 22-byte stripe (which no bound on bytes would admit)
// decodes to a blank page.
TEST(Io, TiffJbigPagesAreRead) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  if (!TIFFIsCODECConfigured(COMPRESSION_JBIG)) GTEST_SKIP() << "this libtiff has no JBIG codec";
  TempDir dir;
  const std::uint32_t w = 203, h = 141;  // rows of 26 bytes, the last one partly padding
  std::vector<std::uint8_t> bits(static_cast<std::size_t>(w) * h);
  std::mt19937 rng(12);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) {  // blank bands, a disc and noise
      const int dx = static_cast<int>(x) - 100, dy = static_cast<int>(y) - 70;
      bits[y * w + x] = y % 40 < 10 ? 0 : dx * dx + dy * dy < 3600 ? 1 : static_cast<std::uint8_t>(rng() % 5 == 0);
    }
  {
    TIFF* t = open_jbig_tiff(dir / "page.tif", w, h, PHOTOMETRIC_MINISBLACK);
    ASSERT_NE(t, nullptr);
    const std::size_t row_bytes = (w + 7) / 8;
    std::vector<unsigned char> packed(row_bytes * h, 0);
    for (std::uint32_t y = 0; y < h; ++y)
      for (std::uint32_t x = 0; x < w; ++x)
        if (bits[y * w + x]) packed[y * row_bytes + x / 8] |= static_cast<unsigned char>(0x80 >> (x % 8));
    ASSERT_GT(TIFFWriteEncodedStrip(t, 0, packed.data(), static_cast<tmsize_t>(packed.size())), 0);
    TIFFClose(t);
  }
  io::ImageInfo info;
  const auto img = io::read_rgba8(dir / "page.tif", &info);
  EXPECT_EQ(info.format, "tiff");
  EXPECT_EQ(info.bits, 1);
  ASSERT_EQ(img.width(), static_cast<std::int64_t>(w));
  ASSERT_EQ(img.height(), static_cast<std::int64_t>(h));
  std::size_t wrong = 0;
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) {
      const Rgba8 p = img.data()[y * w + x];
      const std::uint8_t v = bits[y * w + x] ? 255 : 0;
      wrong += p.r != v || p.g != v || p.b != v || p.a != 255;
    }
  EXPECT_EQ(wrong, 0u);

  write_jbig_tiff_raw(dir / "blank.tif", 4000, 3000, jbig_one_empty_stripe(4000, 3000));
  const auto blank = io::read_rgba8(dir / "blank.tif");
  ASSERT_EQ(blank.width(), 4000);
  ASSERT_EQ(blank.height(), 3000);
  EXPECT_TRUE(std::all_of(blank.data(), blank.data() + 4000 * 3000, [&](const Rgba8& p) {
    return p.r == blank.data()[0].r && p.g == p.r && p.b == p.r && p.a == 255;
  }));
#endif
}

// Found by fuzz_tiff (slow units, 12 to 32 s under ASan): a 248-byte TIFF of 1014 x 49919
// bilevel pixels under compression 32512, a scheme libtiff has no codec for. libtiff's RGBA
// rendering skipped every strip it could not decode and the reader returned a 50-megapixel image
// of nothing, without an error. A page libtiff cannot decode must be refused, by name.
TEST(Io, TiffWithoutACodecIsRefused) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  const auto path = winnow::test::test_data_path("fuzz/image-tiff-unknown-codec-slow.tif");
  expect_input_error([&] { io::read_rgba8(path); }, path, "compression 32512");
#endif
}

TEST(Io, OutputToMissingDirectoryFailsAndLeavesNothing) {
  TempDir dir;
  const auto img = random_image(4, 4, 2);
  expect_input_error([&] { io::write_png(dir / "nope" / "x.png", img.view()); }, dir / "nope" / "x.png",
                     "does not exist");
  EXPECT_TRUE(dir.files().empty());
}

TEST(Io, AtomicFileRemovesTemporaryUnlessCommitted) {
  TempDir dir;
  {
    io::AtomicFile f(dir / "out.csv");
    write_bytes(f.temp_path(), "half");
  }
  EXPECT_TRUE(dir.files().empty());
  io::write_text(dir / "out.csv", "a,b\n1,2\n");
  EXPECT_EQ(read_bytes(dir / "out.csv"), "a,b\n1,2\n");
  EXPECT_EQ(dir.files().size(), 1u);
}

#ifdef WINNOW_HAVE_TIFF
namespace {
struct TiffLayout {
  std::uint16_t spp = 4, bps = 8, photometric = PHOTOMETRIC_RGB, planar = PLANARCONFIG_CONTIG;
  int alpha = -1;  // -1: no extra sample, else EXTRASAMPLE_ASSOCALPHA or EXTRASAMPLE_UNASSALPHA
  bool big = false;
};
// Writes `samples` (interleaved, row-major, 8- or 16-bit values) in the given layout, strips of 5 rows.
void write_tiff_layout(const std::filesystem::path& p, std::uint32_t w, std::uint32_t h, const TiffLayout& l,
                       const std::vector<std::uint16_t>& samples) {
  TIFF* t = TIFFOpen(p.c_str(), l.big ? "w8" : "w");
  ASSERT_NE(t, nullptr);
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, l.spp);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, l.bps);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, l.photometric);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, l.planar);
  TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_LZW);
  TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 5u);
  if (l.alpha >= 0) {
    const std::uint16_t extra[1] = {static_cast<std::uint16_t>(l.alpha)};
    TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, extra);
  }
  const std::size_t sb = l.bps / 8;
  auto put = [&](std::vector<unsigned char>& row, std::size_t at, std::uint16_t v) {
    if (sb == 2) std::memcpy(row.data() + at * 2, &v, 2);
    else row[at] = static_cast<unsigned char>(v);
  };
  if (l.planar == PLANARCONFIG_CONTIG) {
    std::vector<unsigned char> row(w * l.spp * sb);
    for (std::uint32_t y = 0; y < h; ++y) {
      for (std::size_t i = 0; i < w * l.spp; ++i) put(row, i, samples[y * w * l.spp + i]);
      ASSERT_EQ(TIFFWriteScanline(t, row.data(), y, 0), 1);
    }
  } else {
    std::vector<unsigned char> row(w * sb);
    for (std::uint16_t s = 0; s < l.spp; ++s)
      for (std::uint32_t y = 0; y < h; ++y) {
        for (std::uint32_t x = 0; x < w; ++x) put(row, x, samples[(y * w + x) * l.spp + s]);
        ASSERT_EQ(TIFFWriteScanline(t, row.data(), y, s), 1);
      }
  }
  TIFFClose(t);
}
std::vector<std::uint16_t> random_samples(std::size_t n, std::uint32_t top, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = static_cast<std::uint16_t>(rng() % (top + 1));
  return v;
}
}  // namespace
#endif

TEST(Io, TiffPlanesMinIsWhiteAndBigTiffReadExactly) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  TempDir dir;
  const std::uint32_t w = 29, h = 17;
  // RGBA, 8-bit, unassociated alpha, in separate planes: every sample as written.
  {
    const auto s = random_samples(w * h * 4, 255, 5);
    write_tiff_layout(dir / "planes.tif", w, h, {4, 8, PHOTOMETRIC_RGB, PLANARCONFIG_SEPARATE, EXTRASAMPLE_UNASSALPHA},
                      s);
    const auto img = io::read_rgba8(dir / "planes.tif");
    ASSERT_EQ(img.width(), static_cast<std::int64_t>(w));
    for (std::size_t i = 0; i < w * h; ++i) {
      const Rgba8 p = img.data()[i];
      ASSERT_EQ((std::array<int, 4>{p.r, p.g, p.b, p.a}),
                (std::array<int, 4>{s[4 * i], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]}))
          << "pixel " << i;
    }
  }
  // 16-bit grey with white as zero: value = 65535 - sample, at full precision.
  {
    const auto s = random_samples(w * h, 65535, 6);
    write_tiff_layout(dir / "white.tif", w, h, {1, 16, PHOTOMETRIC_MINISWHITE, PLANARCONFIG_CONTIG, -1}, s);
    const auto img = io::read_rgbaf(dir / "white.tif");
    for (std::size_t i = 0; i < w * h; ++i)
      ASSERT_FLOAT_EQ(img.data()[i].r, (65535 - s[i]) * (255.0f / 65535.0f)) << "pixel " << i;
  }
  // BigTIFF (as winnow writes label maps beyond 4 GiB), RGB 16-bit.
  {
    const auto s = random_samples(w * h * 3, 65535, 7);
    write_tiff_layout(dir / "big.tif", w, h, {3, 16, PHOTOMETRIC_RGB, PLANARCONFIG_CONTIG, -1, true}, s);
    ASSERT_EQ(read_bytes(dir / "big.tif").substr(0, 4), std::string("II+\0", 4));
    const auto img = io::read_rgbaf(dir / "big.tif");
    for (std::size_t i = 0; i < w * h; ++i) ASSERT_FLOAT_EQ(img.data()[i].g, s[3 * i + 1] * (255.0f / 65535.0f));
  }
#endif
}

TEST(Io, PremultipliedTiffAlphaIsDividedOut) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  TempDir dir;
  const std::uint32_t w = 23, h = 11;
  // Straight colours and alpha; the file holds colour * alpha / 255 (associated alpha).
  const auto straight = random_samples(w * h * 4, 255, 8);
  std::vector<std::uint16_t> stored = straight;
  for (std::size_t i = 0; i < w * h; ++i) {
    stored[4 * i + 3] =
        static_cast<std::uint16_t>(std::max<int>(straight[4 * i + 3], 64));  // alpha >= 64: +-2 after division
    for (int c = 0; c < 3; ++c)
      stored[4 * i + c] = static_cast<std::uint16_t>((straight[4 * i + c] * stored[4 * i + 3] + 127) / 255);
  }
  write_tiff_layout(dir / "assoc.tif", w, h, {4, 8, PHOTOMETRIC_RGB, PLANARCONFIG_CONTIG, EXTRASAMPLE_ASSOCALPHA},
                    stored);
  const auto img = io::read_rgba8(dir / "assoc.tif");
  for (std::size_t i = 0; i < w * h; ++i) {
    const Rgba8 p = img.data()[i];
    ASSERT_EQ(p.a, stored[4 * i + 3]);
    const int got[3] = {p.r, p.g, p.b};
    for (int c = 0; c < 3; ++c) ASSERT_NEAR(got[c], straight[4 * i + c], 2) << "pixel " << i << " channel " << c;
  }
#endif
}

namespace {
std::uint32_t crc32_of(const std::string& bytes) {  // the PNG chunk CRC (ISO 3309)
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}
void put_be32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (24 - 8 * i));
}
}  // namespace

TEST(Io, PngClaimingAnEnormousSizeIsRefusedQuickly) {
  TempDir dir;
  io::write_png(dir / "small.png", random_image(3, 2, 4).view());
  std::string png = read_bytes(dir / "small.png");
  // IHDR: 8-byte signature, length, "IHDR", width, height, ...; its CRC covers type and data.
  ASSERT_EQ(png.substr(12, 4), "IHDR");
  put_be32(png, 16, 1000000);
  put_be32(png, 20, 1000000);
  put_be32(png, 29, crc32_of(png.substr(12, 17)));
  write_bytes(dir / "huge.png", png);
  const auto t0 = std::chrono::steady_clock::now();
  expect_input_error([&] { io::read_rgba8(dir / "huge.png"); }, dir / "huge.png", "corrupt PNG");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

// A PNG written by libpng itself: w x h, one colour (grey 0 at 1 bit, or palette index 0 = rgb).
void write_flat_png(const std::filesystem::path& path, std::uint32_t w, std::uint32_t h, bool palette, png_color rgb) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  ASSERT_TRUE(png && info);
  png_init_io(png, f);
  png_set_compression_level(png, 9);
  png_set_IHDR(png, info, w, h, palette ? 8 : 1, palette ? PNG_COLOR_TYPE_PALETTE : PNG_COLOR_TYPE_GRAY,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (palette) png_set_PLTE(png, info, &rgb, 1);
  png_write_info(png, info);
  std::vector<png_byte> row(palette ? w : (w + 7) / 8, 0);
  for (std::uint32_t y = 0; y < h; ++y) png_write_row(png, row.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(f);
}

// The size check compares the rows as stored (packed bits, palette indices) with the file: a
// large, flat 1-bit or palette image expands far beyond what deflate's ratio allows for its file.
TEST(Io, LargeOneBitAndPalettePngsPassTheSizeCheck) {
  TempDir dir;
  const std::uint32_t n = 4096;
  write_flat_png(dir / "bits.png", n, n, false, {});
  write_flat_png(dir / "palette.png", n, n, true, {200, 30, 70});
  for (const char* name : {"bits.png", "palette.png"}) {
    const auto bytes = std::filesystem::file_size(dir / name);
    // 8-bit grey or RGB as decoded would fail the check: the case the check must not refuse.
    ASSERT_GT(static_cast<double>(n + 1) * n * (name[0] == 'p' ? 3 : 1), 1100.0 * bytes + 65536.0) << name;
  }
  const auto bits = io::read_rgba8(dir / "bits.png");
  ASSERT_EQ(bits.width(), n);
  ASSERT_EQ(bits.height(), n);
  EXPECT_TRUE(std::all_of(bits.pixels().begin(), bits.pixels().end(),
                          [](Rgba8 p) { return p.r == 0 && p.g == 0 && p.b == 0 && p.a == 255; }));
  const auto pal = io::read_rgba8(dir / "palette.png");
  ASSERT_EQ(pal.width(), n);
  EXPECT_TRUE(std::all_of(pal.pixels().begin(), pal.pixels().end(),
                          [](Rgba8 p) { return p.r == 200 && p.g == 30 && p.b == 70 && p.a == 255; }));
}

// The bundled JPEG with `stray_bytes` inserted at byte `at` decodes to the same pixels as the file.
void expect_stray_bytes_change_nothing(std::size_t at, const std::string& stray_bytes) {
  TempDir dir;
  const std::string jpg = read_bytes(data_path("hubble_deep_field.jpg"));
  write_bytes(dir / "stray.jpg", jpg.substr(0, at) + stray_bytes + jpg.substr(at));
  const auto clean = io::read_rgba8(data_path("hubble_deep_field.jpg"));
  const auto stray = io::read_rgba8(dir / "stray.jpg");
  ASSERT_EQ(stray.width(), clean.width());
  EXPECT_TRUE(std::equal(clean.pixels().begin(), clean.pixels().end(), stray.pixels().begin()));
}

TEST(Io, JpegWithStrayBytesBeforeEndOfImageDecodesAsTheClean) {
  const std::string jpg = read_bytes(data_path("hubble_deep_field.jpg"));
  const std::size_t eoi = jpg.rfind(std::string("\xFF\xD9", 2));
  ASSERT_NE(eoi, std::string::npos);
  expect_stray_bytes_change_nothing(eoi, std::string("\x00\x00\x00", 3));
}

TEST(Io, JpegWithStrayBytesBeforeAMarkerDecodesAsTheClean) {
  const std::string jpg = read_bytes(data_path("hubble_deep_field.jpg"));
  // Two stray bytes before the second marker (after SOI and the first segment).
  ASSERT_EQ(static_cast<unsigned char>(jpg[2]), 0xFF);
  const std::size_t first_len = (static_cast<unsigned char>(jpg[4]) << 8) | static_cast<unsigned char>(jpg[5]);
  const std::size_t at = 4 + first_len;
  ASSERT_EQ(static_cast<unsigned char>(jpg[at]), 0xFF);
  expect_stray_bytes_change_nothing(at, std::string("\x12\x34", 2));
}

TEST(Io, TemporaryNamesAreShortWhateverTheTarget) {
  TempDir dir;
  const std::string name = std::string(251, 'L') + ".png";  // 255 characters: the longest legal name
  io::write_png(dir / name, random_image(2, 2, 9).view());
  EXPECT_EQ(dir.files(), std::vector<std::string>{name});
}

// A process ended by a signal while writing removes its temporaries (the CLI installs this).
TEST(Io, SignalRemovesListedTemporaries) {
  TempDir dir;
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    io::remove_temporaries_on_signals();
    io::AtomicFile f(dir / "x.png");
    std::ofstream(f.temp_path()) << "half written";
    std::raise(SIGTERM);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_TRUE(dir.files().empty()) << dir.files().front();
}

// A name taken by another process (same pid in another container, or a killed run's leftover)
// is never reused: the temporary is created exclusively.
TEST(Io, TemporaryNamesSkipFilesThatExist) {
  TempDir dir;
  const std::filesystem::path first = io::temporary_beside(dir / "a.png");
  io::release_temporary(first);
  // .winnow-PID-N.tmp: occupy the next names in the sequence.
  const std::string name = first.filename().string();
  const std::size_t dash = name.rfind('-'), dot = name.rfind('.');
  const unsigned n = static_cast<unsigned>(std::stoul(name.substr(dash + 1, dot - dash - 1)));
  std::vector<std::filesystem::path> squatters;
  for (unsigned k = 1; k <= 5; ++k) {
    squatters.push_back(dir / (name.substr(0, dash + 1) + std::to_string(n + k) + ".tmp"));
    std::ofstream(squatters.back()) << "another process's data";
  }
  const std::filesystem::path next = io::temporary_beside(dir / "a.png");
  io::release_temporary(next);
  EXPECT_EQ(std::find(squatters.begin(), squatters.end(), next), squatters.end()) << next;
  EXPECT_TRUE(std::filesystem::exists(next));
  EXPECT_EQ(std::filesystem::file_size(next), 0u);
  for (const auto& s : squatters) EXPECT_EQ(read_bytes(s), "another process's data");
}

// Under nohup (SIGHUP ignored) the handlers leave an ignored signal ignored.
TEST(Io, IgnoredSignalStaysIgnored) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGHUP, SIG_IGN);
    io::remove_temporaries_on_signals();
    std::raise(SIGHUP);
    ::_exit(7);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;
}

TEST(Io, OutputNameLongerThanTheDirectoryAllowsIsRefusedBeforeWriting) {
  TempDir dir;
  const auto path = dir / (std::string(300, 'n') + ".png");
  expect_input_error([&] { io::check_writable(path); }, path, "file name longer than");
  EXPECT_TRUE(dir.files().empty());
}
