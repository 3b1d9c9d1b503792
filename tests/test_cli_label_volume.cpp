// `winnow label VOLUME` end to end: the labels written (.npy, .nii.gz, .nrrd, multi-page .tif) and
// the statistics CSV against the BFS oracle run here on the volume read back, min-area and
// largest-k, the middle-slice PNG, how a multi-page TIFF is told from an image, volumes thresholded
// (--threshold, --otsu, --invert: the mask computed here from the exact values, Otsu's split
// checked by brute force), the input's spatial header carried into NIfTI and NRRD labels (bytes
// compared), an empty result written with a warning, and the bad inputs (exit 2, one line naming
// the file or argument, no output left behind).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
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

std::string number_text(double x) {  // the shortest text that reads back to x
  char digits[32];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, x);
  return std::string(digits, end);
}

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
  const std::vector<const char*> formats = {".npy", ".nii.gz", ".nrrd", ".tif"};
#else
  const std::vector<const char*> formats = {".npy", ".nii.gz", ".nrrd"};
#endif
  for (const char* ext : formats)
    for (int conn : {6, 18, 26})
      for (bool multi : {false, true}) {
        const fs::path labels = dir / (std::string("labels") + ext), csv = dir / "stats.csv";
        std::vector<std::string> args = {
            "label",         input.string(), "--connectivity", std::to_string(conn), "--out-labels",
            labels.string(), "--stats",      csv.string(),     "--backend",          "cpu"};
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
  EXPECT_NE(r.out.find("20x16x3 u16, " +
                       std::to_string(test::oracle_label_volume<std::uint16_t>(v.view(), 26, false).components.size()) +
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
  const auto r = run_cli({"label", mni.string(), "--multilabel", "--connectivity", "6", "--out-labels", labels.string(),
                          "--backend", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const test::OracleLabeling o = test::oracle_label_volume<std::uint8_t>(volume.view(), 6, true);
  EXPECT_NE(r.out.find(" " + std::to_string(o.components.size()) + " components (6-connectivity, multilabel)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(labels_of(labels), o.labels);
}

namespace {

// The summary's "threshold T" (the number after it).
double threshold_in(const std::string& summary) {
  const std::size_t at = summary.find("threshold ");
  return at == std::string::npos ? std::nan("") : std::stod(summary.substr(at + 10));
}

// The oracle's labels of `v`'s voxels above `threshold` (exact values; inverted: finite and not
// above), as the 0/1 volume the oracle labels.
template <class T>
test::OracleLabeling oracle_of_threshold(const Volume<T>& v, double threshold, bool invert, int connectivity) {
  Volume<std::uint8_t> mask(v.nx(), v.ny(), v.nz());
  for (std::int64_t i = 0; i < v.size(); ++i) {
    const long double x = static_cast<long double>(v.data()[i]);
    const bool above = x > static_cast<long double>(threshold);
    mask.data()[i] = (invert ? std::isfinite(x) && !above : above) ? 1 : 0;
  }
  return test::oracle_label_volume<std::uint8_t>(mask.view(), connectivity, false);
}

template <class T>
Volume<T> smooth_random_volume(std::int64_t nx, std::int64_t ny, std::int64_t nz, double scale, double offset,
                               std::uint64_t seed) {
  // Blobs: a sum of random bumps, so that thresholds cut components of many sizes.
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> where(0, 1);
  std::vector<std::array<double, 4>> bumps(12);
  for (auto& b : bumps) b = {where(rng) * nx, where(rng) * ny, where(rng) * nz, 1 + 3 * where(rng)};
  Volume<T> v(nx, ny, nz);
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        double f = 0;
        for (const auto& b : bumps) {
          const double d2 = (x - b[0]) * (x - b[0]) + (y - b[1]) * (y - b[1]) + (z - b[2]) * (z - b[2]);
          f += std::exp(-d2 / (2 * b[3] * b[3]));
        }
        v(x, y, z) = static_cast<T>(offset + scale * (f + 0.3 * where(rng)));
      }
  return v;
}

}  // namespace

// --threshold, --otsu and --invert on volumes of three types: the labels are the oracle's on the
// mask of exact comparisons, the summary names the threshold used; Otsu's threshold splits the
// values at least as well as any other split (brute force over the distinct values).
TEST(LabelCliVolume, ThresholdsLabelTheVoxelsAbove) {
  TempDir dir;
  auto check = [&](const auto& v, const std::string& name) {
    using T = std::remove_cvref_t<decltype(*v.data())>;
    const fs::path input = dir / name, labels = dir / "labels.nii.gz";
    io::write_volume(input, v.view());
    const double mid = std::is_integral_v<T> ? 180.7 : 0.83;
    for (const bool invert : {false, true})
      for (const bool otsu : {false, true}) {
        std::vector<std::string> args = {"label",     input.string(), "--out-labels",   labels.string(),
                                         "--backend", "cpu",          "--connectivity", "18"};
        if (otsu) args.push_back("--otsu");
        else args.insert(args.end(), {"--threshold", number_text(mid)});
        if (invert) args.push_back("--invert");
        const auto r = run_cli(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const double t = threshold_in(r.out);
        if (!otsu) EXPECT_EQ(t, mid) << r.out;
        const std::string named = "threshold " + number_text(t) + (otsu ? " otsu" : "") + (invert ? ", inverted" : "");
        EXPECT_NE(r.out.find(named), std::string::npos) << r.out;
        const test::OracleLabeling o = oracle_of_threshold(v, t, invert, 18);
        EXPECT_EQ(labels_of(labels), o.labels) << name << (otsu ? " otsu" : "") << (invert ? " inverted" : "");
        EXPECT_NE(r.out.find(" " + std::to_string(o.components.size()) + " components"), std::string::npos) << r.out;
        if constexpr (std::is_integral_v<T>) {
          if (otsu && !invert) {  // the split at t is the best of all splits of the values (to rounding)
            std::map<double, std::uint64_t> values;
            for (const T x : v.voxels()) ++values[static_cast<double>(x)];
            auto variance = [&](double split) {
              long double w0 = 0, w1 = 0, s0 = 0, s1 = 0;
              for (const auto& [value, count] : values)
                (value <= split ? w0 : w1) += count, (value <= split ? s0 : s1) += value * count;
              const long double d = w0 > 0 && w1 > 0 ? s0 / w0 - s1 / w1 : 0;
              return w0 * w1 * d * d;
            };
            long double best = 0;
            for (const auto& [value, count] : values) best = std::max(best, variance(value));
            EXPECT_GE(variance(t), best * (1 - 1e-6L)) << name << " t = " << t;
          }
        }  // floats: Otsu over 256 bins, checked against scikit-image in the pytest suite
      }
  };
  check(smooth_random_volume<std::uint16_t>(37, 29, 21, 120, 40, 31), "u16.nii.gz");
  check(smooth_random_volume<std::int16_t>(33, 30, 19, 150, -20, 32), "i16.npy");
  auto f32 = smooth_random_volume<float>(31, 27, 23, 0.7, 0.1, 33);
  f32(4, 5, 6) = std::numeric_limits<float>::quiet_NaN();  // never foreground, inverted or not
  check(f32, "f32.nrrd");
}

namespace {
// A NIfTI-1 file of 12 x 10 x 8 u8 voxels `voxels` with an oblique qform and sform, qfac -1, a
// negative pixdim and units mm + s, written byte by byte (nifti1.h offsets).
std::string oblique_nifti(const std::vector<std::uint8_t>& voxels) {
  std::string f(352, '\0');
  auto put = [&](std::size_t at, auto value) { std::memcpy(f.data() + at, &value, sizeof value); };
  put(0, std::int32_t{348});
  const std::int16_t dim[8] = {3, 12, 10, 8, 1, 1, 1, 1};
  std::memcpy(f.data() + 40, dim, sizeof dim);
  put(70, std::int16_t{2});
  put(72, std::int16_t{8});
  const float pixdim[8] = {-1, 1.5f, -2, 2.5f, 1, 1, 1, 1};
  std::memcpy(f.data() + 76, pixdim, sizeof pixdim);
  put(108, 352.0f);
  f[123] = 10;
  put(252, std::int16_t{1});
  put(254, std::int16_t{2});
  const float q[6] = {0.1f, 0.2f, -0.3f, -80.5f, 30.25f, 12};
  std::memcpy(f.data() + 256, q, sizeof q);
  const float srow[12] = {-1.4f, 0.2f, 0.1f, 90, 0.3f, 1.9f, -0.2f, -126, 0, 0.1f, 2.4f, -72};
  std::memcpy(f.data() + 280, srow, sizeof srow);
  std::memcpy(f.data() + 344, "n+1\0", 4);
  return f + std::string(voxels.begin(), voxels.end());
}
std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
}  // namespace

// Labels overlay their volume: a NIfTI's qform, sform, pixdim and units are written back bit for
// bit (.nii and .nii.gz); an NRRD's space fields go to NRRD labels as they were, and to NIfTI
// labels as the equivalent sform.
TEST(LabelCliVolume, LabelsCarryTheInputsOrientation) {
  TempDir dir;
  std::mt19937 rng(41);
  std::vector<std::uint8_t> voxels(12 * 10 * 8);
  for (auto& x : voxels) x = static_cast<std::uint8_t>(rng() % 3 == 0 ? 0 : 1 + rng() % 200);
  const std::string nifti = oblique_nifti(voxels);
  std::ofstream(dir / "t1.nii", std::ios::binary) << nifti;
  auto spatial = [](const std::string& file) {
    return file.substr(76, 16) + file.substr(123, 1) + file.substr(252, 76);
  };
  for (const char* out : {"labels.nii", "labels.nii.gz"}) {
    const auto r = run_cli({"label", (dir / "t1.nii").string(), "--threshold", "50", "--out-labels",
                            (dir / out).string(), "--backend", "cpu"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    io::SpatialHeader header;
    io::read_volume(dir / out, &header);
    io::VolumeWriteOptions plain;  // the .nii.gz's header bytes, through a plain copy of its header
    plain.like = header;
    io::write_volume(dir / "copy.nii", io::read_volume(dir / out), plain);
    EXPECT_EQ(spatial(bytes_of(dir / "copy.nii")), spatial(nifti)) << out;
  }
  EXPECT_EQ(spatial(bytes_of(dir / "labels.nii")), spatial(nifti));

  // NRRD in LPS: NRRD labels keep its fields; NIfTI labels get the sform of its RAS affine.
  std::string nrrd =
      "NRRD0004\ntype: uint8\ndimension: 3\nspace: left-posterior-superior\nsizes: 12 10 8\n"
      "space directions: (0.9,0.1,0) (-0.1,0.9,0) (0,0,2.5)\nendian: little\nencoding: raw\n"
      "space origin: (-100.5,20,7.25)\n\n";
  nrrd += std::string(voxels.begin(), voxels.end());
  std::ofstream(dir / "ct.nrrd", std::ios::binary) << nrrd;
  io::SpatialHeader in;
  io::read_volume(dir / "ct.nrrd", &in);
  for (const char* out : {"ct-labels.nrrd", "ct-labels.nii.gz"}) {
    const auto r =
        run_cli({"label", (dir / "ct.nrrd").string(), "--out-labels", (dir / out).string(), "--backend", "cpu"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    io::SpatialHeader header;
    io::read_volume(dir / out, &header);
    const auto want = in.affine(), got = header.affine();
    for (int i = 0; i < 16; ++i) EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << out << " " << i;
    if (std::string(out).ends_with(".nrrd")) {
      EXPECT_EQ(header.nrrd.space, "left-posterior-superior");
      EXPECT_EQ(header.nrrd.directions, in.nrrd.directions);
      EXPECT_EQ(header.nrrd.origin, in.nrrd.origin);
    } else {
      EXPECT_EQ(header.nifti.sform_code, 1);
    }
  }
}

TEST(LabelCliVolume, NoComponentIsWrittenWithAWarning) {
  TempDir dir;
  const auto v = random_volume(12, 11, 10, 0.4, 3, 51);  // u16, values 1001..1003 and 0
  io::write_volume(dir / "in.nii.gz", v.view());
  const fs::path labels = dir / "l.nii.gz";
  for (const bool quiet : {false, true}) {
    std::vector<std::string> args = {
        "label", (dir / "in.nii.gz").string(), "--threshold", "5000", "--out-labels", labels.string()};
    if (quiet) args.push_back("--quiet");
    const auto r = run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "winnow: warning: no component: no voxel of " + (dir / "in.nii.gz").string() +
                         " is above threshold 5000 (values 0..1003)\n");
    if (quiet) EXPECT_TRUE(r.out.empty());
    else EXPECT_NE(r.out.find("0 components: none found"), std::string::npos) << r.out;
    const auto l = labels_of(labels);
    EXPECT_TRUE(std::all_of(l.begin(), l.end(), [](std::uint64_t x) { return x == 0; }));
    fs::remove(labels);
  }
  // Components there, all removed by --min-area.
  const auto r = run_cli({"label", (dir / "in.nii.gz").string(), "--min-area", "100000", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: no component: every component of"), std::string::npos) << r.err;
  // Off a terminal nothing else is printed: no progress bars.
  const auto ok = run_cli({"label", (dir / "in.nii.gz").string(), "--out-labels", labels.string()});
  ASSERT_EQ(ok.exit_code, 0);
  EXPECT_TRUE(ok.err.empty()) << ok.err;
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
  expect_bad({"--threshold", "3", "--multilabel"}, "in.npy");
  expect_bad({"--otsu", "--multilabel"}, "in.npy");
  expect_bad({"--invert"}, "in.npy");  // inverted what: a volume's default foreground has no threshold
  expect_bad({"--threshold", "abc"}, "threshold 'abc'");
  expect_bad({"--threshold", "nan"}, "in.npy");
  expect_bad({"--min-area", "-1"}, "--min-area");
  expect_bad({"--largest-k", "-3"}, "--largest-k");
  expect_bad({"--out-colored", input.string()}, "in.npy");  // would overwrite the input
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

// `winnow label VOLUME.zarr ...` is handed unchanged to the Python package's chunked labeling
// (WINNOW_PYTHON names the interpreter; here a script that records its arguments); other inputs,
// and a zarr named only as an output, stay with the C++ labeling; an interpreter that cannot be
// started is one line and exit 2.
TEST(CliLabelVolume, ZarrInputsGoToThePythonPackage) {
  TempDir dir;
  const fs::path recorder = dir / "python", record = dir / "args.txt";
  {
    std::ofstream script(recorder);
    script << "#!/bin/sh\necho \"$*\" > '" << record.string() << "'\n";
  }
  fs::permissions(recorder, fs::perms::owner_all);
  ASSERT_EQ(setenv("WINNOW_PYTHON", recorder.c_str(), 1), 0);
  const std::string input = (dir / "big.zarr").string() + "/";
  const auto r = run_cli({"label", input, "--out-labels", (dir / "labels.zarr").string(), "--connectivity", "6"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ifstream got(record);
  std::string line;
  std::getline(got, line);
  EXPECT_EQ(line, "-m winnow label " + input + " --out-labels " + (dir / "labels.zarr").string() + " --connectivity 6");

  fs::remove(record);
  const auto kept = run_cli({"label", (dir / "missing.nii.gz").string(), "--out-labels", (dir / "l.zarr").string()});
  EXPECT_FALSE(fs::exists(record)) << "a NIfTI input went to Python";
  test::expect_one_line_error(kept, "missing.nii.gz");

  ASSERT_EQ(setenv("WINNOW_PYTHON", (dir / "no-such-python").c_str(), 1), 0);
  const auto unstartable = run_cli({"label", input, "--out-labels", (dir / "labels.zarr").string()});
  test::expect_one_line_error(unstartable, "Python package");
  unsetenv("WINNOW_PYTHON");
}

}  // namespace
}  // namespace winnow
