// `winnow label VOLUME` end to end: the labels written (.npy, .nii.gz, multi-page .tif) and the
// statistics CSV against the BFS oracle run here on the volume read back, min-area and largest-k,
// the middle-slice PNG, how a multi-page TIFF is told from an image, and the bad inputs (exit 2,
// one line naming the file or argument, no output left behind).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "common/volume_label_oracle.hpp"
#include "winnow/io.hpp"
#include "winnow/volume_io.hpp"

namespace winnow {
namespace {

namespace fs = std::filesystem;
using test::run_cli;
using test::TempDir;

std::vector<std::vector<std::string>> csv_rows(const fs::path& p) {
  std::ifstream f(p);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(f, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

/// Labels as u64, whatever type the file holds them in.
std::vector<std::uint64_t> labels_of(const fs::path& p) {
  return std::visit(
      [](const auto& v) {
        std::vector<std::uint64_t> out;
        for (const auto x : v.voxels()) out.push_back(static_cast<std::uint64_t>(x));
        return out;
      },
      io::read_volume(p));
}

Volume<std::uint16_t> random_volume(std::int64_t nx, std::int64_t ny, std::int64_t nz, double density, int values,
                                    std::uint64_t seed) {
  Volume<std::uint16_t> v(nx, ny, nz);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution fg(density);
  std::uniform_int_distribution<int> value(1, values);
  for (auto& x : v.voxels()) x = fg(rng) ? static_cast<std::uint16_t>(1000 + value(rng)) : 0;
  return v;
}

void expect_stats_csv(const fs::path& csv, const test::OracleLabeling& o, bool multilabel) {
  const auto rows = csv_rows(csv);
  ASSERT_EQ(rows.size(), o.components.size() + 1);
  EXPECT_EQ(rows[0].size(), multilabel ? 12u : 11u);
  EXPECT_EQ(rows[0][0], "label");
  for (std::size_t i = 0; i < o.components.size(); ++i) {
    const auto& c = o.components[i];
    const auto& r = rows[i + 1];
    ASSERT_EQ(r.size(), rows[0].size());
    EXPECT_EQ(std::stoull(r[0]), i + 1);
    EXPECT_EQ(std::stoull(r[1]), c.voxels);
    EXPECT_EQ(std::stoll(r[2]), c.min_x);
    EXPECT_EQ(std::stoll(r[3]), c.min_y);
    EXPECT_EQ(std::stoll(r[4]), c.min_z);
    EXPECT_EQ(std::stoll(r[5]), c.max_x - c.min_x + 1);
    EXPECT_EQ(std::stoll(r[6]), c.max_y - c.min_y + 1);
    EXPECT_EQ(std::stoll(r[7]), c.max_z - c.min_z + 1);
    EXPECT_NEAR(std::stod(r[8]), static_cast<double>(c.sum_x) / static_cast<double>(c.voxels), 1e-6);
    EXPECT_NEAR(std::stod(r[10]), static_cast<double>(c.sum_z) / static_cast<double>(c.voxels), 1e-6);
    if (multilabel) EXPECT_EQ(std::stoull(r[11]), c.value);
  }
}

TEST(LabelCliVolume, LabelsAndStatisticsInEveryFormat) {
  TempDir dir;
  const auto v = random_volume(70, 45, 33, 0.3, 3, 11);
  const fs::path input = dir / "in.nii.gz";
  io::write_volume(input, v.view());
#ifdef WINNOW_HAVE_TIFF
  const std::vector<const char*> formats = {".npy", ".nii.gz", ".tif"};
#else
  const std::vector<const char*> formats = {".npy", ".nii.gz"};
#endif
  for (const char* ext : formats)
    for (int conn : {6, 18, 26})
      for (bool multi : {false, true}) {
        const fs::path labels = dir / (std::string("labels") + ext), csv = dir / "stats.csv";
        std::vector<std::string> args = {"label", input.string(), "--connectivity", std::to_string(conn),
                                         "--out-labels", labels.string(), "--stats", csv.string(), "--backend", "cpu"};
        if (multi) args.push_back("--multilabel");
        const auto r = run_cli(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const test::OracleLabeling o = test::oracle_label_volume<std::uint16_t>(v.view(), conn, multi);
        EXPECT_NE(r.out.find("70x45x33 u16, " + std::to_string(o.components.size()) + " components (" +
                             std::to_string(conn) + "-connectivity" + (multi ? ", multilabel)" : ")")),
                  std::string::npos)
            << r.out;
        EXPECT_EQ(labels_of(labels), o.labels) << ext << " " << conn;
        expect_stats_csv(csv, o, multi);
      }
}

TEST(LabelCliVolume, MinAreaLargestKAndTheMiddleSlice) {
  TempDir dir;
  const auto v = random_volume(50, 40, 31, 0.2, 1, 12);
  const fs::path input = dir / "in.npy", labels = dir / "l.npy", png = dir / "mid.png";
  io::write_volume(input, v.view());
  const auto r = run_cli({"label", input.string(), "--min-area", "3", "--largest-k", "4", "--out-labels",
                          labels.string(), "--out-colored", png.string(), "--quiet", "--backend", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  const test::OracleLabeling o = test::oracle_label_volume<std::uint16_t>(v.view(), 26, false);
  std::vector<std::uint64_t> kept;  // oracle labels - 1, min-area then the 4 largest, in label order
  for (std::uint64_t i = 0; i < o.components.size(); ++i)
    if (o.components[i].voxels >= 3) kept.push_back(i);
  std::stable_sort(kept.begin(), kept.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return o.components[a].voxels > o.components[b].voxels; });
  kept.resize(std::min<std::size_t>(4, kept.size()));
  std::sort(kept.begin(), kept.end());
  std::vector<std::uint64_t> want(o.labels.size(), 0);
  for (std::size_t i = 0; i < o.labels.size(); ++i)
    for (std::size_t j = 0; j < kept.size(); ++j)
      if (o.labels[i] == kept[j] + 1) want[i] = j + 1;
  const auto got = labels_of(labels);
  EXPECT_EQ(got, want);
  // The PNG is the middle slice (z = 15): black exactly where the label is 0, one colour per label.
  const Image<Rgba8> mid = io::read_rgba8(png);
  ASSERT_EQ(mid.width(), 50);
  ASSERT_EQ(mid.height(), 40);
  std::vector<Rgba8> colour_of(kept.size() + 1);
  std::vector<bool> seen(kept.size() + 1, false);
  for (std::int64_t y = 0; y < 40; ++y)
    for (std::int64_t x = 0; x < 50; ++x) {
      const std::uint64_t l = got[static_cast<std::size_t>((15 * 40 + y) * 50 + x)];
      const Rgba8 c = mid(x, y);
      const bool black = c.r == 0 && c.g == 0 && c.b == 0;
      ASSERT_EQ(black, l == 0) << x << "," << y;
      if (l == 0) continue;
      if (!seen[l]) seen[l] = true, colour_of[l] = c;
      EXPECT_TRUE(c.r == colour_of[l].r && c.g == colour_of[l].g && c.b == colour_of[l].b);
    }
}

#ifdef WINNOW_HAVE_TIFF
// A TIFF of several pages is a volume; a TIFF of one page is an image (thresholded luminance).
TEST(LabelCliVolume, MultiPageTiffIsAVolumeOnePageAnImage) {
  TempDir dir;
  const auto v = random_volume(20, 16, 3, 0.5, 1, 13);
  io::write_volume(dir / "stack.tif", v.view());
  auto r = run_cli({"label", (dir / "stack.tif").string(), "--backend", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("20x16x3 u16, " + std::to_string(test::oracle_label_volume<std::uint16_t>(v.view(), 26, false)
                                                            .components.size()) +
                       " components (26-connectivity)"),
            std::string::npos)
      << r.out;
  Image<std::uint32_t> page(20, 16);
  for (std::int64_t y = 0; y < 16; ++y)
    for (std::int64_t x = 0; x < 20; ++x) page(x, y) = v(x, y, 0);
  io::write_tiff(dir / "page.tif", page.view());
  r = run_cli({"label", (dir / "page.tif").string(), "--threshold", "0", "--backend", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": 20x16, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(8-connectivity"), std::string::npos) << r.out;
}
#endif

TEST(LabelCliVolume, BundledVolumesMatchTheOracle) {
  TempDir dir;
  const fs::path mni = test::data_path("volumes/mni152_gm.nii.gz");
  const auto volume = std::get<Volume<std::uint8_t>>(io::read_volume(mni));
  const fs::path labels = dir / "l.npy";
  const auto r = run_cli({"label", mni.string(), "--multilabel", "--connectivity", "6", "--out-labels",
                          labels.string(), "--backend", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const test::OracleLabeling o = test::oracle_label_volume<std::uint8_t>(volume.view(), 6, true);
  EXPECT_NE(r.out.find(" " + std::to_string(o.components.size()) + " components (6-connectivity, multilabel)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(labels_of(labels), o.labels);
}

TEST(LabelCliVolume, BadInputsAreOneLineAndLeaveNothing) {
  TempDir dir;
  const auto v = random_volume(10, 10, 10, 0.5, 1, 14);
  const fs::path input = dir / "in.npy";
  io::write_volume(input, v.view());
  const std::string out = (dir / "l.npy").string(), csv = (dir / "s.csv").string();
  auto expect_bad = [&](std::vector<std::string> extra, const std::string& names) {
    std::vector<std::string> args = {"label", input.string(), "--out-labels", out, "--stats", csv};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_cli(args);
    test::expect_one_line_error(r, names);
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(csv));
  };
  expect_bad({"--connectivity", "8"}, "in.npy");
  expect_bad({"--connectivity", "4"}, "connectivity 4");
  expect_bad({"--threshold", "3"}, "in.npy");
  expect_bad({"--invert"}, "in.npy");
  expect_bad({"--out-colored", (dir / "c.jpg").string()}, "c.jpg");
  {
    const auto r = run_cli({"label", input.string(), "--out-labels", (dir / "l.png").string()});
    test::expect_one_line_error(r, "l.png");
    EXPECT_FALSE(fs::exists(dir / "l.png"));
  }
  {
    std::ofstream(dir / "bad.npy") << "\x93NUMPY garbage";
    const auto r = run_cli({"label", (dir / "bad.npy").string(), "--stats", csv});
    test::expect_one_line_error(r, "bad.npy");
    EXPECT_FALSE(fs::exists(csv));
  }
  {
    const auto r = run_cli({"label", test::data_path("coins.png").string(), "--multilabel"});
    test::expect_one_line_error(r, "coins.png");
  }
}

}  // namespace
}  // namespace winnow
