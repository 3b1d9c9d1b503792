// `winnow compact` end to end: kept counts and CSV against a count computed here, output images,
// and every bad input (exit 2, one line on stderr naming the file, no output file left behind).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "winnow/backend.hpp"
#include "winnow/image.hpp"
#include "winnow/io.hpp"

namespace {

namespace fs = std::filesystem;
using winnow::test::data_path;
using winnow::test::run_cli;
using winnow::test::TempDir;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
void write_file(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}
std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Pixels with luminance (thousandths, 0.299/0.587/0.114) above `threshold_milli`, raster order.
std::vector<std::uint32_t> kept_pixels(const winnow::Image<winnow::Rgba8>& img, std::uint32_t threshold_milli) {
  std::vector<std::uint32_t> kept;
  for (std::int64_t i = 0; i < img.size(); ++i) {
    const auto& p = img.data()[i];
    if (299u * p.r + 587u * p.g + 114u * p.b > threshold_milli) kept.push_back(static_cast<std::uint32_t>(i));
  }
  return kept;
}

std::uint64_t summary_kept(const std::string& out) {
  std::smatch m;
  const std::regex re("kept ([0-9]+) of ([0-9]+) pixels");
  if (!std::regex_search(out, m, re)) return ~std::uint64_t{0};
  return std::stoull(m[1].str());
}

class CliCompactImage : public ::testing::TestWithParam<const char*> {};

TEST_P(CliCompactImage, CountsCsvAndImages) {
  const fs::path input = data_path(GetParam());
  const auto img = winnow::io::read_rgba8(input);  // decoding only; the count is computed here
  TempDir dir;
  for (const auto& [threshold, milli] :
       {std::pair<std::string, std::uint32_t>{"", 40000}, std::pair<std::string, std::uint32_t>{"100.5", 100500}}) {
    SCOPED_TRACE("threshold " + (threshold.empty() ? std::string("default") : threshold));
    std::vector<std::string> args{"compact",      input.string(),           "--out-packed", (dir / "p.png").string(),
                                  "--out-sorted", (dir / "s.png").string(), "--out-list",   (dir / "l.csv").string()};
    if (!threshold.empty()) {
      args.push_back("--threshold");
      args.push_back(threshold);
    }
    const auto r = run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto kept = kept_pixels(img, milli);
    // Summary: "<file>: WxH, kept K of N pixels (F%), backend B, T ms"
    EXPECT_NE(r.out.find(std::to_string(img.width()) + "x" + std::to_string(img.height())), std::string::npos) << r.out;
    EXPECT_EQ(summary_kept(r.out), kept.size()) << r.out;
    EXPECT_NE(r.out.find(" of " + std::to_string(img.size()) + " pixels"), std::string::npos) << r.out;
    EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;

    const auto csv = lines_of(read_file(dir / "l.csv"));
    ASSERT_EQ(csv.size(), kept.size() + 1);
    EXPECT_EQ(csv[0], "x,y,r,g,b,a,luminance");
    for (std::size_t k = 0; k < kept.size(); k += std::max<std::size_t>(1, kept.size() / 50)) {
      const std::uint32_t i = kept[k];
      const auto& p = img.data()[i];
      const std::uint32_t l = 299u * p.r + 587u * p.g + 114u * p.b;
      char want[128];
      std::snprintf(want, sizeof want, "%u,%u,%u,%u,%u,%u,%u.%03u", i % static_cast<std::uint32_t>(img.width()),
                    i / static_cast<std::uint32_t>(img.width()), p.r, p.g, p.b, p.a, l / 1000, l % 1000);
      ASSERT_EQ(csv[k + 1], want) << "CSV line " << k + 1;
    }

    const auto packed = winnow::io::read_rgba8(dir / "p.png");
    const auto sorted = winnow::io::read_rgba8(dir / "s.png");
    for (const auto* out : {&packed, &sorted}) {
      EXPECT_EQ(out->width(), img.width());
      EXPECT_EQ(out->height(), img.height());
    }
    // Packed: kept pixels in raster order, then transparent black.
    for (std::size_t k = 0; k < kept.size(); k += std::max<std::size_t>(1, kept.size() / 100))
      ASSERT_EQ(packed.data()[k], img.data()[kept[k]]) << k;
    if (kept.size() < static_cast<std::size_t>(img.size()))
      EXPECT_EQ(packed.data()[kept.size()], (winnow::Rgba8{0, 0, 0, 0}));
    // Sorted: luminance never increases along the kept prefix.
    auto lum = [](const winnow::Rgba8& p) { return 299u * p.r + 587u * p.g + 114u * p.b; };
    for (std::size_t k = 1; k < kept.size(); ++k) ASSERT_GE(lum(sorted.data()[k - 1]), lum(sorted.data()[k])) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Bundled, CliCompactImage,
                         ::testing::Values("hubble_deep_field.jpg", "coins.png", "mit432/01.png", "simple.fits"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string s = i.param;
                           for (auto& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

TEST(CliCompact, QuietAndSortAscAndAlphaKey) {
  const fs::path input = data_path("coins.png");
  auto r = run_cli({"compact", input.string(), "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  TempDir dir;
  r = run_cli({"compact", input.string(), "--sort", "asc", "--out-sorted", (dir / "s.png").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto img = winnow::io::read_rgba8(input);
  const auto kept = kept_pixels(img, 40000);
  const auto sorted = winnow::io::read_rgba8(dir / "s.png");
  auto lum = [](const winnow::Rgba8& p) { return 299u * p.r + 587u * p.g + 114u * p.b; };
  for (std::size_t k = 1; k < kept.size(); ++k) ASSERT_LE(lum(sorted.data()[k - 1]), lum(sorted.data()[k])) << k;
  // coins.png is opaque: alpha 255 > 254.5 everywhere, and nothing > 255.
  r = run_cli({"compact", input.string(), "--key", "alpha", "--threshold", "254.5", "--sort", "none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary_kept(r.out), static_cast<std::uint64_t>(img.size())) << r.out;
  r = run_cli({"compact", input.string(), "--key", "alpha", "--threshold", "255"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(summary_kept(r.out), 0u) << r.out;
}

TEST(CliCompact, CpuBackendByName) {
  const auto r = run_cli({"compact", data_path("coins.png").string(), "--backend", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("backend cpu"), std::string::npos) << r.out;
}

// ------------------------------------------------------------------------------------------------
// Bad input: exit 2, one line on stderr that names `names`, and no file in the output directory.

void expect_bad(const std::vector<std::string>& extra, const std::string& input, const std::string& names) {
  TempDir out;
  std::vector<std::string> args{"compact",      input,
                                "--out-packed", (out / "p.png").string(),
                                "--out-sorted", (out / "s.png").string(),
                                "--out-list",   (out / "l.csv").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  expect_one_line_error(r, names);
  EXPECT_TRUE(out.files().empty()) << "left behind: " << out.files().front();
}

TEST(CliCompactBadInput, MissingFile) {
  TempDir in;
  expect_bad({}, (in / "missing.png").string(), "missing.png");
}

TEST(CliCompactBadInput, CorruptPng) {
  TempDir in;
  std::string bytes = read_file(data_path("coins.png"));
  ASSERT_GT(bytes.size(), 2000u);
  for (std::size_t i = 200; i < 1200; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5A);
  write_file(in / "corrupt.png", bytes);
  expect_bad({}, (in / "corrupt.png").string(), "corrupt.png");
}

TEST(CliCompactBadInput, TruncatedPng) {
  TempDir in;
  const std::string bytes = read_file(data_path("coins.png"));
  write_file(in / "truncated.png", bytes.substr(0, bytes.size() / 2));
  expect_bad({}, (in / "truncated.png").string(), "truncated.png");
}

TEST(CliCompactBadInput, TruncatedJpeg) {
  TempDir in;
  const std::string bytes = read_file(data_path("hubble_deep_field.jpg"));
  write_file(in / "truncated.jpg", bytes.substr(0, bytes.size() / 2));
  expect_bad({}, (in / "truncated.jpg").string(), "truncated.jpg");
}

TEST(CliCompactBadInput, TextFileNamedPng) {
  TempDir in;
  write_file(in / "x.png", "this is not an image\n");
  expect_bad({}, (in / "x.png").string(), "x.png");
}

TEST(CliCompactBadInput, ZeroSizeFile) {
  TempDir in;
  write_file(in / "empty.png", "");
  expect_bad({}, (in / "empty.png").string(), "empty.png");
}

TEST(CliCompactBadInput, OutputDirectoryMissing) {
  TempDir out;
  const std::string target = (out / "no_such_dir" / "p.png").string();
  const auto r = run_cli(
      {"compact", data_path("coins.png").string(), "--out-packed", target, "--out-list", (out / "l.csv").string()});
  expect_one_line_error(r, "no_such_dir");
  EXPECT_TRUE(out.files().empty()) << "left behind: " << out.files().front();
}

TEST(CliCompactBadInput, ThresholdTooHigh) {
  expect_bad({"--threshold", "300"}, data_path("coins.png").string(), "coins.png");
}

TEST(CliCompactBadInput, ThresholdNegative) {
  expect_bad({"--threshold=-1"}, data_path("coins.png").string(), "coins.png");
  expect_bad({"--threshold", "-1"}, data_path("coins.png").string(), "coins.png");
}

TEST(CliCompactBadInput, SortedOutputWithoutSort) {
  expect_bad({"--sort", "none"}, data_path("coins.png").string(), "s.png");
}

TEST(CliCompactBadInput, ThresholdNotANumber) {
  for (const char* t : {"abc", "nan", "inf", "", "40x", "255.0001", " 40", "0x28", "4e1", "-0", "1.2.3", "."})
    expect_bad({"--threshold", t}, data_path("coins.png").string(), "coins.png");
}

TEST(CliCompactBadInput, OutputNamedForAnotherFormat) {
  TempDir out;
  const auto r = run_cli({"compact", data_path("coins.png").string(), "--out-packed", (out / "p.jpg").string()});
  expect_one_line_error(r, "p.jpg");
  EXPECT_TRUE(out.files().empty());
}

// A write that fails after the image was read: nothing is left, and an earlier run's file under
// the same name is untouched. /proc refuses new files even to root.
TEST(CliCompactBadInput, FailedLaterOutputLeavesEarlierOnesAsTheyWere) {
  TempDir out;
  write_file(out / "p.png", "an earlier run's file");
  const auto r = run_cli({"compact", data_path("coins.png").string(), "--out-packed", (out / "p.png").string(),
                          "--out-list", "/proc/winnow-cannot-write.csv"});
  expect_one_line_error(r, "winnow-cannot-write.csv");
  EXPECT_EQ(out.files(), std::vector<std::string>{"p.png"});
  EXPECT_EQ(read_file(out / "p.png"), "an earlier run's file");
}

TEST(CliCompact, ParseErrorsAreOneLine) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"compact"}, {"compact", data_path("coins.png").string(), "--key", "hue"}, {"no-such-command"}, {}}) {
    const auto r = run_cli(args);
    expect_one_line_error(r, "");  // a usage error names no file
  }
}

TEST(CliCompactBadInput, EmptyOutputName) {
  TempDir out;
  const auto r =
      run_cli({"compact", data_path("coins.png").string(), "--out-packed", (out / "p.png").string(), "--out-list", ""});
  expect_one_line_error(r, "empty file name");
  EXPECT_TRUE(out.files().empty());
}

TEST(CliCompact, LongestLegalOutputName) {
  TempDir out;
  const std::string name = std::string(251, 'p') + ".png";  // 255 characters
  const auto r = run_cli({"compact", data_path("coins.png").string(), "--out-packed", (out / name).string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(out.files(), std::vector<std::string>{name});
}

// An explicit --backend beats WINNOW_BACKEND; without one the environment decides.
TEST(CliBackend, ExplicitAutoOverridesTheEnvironment) {
  if (winnow::cuda_available()) GTEST_SKIP() << "needs a machine without a CUDA device";
  ::setenv("WINNOW_BACKEND", "cuda", 1);
  const auto from_env = run_cli({"compact", data_path("coins.png").string()});
  const auto explicit_auto = run_cli({"compact", data_path("coins.png").string(), "--backend", "auto"});
  ::unsetenv("WINNOW_BACKEND");
  EXPECT_EQ(from_env.exit_code, 2) << from_env.err;
  EXPECT_NE(from_env.err.find("cuda"), std::string::npos) << from_env.err;
  EXPECT_EQ(explicit_auto.exit_code, 0) << explicit_auto.err;
  EXPECT_NE(explicit_auto.out.find("backend cpu"), std::string::npos) << explicit_auto.out;
}

TEST(CliBackend, EveryCommandTakesBackendAndQuiet) {
  TempDir out;
  const std::string img = data_path("chelsea.png").string();
  const std::string scrambled = (out / "s.png").string(), truth = (out / "t.json").string();
  const std::string restored = (out / "r.png").string(), placement = (out / "p.json").string();
  const std::vector<std::vector<std::string>> commands{
      {"devices"},
      {"compact", img},
      {"label", img},
      {"scramble", img, "--grid", "2x2", "--out", scrambled, "--truth", truth},
      {"unscramble", scrambled, "--grid", "2x2", "--out", restored, "--placement", placement},
      {"puzzle-score", placement, truth},
  };
  for (const auto& base : commands) {
    SCOPED_TRACE(base.front());
    if (!winnow::cuda_available()) {  // first, so that it cannot lean on the outputs of the cpu run
      auto c = base;
      c.insert(c.end(), {"--backend", "cuda", "--quiet"});
      const auto r = run_cli(c);
      EXPECT_EQ(r.exit_code, 2) << "cuda without a device: " << r.out << r.err;
    }
    auto a = base;
    a.insert(a.end(), {"--backend", "cpu", "--quiet"});
    const auto r = run_cli(a);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (base.front() != "devices" && base.front() != "puzzle-score") EXPECT_TRUE(r.out.empty()) << r.out;
  }
  const auto devices_cpu = run_cli({"devices", "--backend", "cpu"});
  EXPECT_EQ(devices_cpu.out, "cpu: available\n");
}

}  // namespace
