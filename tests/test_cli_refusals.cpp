// What every command refuses, end to end: negative counts (one line naming the option), an
// output that is the input (by its own name, through a symbolic link, through another path to it,
// or two outputs naming one file: refused before anything is written, the input unchanged), and
// damaged volume files of a known name (their real problem named, never "unsupported image
// format"); all with exit status 2, one line on stderr and no output file left.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "winnow/io.hpp"
#include "winnow/volume_io.hpp"

namespace winnow {
namespace {

namespace fs = std::filesystem;
using test::expect_one_line_error;
using test::run_cli;
using test::TempDir;

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A random image and a random volume in `dir`.
void write_inputs(const TempDir& dir) {
  std::mt19937 rng(3);
  Image<Rgba8> image(48, 32);
  for (auto& p : image.pixels())
    p = Rgba8{static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng()),
              255};
  io::write_png(dir / "in.png", image.view());
  Volume<std::uint8_t> volume(10, 9, 8);
  for (auto& v : volume.voxels()) v = static_cast<std::uint8_t>(rng());
  io::write_volume(dir / "in.nii.gz", volume.view());
}

TEST(CliRefusals, NegativeCountsNameTheOption) {
  TempDir dir;
  write_inputs(dir);
  const std::string png = (dir / "in.png").string(), nii = (dir / "in.nii.gz").string();
  const std::string out = (dir / "out.png").string();
  struct Case {
    std::vector<std::string> args;
    std::string option;
  };
  const Case cases[] = {
      {{"label", png, "--min-area", "-1", "--out-colored", out}, "--min-area"},
      {{"label", png, "--largest-k", "-2", "--out-colored", out}, "--largest-k"},
      {{"label", nii, "--min-area", "-5", "--out-colored", out}, "--min-area"},
      {{"label", nii, "--largest-k=-1", "--out-colored", out}, "--largest-k"},
      {{"label", nii, "--min-area", "1.5", "--out-colored", out}, "--min-area"},
      {{"scramble", png, "--tile", "-8", "--out", out}, "--tile"},
      {{"scramble", png, "--grid", "2x2", "--seed", "-1", "--out", out}, "--seed"},
      {{"unscramble", png, "--tile", "-16", "--out", out}, "--tile"},
  };
  for (const Case& c : cases) {
    const auto r = run_cli(c.args);
    expect_one_line_error(r, c.option);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_FALSE(fs::exists(out)) << c.option;
  }
}

TEST(CliRefusals, AnOutputThatIsAnInputIsRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  write_inputs(dir);
  fs::create_directory(dir / "sub");
  fs::create_symlink(dir / "in.png", dir / "link.png");
  fs::create_symlink(dir / "in.nii.gz", dir / "link.nii.gz");
  const std::string png = (dir / "in.png").string(), nii = (dir / "in.nii.gz").string();
  const std::string png_before = bytes_of(png), nii_before = bytes_of(nii);
  // The same files by other names: a link, and a path through a directory and back.
  const std::vector<std::string> png_names = {png, (dir / "link.png").string(),
                                              (dir / "sub" / ".." / "in.png").string()};
  const std::vector<std::string> nii_names = {nii, (dir / "link.nii.gz").string(),
                                              (dir / "sub" / ".." / "in.nii.gz").string()};
  for (const std::string& same : png_names) {
    expect_one_line_error(run_cli({"compact", png, "--out-packed", same}), same);
    expect_one_line_error(run_cli({"label", png, "--out-colored", same}), same);
    expect_one_line_error(run_cli({"scramble", png, "--grid", "2x2", "--out", same}), same);
    expect_one_line_error(run_cli({"unscramble", png, "--grid", "2x2", "--out", same}), same);
  }
  for (const std::string& same : nii_names) {
    expect_one_line_error(run_cli({"label", nii, "--out-labels", same}), same);
    expect_one_line_error(
        run_cli({"isosurface", nii, "--level", "100", "--out", (dir / "m.ply").string(), "--preview", same}), same);
  }
  // A mesh or point file named as the volume (an odd name, but the same file).
  expect_one_line_error(run_cli({"voxels", nii, "--level", "100", "--out", nii}), nii);
  fs::copy_file(dir / "in.nii.gz", dir / "vol.ply");
  expect_one_line_error(
      run_cli({"isosurface", (dir / "vol.ply").string(), "--level", "100", "--out", (dir / "vol.ply").string()}),
      "vol.ply");
  // Two outputs naming one file.
  expect_one_line_error(run_cli({"label", nii, "--out-colored", (dir / "a.png").string(), "--stats",
                                 (dir / "sub" / ".." / "a.png").string()}),
                        "a.png");
  EXPECT_EQ(bytes_of(png), png_before);
  EXPECT_EQ(bytes_of(nii), nii_before);
  for (const auto& name : dir.files())
    EXPECT_TRUE(name == "in.png" || name == "in.nii.gz" || name == "link.png" || name == "link.nii.gz" ||
                name == "sub" || name == "vol.ply")
        << name;
}

TEST(CliRefusals, DamagedVolumesNameTheirProblem) {
  TempDir dir;
  write_inputs(dir);
  const std::string whole = bytes_of(dir / "in.nii.gz");
  const std::string junk = "this is not a volume at all, only text: " + std::string(500, '#');
  struct Damaged {
    std::string name, bytes, problem;
  };
  const Damaged files[] = {
      {"cut.nii.gz", whole.substr(0, whole.size() / 2), "gzip stream truncated"},
      {"junk.nii", junk, "not a NIfTI-1 file: bad header"},
      {"junk.nii.gz", junk, "not a NIfTI-1 file: bad header"},
      {"junk.nrrd", junk, "not a NRRD file: bad header"},
      {"junk.npy", junk, "not a .npy file: bad header"},
  };
  for (const Damaged& d : files) {
    std::ofstream(dir / d.name, std::ios::binary) << d.bytes;
    const std::string input = (dir / d.name).string(), out = (dir / "out.csv").string();
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"label", input, "--stats", out},
             {"voxels", input, "--level", "3", "--out", out},
             {"isosurface", input, "--level", "3", "--out", (dir / "out.ply").string()}}) {
      const auto r = run_cli(args);
      expect_one_line_error(r, input);
      EXPECT_NE(r.err.find(d.problem), std::string::npos) << args[0] << ": " << r.err;
      EXPECT_EQ(r.err.find("unsupported image format"), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(out) || fs::exists(dir / "out.ply"));
    }
  }
}

}  // namespace
}  // namespace winnow
