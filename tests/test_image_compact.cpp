// Image compaction: compact_image and render_packed on random and bundled images, on every
// backend, against an oracle computed here (integer luminance in thousandths from the
// 0.299 / 0.587 / 0.114 weights, std::stable_sort). Thresholds are written as decimal text, read
// by the test into exact thousandths (never through the library's conversion), and include the
// key of a pixel of the image itself, so keeping "= T", or a threshold off by 1/1000, fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "common/compact_oracle.hpp"
#include "common/gpu_guard.hpp"
#include "winnow/error.hpp"
#include "winnow/image_compact.hpp"
#include "winnow/io.hpp"

namespace {

using winnow::Backend;
using winnow::Image;
using winnow::ImageCompactOptions;
using winnow::ImageView;
using winnow::PixelKey;
using winnow::Rgba8;
using winnow::SortOrder;

std::uint32_t oracle_key(const Rgba8& p, PixelKey key) {
  return key == PixelKey::luminance ? winnow::test::luma_milli_ref(p) : 1000u * p.a;
}

// A threshold as a user writes it: the text, its exact value in thousandths read here digit by
// digit (digits beyond the third decimal dropped: the documented rounding down to 1/1000), and
// the double the API takes (strtod of the same text).
struct Threshold {
  std::string text;
  std::uint32_t milli = 0;
  double value = 0;
};
Threshold threshold(const std::string& text) {
  Threshold t{text};
  std::size_t i = 0;
  for (; i < text.size() && text[i] != '.'; ++i) t.milli = t.milli * 10 + static_cast<std::uint32_t>(text[i] - '0');
  std::uint32_t decimals = 0;
  int places = 0;
  for (++i; i < text.size() && places < 3; ++i, ++places)
    decimals = decimals * 10 + static_cast<std::uint32_t>(text[i] - '0');
  for (; places < 3; ++places) decimals *= 10;
  t.milli = t.milli * 1000 + decimals;
  t.value = std::strtod(text.c_str(), nullptr);
  return t;
}
std::string milli_text(std::uint32_t milli) {
  std::string frac = std::to_string(milli % 1000);
  return std::to_string(milli / 1000) + "." + std::string(3 - frac.size(), '0') + frac;
}
// Thresholds at the key k of a pixel present in the image: k itself (that pixel must be left
// out: strictly greater), k - 1/1000 (it must be kept), and k - 1/1000 followed by a digit 9 (kept
// too: the threshold is rounded down, not to nearest).
std::vector<Threshold> thresholds_at(std::uint32_t k) {
  std::vector<Threshold> ts{threshold(milli_text(k))};
  if (k > 0) {
    ts.push_back(threshold(milli_text(k - 1)));
    ts.push_back(threshold(milli_text(k - 1) + "9"));
  }
  return ts;
}

struct Oracle {
  std::vector<std::uint32_t> packed, sorted;
};

Oracle oracle(ImageView<const Rgba8> img, const ImageCompactOptions& o, std::uint32_t t) {
  Oracle r;
  for (std::int64_t y = 0; y < img.height; ++y)
    for (std::int64_t x = 0; x < img.width; ++x)
      if (oracle_key(img(x, y), o.key) > t) r.packed.push_back(static_cast<std::uint32_t>(y * img.width + x));
  if (o.sort != SortOrder::none) {
    r.sorted = r.packed;
    auto key = [&](std::uint32_t i) { return oracle_key(img(i % img.width, i / img.width), o.key); };
    if (o.sort == SortOrder::descending)
      std::stable_sort(r.sorted.begin(), r.sorted.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return key(a) > key(b); });
    else
      std::stable_sort(r.sorted.begin(), r.sorted.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
  }
  return r;
}

Image<Rgba8> random_image(std::int64_t w, std::int64_t h, std::uint64_t seed) {
  Image<Rgba8> img(w, h);
  std::mt19937_64 rng(seed);
  // Few distinct levels so that sort ties are common (stability is then visible).
  for (auto& p : img.pixels()) {
    const std::uint64_t v = rng();
    const bool coarse = (v >> 40) % 2;
    auto c = [&](int s) { return static_cast<std::uint8_t>(coarse ? ((v >> s) % 8) * 36 : (v >> s)); };
    p = Rgba8{c(0), c(8), c(16), c(24)};
  }
  return img;
}

/// Runs compact_image with o.threshold = t.value and compares with the oracle at t.milli.
void expect_matches_oracle(ImageView<const Rgba8> img, ImageCompactOptions o, const Threshold& t,
                           Backend expected_backend) {
  SCOPED_TRACE("threshold " + t.text);
  o.threshold = t.value;
  const auto r = winnow::compact_image(img, o);
  const Oracle want = oracle(img, o, t.milli);
  EXPECT_EQ(r.backend, expected_backend);
  EXPECT_GE(r.milliseconds, 0.0);
  ASSERT_EQ(r.packed_index.size(), want.packed.size());
  ASSERT_TRUE(r.packed_index == want.packed) << "packed order differs";
  if (o.sort == SortOrder::none) {
    EXPECT_TRUE(r.sorted_index.empty());
  } else {
    ASSERT_EQ(r.sorted_index.size(), want.sorted.size());
    ASSERT_TRUE(r.sorted_index == want.sorted) << "sorted order differs (stability or direction)";
  }
}

class ImageCompactBackend : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::cuda) WINNOW_REQUIRE_CUDA_OR_SKIP();
  }
};

TEST_P(ImageCompactBackend, RandomImagesAllOptions) {
  const std::pair<std::int64_t, std::int64_t> sizes[] = {{1, 1},   {1, 97},    {97, 1},      {31, 33},
                                                         {64, 64}, {257, 129}, {1000, 1000}, {4097, 3}};
  std::uint64_t seed = 1;
  for (auto [w, h] : sizes) {
    const auto img = random_image(w, h, seed);
    const Rgba8 probe = img.data()[seed * 7919 % static_cast<std::uint64_t>(img.size())];  // a pixel of the image
    ++seed;
    for (PixelKey key : {PixelKey::luminance, PixelKey::alpha}) {
      std::vector<Threshold> ts = thresholds_at(oracle_key(probe, key));
      for (const char* text : {"0", "40", "100.5", "143.999", "254.999", "255"}) ts.push_back(threshold(text));
      for (SortOrder sort : {SortOrder::descending, SortOrder::ascending, SortOrder::none})
        for (const Threshold& t : ts) {
          SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " key " + std::to_string(int(key)) + " sort " +
                       std::to_string(int(sort)));
          ImageCompactOptions o;
          o.key = key;
          o.sort = sort;
          o.backend = GetParam();
          expect_matches_oracle(img.view(), o, t, GetParam());
          if (HasFatalFailure()) return;
        }
    }
  }
}

TEST_P(ImageCompactBackend, StridedView) {
  const auto big = random_image(300, 200, 77);
  const ImageView<const Rgba8> sub(big.data() + 5 * 300 + 7, 250, 190, 300);  // 250x190 window
  Image<Rgba8> copy(250, 190);
  for (std::int64_t y = 0; y < 190; ++y)
    for (std::int64_t x = 0; x < 250; ++x) copy(x, y) = sub(x, y);
  ImageCompactOptions o;
  const Threshold t = threshold("90");
  o.threshold = t.value;
  o.backend = GetParam();
  const auto a = winnow::compact_image(sub, o);
  const auto b = winnow::compact_image(copy.view(), o);
  EXPECT_EQ(a.packed_index, b.packed_index);
  EXPECT_EQ(a.sorted_index, b.sorted_index);
  expect_matches_oracle(sub, o, t, GetParam());
}

TEST_P(ImageCompactBackend, BundledImages) {
  for (const char* name : {"hubble_deep_field.jpg", "coins.png", "astronaut.png", "chelsea.png", "text.png",
                           "mit432/01.png", "simple.fits"}) {
    SCOPED_TRACE(name);
    const auto img = winnow::io::read_rgba8(winnow::test::data_path(name));
    std::vector<Threshold> ts = thresholds_at(oracle_key(img.data()[img.size() / 2], PixelKey::luminance));
    for (const char* text : {"0", "40", "128"}) ts.push_back(threshold(text));
    for (const Threshold& t : ts) {
      ImageCompactOptions o;
      o.backend = GetParam();
      expect_matches_oracle(img.view(), o, t, GetParam());
    }
  }
}

TEST_P(ImageCompactBackend, EmptyImage) {
  ImageCompactOptions o;
  o.backend = GetParam();
  const auto r = winnow::compact_image(ImageView<const Rgba8>(), o);
  EXPECT_TRUE(r.packed_index.empty());
  EXPECT_TRUE(r.sorted_index.empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, ImageCompactBackend, ::testing::Values(Backend::cpu, Backend::cuda),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                           return std::string(winnow::to_string(i.param));
                         });

TEST(ImageCompact, BackendsAgreeExactly) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const auto img = winnow::io::read_rgba8(winnow::test::data_path("hubble_deep_field.jpg"));
  for (SortOrder sort : {SortOrder::descending, SortOrder::ascending}) {
    ImageCompactOptions o;
    o.sort = sort;
    o.backend = Backend::cpu;
    const auto c = winnow::compact_image(img.view(), o);
    o.backend = Backend::cuda;
    const auto g = winnow::compact_image(img.view(), o);
    EXPECT_EQ(c.packed_index, g.packed_index);
    EXPECT_EQ(c.sorted_index, g.sorted_index);
  }
}

TEST(ImageCompact, ThresholdOutOfRangeIsInputError) {
  const auto img = random_image(8, 8, 3);
  for (double thr : {-1.0, -0.001, 255.001, 300.0, std::numeric_limits<double>::quiet_NaN()}) {
    ImageCompactOptions o;
    o.threshold = thr;
    o.backend = Backend::cpu;
    EXPECT_THROW(winnow::compact_image(img.view(), o), winnow::InputError) << thr;
  }
}

TEST(ImageCompact, TooManyPixelsIsInputError) {
  Rgba8 one{};
  // Never dereferenced: the size is checked first.
  const ImageView<const Rgba8> huge(&one, 65536, 65536, 65536);
  ImageCompactOptions o;
  o.backend = Backend::cpu;
  EXPECT_THROW(winnow::compact_image(huge, o), winnow::InputError);
}

TEST(ImageCompact, DefaultsAreLuminance40Descending) {
  const ImageCompactOptions o;
  EXPECT_EQ(o.threshold, 40.0);
  EXPECT_EQ(o.key, PixelKey::luminance);
  EXPECT_EQ(o.sort, SortOrder::descending);
}

TEST(RenderPacked, PlacesPixelsRowMajorRestTransparent) {
  const auto img = random_image(37, 11, 5);
  ImageCompactOptions o;
  o.threshold = 60;
  o.backend = Backend::cpu;
  const auto r = winnow::compact_image(img.view(), o);
  for (const auto* index : {&r.packed_index, &r.sorted_index}) {
    const auto out = winnow::render_packed(img.view(), *index);
    ASSERT_EQ(out.width(), 37);
    ASSERT_EQ(out.height(), 11);
    for (std::size_t i = 0; i < static_cast<std::size_t>(out.size()); ++i) {
      const Rgba8 want = i < index->size() ? img.data()[(*index)[i]] : Rgba8{0, 0, 0, 0};
      ASSERT_EQ(out.data()[i], want) << i;
    }
  }
}

TEST(RenderPacked, BadIndicesAreInputError) {
  const auto img = random_image(4, 4, 9);
  EXPECT_THROW(winnow::render_packed(img.view(), std::vector<std::uint32_t>(17, 0)), winnow::InputError);
  EXPECT_THROW(winnow::render_packed(img.view(), std::vector<std::uint32_t>{0, 16}), winnow::InputError);
}

}  // namespace
