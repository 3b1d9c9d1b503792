// Image I/O: formats, conversions, bad input and atomic writes.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "common/cli_runner.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"

#ifdef WINNOW_HAVE_TIFF
#include <tiffio.h>
#endif

using namespace winnow;
using winnow::test::data_path;
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
// Expects InputError whose one-line message names `path`.
template <class F>
void expect_input_error(F&& f, const std::filesystem::path& path, const std::string& fragment) {
  try {
    f();
    FAIL() << "no error for " << path;
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
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
