// Voxel compaction (compact_voxels) and `winnow voxels`, against a triple loop of this file: every
// voxel type, random volumes of odd sizes, contiguous and strided, each selection mode with levels
// on, between and beyond the voxel values, NaN among floats; on the CPU and on CUDA (skipped
// without a device). The oracle compares the voxel and the level as long double, which holds
// every value of every voxel type and every double exactly, so it needs none of the library's
// conversion of the level into the voxel's type. The CLI's CSV rows and PLY header and payload are
// checked against the same loop over a volume this test writes; bad arguments give one line,
// exit 2 and no file.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "common/cli_runner.hpp"
#include "common/gpu_guard.hpp"
#include "common/large_tests.hpp"
#include "winnow/error.hpp"
#include "winnow/volume.hpp"
#include "winnow/volume_io.hpp"
#include "winnow/voxels.hpp"

using namespace winnow;
using winnow::test::run_cli;
using winnow::test::TempDir;
namespace fs = std::filesystem;

namespace {

static_assert(std::numeric_limits<long double>::digits >= 64, "the oracle needs a long double that holds every int64");

template <class F>
void for_each_voxel_type(F&& f) {
  f(std::uint8_t{}), f(std::int8_t{}), f(std::uint16_t{}), f(std::int16_t{}), f(std::uint32_t{});
  f(std::int32_t{}), f(std::uint64_t{}), f(std::int64_t{}), f(float{}), f(double{});
}

// Names and PLY types from the PLY format's description (Turk, 1994), written out here.
template <class T>
struct TypeText;
#define WINNOW_TYPE_TEXT(T, short_name, ply_name)   \
  template <>                                       \
  struct TypeText<T> {                              \
    static constexpr const char* name = short_name; \
    static constexpr const char* ply = ply_name;    \
  };
WINNOW_TYPE_TEXT(std::uint8_t, "u8", "uchar")
WINNOW_TYPE_TEXT(std::int8_t, "i8", "char")
WINNOW_TYPE_TEXT(std::uint16_t, "u16", "ushort")
WINNOW_TYPE_TEXT(std::int16_t, "i16", "short")
WINNOW_TYPE_TEXT(std::uint32_t, "u32", "uint")
WINNOW_TYPE_TEXT(std::int32_t, "i32", "int")
WINNOW_TYPE_TEXT(std::uint64_t, "u64", "double")
WINNOW_TYPE_TEXT(std::int64_t, "i64", "double")
WINNOW_TYPE_TEXT(float, "f32", "float")
WINNOW_TYPE_TEXT(double, "f64", "double")
#undef WINNOW_TYPE_TEXT

// Random voxels: every bit pattern for integers, with zeros among them; for floats values in
// -100..100 with NaN, both zeros, infinities and neighbours of other voxels mixed in.
template <class T>
std::vector<T> random_voxels(std::size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rng();
    if constexpr (std::is_floating_point_v<T>) {
      switch (r % 16) {
        case 0: v[i] = std::numeric_limits<T>::quiet_NaN(); break;
        case 1: v[i] = T(-0.0); break;
        case 2: v[i] = T(0); break;
        case 3: v[i] = (r >> 8) % 2 ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity(); break;
        case 4: v[i] = i > 0 ? std::nextafter(v[i - 1], T(1000)) : T(1); break;
        default: v[i] = static_cast<T>(std::uniform_real_distribution<double>(-100, 100)(rng));
      }
    } else {
      if (r % 5 == 0) {
        v[i] = T{0};
      } else {
        const std::uint64_t bits = rng();
        std::memcpy(&v[i], &bits, sizeof(T));
      }
    }
  }
  return v;
}

template <class T>
bool oracle_keeps(T v, const VoxelSelection& s) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(v)) return false;
  const auto value = static_cast<long double>(v), level = static_cast<long double>(s.level);
  switch (s.mode) {
    case VoxelMode::above: return value > level;
    case VoxelMode::below: return value < level;
    case VoxelMode::nonzero: return value != 0;
  }
  return false;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Expects `got` to be exactly the voxels of `volume` the oracle keeps, in raster order.
template <class T>
void expect_voxels(const VolumeView<const T>& volume, const VoxelSelection& s, const Voxels<T>& got) {
  ASSERT_EQ(got.positions.size(), got.values.size());
  std::size_t k = 0;
  for (std::int64_t z = 0; z < volume.nz; ++z)
    for (std::int64_t y = 0; y < volume.ny; ++y)
      for (std::int64_t x = 0; x < volume.nx; ++x) {
        const T v = volume(x, y, z);
        if (!oracle_keeps(v, s)) continue;
        ASSERT_LT(k, got.values.size()) << "missing voxel (" << x << "," << y << "," << z << ")";
        const VoxelPosition want{x, y, z};
        ASSERT_EQ(got.positions[k], want)
            << "kept voxel " << k << " is (" << got.positions[k].x << "," << got.positions[k].y << ","
            << got.positions[k].z << "), expected (" << x << "," << y << "," << z << ")";
        ASSERT_TRUE(same_bits(got.values[k], v)) << "value of (" << x << "," << y << "," << z << ")";
        ++k;
      }
  EXPECT_EQ(got.values.size(), k) << "more voxels kept than the oracle keeps";
}

// Levels that test the conversion into the voxel's type: on voxel values, between them, half
// way between adjacent floats, at and beyond the type's range, infinite.
template <class T>
std::vector<double> levels_for(const std::vector<T>& voxels, std::mt19937_64& rng) {
  std::vector<double> levels{0.0,
                             0.5,
                             -0.5,
                             1e300,
                             -1e300,
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             static_cast<double>(std::numeric_limits<T>::max()),
                             static_cast<double>(std::numeric_limits<T>::lowest())};
  for (int i = 0; i < 6; ++i) {
    T v = voxels[rng() % voxels.size()];
    if constexpr (std::is_floating_point_v<T>)
      if (!std::isfinite(v)) v = T(3.25);
    const auto d = static_cast<double>(v);
    levels.push_back(d);
    levels.push_back(d + 0.5);
    levels.push_back(d - 0.25);
    if constexpr (std::is_same_v<T, float>) {  // half way to the neighbouring floats: doubles no float equals
      levels.push_back((d + static_cast<double>(std::nextafter(v, 1000.0f))) / 2);
      levels.push_back((d + static_cast<double>(std::nextafter(v, -1000.0f))) / 2);
    }
  }
  return levels;
}

class VoxelsBackend : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::cuda) WINNOW_REQUIRE_CUDA_OR_SKIP();
  }
  // Every mode and level of levels_for on `volume`; `voxels` are the values it was filled from.
  template <class T>
  void check_all_selections(const VolumeView<const T>& volume, const std::vector<T>& voxels, std::mt19937_64& rng) {
    VoxelOptions options;
    options.backend = GetParam();
    std::vector<VoxelSelection> selections{{0.0, VoxelMode::nonzero}};
    for (const double level : levels_for(voxels, rng))
      for (const VoxelMode mode : {VoxelMode::above, VoxelMode::below}) selections.push_back({level, mode});
    for (const VoxelSelection& s : selections) {
      SCOPED_TRACE(std::string(s.mode == VoxelMode::above   ? "above "
                               : s.mode == VoxelMode::below ? "below "
                                                            : "nonzero ") +
                   std::to_string(s.level));
      const Voxels<T> got = compact_voxels(volume, s, options);
      EXPECT_EQ(got.backend, GetParam());
      expect_voxels(volume, s, got);
    }
  }
};

constexpr std::int64_t kShapes[][3] = {{1, 1, 1},  {1, 37, 1},  {1, 1, 29}, {33, 17, 5},
                                       {7, 9, 11}, {130, 3, 2}, {64, 1, 3}};

TEST_P(VoxelsBackend, EveryTypeShapeAndSelection) {
  std::mt19937_64 rng(20261123);
  for_each_voxel_type([&](auto type) {
    using T = decltype(type);
    for (const auto& shape : kShapes) {
      SCOPED_TRACE(std::string(TypeText<T>::name) + " " + std::to_string(shape[0]) + "x" + std::to_string(shape[1]) +
                   "x" + std::to_string(shape[2]));
      const auto n = static_cast<std::size_t>(shape[0] * shape[1] * shape[2]);
      const std::vector<T> voxels = random_voxels<T>(n, rng);
      check_all_selections(VolumeView<const T>(voxels.data(), shape[0], shape[1], shape[2]), voxels, rng);
    }
  });
}

// Padding between rows and between slices holds random voxels too: read, they would show.
TEST_P(VoxelsBackend, StridedViews) {
  std::mt19937_64 rng(7);
  for_each_voxel_type([&](auto type) {
    using T = decltype(type);
    for (const auto& shape : kShapes) {
      SCOPED_TRACE(std::string(TypeText<T>::name) + " strided " + std::to_string(shape[0]) + "x" +
                   std::to_string(shape[1]) + "x" + std::to_string(shape[2]));
      const std::int64_t row_stride = shape[0] + 3, slice_stride = row_stride * shape[1] + 5;
      const std::vector<T> storage = random_voxels<T>(static_cast<std::size_t>(slice_stride * shape[2]), rng);
      const VolumeView<const T> view(storage.data(), shape[0], shape[1], shape[2], row_stride, slice_stride);
      ASSERT_FALSE(view.contiguous());
      check_all_selections(view, storage, rng);
    }
  });
}

// Beyond 2^24 voxels the index buffer starts at a quarter of the volume; keeping more runs the
// compaction again into a buffer of the exact size.
TEST_P(VoxelsBackend, MoreKeptThanTheFirstIndexBuffer) {
  std::mt19937_64 rng(11);
  const std::int64_t nx = 257, ny = 256, nz = 256;  // 2^24 + 2^16 voxels
  std::vector<std::uint8_t> voxels(static_cast<std::size_t>(nx * ny * nz));
  for (auto& v : voxels) v = static_cast<std::uint8_t>(rng());
  const VolumeView<const std::uint8_t> view(voxels.data(), nx, ny, nz);
  VoxelOptions options;
  options.backend = GetParam();
  const VoxelSelection s{170.0, VoxelMode::above};  // about a third kept
  const Voxels<std::uint8_t> got = compact_voxels(view, s, options);
  EXPECT_GT(got.values.size(), voxels.size() / 4);
  expect_voxels(view, s, got);
}

// 2^32 voxels and more take 64-bit indices. Opt-in (WINNOW_LARGE_TESTS=1): a 4 GiB volume, its
// index buffer (a quarter of the voxels, 8 bytes each) and on CUDA the same on the device, ~15 GB.
TEST_P(VoxelsBackend, Beyond2Pow32Voxels) {
  WINNOW_REQUIRE_LARGE_TESTS_OR_SKIP("needs ~15 GB of memory");
  const std::int64_t nx = 4096, ny = 1024, nz = 1025;  // 2^32 + 2^22 voxels
  std::vector<std::uint8_t> voxels(static_cast<std::size_t>(nx * ny * nz));
  for (std::size_t i = 0; i < voxels.size(); ++i) {  // a cheap hash of the index: no period a bug could hide in
    std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    voxels[i] = static_cast<std::uint8_t>(h >> 56);
  }
  const VolumeView<const std::uint8_t> view(voxels.data(), nx, ny, nz);
  VoxelOptions options;
  options.backend = GetParam();
  const VoxelSelection s{252.5, VoxelMode::above};  // about 1 % kept, the last ones beyond index 2^32
  const Voxels<std::uint8_t> got = compact_voxels(view, s, options);
  ASSERT_FALSE(got.positions.empty());
  EXPECT_EQ(got.positions.back().z, nz - 1);
  expect_voxels(view, s, got);
}

INSTANTIATE_TEST_SUITE_P(Backends, VoxelsBackend, ::testing::Values(Backend::cpu, Backend::cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(Voxels, NanLevelIsAnError) {
  const std::vector<float> voxels{1.0f, 2.0f};
  const VolumeView<const float> view(voxels.data(), 2, 1, 1);
  const VoxelOptions cpu{.backend = Backend::cpu};
  const VoxelSelection above_nan{std::nan(""), VoxelMode::above}, nonzero_nan{std::nan(""), VoxelMode::nonzero};
  EXPECT_THROW(compact_voxels(view, above_nan, cpu), InputError);
  // The level means nothing to nonzero: a NaN there is not looked at.
  EXPECT_EQ(compact_voxels(view, nonzero_nan, cpu).values.size(), 2u);
}

TEST(Voxels, EmptyVolumeKeepsNothing) {
  const std::vector<std::int32_t> voxels{5};
  const Voxels<std::int32_t> got = compact_voxels(VolumeView<const std::int32_t>(voxels.data(), 1, 0, 1),
                                                  {0.0, VoxelMode::above}, {.backend = Backend::cpu});
  EXPECT_TRUE(got.positions.empty());
  EXPECT_TRUE(got.values.empty());
}

TEST(Voxels, NonConstViewOfAVolume) {
  Volume<std::int16_t> volume(3, 2, 2, std::int16_t{-4});
  volume(2, 1, 1) = 9;
  volume(0, 1, 0) = -3;
  const Voxels<std::int16_t> got = compact_voxels(volume.view(), {-3.5, VoxelMode::above}, {.backend = Backend::cpu});
  ASSERT_EQ(got.values.size(), 2u);
  EXPECT_EQ(got.positions[0], (VoxelPosition{0, 1, 0}));
  EXPECT_EQ(got.values[0], -3);
  EXPECT_EQ(got.positions[1], (VoxelPosition{2, 1, 1}));
  EXPECT_EQ(got.values[1], 9);
}

// ---- the CLI -------------------------------------------------------------------------------------

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::uint64_t summary_kept(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("kept ([0-9]+) of ([0-9]+) voxels"))) return ~std::uint64_t{0};
  return std::stoull(m[1].str());
}

// What the oracle keeps of `volume`, as ((x, y, z), value), raster order.
template <class T>
std::vector<std::pair<VoxelPosition, T>> oracle_voxels(const Volume<T>& volume, const VoxelSelection& s) {
  std::vector<std::pair<VoxelPosition, T>> kept;
  for (std::int64_t z = 0; z < volume.nz(); ++z)
    for (std::int64_t y = 0; y < volume.ny(); ++y)
      for (std::int64_t x = 0; x < volume.nx(); ++x)
        if (oracle_keeps(volume(x, y, z), s)) kept.push_back({{x, y, z}, volume(x, y, z)});
  return kept;
}

template <class T>
T parse_number(const std::string& text) {
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  EXPECT_TRUE(ec == std::errc() && end == text.data() + text.size()) << "'" << text << "' is not a number";
  return v;
}

template <class T>
void expect_csv(const std::string& csv, const std::vector<std::pair<VoxelPosition, T>>& want) {
  const auto lines = lines_of(csv);
  ASSERT_EQ(lines.size(), want.size() + 1);
  EXPECT_EQ(lines[0], "x,y,z,value");
  for (std::size_t i = 0; i < want.size(); ++i) {
    std::vector<std::string> fields;
    std::stringstream row(lines[i + 1]);
    for (std::string f; std::getline(row, f, ',');) fields.push_back(f);
    ASSERT_EQ(fields.size(), 4u) << lines[i + 1];
    const VoxelPosition p{parse_number<std::int64_t>(fields[0]), parse_number<std::int64_t>(fields[1]),
                          parse_number<std::int64_t>(fields[2])};
    ASSERT_EQ(p, want[i].first) << "row " << i + 1 << ": " << lines[i + 1];
    ASSERT_TRUE(same_bits(parse_number<T>(fields[3]), want[i].second)) << "row " << i + 1 << ": " << lines[i + 1];
  }
}

template <class V>
void append_le(std::string& bytes, V v) {
  unsigned char b[sizeof(V)];
  std::memcpy(b, &v, sizeof v);
  if (std::endian::native == std::endian::big) std::reverse(b, b + sizeof b);
  bytes.append(reinterpret_cast<const char*>(b), sizeof b);
}

// The PLY this test expects: its header lines (the comment line aside) and the vertex bytes.
template <class T>
void expect_ply(const std::string& ply, const std::vector<std::pair<VoxelPosition, T>>& want, double sx, double sy,
                double sz) {
  const std::string end = "end_header\n";
  const std::size_t body = ply.find(end);
  ASSERT_NE(body, std::string::npos);
  std::vector<std::string> header;
  for (const auto& line : lines_of(ply.substr(0, body + end.size())))
    if (line.rfind("comment ", 0) != 0) header.push_back(line);
  const std::vector<std::string> expected_header{"ply",
                                                 "format binary_little_endian 1.0",
                                                 "element vertex " + std::to_string(want.size()),
                                                 "property float x",
                                                 "property float y",
                                                 "property float z",
                                                 std::string("property ") + TypeText<T>::ply + " value",
                                                 "end_header"};
  EXPECT_EQ(header, expected_header);
  std::string payload;
  for (const auto& [p, v] : want) {
    append_le(payload, static_cast<float>(static_cast<double>(p.x) * sx));
    append_le(payload, static_cast<float>(static_cast<double>(p.y) * sy));
    append_le(payload, static_cast<float>(static_cast<double>(p.z) * sz));
    if constexpr (std::is_integral_v<T> && sizeof(T) == 8)
      append_le(payload, static_cast<double>(v));  // PLY has no 64-bit integers
    else append_le(payload, v);
  }
  const std::string got = ply.substr(body + end.size());
  ASSERT_EQ(got.size(), payload.size());
  EXPECT_TRUE(got == payload) << "PLY vertex bytes differ";
}

// Every voxel type through a NIfTI file with spacing: CSV rows and PLY bytes, above and below a
// level and non-zero, against the oracle over the volume written.
TEST(CliVoxels, CsvAndPlyOfEveryType) {
  TempDir dir;
  std::mt19937_64 rng(42);
  for_each_voxel_type([&](auto type) {
    using T = decltype(type);
    SCOPED_TRACE(TypeText<T>::name);
    Volume<T> volume(13, 7, 5);
    const auto voxels = random_voxels<T>(static_cast<std::size_t>(volume.size()), rng);
    std::copy(voxels.begin(), voxels.end(), volume.data());
    volume.set_spacing(0.5, 2.0, 1.25);
    const fs::path input = dir / (std::string("v_") + TypeText<T>::name + ".nii");
    io::write_volume(input, volume.view());

    T pick = voxels[voxels.size() / 2];
    if constexpr (std::is_floating_point_v<T>)
      if (!std::isfinite(pick)) pick = T(12.5);
    std::string level_text;
    if constexpr (std::is_floating_point_v<T>) {
      char buf[64];
      const auto [e, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(pick));
      level_text.assign(buf, e);
    } else {
      level_text = std::to_string(pick);  // a voxel value: the boundary itself
    }
    const double level = std::strtod(level_text.c_str(), nullptr);
    struct Run {
      std::vector<std::string> flags;
      VoxelSelection selection;
    };
    const Run runs[] = {{{"--level", level_text}, {level, VoxelMode::above}},
                        {{"--level", level_text, "--below"}, {level, VoxelMode::below}},
                        {{"--nonzero"}, {0.0, VoxelMode::nonzero}}};
    for (const Run& run : runs) {
      SCOPED_TRACE(run.flags.back());
      const auto want = oracle_voxels(volume, run.selection);
      for (const char* name : {"out.csv", "out.ply"}) {
        std::vector<std::string> args{"voxels", input.string(), "--out", (dir / name).string(), "--backend", "cpu"};
        args.insert(args.end(), run.flags.begin(), run.flags.end());
        const auto r = run_cli(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(summary_kept(r.out), want.size()) << r.out;
        if (std::string(name) == "out.csv") expect_csv(read_file(dir / name), want);
        else expect_ply(read_file(dir / name), want, 0.5, 2.0, 1.25);
      }
    }
  });
}

// A headerless file: --dims and --dtype.
TEST(CliVoxels, RawVolume) {
  TempDir dir;
  std::mt19937_64 rng(5);
  Volume<std::int32_t> volume(6, 4, 3);
  const auto voxels = random_voxels<std::int32_t>(static_cast<std::size_t>(volume.size()), rng);
  std::string bytes;
  for (std::size_t i = 0; i < voxels.size(); ++i) {
    volume.data()[i] = voxels[i];
    append_le(bytes, voxels[i]);
  }
  std::ofstream(dir / "v.raw", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const auto r = run_cli({"voxels", (dir / "v.raw").string(), "--dims", "6,4,3", "--dtype", "i32", "--level", "-1000.5",
                          "--out", (dir / "out.csv").string(), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");  // --quiet
  expect_csv(read_file(dir / "out.csv"), oracle_voxels(volume, {-1000.5, VoxelMode::above}));
}

// PLY positions in each frame: index, scaled (index times spacing) and world (a NIfTI's sform
// applied here in double); nothing kept is written all the same, with a warning.
TEST(CliVoxels, PlyCoordinatesAndAnEmptyResult) {
  TempDir dir;
  std::mt19937_64 rng(77);
  Volume<std::uint8_t> volume(9, 8, 7);
  const auto voxels = random_voxels<std::uint8_t>(static_cast<std::size_t>(volume.size()), rng);
  std::copy(voxels.begin(), voxels.end(), volume.data());
  volume.set_spacing(1.5, 2.0, 0.75);
  io::SpatialHeader header;
  header.source = io::SpatialHeader::Source::nifti;
  header.nifti.sform_code = 4;
  header.nifti.pixdim = {1, 1.5f, 2, 0.75f};  // a header written as is: its pixdim is the spacing
  const float srow[3][4] = {{-1.5f, 0.1f, 0, 96}, {0.2f, 2, 0.05f, -130.5f}, {0, -0.3f, 0.75f, -70}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) header.nifti.srow[r][c] = srow[r][c];
  io::VolumeWriteOptions options;
  options.like = header;
  const fs::path input = dir / "v.nii.gz";
  io::write_volume(input, volume.view(), options);
  const auto want = oracle_voxels(volume, {200, VoxelMode::above});
  ASSERT_FALSE(want.empty());
  for (const char* frame : {"index", "scaled", "world"}) {
    const auto r = run_cli({"voxels", input.string(), "--level", "200", "--coordinates", frame, "--out",
                            (dir / "v.ply").string(), "--backend", "cpu"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string ply = read_file(dir / "v.ply");
    if (std::string(frame) == "index") expect_ply(ply, want, 1, 1, 1);
    if (std::string(frame) == "scaled") expect_ply(ply, want, 1.5, 2.0, 0.75);
    if (std::string(frame) != "world") continue;
    const std::size_t body = ply.find("end_header\n") + 11;
    ASSERT_EQ(ply.size() - body, want.size() * 13);  // x y z float, value uchar
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto& p = want[i].first;
      for (int k = 0; k < 3; ++k) {
        float got;
        std::memcpy(&got, ply.data() + body + i * 13 + 4 * k, 4);
        const double expected = double(srow[k][0]) * double(p.x) + double(srow[k][1]) * double(p.y) +
                                double(srow[k][2]) * double(p.z) + double(srow[k][3]);
        ASSERT_EQ(got, static_cast<float>(expected)) << i;
      }
    }
  }
  const auto none =
      run_cli({"voxels", input.string(), "--level", "300", "--out", (dir / "none.csv").string(), "--quiet"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(read_file(dir / "none.csv"), "x,y,z,value\n");
  EXPECT_NE(none.err.find("winnow: warning: no voxel kept: no voxel of " + input.string() + " is above level 300"),
            std::string::npos)
      << none.err;
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1);
}

TEST(CliVoxels, BadArgumentsGiveOneLineAndNoFile) {
  TempDir dir;
  Volume<std::uint8_t> volume(4, 3, 2, std::uint8_t{7});
  const fs::path input = dir / "v.npy";
  io::write_volume(input, volume.view());
  const std::string csv = (dir / "out.csv").string();
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const Case cases[] = {
      {{"voxels", input.string(), "--out", csv}, "--level"},                                 // neither
      {{"voxels", input.string(), "--level", "3", "--nonzero", "--out", csv}, "--nonzero"},  // both
      {{"voxels", input.string(), "--below", "--out", csv}, "--level"},                      // --below alone
      {{"voxels", input.string(), "--level", "3", "--out", (dir / "out.xyz").string()}, "out.xyz"},
      {{"voxels", input.string(), "--level", "3", "--out", (dir / "out").string()}, "out"},  // no extension
      {{"voxels", (dir / "missing.nii").string(), "--level", "3", "--out", csv}, "missing.nii"},
      {{"voxels", input.string(), "--level", "three", "--out", csv}, "--level"},
      {{"voxels", input.string(), "--level", "nan", "--out", csv}, "--level"},
      {{"voxels", input.string(), "--level", "3", "--dims", "4,3", "--dtype", "u8", "--out", csv}, "--dims"},
      {{"voxels", input.string(), "--level", "3", "--dims", "4,3,2", "--out", csv}, "--dtype"},
      {{"voxels", input.string(), "--level", "3", "--dims", "4,3,2", "--dtype", "u9", "--out", csv}, "--dtype"},
      {{"voxels", input.string(), "--level", "3", "--dims", "4,3,3", "--dtype", "u8", "--out", csv}, "v.npy"},
      {{"voxels", input.string(), "--level", "3"}, "--out"},
      {{"voxels", input.string(), "--level", "3", "--out", input.string()}, "v.npy"},  // the input itself
      {{"voxels", input.string(), "--level", "3", "--coordinates", "world", "--out", csv}, "--coordinates"},
      {{"voxels", input.string(), "--level", "3", "--coordinates", "world", "--out", (dir / "o.ply").string()},
       "v.npy"},
  };
  for (const Case& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    winnow::test::expect_one_line_error(run_cli(c.args), c.names);
    EXPECT_EQ(dir.files(), std::vector<std::string>{"v.npy"});
  }
}

}  // namespace
