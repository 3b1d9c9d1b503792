// Connected-component labeling: every (algorithm, backend) variant against a BFS oracle (and
// OpenCV's connectedComponentsWithStats when available) on the same inputs; the CLI end to end.
#include <gtest/gtest.h>
#ifdef WINNOW_HAVE_TIFF
#include <tiffio.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <random>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "common/gpu_guard.hpp"
#include "common/large_tests.hpp"
#include "label/backends.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"
#include "winnow/label.hpp"

#ifdef WINNOW_HAVE_OPENCV
#include <opencv2/imgproc.hpp>
#endif

namespace winnow {
namespace {

using Mask = Image<std::uint8_t>;

// ---- oracle -------------------------------------------------------------------------------------

struct Oracle {
  Image<std::uint32_t> labels;
  std::uint32_t count = 0;
  std::vector<ComponentStats> stats;
};

Oracle bfs_label(const Mask& m, int conn, std::uint64_t min_area = 0) {
  const std::int64_t W = m.width(), H = m.height();
  Oracle o;
  o.labels = Image<std::uint32_t>(W, H);
  std::vector<std::int64_t> queue;
  std::vector<std::uint64_t> areas;
  std::vector<std::array<std::int64_t, 6>> acc;  // sx, sy, minx, maxx, miny, maxy
  std::uint32_t n = 0;
  for (std::int64_t y = 0; y < H; ++y)
    for (std::int64_t x = 0; x < W; ++x) {
      if (!m(x, y) || o.labels(x, y)) continue;
      ++n;
      o.labels(x, y) = n;
      queue.assign(1, y * W + x);
      std::array<std::int64_t, 6> a{0, 0, x, x, y, y};
      std::uint64_t area = 0;
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const std::int64_t px = queue[q] % W, py = queue[q] / W;
        ++area;
        a[0] += px;
        a[1] += py;
        a[2] = std::min(a[2], px);
        a[3] = std::max(a[3], px);
        a[4] = std::min(a[4], py);
        a[5] = std::max(a[5], py);
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            if ((dx == 0 && dy == 0) || (conn == 4 && dx != 0 && dy != 0)) continue;
            const std::int64_t nx = px + dx, ny = py + dy;
            if (nx < 0 || ny < 0 || nx >= W || ny >= H || !m(nx, ny) || o.labels(nx, ny)) continue;
            o.labels(nx, ny) = n;
            queue.push_back(ny * W + nx);
          }
      }
      areas.push_back(area);
      acc.push_back(a);
    }
  std::vector<std::uint32_t> map(n + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (areas[i] < min_area) continue;
    map[i + 1] = ++o.count;
    const auto& a = acc[i];
    ComponentStats s;
    s.area = areas[i];
    s.left = a[2];
    s.top = a[4];
    s.width = a[3] - a[2] + 1;
    s.height = a[5] - a[4] + 1;
    s.cx = static_cast<double>(static_cast<std::uint64_t>(a[0])) / static_cast<double>(areas[i]);
    s.cy = static_cast<double>(static_cast<std::uint64_t>(a[1])) / static_cast<double>(areas[i]);
    o.stats.push_back(s);
  }
  for (auto& v : o.labels.pixels()) v = map[v];
  return o;
}

// Otsu's threshold by exhaustive search in exact integer arithmetic, with the documented rule
// (include/winnow/label.hpp): the t in 0..254 maximising the between-class variance of {v <= t}
// and {v > t}, the smallest such t on ties, 0 when no t splits the histogram. With w0, w1 the
// class counts and s0, s1 the sums of levels, the between-class variance is proportional to
// d^2 / (w0 w1) with d = s1 w0 - s0 w1 (>= 0: every level of class 1 exceeds those of class 0),
// and two such fractions are compared by cross-multiplying in 192 bits.
struct U192 {  // most significant limb first, so that array comparison orders by value
  std::array<std::uint64_t, 3> limbs{};
  auto operator<=>(const U192&) const = default;
};
U192 times(unsigned __int128 x, std::uint64_t y) {
  const unsigned __int128 lo = static_cast<std::uint64_t>(x) * static_cast<unsigned __int128>(y);
  const unsigned __int128 hi = static_cast<std::uint64_t>(x >> 64) * static_cast<unsigned __int128>(y);
  const unsigned __int128 mid = (lo >> 64) + static_cast<std::uint64_t>(hi);
  return U192{{static_cast<std::uint64_t>(hi >> 64) + static_cast<std::uint64_t>(mid >> 64),
               static_cast<std::uint64_t>(mid), static_cast<std::uint64_t>(lo)}};
}
using Histogram = std::array<std::uint64_t, 256>;
int otsu_oracle(const Histogram& h) {
  using U128 = unsigned __int128;
  U128 total = 0, sum = 0;
  for (int v = 0; v < 256; ++v) total += h[v], sum += U128{h[v]} * static_cast<unsigned>(v);
  EXPECT_LT(sum * total, U128{1} << 64) << "histogram too large for the exact search";
  int best_t = 0;
  std::uint64_t best_d = 0, best_w = 0;  // the best fraction so far: best_d^2 / best_w
  U128 w0 = 0, s0 = 0;
  for (int t = 0; t < 255; ++t) {
    w0 += h[t];
    s0 += U128{h[t]} * static_cast<unsigned>(t);
    const U128 w1 = total - w0, s1 = sum - s0;
    if (w0 == 0 || w1 == 0) continue;
    const auto d = static_cast<std::uint64_t>(s1 * w0 - s0 * w1);
    const auto w = static_cast<std::uint64_t>(w0 * w1);
    // d^2 / w > best_d^2 / best_w (strict: the first maximum stays on ties)
    if (best_w == 0 || times(U128{d} * d, best_w) > times(U128{best_d} * best_d, w)) {
      best_t = t;
      best_d = d;
      best_w = w;
    }
  }
  return best_t;
}
Histogram histogram_of(const Mask& grey) {
  Histogram h{};
  for (std::uint8_t v : grey.pixels()) ++h[v];
  return h;
}
// Whole grey levels, floor(luminance), with the luminance formula written out (README: the
// levels Otsu's method splits in the CLI).
Mask grey_levels(const Image<Rgba8>& img) {
  Mask grey(img.width(), img.height());
  for (std::int64_t i = 0; i < img.size(); ++i) {
    const Rgba8 p = img.data()[i];
    grey.data()[i] = static_cast<std::uint8_t>((299u * p.r + 587u * p.g + 114u * p.b) / 1000);
  }
  return grey;
}

// ---- inputs -------------------------------------------------------------------------------------

Mask random_mask(std::int64_t w, std::int64_t h, double density, std::uint32_t seed) {
  Mask m(w, h);
  std::mt19937 rng(seed);
  std::bernoulli_distribution d(density);
  for (auto& v : m.pixels()) v = d(rng) ? static_cast<std::uint8_t>(1 + rng() % 255) : 0;
  return m;
}
Mask chessboard(std::int64_t w, std::int64_t h) {
  Mask m(w, h);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) m(x, y) = (x + y) % 2 == 0;
  return m;
}
Mask spiral(std::int64_t n) {  // one long 1-pixel-wide path winding inwards
  Mask m(n, n);
  std::int64_t x0 = 0, y0 = 0, x1 = n - 1, y1 = n - 1;
  while (x0 <= x1 && y0 <= y1) {
    for (std::int64_t x = x0; x <= x1; ++x) m(x, y0) = 1;
    for (std::int64_t y = y0; y <= y1; ++y) m(x1, y) = 1;
    if (y1 > y0 + 1)
      for (std::int64_t x = x0; x <= x1; ++x) m(x, y1) = 1;
    if (x1 > x0 + 2)
      for (std::int64_t y = y0 + 2; y <= y1; ++y) m(x0, y) = 1;
    if (x1 > x0 + 2 && y0 + 2 <= y1) m(x0 + 1, y0 + 2) = 1;
    x0 += 2;
    y0 += 2;
    x1 -= 2;
    y1 -= 2;
  }
  return m;
}
Mask rings(std::int64_t n) {
  Mask m(n, n);
  const double c = (n - 1) / 2.0;
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x) {
      const double r = std::hypot(x - c, y - c);
      m(x, y) = static_cast<std::int64_t>(r) % 6 < 2;
    }
  return m;
}
Mask tile_borders(std::int64_t w, std::int64_t h) {  // lines and dots on every 16/32/256-tile border
  Mask m(w, h);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      const bool vx = x % 32 == 31 || x % 32 == 0, vy = y % 32 == 31 || y % 32 == 0;
      const bool diag = (x % 32 == 31 && y % 32 == 31) || (x % 32 == 0 && y % 32 == 0);
      m(x, y) = ((vx && y % 7 < 3) || (vy && x % 5 < 2) || diag) ? 1 : 0;
    }
  return m;
}

// ---- variants -----------------------------------------------------------------------------------

struct Variant {
  LabelAlgorithm algorithm;
  Backend backend;
};
const Variant kAll[] = {{LabelAlgorithm::row_stripes, Backend::cpu},
                        {LabelAlgorithm::tile_merge, Backend::cpu},
                        {LabelAlgorithm::block_union_find, Backend::cuda},
                        {LabelAlgorithm::tile_merge, Backend::cuda}};

std::string name_of(const testing::TestParamInfo<Variant>& i) {
  return std::string(to_string(i.param.backend)) + "_" + std::string(to_string(i.param.algorithm));
}

class Label : public testing::TestWithParam<Variant> {
 protected:
  bool ready() {
    if (GetParam().backend != Backend::cuda) return true;
    return test::gpu_ready();
  }
  LabelOptions opts(int conn, std::uint64_t min_area = 0) const {
    LabelOptions o;
    o.connectivity = conn;
    o.min_area = min_area;
    o.algorithm = GetParam().algorithm;
    o.backend = GetParam().backend;
    return o;
  }
  void check(const Mask& m, int conn, const std::string& what, std::uint64_t min_area = 0) {
    SCOPED_TRACE(what + " " + std::to_string(m.width()) + "x" + std::to_string(m.height()) + " conn " +
                 std::to_string(conn) + " min_area " + std::to_string(min_area));
    const Oracle want = bfs_label(m, conn, min_area);
    const Labeling got = label(m.view(), opts(conn, min_area));
    EXPECT_EQ(got.backend, GetParam().backend);
    EXPECT_EQ(got.algorithm, GetParam().algorithm);
    ASSERT_EQ(got.count, want.count);
    ASSERT_EQ(got.labels.width(), m.width());
    ASSERT_EQ(got.labels.height(), m.height());
    const auto a = got.labels.pixels(), b = want.labels.pixels();
    const auto mis = std::mismatch(a.begin(), a.end(), b.begin());
    if (mis.first != a.end()) {
      const auto i = mis.first - a.begin();
      FAIL() << "label mismatch at (" << i % m.width() << "," << i / m.width() << "): got " << *mis.first << " want "
             << *mis.second;
    }
    ASSERT_EQ(got.stats.size(), want.stats.size());
    for (std::size_t i = 0; i < want.stats.size(); ++i)
      ASSERT_EQ(got.stats[i], want.stats[i]) << "stats of label " << i + 1;
  }
};

#define REQUIRE_VARIANT()                                                   \
  do {                                                                      \
    if (GetParam().backend == Backend::cuda) WINNOW_REQUIRE_CUDA_OR_SKIP(); \
  } while (0)

TEST_P(Label, RandomDensities) {
  REQUIRE_VARIANT();
  const std::pair<int, int> sizes[] = {{1, 1},   {1, 97},  {131, 1},   {2, 2},     {3, 5},
                                       {33, 31}, {65, 64}, {257, 131}, {300, 517}, {700, 530}};
  std::uint32_t seed = 1;
  for (const auto& [w, h] : sizes)
    for (double d : {0.05, 0.3, 0.5, 0.7, 0.95})
      for (int conn : {4, 8}) check(random_mask(w, h, d, seed++), conn, "random " + std::to_string(d));
}

TEST_P(Label, Patterns) {
  REQUIRE_VARIANT();
  for (int conn : {4, 8}) {
    check(Mask(77, 45, 0), conn, "all-off");
    check(Mask(77, 45, 1), conn, "all-on");
    check(Mask(1, 1, 1), conn, "single");
    check(chessboard(301, 263), conn, "chessboard");
    check(chessboard(1, 9), conn, "chessboard column");
    check(spiral(301), conn, "spiral");
    check(spiral(64), conn, "spiral even");
    check(rings(333), conn, "rings");
    check(tile_borders(600, 531), conn, "tile borders");
  }
}

// Images large enough for the CPU's parallel row stripes (>= 2^18 pixels), with components that
// cross every stripe seam several times: merges at the seams re-parent roots across stripes.
Mask comb(std::int64_t w, std::int64_t h, bool serpentine) {  // vertical bars joined at the bottom (or alternately)
  Mask m(w, h);
  for (std::int64_t x = 0; x < w; x += 3)
    for (std::int64_t y = 0; y < h; ++y) m(x, y) = 1;
  for (std::int64_t x = 0; x + 3 < w; x += 3) {
    const std::int64_t y = !serpentine || (x / 3) % 2 == 0 ? h - 1 : 0;
    for (std::int64_t k = 0; k <= 3; ++k) m(x + k, y) = 1;
  }
  return m;
}

TEST_P(Label, StripeSeams) {
  REQUIRE_VARIANT();
  for (int conn : {4, 8}) {
    check(spiral(701), conn, "large spiral");
    check(rings(601), conn, "large rings");
    check(comb(600, 501, false), conn, "comb");
    check(comb(601, 500, true), conn, "serpentine");
    check(random_mask(200001, 3, 0.5, 11), conn, "three rows");
    check(random_mask(3, 100003, 0.6, 12), conn, "three columns");
    check(random_mask(1001, 700, 0.55, 13), conn, "random");
  }
}

TEST_P(Label, MinArea) {
  REQUIRE_VARIANT();
  const Mask m = random_mask(211, 157, 0.4, 99);
  for (int conn : {4, 8})
    for (std::uint64_t a : {0u, 1u, 2u, 5u, 40u, 1000000u}) check(m, conn, "min_area", a);
}

TEST_P(Label, RealImages) {
  REQUIRE_VARIANT();
  for (const char* f : {"coins.png", "text.png", "hubble_deep_field.jpg"}) {
    const Mask grey = grey_levels(io::read_rgba8(test::data_path(f)));
    const int t = otsu_oracle(histogram_of(grey));
    Mask m(grey.width(), grey.height());
    for (std::int64_t i = 0; i < m.size(); ++i) m.data()[i] = grey.data()[i] > t;
    for (int conn : {4, 8}) check(m, conn, f);
  }
}

TEST_P(Label, Large) {
  REQUIRE_VARIANT();
  static const Mask m = random_mask(8192, 8192, 0.5, 7);
  static const Oracle want = bfs_label(m, 8);
  const Labeling got = label(m.view(), opts(8));
  ASSERT_EQ(got.count, want.count);
  EXPECT_TRUE(std::equal(got.labels.pixels().begin(), got.labels.pixels().end(), want.labels.pixels().begin()));
  ASSERT_EQ(got.stats.size(), want.stats.size());
  EXPECT_TRUE(std::equal(got.stats.begin(), got.stats.end(), want.stats.begin()));
}

TEST_P(Label, LabelIntoStridedOutput) {
  REQUIRE_VARIANT();
  const Mask m = random_mask(123, 77, 0.45, 3);
  const Oracle want = bfs_label(m, 8);
  Image<std::uint32_t> big(130, 77, 0xDEADBEEFu);
  ImageView<std::uint32_t> out(big.data(), 123, 77, 130);
  const Labeling got = label_into(m.view(), out, opts(8));
  EXPECT_TRUE(got.labels.empty());
  ASSERT_EQ(got.count, want.count);
  for (std::int64_t y = 0; y < 77; ++y)
    for (std::int64_t x = 0; x < 130; ++x)
      ASSERT_EQ(big(x, y), x < 123 ? want.labels(x, y) : 0xDEADBEEFu) << x << "," << y;
}

#ifdef WINNOW_HAVE_OPENCV
// Labels and statistics equal to OpenCV's connectedComponentsWithStats (SAUF numbers in raster
// order of first pixels too).
void check_opencv(const Mask& m, int conn, const LabelOptions& o, const std::string& what) {
  SCOPED_TRACE(what + " " + std::to_string(m.width()) + "x" + std::to_string(m.height()) + " conn " +
               std::to_string(conn));
  cv::Mat src(static_cast<int>(m.height()), static_cast<int>(m.width()), CV_8U, const_cast<std::uint8_t*>(m.data()));
  cv::Mat cl, cs, cc;
  const int n = cv::connectedComponentsWithStats(src, cl, cs, cc, conn, CV_32S, cv::CCL_SAUF) - 1;
  const Labeling got = label(m.view(), o);
  ASSERT_EQ(static_cast<int>(got.count), n);
  for (int y = 0; y < cl.rows; ++y)
    for (int x = 0; x < cl.cols; ++x)
      ASSERT_EQ(got.labels(x, y), static_cast<std::uint32_t>(cl.at<int>(y, x))) << x << "," << y;
  for (int l = 1; l <= n; ++l) {
    const ComponentStats& s = got.stats[l - 1];
    ASSERT_EQ(s.left, cs.at<int>(l, cv::CC_STAT_LEFT));
    ASSERT_EQ(s.top, cs.at<int>(l, cv::CC_STAT_TOP));
    ASSERT_EQ(s.width, cs.at<int>(l, cv::CC_STAT_WIDTH));
    ASSERT_EQ(s.height, cs.at<int>(l, cv::CC_STAT_HEIGHT));
    ASSERT_EQ(s.area, static_cast<std::uint64_t>(cs.at<int>(l, cv::CC_STAT_AREA)));
    ASSERT_NEAR(s.cx, cc.at<double>(l, 0), 1e-9);
    ASSERT_NEAR(s.cy, cc.at<double>(l, 1), 1e-9);
  }
}

TEST_P(Label, MatchesOpenCV) {
  REQUIRE_VARIANT();
  std::uint32_t seed = 100;
  std::vector<std::pair<std::string, Mask>> masks;
  for (double d : {0.1, 0.5, 0.9}) masks.emplace_back("random " + std::to_string(d), random_mask(517, 389, d, seed++));
  masks.emplace_back("row", random_mask(777, 1, 0.6, seed++));
  masks.emplace_back("column", random_mask(1, 777, 0.6, seed++));
  masks.emplace_back("all-off", Mask(77, 45, 0));
  masks.emplace_back("all-on", Mask(77, 45, 1));
  masks.emplace_back("chessboard", chessboard(301, 263));
  masks.emplace_back("spiral", spiral(301));
  masks.emplace_back("rings", rings(333));
  masks.emplace_back("tile borders", tile_borders(600, 531));
  for (const char* f : {"coins.png", "text.png", "hubble_deep_field.jpg"}) {  // thresholded at 100
    const auto rgba = io::read_rgba8(test::data_path(f));
    Mask m(rgba.width(), rgba.height());
    for (std::int64_t i = 0; i < m.size(); ++i) m.data()[i] = luminance_milli(rgba.data()[i]) > 100000u;
    masks.emplace_back(f, std::move(m));
  }
  for (const auto& [what, m] : masks)
    for (int conn : {4, 8}) {
      check_opencv(m, conn, opts(conn), what);
      if (HasFatalFailure()) return;
    }
}
#endif

INSTANTIATE_TEST_SUITE_P(Variants, Label, testing::ValuesIn(kAll), name_of);

// ---- front end ----------------------------------------------------------------------------------

TEST(LabelApi, Errors) {
  const Mask m(4, 4, 1);
  LabelOptions o;
  o.backend = Backend::cpu;
  o.connectivity = 6;
  EXPECT_THROW(label(m.view(), o), InputError);
  o.connectivity = 8;
  o.algorithm = LabelAlgorithm::block_union_find;
  EXPECT_THROW(label(m.view(), o), BackendError);
  EXPECT_THROW(parse_label_algorithm("nope"), InputError);
  EXPECT_EQ(parse_label_algorithm("tile_merge"), LabelAlgorithm::tile_merge);
  Image<std::uint32_t> wrong(3, 4);
  o.algorithm = LabelAlgorithm::automatic;
  EXPECT_THROW(label_into(m.view(), wrong.view(), o), InputError);
  if (!cuda_available()) {
    o.backend = Backend::cuda;
    EXPECT_THROW(label(m.view(), o), BackendError);
  }
}

// Where the time went: the stages add up to the call's time; a CUDA run reports a device setup
// and transfers (its labeling alone is not the whole call).
TEST(LabelApi, StageTimesAddUp) {
  std::mt19937 rng(77);
  winnow::Image<std::uint8_t> mask(517, 389);
  for (auto& v : mask.pixels()) v = rng() % 2;
  std::vector<winnow::Backend> backends{winnow::Backend::cpu};
  if (winnow::cuda_available()) backends.push_back(winnow::Backend::cuda);
  for (winnow::Backend b : backends) {
    winnow::LabelOptions o;
    o.backend = b;
    const auto r = winnow::label(mask.view(), o);
    const auto& st = r.stages;
    EXPECT_GE(st.device_setup, 0.0);
    EXPECT_GE(st.transfers, 0.0);
    EXPECT_GE(st.compute, 0.0);
    EXPECT_NEAR(st.device_setup + st.transfers + st.compute, r.milliseconds, 1e-6 * (1 + r.milliseconds));
    if (b == winnow::Backend::cpu) {
      EXPECT_EQ(st.transfers, 0.0);
    } else {
      EXPECT_GT(st.device_setup, 0.0);
      EXPECT_GT(st.transfers, 0.0);
    }
  }
}

// `automatic` weighs the whole job: in a process that has not started the device, a small image
// is labelled on the CPU even where a device answers (its start alone costs more than the CPU
// labeling); an explicit request, or WINNOW_BACKEND, still takes the device.
TEST(LabelApi, AutomaticLabelsASmallImageOnTheCpuInAFreshProcess) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  winnow::Image<std::uint8_t> mask(64, 48);
  std::mt19937 rng(5);
  for (auto& v : mask.pixels()) v = rng() % 2;
  if (const char* env = std::getenv("WINNOW_BACKEND"); env && *env) GTEST_SKIP() << "WINNOW_BACKEND is set";
  // (ctest runs each test in its own process, so no earlier call has started the device)
  EXPECT_EQ(winnow::label(mask.view()).backend, winnow::Backend::cpu);
  winnow::LabelOptions o;
  o.backend = winnow::Backend::cuda;
  EXPECT_EQ(winnow::label(mask.view(), o).backend, winnow::Backend::cuda);
}

TEST(LabelApi, EmptyImage) {
  const Mask m(0, 0);
  LabelOptions o;
  o.backend = Backend::cpu;
  const Labeling r = label(m.view(), o);
  EXPECT_EQ(r.count, 0u);
  EXPECT_TRUE(r.labels.empty());
}

TEST(LabelApi, ThresholdOverloads) {
  Image<std::uint16_t> a(5, 3, 100);
  a(0, 0) = 1000;
  a(4, 2) = 1000;
  Image<float> b(5, 3, 0.25f);
  b(2, 1) = 0.75f;
  LabelOptions o;
  o.backend = Backend::cpu;
  EXPECT_EQ(label(a.view(), 500.0, o).count, 2u);
  EXPECT_EQ(label(a.view(), 50.0, o).count, 1u);
  EXPECT_EQ(label(b.view(), 0.5, o).count, 1u);
  Mask c(3, 1);
  c(1, 0) = 200;
  EXPECT_EQ(label(c.view(), 199.0, o).count, 1u);
  EXPECT_EQ(label(c.view(), 200.0, o).count, 0u);
}

int otsu_of(const Histogram& h) { return otsu_threshold(std::span<const std::uint64_t, 256>(h)); }

// Exact equality with the test's own search: a threshold one level off (t + 1 for "foreground
// >= t"), the largest instead of the smallest t on ties, or rounding that moves the maximum fails.
TEST(LabelApi, OtsuHistograms) {
  // Two levels: every t in 40..199 splits them alike (a tie); the rule takes the smallest.
  Histogram two{};
  two[40] = 100;
  two[200] = 50;
  EXPECT_EQ(otsu_oracle(two), 40);
  EXPECT_EQ(otsu_of(two), 40);
  // Symmetric three levels: t in 10..19 and t in 20..29 tie; the smallest is 10.
  Histogram three{};
  three[10] = three[20] = three[30] = 5;
  EXPECT_EQ(otsu_oracle(three), 10);
  EXPECT_EQ(otsu_of(three), 10);
  // One level (or none): nothing splits, 0.
  Histogram flat{};
  EXPECT_EQ(otsu_of(flat), 0);
  flat[7] = 10;
  EXPECT_EQ(otsu_of(flat), 0);
  // Two adjacent levels: the only split is after the lower one.
  Histogram adjacent{};
  adjacent[254] = 3;
  adjacent[255] = 9;
  EXPECT_EQ(otsu_oracle(adjacent), 254);
  EXPECT_EQ(otsu_of(adjacent), 254);
  // Random histograms: dense, sparse, one-sided, and with huge counts.
  std::mt19937_64 rng(17);
  for (int i = 0; i < 2000; ++i) {
    Histogram h{};
    const int kind = i % 4;
    for (int v = 0; v < 256; ++v) {
      if (kind == 1 && rng() % 8) continue;             // sparse
      if (kind == 2 && v > 60 && rng() % 32) continue;  // mass at the dark end
      h[v] = kind == 3 ? rng() % (std::uint64_t{1} << 20) : rng() % 1000;
    }
    SCOPED_TRACE("histogram " + std::to_string(i));
    ASSERT_EQ(otsu_of(h), otsu_oracle(h));
  }
}

// On images: the 8-bit overload, the grey levels of the bundled photographs, and OpenCV's Otsu as
// a second opinion (cv::threshold keeps value > t too and also takes the first maximum).
TEST(LabelApi, OtsuImages) {
  std::vector<std::pair<std::string, Mask>> greys;
  for (std::uint32_t seed : {5u, 6u, 7u})
    greys.emplace_back("random " + std::to_string(seed), random_mask(64, 64, 0.6, seed));
  for (const char* f : {"coins.png", "text.png", "hubble_deep_field.jpg", "astronaut.png", "chelsea.png"})
    greys.emplace_back(f, grey_levels(io::read_rgba8(test::data_path(f))));
  for (const auto& [what, grey] : greys) {
    const int want = otsu_oracle(histogram_of(grey));
    EXPECT_EQ(otsu_threshold(grey.view()), want) << what;
#ifdef WINNOW_HAVE_OPENCV
    cv::Mat src(static_cast<int>(grey.height()), static_cast<int>(grey.width()), CV_8U,
                const_cast<std::uint8_t*>(grey.data())),
        dst;
    EXPECT_EQ(cv::threshold(src, dst, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU), want) << what << " (OpenCV)";
#endif
  }
}

// Beyond 2^31 pixels on the CPU: opt-in (about 11 GB of memory, a minute): WINNOW_LARGE_TESTS=1.
// 2^31 + 65536 pixels, four components: beyond 32-bit pixel indices on the CPU, two bands (one seam,
// crossed by component 2) on the CUDA backend.
void check_huge_image(Backend backend) {
  const std::int64_t W = 65536, H = 32769;
  Mask m(W, H, 0);
  for (std::int64_t x = 0; x < W; ++x) m(x, 5) = 1;        // 1: a full-width line
  m(10, H - 1) = 1;                                        // 3: in the last row
  for (std::int64_t y = 100; y < H; ++y) m(W - 1, y) = 1;  // 2: the last column (first pixel earlier in raster)
  m(W - 3, H - 1) = 1;                                     // 4: in the last row
  LabelOptions o;
  o.backend = backend;
  const Labeling r = label(m.view(), o);
  ASSERT_EQ(r.count, 4u);
  EXPECT_EQ(r.labels(0, 5), 1u);
  EXPECT_EQ(r.labels(W - 1, 100), 2u);
  EXPECT_EQ(r.labels(W - 1, H - 1), 2u);
  EXPECT_EQ(r.labels(10, H - 1), 3u);
  EXPECT_EQ(r.labels(W - 3, H - 1), 4u);
  EXPECT_EQ(r.stats[1].area, static_cast<std::uint64_t>(H - 100));
  EXPECT_EQ(r.stats[1].height, H - 100);
  EXPECT_DOUBLE_EQ(r.stats[1].cy, (100.0 + static_cast<double>(H - 1)) / 2.0);
  EXPECT_EQ(r.stats[0].area, static_cast<std::uint64_t>(W));
  EXPECT_DOUBLE_EQ(r.stats[0].cx, (W - 1) / 2.0);
}

TEST(LabelApi, HugeImageCpu) {
  WINNOW_REQUIRE_LARGE_TESTS_OR_SKIP("needs ~11 GB RAM");
  check_huge_image(Backend::cpu);
}

// ---- bands (one call's size limit, merged across seams) -----------------------------------------

// Labels `m` in bands of `rows` rows with `label_band`, checks labels and statistics against the
// oracle of the whole image.
void check_bands(const Mask& m, int conn, std::int64_t rows, const std::string& what,
                 const std::function<std::uint64_t(const detail::LabelRequest&, std::vector<ComponentStats>*)>& one) {
  SCOPED_TRACE(what + " " + std::to_string(m.width()) + "x" + std::to_string(m.height()) + " conn " +
               std::to_string(conn) + " bands of " + std::to_string(rows));
  const Oracle want = bfs_label(m, conn);
  Image<std::uint32_t> got(m.width(), m.height());
  for (auto& l : got.pixels()) l = 0xdeadbeefu;  // poison
  detail::LabelRequest req;
  req.mask = m.view();
  req.labels = got.view();
  req.connectivity = conn;
  std::vector<ComponentStats> stats;
  const std::uint64_t n = one(req, &stats);
  ASSERT_EQ(n, want.count);
  const std::span<const std::uint32_t> a = got.pixels(), b = want.labels.pixels();
  const auto mis = std::mismatch(a.begin(), a.end(), b.begin());
  if (mis.first != a.end()) {
    const auto i = mis.first - a.begin();
    FAIL() << "label mismatch at (" << i % m.width() << "," << i / m.width() << "): got " << *mis.first << " want "
           << *mis.second;
  }
  ASSERT_EQ(stats.size(), want.stats.size());
  for (std::size_t i = 0; i < stats.size(); ++i) ASSERT_EQ(stats[i], want.stats[i]) << "stats of label " << i + 1;
}

std::vector<std::pair<std::string, Mask>> band_masks() {
  std::vector<std::pair<std::string, Mask>> v;
  std::uint32_t seed = 77;
  for (double d : {0.1, 0.45, 0.6, 0.95})
    v.emplace_back("random " + std::to_string(d), random_mask(301, 203, d, seed++));
  v.emplace_back("spiral", spiral(157));
  v.emplace_back("rings", rings(140));
  v.emplace_back("comb", comb(97, 130, true));
  v.emplace_back("chessboard", chessboard(64, 75));
  v.emplace_back("column", random_mask(1, 300, 0.7, seed++));
  return v;
}

// The merge itself, with the CPU labelling each band: statistics as integer sums from the
// CPU's centroids (exact below 2^53).
TEST(LabelBands, CpuBandsMergeLikeOneCall) {
  const detail::BandLabeler cpu_band = [](const detail::LabelRequest& band, std::int64_t top,
                                          std::vector<detail::ComponentSums>* out) {
    detail::LabelRequest r = band;
    r.algorithm = LabelAlgorithm::row_stripes;
    std::vector<ComponentStats> s;
    const std::uint64_t n = detail::cpu::label(r, out ? &s : nullptr);
    if (out)
      for (const ComponentStats& c : s) {
        detail::ComponentSums m;
        m.area = c.area;
        m.sum_x = static_cast<std::uint64_t>(std::llround(c.cx * static_cast<double>(c.area)));
        m.sum_y =
            static_cast<std::uint64_t>(std::llround((c.cy + static_cast<double>(top)) * static_cast<double>(c.area)));
        m.left = c.left, m.right = c.left + c.width - 1;
        m.top = c.top + top, m.bottom = c.top + top + c.height - 1;
        out->push_back(m);
      }
    return n;
  };
  for (const auto& [what, m] : band_masks())
    for (int conn : {4, 8})
      for (std::int64_t rows : {1, 2, 7, 64, 1000})
        check_bands(m, conn, rows, what, [&](const detail::LabelRequest& req, std::vector<ComponentStats>* st) {
          return detail::label_in_bands(req, st, rows, cpu_band);
        });
}

// Row stripes by the pixel pass: what the CPU runs for images with more than 2^31 runs (too many
// to test here at that size), on images of >= 2^18 pixels, so the stripes run in parallel.
TEST(LabelCpu, RowStripesPixelPassMatchesTheOracle) {
  std::vector<std::pair<std::string, Mask>> masks = band_masks();
  masks.emplace_back("random 0.45 large", random_mask(700, 530, 0.45, 5));
  masks.emplace_back("random 0.6 large", random_mask(530, 700, 0.6, 6));
  masks.emplace_back("spiral large", spiral(601));
  masks.emplace_back("rings large", rings(600));
  for (const auto& [what, m] : masks)
    for (int conn : {4, 8})
      check_bands(m, conn, 0, what + " (pixel stripes)",
                  [&](detail::LabelRequest req, std::vector<ComponentStats>* st) {
                    req.algorithm = LabelAlgorithm::row_stripes;
                    return detail::cpu::label_pixels(req, st);
                  });
}

// More components than 32-bit labels hold is an error, never a wrap-around: bands that report
// 2^31 components each (a stand-in labeler; real ones would need 2^33 pixels) overflow at the second.
TEST(LabelBands, TooManyComponentsIsAnError) {
  Mask m(8, 4, 0);
  Image<std::uint32_t> labels(8, 4);
  detail::LabelRequest req;
  req.mask = m.view();
  req.labels = labels.view();
  int calls = 0;
  const detail::BandLabeler claims_2_31 = [&](const detail::LabelRequest&, std::int64_t,
                                              std::vector<detail::ComponentSums>*) {
    ++calls;
    return std::uint64_t{1} << 31;
  };
  EXPECT_THROW(detail::label_in_bands(req, nullptr, 2, claims_2_31), Error);
  EXPECT_EQ(calls, 2);
  // One band short of the limit is fine as far as counting goes (labels all 0: nothing merges).
  const detail::BandLabeler claims_less = [&](const detail::LabelRequest&, std::int64_t,
                                              std::vector<detail::ComponentSums>*) { return std::uint64_t{3}; };
  EXPECT_EQ(detail::label_in_bands(req, nullptr, 2, claims_less), 6u);
}

#ifdef WINNOW_HAVE_CUDA
// The CUDA backend's own band path (used beyond 2^31 / next_pow2(width) rows), with small bands.
TEST(LabelBands, CudaBandsMatchTheOracle) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  for (LabelAlgorithm alg : {LabelAlgorithm::tile_merge, LabelAlgorithm::block_union_find})
    for (const auto& [what, m] : band_masks())
      for (int conn : {4, 8})
        for (std::int64_t rows : {1, 3, 64, 100})
          check_bands(m, conn, rows, what + " " + std::string(to_string(alg)),
                      [&](detail::LabelRequest req, std::vector<ComponentStats>* st) {
                        req.algorithm = alg;
                        return detail::cuda::label(req, st, rows);
                      });
}
#else
// Shown as skipped (not missing) in a build without the CUDA backend.
TEST(LabelBands, CudaBandsMatchTheOracle) { WINNOW_GPU_MISSING("built without the CUDA backend"); }
#endif

TEST(LabelApi, HugeImageGpu) {
  WINNOW_REQUIRE_LARGE_TESTS_OR_SKIP("needs ~11 GB RAM and GPU memory");
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  check_huge_image(Backend::cuda);
}

// ---- CLI ----------------------------------------------------------------------------------------

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The default threshold is Otsu's on the whole grey levels, computed here (otsu_oracle on the
// image as read): the summary must show t + 0.999 and every output must come from the mask
// floor(luminance) > t, so a CLI that thresholds one level off, shows another threshold than it
// uses, or splits another histogram fails.
TEST(LabelCli, CoinsWithEveryOutput) {
  const auto img = io::read_rgba8(test::data_path("coins.png"));
  const Mask grey = grey_levels(img);
  const int t = otsu_oracle(histogram_of(grey));
  Mask mask(img.width(), img.height());
  for (std::int64_t i = 0; i < img.size(); ++i) mask.data()[i] = grey.data()[i] > t ? 1 : 0;
  const Oracle want = bfs_label(mask, 8, 20);
  ASSERT_GT(want.count, 1u);

  test::TempDir dir;
  const auto r = test::run_cli({"label", test::data_path("coins.png").string(), "--backend", "cpu", "--stats",
                                (dir / "s.csv").string(), "--out-colored", (dir / "c.png").string(), "--out-labels",
                                (dir / "l.tif").string(), "--min-area", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(", " + std::to_string(want.count) + " components (8-connectivity, threshold " +
                       std::to_string(t) + ".999 otsu)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cpu"), std::string::npos);

  // Statistics: one row per component of the oracle, in label order.
  std::istringstream csv(slurp(dir / "s.csv"));
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));
  EXPECT_EQ(line, "label,area,left,top,width,height,cx,cy");
  for (std::size_t i = 0; i < want.stats.size(); ++i) {
    ASSERT_TRUE(std::getline(csv, line)) << "row " << i + 1 << " missing";
    const ComponentStats& s = want.stats[i];
    std::istringstream row(line);
    std::vector<std::string> f;
    for (std::string cell; std::getline(row, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 8u) << line;
    EXPECT_EQ(std::stoul(f[0]), i + 1) << line;
    EXPECT_EQ(std::stoull(f[1]), s.area) << line;
    EXPECT_EQ(std::stoll(f[2]), s.left) << line;
    EXPECT_EQ(std::stoll(f[3]), s.top) << line;
    EXPECT_EQ(std::stoll(f[4]), s.width) << line;
    EXPECT_EQ(std::stoll(f[5]), s.height) << line;
    EXPECT_NEAR(std::stod(f[6]), s.cx, 1e-6) << line;
    EXPECT_NEAR(std::stod(f[7]), s.cy, 1e-6) << line;
  }
  EXPECT_FALSE(std::getline(csv, line)) << "extra row " << line;

  // The coloured map: opaque black exactly on the background, one colour per component.
  const auto colored = io::read_rgba8(dir / "c.png");
  ASSERT_EQ(colored.width(), img.width());
  ASSERT_EQ(colored.height(), img.height());
  std::vector<Rgba8> colour_of(want.count + 1, Rgba8{0, 0, 0, 0});
  for (std::int64_t y = 0; y < img.height(); ++y)
    for (std::int64_t x = 0; x < img.width(); ++x) {
      const std::uint32_t l = want.labels(x, y);
      const Rgba8 c = colored(x, y);
      if (l == 0) {
        ASSERT_EQ(c, (Rgba8{0, 0, 0, 255})) << x << "," << y;
        continue;
      }
      ASSERT_NE(c, (Rgba8{0, 0, 0, 255})) << x << "," << y;
      if (colour_of[l].a == 0) colour_of[l] = c;
      ASSERT_EQ(c, colour_of[l]) << "component " << l << " at " << x << "," << y;
    }
#ifdef WINNOW_HAVE_TIFF
  // The label map, read with libtiff, equals the oracle's.
  TIFF* tif = TIFFOpen((dir / "l.tif").c_str(), "r");
  ASSERT_NE(tif, nullptr);
  std::vector<std::uint32_t> row(static_cast<std::size_t>(img.width()));
  for (std::int64_t y = 0; y < img.height(); ++y) {
    ASSERT_EQ(TIFFReadScanline(tif, row.data(), static_cast<std::uint32_t>(y)), 1);
    for (std::int64_t x = 0; x < img.width(); ++x) ASSERT_EQ(row[x], want.labels(x, y)) << x << "," << y;
  }
  TIFFClose(tif);
#endif
}

// Foreground is luminance > T exactly: a pixel of luminance 4.044 (12, 0, 4) is not above 4.044.
TEST(LabelCli, ThresholdIsStrictAtTheThousandth) {
  test::TempDir dir;
  Image<Rgba8> img(3, 3, Rgba8{0, 0, 0, 255});
  img(1, 1) = Rgba8{12, 0, 4, 255};
  io::write_png(dir / "one.png", img.view());
  auto components = [&](const char* t) {
    const auto r = test::run_cli({"label", (dir / "one.png").string(), "--threshold", t, "--backend", "cpu"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::smatch m;
    const std::regex re(", ([0-9]+) components");
    return std::regex_search(r.out, m, re) ? std::stoi(m[1].str()) : -1;
  };
  EXPECT_EQ(components("4.044"), 0);
  EXPECT_EQ(components("4.0439"), 1);
  EXPECT_EQ(components("4.043"), 1);
}

TEST(LabelCli, BadThresholdsAndOutputsAreOneLineNamingTheFile) {
  test::TempDir dir;
  const std::string coins = test::data_path("coins.png").string();
  auto expect_bad = [&](std::vector<std::string> extra, const std::string& names) {
    std::vector<std::string> args{
        "label", coins, "--out-colored", (dir / "c.png").string(), "--stats", (dir / "s.csv").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::run_cli(args);
    test::expect_one_line_error(r, names);
    EXPECT_TRUE(dir.files().empty()) << dir.files().front();
  };
  for (const char* t : {"nan", "-1", "256", "abc", "inf", ""}) expect_bad({"--threshold", t}, "coins.png");
  expect_bad({"--connectivity", "6"}, "coins.png");
  expect_bad({"--out-labels", (dir / "l.png").string()}, "l.png");
  // A write that fails after labeling (/proc refuses new files even to root): nothing is left.
  expect_bad({"--out-labels", "/proc/winnow-cannot-write.tif"}, "winnow-cannot-write.tif");
}

TEST(LabelCli, ThresholdInvertConnectivityQuiet) {
  const auto a = test::run_cli({"label", test::data_path("text.png").string(), "--threshold", "128", "--invert",
                                "--connectivity", "4", "--quiet", "--backend", "cpu"});
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(a.out.empty());
  const auto b = test::run_cli({"label", test::data_path("text.png").string(), "--otsu", "--backend", "cpu"});
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("otsu"), std::string::npos);
}

TEST(LabelCli, BadInputsLeaveNothing) {
  test::TempDir dir;
  const auto bogus = dir / "bogus.png";
  { std::ofstream(bogus) << "not an image"; }
  auto r = test::run_cli(
      {"label", bogus.string(), "--stats", (dir / "s.csv").string(), "--out-colored", (dir / "c.png").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bogus.png"), std::string::npos) << r.err;
  EXPECT_EQ(dir.files(), std::vector<std::string>{"bogus.png"});
  r = test::run_cli({"label", (dir / "missing.png").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.png"), std::string::npos) << r.err;
  r = test::run_cli({"label", test::data_path("coins.png").string(), "--stats", (dir / "no/such/dir/s.csv").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("s.csv"), std::string::npos) << r.err;
  r = test::run_cli({"label", test::data_path("coins.png").string(), "--connectivity", "6"});
  EXPECT_EQ(r.exit_code, 2);
  r = test::run_cli({"label", test::data_path("coins.png").string(), "--threshold", "9", "--otsu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"bogus.png"});
}

}  // namespace
}  // namespace winnow
