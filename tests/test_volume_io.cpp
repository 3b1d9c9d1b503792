// Volume types and volume files. The readers are checked against files this test writes byte by
// byte with its own writers (NIfTI-1 headers at the offsets of nifti1.h, NRRD text headers, .npy
// preambles, gzip through zlib, TIFF pages through libtiff), never with winnow's writers; the
// writers are checked by reading their output back and by parsing their headers here. Voxels are
// random and every one is compared.
#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "common/input_error.hpp"
#include "winnow/io.hpp"
#include "winnow/volume.hpp"
#include "winnow/volume_io.hpp"

#ifdef WINNOW_HAVE_TIFF
#include <tiffio.h>
#endif

using namespace winnow;
using winnow::test::data_path;
using winnow::test::expect_input_error;
using winnow::test::TempDir;
namespace fs = std::filesystem;

namespace {

// ---- the voxel types, as each format names them (from the format specifications) -------------
template <class T>
struct Names;
#define WINNOW_NAMES(T, voxel, nifti, npy, nrrd)                \
  template <>                                                   \
  struct Names<T> {                                             \
    static constexpr io::VoxelType type = io::VoxelType::voxel; \
    static constexpr std::int16_t nifti_code = nifti;           \
    static constexpr const char* npy_code = npy;                \
    static constexpr const char* nrrd_type = nrrd;              \
  };
WINNOW_NAMES(std::uint8_t, u8, 2, "u1", "uchar")
WINNOW_NAMES(std::int8_t, i8, 256, "i1", "signed char")
WINNOW_NAMES(std::uint16_t, u16, 512, "u2", "unsigned short")
WINNOW_NAMES(std::int16_t, i16, 4, "i2", "short")
WINNOW_NAMES(std::uint32_t, u32, 768, "u4", "uint32")
WINNOW_NAMES(std::int32_t, i32, 8, "i4", "int")
WINNOW_NAMES(std::uint64_t, u64, 1280, "u8", "unsigned long long int")
WINNOW_NAMES(std::int64_t, i64, 1024, "i8", "int64_t")
WINNOW_NAMES(float, f32, 16, "f4", "float")
WINNOW_NAMES(double, f64, 64, "f8", "double")
#undef WINNOW_NAMES

template <class F>
void for_each_voxel_type(F&& f) {
  f(std::uint8_t{}), f(std::int8_t{}), f(std::uint16_t{}), f(std::int16_t{}), f(std::uint32_t{});
  f(std::int32_t{}), f(std::uint64_t{}), f(std::int64_t{}), f(float{}), f(double{});
}

template <class T>
std::vector<T> random_voxels(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      x = static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
    } else {
      const std::uint64_t r = rng();
      std::memcpy(&x, &r, sizeof x);  // every bit pattern of the type, signs included
    }
  }
  return v;
}

// ---- bytes -------------------------------------------------------------------------------------
template <class T>
void put(std::string& buf, std::size_t offset, T v, bool big) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof v);
  if (big != (std::endian::native == std::endian::big)) std::reverse(b, b + sizeof b);
  if (buf.size() < offset + sizeof b) buf.resize(offset + sizeof b, '\0');
  std::memcpy(buf.data() + offset, b, sizeof b);
}
template <class T>
T get(const std::string& buf, std::size_t offset) {
  T v;
  std::memcpy(&v, buf.data() + offset, sizeof v);
  return v;
}
template <class T>
std::string to_bytes(const std::vector<T>& v, bool big) {
  std::string out;
  out.reserve(v.size() * sizeof(T));
  for (std::size_t i = 0; i < v.size(); ++i) put(out, i * sizeof(T), v[i], big);
  return out;
}
void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
std::string gzip(const std::string& data) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}
std::string gunzip(const std::string& data) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::string out;
  char buf[65536];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

// ---- NIfTI-1, by the offsets of nifti1.h -------------------------------------------------------
struct NiftiSpec {
  std::int16_t dim[8] = {3, 1, 1, 1, 1, 1, 1, 1};
  std::int16_t datatype = 2, bitpix = 8;
  float pixdim[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  float vox_offset = 352, slope = 0, inter = 0;
  std::string magic = std::string("n+1\0", 4);
  bool big = false;
  // Orientation (offsets 252..327) and units (123).
  std::int16_t qform_code = 0, sform_code = 0;
  float quatern[3] = {0, 0, 0}, qoffset[3] = {0, 0, 0};
  float srow[3][4] = {};
  std::uint8_t xyzt_units = 0;
};
std::string nifti_file(const NiftiSpec& s, const std::string& voxels) {
  std::string f(static_cast<std::size_t>(s.vox_offset), '\0');
  put(f, 0, std::int32_t{348}, s.big);
  for (int i = 0; i < 8; ++i) put(f, 40 + 2 * i, s.dim[i], s.big);
  put(f, 70, s.datatype, s.big);
  put(f, 72, s.bitpix, s.big);
  for (int i = 0; i < 8; ++i) put(f, 76 + 4 * i, s.pixdim[i], s.big);
  put(f, 108, s.vox_offset, s.big);
  put(f, 112, s.slope, s.big);
  put(f, 116, s.inter, s.big);
  f[123] = static_cast<char>(s.xyzt_units);
  put(f, 252, s.qform_code, s.big);
  put(f, 254, s.sform_code, s.big);
  for (int i = 0; i < 3; ++i) put(f, 256 + 4 * i, s.quatern[i], s.big), put(f, 268 + 4 * i, s.qoffset[i], s.big);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) put(f, 280 + 16 * r + 4 * c, s.srow[r][c], s.big);
  std::memcpy(f.data() + 344, s.magic.data(), 4);
  return f + voxels;
}
template <class T>
NiftiSpec nifti_spec(std::int16_t nx, std::int16_t ny, std::int16_t nz) {
  NiftiSpec s;
  s.dim[1] = nx, s.dim[2] = ny, s.dim[3] = nz;
  s.datatype = Names<T>::nifti_code;
  s.bitpix = 8 * sizeof(T);
  return s;
}

// ---- checks ------------------------------------------------------------------------------------
template <class T>
const Volume<T>& as(const io::AnyVolume& v) {
  EXPECT_TRUE(std::holds_alternative<Volume<T>>(v))
      << "holds " << io::voxel_type_name(io::describe(v).type) << ", expected " << io::voxel_type_name(Names<T>::type);
  static const Volume<T> none;
  return std::holds_alternative<Volume<T>>(v) ? std::get<Volume<T>>(v) : none;
}
// Every voxel of `v` against `expected` laid out x fastest, then y, then z.
template <class T>
void expect_voxels(const io::AnyVolume& any, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                   const std::vector<T>& expected, double sx = 1, double sy = 1, double sz = 1) {
  const Volume<T>& v = as<T>(any);
  ASSERT_EQ(v.nx(), nx);
  ASSERT_EQ(v.ny(), ny);
  ASSERT_EQ(v.nz(), nz);
  EXPECT_DOUBLE_EQ(v.sx(), sx);
  EXPECT_DOUBLE_EQ(v.sy(), sy);
  EXPECT_DOUBLE_EQ(v.sz(), sz);
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x)
        ASSERT_EQ(v(x, y, z), expected[static_cast<std::size_t>((z * ny + y) * nx + x)])
            << io::voxel_type_name(Names<T>::type) << " at " << x << "," << y << "," << z;
}

}  // namespace

// ---- the types ---------------------------------------------------------------------------------
TEST(Volume, ViewIndexesWithStridesAndSpacing) {
  std::vector<int> buf(7 * 4 * 3);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<int>(i);
  // A 5 x 3 x 2 window of a 7 x 4 x 3 block, from (1, 1, 1).
  VolumeView<int> w(buf.data() + (1 * 4 + 1) * 7 + 1, 5, 3, 2, 7, 28);
  EXPECT_EQ(w.size(), 30);
  EXPECT_FALSE(w.empty());
  EXPECT_FALSE(w.contiguous());
  EXPECT_EQ(w(0, 0, 0), (1 * 4 + 1) * 7 + 1);
  EXPECT_EQ(w(4, 2, 1), (2 * 4 + 3) * 7 + 5);
  EXPECT_EQ(w.row(2, 1)[3], w(3, 2, 1));
  const VolumeView<const int> c = w;
  EXPECT_EQ(c.slice_stride, 28);
  EXPECT_TRUE(VolumeView<int>(buf.data(), 7, 4, 3).contiguous());
  EXPECT_TRUE(VolumeView<int>(buf.data(), 7, 0, 3).empty());

  Volume<float> v(4, 3, 2, 1.5f);
  v.set_spacing(0.5, 2, 3);
  v(3, 2, 1) = 7;
  EXPECT_EQ(v.data()[23], 7);
  EXPECT_EQ(v.size(), 24);
  const auto view = v.view();
  EXPECT_TRUE(view.contiguous());
  EXPECT_EQ(view(3, 2, 1), 7);
  EXPECT_EQ(view(0, 0, 0), 1.5f);
  EXPECT_EQ(view.sx, 0.5);
  EXPECT_EQ(view.sz, 3);
  EXPECT_TRUE(Volume<int>().empty());
}

// ---- NIfTI-1 -----------------------------------------------------------------------------------
TEST(VolumeIo, NiftiEveryTypeBothByteOrders) {
  TempDir dir;
  unsigned seed = 1;
  for_each_voxel_type([&](auto t) {
    using T = decltype(t);
    for (bool big : {false, true}) {
      const auto voxels = random_voxels<T>(7 * 5 * 3, seed++);
      NiftiSpec s = nifti_spec<T>(7, 5, 3);
      s.big = big;
      s.pixdim[1] = 0.5f, s.pixdim[2] = -2.0f, s.pixdim[3] = 3.25f;  // a negative step reads as its size
      if (big) s.vox_offset = 400;                                   // data further on; the gap is skipped
      const auto p = dir / (std::string(io::voxel_type_name(Names<T>::type)) + (big ? "_be.nii" : "_le.nii"));
      write_bytes(p, nifti_file(s, to_bytes(voxels, big)));
      const auto v = io::read_volume(p);
      expect_voxels(v, 7, 5, 3, voxels, 0.5, 2.0, 3.25);
      const auto info = io::describe(v);
      EXPECT_EQ(info.type, Names<T>::type);
      EXPECT_EQ(info.nx, 7);
      EXPECT_EQ(info.sz, 3.25);
    }
  });
}

TEST(VolumeIo, NiftiScalingGivesFloats) {
  TempDir dir;
  const auto raw = random_voxels<std::int16_t>(6 * 4 * 5, 11);
  NiftiSpec s = nifti_spec<std::int16_t>(6, 4, 5);
  s.slope = 0.25f, s.inter = -3.5f;  // exact in binary: the expected values are exact too
  write_bytes(dir / "s.nii", nifti_file(s, to_bytes(raw, false)));
  std::vector<float> expected(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) expected[i] = static_cast<float>(raw[i] * 0.25 - 3.5);
  expect_voxels(io::read_volume(dir / "s.nii"), 6, 4, 5, expected);

  // f64 data stays f64.
  const auto rawd = random_voxels<double>(6 * 4 * 5, 12);
  NiftiSpec sd = nifti_spec<double>(6, 4, 5);
  sd.slope = 2, sd.inter = 1;
  sd.big = true;
  write_bytes(dir / "d.nii", nifti_file(sd, to_bytes(rawd, true)));
  std::vector<double> expected_d(rawd.size());
  for (std::size_t i = 0; i < rawd.size(); ++i) expected_d[i] = rawd[i] * 2 + 1;
  expect_voxels(io::read_volume(dir / "d.nii"), 6, 4, 5, expected_d);

  // Slope 1 and intercept 0, slope 0 and slope NaN all mean "no scaling": the type is kept.
  for (float slope : {1.0f, 0.0f, std::numeric_limits<float>::quiet_NaN()}) {
    s.slope = slope, s.inter = 0;
    write_bytes(dir / "u.nii", nifti_file(s, to_bytes(raw, false)));
    expect_voxels(io::read_volume(dir / "u.nii"), 6, 4, 5, raw);
  }
}

TEST(VolumeIo, NiftiTwoDAndTrailingUnitAxes) {
  TempDir dir;
  const auto voxels = random_voxels<std::uint16_t>(9 * 4, 21);
  NiftiSpec s = nifti_spec<std::uint16_t>(9, 4, 0);  // dim[3] unused for a 2-D image
  s.dim[0] = 2;
  s.pixdim[1] = 0.7f, s.pixdim[2] = 0.9f, s.pixdim[3] = 0;
  write_bytes(dir / "a.nii", nifti_file(s, to_bytes(voxels, false)));
  expect_voxels(io::read_volume(dir / "a.nii"), 9, 4, 1, voxels, 0.7f, 0.9f, 1.0);

  NiftiSpec four = nifti_spec<std::uint16_t>(3, 4, 3);
  four.dim[0] = 4;     // a 4-D file holding one volume
  four.pixdim[3] = 0;  // an unset spacing reads as 1
  write_bytes(dir / "b.nii", nifti_file(four, to_bytes(voxels, false)));
  expect_voxels(io::read_volume(dir / "b.nii"), 3, 4, 3, voxels);
}

TEST(VolumeIo, NiftiGzipped) {
  TempDir dir;
  const auto voxels = random_voxels<float>(11 * 6 * 4, 31);
  NiftiSpec s = nifti_spec<float>(11, 6, 4);
  s.pixdim[1] = 3, s.pixdim[2] = 3, s.pixdim[3] = 3;
  write_bytes(dir / "v.nii.gz", gzip(nifti_file(s, to_bytes(voxels, false))));
  expect_voxels(io::read_volume(dir / "v.nii.gz"), 11, 6, 4, voxels, 3, 3, 3);
  // Two gzip members one after the other (as `cat a.gz b.gz` makes) are one stream.
  const std::string whole = nifti_file(s, to_bytes(voxels, false));
  write_bytes(dir / "two.nii.gz", gzip(whole.substr(0, 1000)) + gzip(whole.substr(1000)));
  expect_voxels(io::read_volume(dir / "two.nii.gz"), 11, 6, 4, voxels, 3, 3, 3);
  // The format comes from the bytes, not the name.
  write_bytes(dir / "named.dat", gzip(whole));
  expect_voxels(io::read_volume(dir / "named.dat"), 11, 6, 4, voxels, 3, 3, 3);
}

// ---- NRRD --------------------------------------------------------------------------------------
TEST(VolumeIo, NrrdAttachedRawAndGzip) {
  TempDir dir;
  const auto u16 = random_voxels<std::uint16_t>(8 * 5 * 3, 41);
  write_bytes(dir / "a.nrrd",
              "NRRD0004\n# a comment\ntype: unsigned short\ndimension: 3\nsizes: 8 5 3\n"
              "endian: little\nencoding: raw\nspacings: 0.5 0.75 2\nkey:=value\n\n" +
                  to_bytes(u16, false));
  expect_voxels(io::read_volume(dir / "a.nrrd"), 8, 5, 3, u16, 0.5, 0.75, 2);

  const auto f32 = random_voxels<float>(8 * 5 * 3, 42);
  write_bytes(dir / "b.nrrd",
              "NRRD0005\r\ntype: float\r\ndimension: 3\r\nspace: left-posterior-superior\r\n"
              "sizes: 8 5 3\r\nspace directions: (0,1.5,0) (2,0,0) (0,0,-3)\r\nendian: big\r\n"
              "encoding: gzip\r\nspace origin: (0,0,0)\r\n\r\n" +
                  gzip(to_bytes(f32, true)));
  expect_voxels(io::read_volume(dir / "b.nrrd"), 8, 5, 3, f32, 1.5, 2, 3);
}

TEST(VolumeIo, NrrdEveryTypeAndTwoD) {
  TempDir dir;
  unsigned seed = 50;
  for_each_voxel_type([&](auto t) {
    using T = decltype(t);
    const auto voxels = random_voxels<T>(6 * 7, seed++);
    const auto p = dir / (std::string(io::voxel_type_name(Names<T>::type)) + ".nrrd");
    write_bytes(p, std::string("NRRD0004\ntype: ") + Names<T>::nrrd_type +
                       "\ndimension: 2\nsizes: 6 7\nendian: big\nencoding: raw\n\n" + to_bytes(voxels, true));
    expect_voxels(io::read_volume(p), 6, 7, 1, voxels);
  });
}

TEST(VolumeIo, NrrdDetachedDataWithSkips) {
  TempDir dir;
  const auto i32 = random_voxels<std::int32_t>(5 * 4 * 6, 61);
  write_bytes(dir / "d.raw", std::string(13, 'x') + to_bytes(i32, false));
  write_bytes(dir / "d.nhdr",
              "NRRD0004\ntype: int\ndimension: 3\nsizes: 5 4 6\nendian: little\nencoding: raw\n"
              "byte skip: 13\ndata file: d.raw\n");
  expect_voxels(io::read_volume(dir / "d.nhdr"), 5, 4, 6, i32);

  // byte skip -1: the voxels are the last bytes of the file; line skip: text lines before them.
  write_bytes(dir / "e.raw", "first line\nsecond\n" + std::string(7, '#') + to_bytes(i32, false));
  write_bytes(dir / "e.nhdr",
              "NRRD0004\ntype: int32\ndimension: 3\nsizes: 5 4 6\nendian: little\n"
              "encoding: raw\nbyteskip: -1\ndatafile: e.raw\n");
  expect_voxels(io::read_volume(dir / "e.nhdr"), 5, 4, 6, i32);
  write_bytes(dir / "f.nhdr",
              "NRRD0004\ntype: int32\ndimension: 3\nsizes: 5 4 6\nendian: little\n"
              "encoding: raw\nline skip: 2\nbyte skip: 7\ndata file: e.raw\n");
  expect_voxels(io::read_volume(dir / "f.nhdr"), 5, 4, 6, i32);

  // Detached gzip, named by an absolute path.
  const auto f64 = random_voxels<double>(5 * 4 * 6, 62);
  write_bytes(dir / "g.raw.gz", gzip(to_bytes(f64, true)));
  write_bytes(dir / "g.nhdr",
              "NRRD0004\ntype: double\ndimension: 3\nsizes: 5 4 6\nendian: big\nencoding: gz\n"
              "data file: " +
                  (dir / "g.raw.gz").string() + "\n");
  expect_voxels(io::read_volume(dir / "g.nhdr"), 5, 4, 6, f64);
}

// ---- .npy --------------------------------------------------------------------------------------
namespace {
// An .npy file: magic, version, header length (2 bytes in 1.0, 4 in 2.0 and 3.0), the dict.
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict + "\n";
  std::string f = "\x93NUMPY";
  f += static_cast<char>(major);
  f += '\0';
  if (major == 1) put(f, 8, static_cast<std::uint16_t>(header.size()), false);
  else put(f, 8, static_cast<std::uint32_t>(header.size()), false);
  return f + header + data;
}
}  // namespace

TEST(VolumeIo, NpyEveryTypeCOrderAndBigEndian) {
  TempDir dir;
  unsigned seed = 70;
  for_each_voxel_type([&](auto t) {
    using T = decltype(t);
    for (bool big : {false, true}) {
      const auto voxels = random_voxels<T>(5 * 3 * 4, seed++);
      const char order = sizeof(T) == 1 ? '|' : big ? '>' : '<';
      const auto p = dir / (std::string(io::voxel_type_name(Names<T>::type)) + (big ? "_be.npy" : ".npy"));
      // C order, shape (Z, Y, X) = (4, 3, 5): nx = 5.
      write_bytes(p, npy_file(std::string("{'descr': '") + order + Names<T>::npy_code +
                                  "', 'fortran_order': False, 'shape': (4, 3, 5), }",
                              to_bytes(voxels, big)));
      expect_voxels(io::read_volume(p), 5, 3, 4, voxels);
    }
  });
}

// np.save of a boolean mask: descr '|b1', a byte 0 or 1 a voxel, read as u8.
TEST(VolumeIo, NpyBooleanMaskReadsAsBytes) {
  TempDir dir;
  auto voxels = random_voxels<std::uint8_t>(5 * 3 * 4, 84);
  for (auto& v : voxels) v = v & 1u;
  write_bytes(dir / "mask.npy",
              npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (4, 3, 5), }", to_bytes(voxels, false)));
  expect_voxels(io::read_volume(dir / "mask.npy"), 5, 3, 4, voxels);
}

TEST(VolumeIo, NpyFortranOrderVersionsAndTwoD) {
  TempDir dir;
  const auto voxels = random_voxels<std::int16_t>(5 * 3 * 4, 81);
  // Fortran order, shape (X, Y, Z) = (5, 3, 4): the same bytes, nx = 5.
  write_bytes(dir / "f.npy",
              npy_file("{'fortran_order': True, 'descr': '<i2', 'shape': (5, 3, 4)}", to_bytes(voxels, false)));
  expect_voxels(io::read_volume(dir / "f.npy"), 5, 3, 4, voxels);
  for (int major : {2, 3}) {
    write_bytes(dir / "v.npy", npy_file("{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (4, 3, 5), }",
                                        to_bytes(voxels, false), major));
    expect_voxels(io::read_volume(dir / "v.npy"), 5, 3, 4, voxels);
  }
  // 2-D: C order (Y, X) = (12, 5); Fortran (X, Y) = (5, 12).
  write_bytes(dir / "c2.npy",
              npy_file("{'descr': '<i2', 'fortran_order': False, 'shape': (12, 5), }", to_bytes(voxels, false)));
  expect_voxels(io::read_volume(dir / "c2.npy"), 5, 12, 1, voxels);
  write_bytes(dir / "f2.npy",
              npy_file("{'descr': '<i2', 'fortran_order': True, 'shape': (5, 12), }", to_bytes(voxels, false)));
  expect_voxels(io::read_volume(dir / "f2.npy"), 5, 12, 1, voxels);
}

// A .npy written like the .npy it came from keeps its rank and order (the labels of an array index
// as the array did); the dicts expected are numpy's for those shapes.
TEST(VolumeIo, NpyOutputKeepsTheInputsRankAndOrder) {
  TempDir dir;
  const auto voxels = random_voxels<std::int16_t>(5 * 3 * 4, 82);
  const auto out = random_voxels<std::uint32_t>(5 * 3 * 4, 83);
  struct Case {
    const char *name, *dict, *written;
    std::int64_t nx, ny, nz;
    int rank;
    bool fortran;
  };
  const Case cases[] = {
      {"c3", "{'descr': '<i2', 'fortran_order': False, 'shape': (4, 3, 5), }",
       "'fortran_order': False, 'shape': (4, 3, 5)", 5, 3, 4, 3, false},
      {"f3", "{'descr': '<i2', 'fortran_order': True, 'shape': (5, 3, 4), }",
       "'fortran_order': True, 'shape': (5, 3, 4)", 5, 3, 4, 3, true},
      {"c2", "{'descr': '<i2', 'fortran_order': False, 'shape': (12, 5), }", "'fortran_order': False, 'shape': (12, 5)",
       5, 12, 1, 2, false},
      {"f2", "{'descr': '<i2', 'fortran_order': True, 'shape': (5, 12), }", "'fortran_order': True, 'shape': (5, 12)",
       5, 12, 1, 2, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto in = dir / (std::string(c.name) + ".npy");
    write_bytes(in, npy_file(c.dict, to_bytes(voxels, false)));
    io::SpatialHeader header;
    expect_voxels(io::read_volume(in, &header), c.nx, c.ny, c.nz, voxels);
    EXPECT_EQ(header.source, io::SpatialHeader::Source::none);
    EXPECT_EQ(header.npy.rank, c.rank);
    EXPECT_EQ(header.npy.fortran_order, c.fortran);
    const auto written = dir / (std::string(c.name) + "-out.npy");
    io::write_volume(written, VolumeView<const std::uint32_t>(out.data(), c.nx, c.ny, c.nz), {.like = header});
    const std::string bytes = read_bytes(written);
    const std::size_t hlen = get<std::uint8_t>(bytes, 8) | get<std::uint8_t>(bytes, 9) << 8;
    const std::string dict = bytes.substr(10, hlen);
    EXPECT_NE(dict.find(c.written), std::string::npos) << dict;
    EXPECT_EQ(bytes.substr(10 + hlen), to_bytes(out, std::endian::native == std::endian::big));
    expect_voxels(io::read_volume(written), c.nx, c.ny, c.nz, out);
  }
  // Without a header (or one of another format): C order, 3-D.
  io::write_volume(dir / "plain.npy", VolumeView<const std::uint32_t>(out.data(), 5, 12, 1));
  const std::string plain = read_bytes(dir / "plain.npy");
  EXPECT_NE(plain.find("'fortran_order': False, 'shape': (1, 12, 5)"), std::string::npos);
}

// ---- TIFF stacks -------------------------------------------------------------------------------
#ifdef WINNOW_HAVE_TIFF
namespace {
// One page per z, `w` x `h` samples of T; strips of 2 rows or tiles of 16 x 16.
template <class T>
void write_tiff_stack(const fs::path& p, std::uint32_t w, std::uint32_t h, std::uint32_t pages,
                      const std::vector<T>& voxels, bool tiled) {
  TIFF* t = TIFFOpen(p.c_str(), "w");
  ASSERT_NE(t, nullptr);
  const std::uint16_t fmt = std::is_floating_point_v<T> ? SAMPLEFORMAT_IEEEFP
                            : std::is_signed_v<T>       ? SAMPLEFORMAT_INT
                                                        : SAMPLEFORMAT_UINT;
  for (std::uint32_t z = 0; z < pages; ++z) {
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(8 * sizeof(T)));
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, fmt);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
    TIFFSetField(t, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
    TIFFSetField(t, TIFFTAG_PAGENUMBER, z, pages);
    const T* page = voxels.data() + static_cast<std::size_t>(z) * w * h;
    if (tiled) {
      TIFFSetField(t, TIFFTAG_TILEWIDTH, 16u);
      TIFFSetField(t, TIFFTAG_TILELENGTH, 16u);
      std::vector<T> tile(16 * 16);
      for (std::uint32_t ty = 0; ty < h; ty += 16)
        for (std::uint32_t tx = 0; tx < w; tx += 16) {
          std::fill(tile.begin(), tile.end(), T{});
          for (std::uint32_t r = 0; r < 16 && ty + r < h; ++r)
            for (std::uint32_t c = 0; c < 16 && tx + c < w; ++c) tile[r * 16 + c] = page[(ty + r) * w + tx + c];
          ASSERT_GE(TIFFWriteTile(t, tile.data(), tx, ty, 0, 0), 0);
        }
    } else {
      TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 2u);
      for (std::uint32_t y = 0; y < h; ++y) ASSERT_EQ(TIFFWriteScanline(t, const_cast<T*>(page + y * w), y, 0), 1);
    }
    ASSERT_TRUE(TIFFWriteDirectory(t));
  }
  TIFFClose(t);
}
}  // namespace
#endif

TEST(VolumeIo, TiffStacksEveryTypeStripsAndTiles) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  TempDir dir;
  unsigned seed = 90;
  for_each_voxel_type([&](auto t) {
    using T = decltype(t);
    for (bool tiled : {false, true}) {
      const auto voxels = random_voxels<T>(19 * 21 * 3, seed++);
      const auto p = dir / (std::string(io::voxel_type_name(Names<T>::type)) + (tiled ? "_t.tif" : ".tif"));
      write_tiff_stack(p, 19, 21, 3, voxels, tiled);
      expect_voxels(io::read_volume(p), 19, 21, 3, voxels);
    }
  });
#endif
}

// ---- raw ---------------------------------------------------------------------------------------
TEST(VolumeIo, RawEveryTypeBothByteOrders) {
  TempDir dir;
  unsigned seed = 110;
  for_each_voxel_type([&](auto t) {
    using T = decltype(t);
    for (bool big : {false, true}) {
      const auto voxels = random_voxels<T>(4 * 6 * 5, seed++);
      write_bytes(dir / "v.raw", to_bytes(voxels, big));
      expect_voxels(
          io::read_raw_volume(dir / "v.raw", 4, 6, 5, Names<T>::type, big ? std::endian::big : std::endian::little), 4,
          6, 5, voxels);
    }
  });
}

// ---- writers -----------------------------------------------------------------------------------
TEST(VolumeIo, WritersRoundTripEveryType) {
  TempDir dir;
  unsigned seed = 130;
  for_each_voxel_type([&](auto t) {
    using T = decltype(t);
    const auto voxels = random_voxels<T>(9 * 4 * 3, seed++);
    Volume<T> v(9, 4, 3);
    std::copy(voxels.begin(), voxels.end(), v.data());
    v.set_spacing(0.5, 1.25, 4);
    const std::string name = io::voxel_type_name(Names<T>::type);
    for (const char* ext : {".nii", ".nii.gz", ".npy"}) {
      const auto p = dir / (name + ext);
      io::write_volume(p, v.view());
      const bool npy = std::string(ext) == ".npy";
      expect_voxels(io::read_volume(p), 9, 4, 3, voxels, npy ? 1 : 0.5, npy ? 1 : 1.25, npy ? 1 : 4);
    }
    // The NIfTI header, as nifti1.h lays it out (host byte order, which is what it says it is).
    std::string nii = read_bytes(dir / (name + ".nii"));
    ASSERT_EQ(nii.size(), 352 + voxels.size() * sizeof(T));
    EXPECT_EQ(get<std::int32_t>(nii, 0), 348);
    EXPECT_EQ(get<std::int16_t>(nii, 40), 3);
    EXPECT_EQ(get<std::int16_t>(nii, 42), 9);
    EXPECT_EQ(get<std::int16_t>(nii, 44), 4);
    EXPECT_EQ(get<std::int16_t>(nii, 46), 3);
    EXPECT_EQ(get<std::int16_t>(nii, 70), Names<T>::nifti_code);
    EXPECT_EQ(get<std::int16_t>(nii, 72), static_cast<std::int16_t>(8 * sizeof(T)));
    EXPECT_EQ(get<float>(nii, 80), 0.5f);
    EXPECT_EQ(get<float>(nii, 84), 1.25f);
    EXPECT_EQ(get<float>(nii, 88), 4.0f);
    EXPECT_EQ(get<float>(nii, 108), 352.0f);
    EXPECT_EQ(nii.substr(344, 4), std::string("n+1\0", 4));
    EXPECT_EQ(nii.substr(352), to_bytes(voxels, std::endian::native == std::endian::big));
    // .nii.gz is that file, gzip-compressed.
    EXPECT_EQ(gunzip(read_bytes(dir / (name + ".nii.gz"))), nii);
    // The .npy preamble and dict, as numpy writes them.
    const std::string npy = read_bytes(dir / (name + ".npy"));
    ASSERT_EQ(npy.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t hlen = get<std::uint8_t>(npy, 8) | get<std::uint8_t>(npy, 9) << 8;
    EXPECT_EQ((10 + hlen) % 64, 0u);
    const std::string dict = npy.substr(10, hlen);
    const char order = sizeof(T) == 1 ? '|' : std::endian::native == std::endian::big ? '>' : '<';
    EXPECT_EQ(dict.substr(0, dict.find('}') + 1), std::string("{'descr': '") + order + Names<T>::npy_code +
                                                      "', 'fortran_order': False, 'shape': (3, 4, 9), }");
    EXPECT_EQ(dict.back(), '\n');
    EXPECT_EQ(npy.substr(10 + hlen), to_bytes(voxels, std::endian::native == std::endian::big));
  });
  EXPECT_EQ(dir.files().size(), 30u);  // no temporaries left
}

TEST(VolumeIo, WritersTakeStridedViewsAndAnyVolume) {
  TempDir dir;
  const auto block = random_voxels<std::uint16_t>(10 * 8 * 6, 150);
  // The 4 x 3 x 2 window at (2, 1, 3) of a 10 x 8 x 6 block.
  VolumeView<const std::uint16_t> w(block.data() + (3 * 8 + 1) * 10 + 2, 4, 3, 2, 10, 80);
  std::vector<std::uint16_t> expected;
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) expected.push_back(block[((3 + z) * 8 + 1 + y) * 10 + 2 + x]);
  io::write_volume(dir / "w.nii", w);
  expect_voxels(io::read_volume(dir / "w.nii"), 4, 3, 2, expected);
  io::write_volume(dir / "w.npy", w);
  expect_voxels(io::read_volume(dir / "w.npy"), 4, 3, 2, expected);
  // An AnyVolume as read goes back out as it came.
  const io::AnyVolume any = io::read_volume(dir / "w.nii");
  io::write_volume(dir / "again.nii.gz", any);
  expect_voxels(io::read_volume(dir / "again.nii.gz"), 4, 3, 2, expected);
}

#ifdef WINNOW_HAVE_TIFF
// Multi-page TIFF written and read back: every voxel type, one page per z, strided views too.
TEST(VolumeIo, TiffStackRoundTrip) {
  TempDir dir;
  std::mt19937_64 rng(21);
  auto check = [&](auto sample) {
    using T = decltype(sample);
    Volume<T> v(13, 7, 5);
    for (auto& x : v.voxels()) x = static_cast<T>(rng() % 100000) - static_cast<T>(std::is_signed_v<T> ? 50 : 0);
    for (const char* name : {"s.tif", "s.tiff"}) {
      io::write_volume(dir / name, v.view());
      const auto back = std::get<Volume<T>>(io::read_volume(dir / name));
      ASSERT_EQ(back.nx(), 13);
      ASSERT_EQ(back.ny(), 7);
      ASSERT_EQ(back.nz(), 5);
      EXPECT_TRUE(std::equal(v.voxels().begin(), v.voxels().end(), back.voxels().begin()));
      EXPECT_TRUE(io::is_volume_file(dir / name));
    }
    // A strided view writes only its voxels.
    const VolumeView<const T> inner(v.data() + 1, 11, 6, 4, 13, 13 * 7);
    io::write_volume(dir / "inner.tif", inner);
    const auto back = std::get<Volume<T>>(io::read_volume(dir / "inner.tif"));
    for (std::int64_t z = 0; z < 4; ++z)
      for (std::int64_t y = 0; y < 6; ++y)
        for (std::int64_t x = 0; x < 11; ++x) ASSERT_EQ(back(x, y, z), inner(x, y, z));
  };
  check(std::uint8_t{}), check(std::int8_t{}), check(std::uint16_t{}), check(std::int16_t{});
  check(std::uint32_t{}), check(std::int32_t{}), check(std::uint64_t{}), check(std::int64_t{});
  check(float{}), check(double{});
  // One page: an image, not a volume.
  Volume<std::uint16_t> one(5, 4, 1, 3);
  io::write_volume(dir / "one.tif", one.view());
  EXPECT_FALSE(io::is_volume_file(dir / "one.tif"));
  EXPECT_TRUE(io::is_volume_file(data_path("volumes/mni152_gm.nii.gz")));
  EXPECT_FALSE(io::is_volume_file(data_path("coins.png")));
}
#endif

TEST(VolumeIo, WriterRefusesOtherNamesAndLeavesNothing) {
  TempDir dir;
  Volume<float> v(3, 3, 3, 1.0f);
  for (const char* name : {"v.nhdr", "v.tif.gz", "v.gz", "v", "v.nii.bak"})
    expect_input_error([&] { io::write_volume(dir / name, v.view()); }, dir / name,
                       "name it .nii, .nii.gz, .nrrd, .npy, .tif or .tiff");
  expect_input_error([&] { io::write_volume(dir / "e.nii", Volume<float>().view()); }, dir / "e.nii", "cannot write");
  Volume<std::uint8_t> huge_axis(40000, 1, 1);
  expect_input_error([&] { io::write_volume(dir / "h.nii", huge_axis.view()); }, dir / "h.nii", "32767");
  expect_input_error([&] { io::write_volume(dir / "missing" / "v.nii", v.view()); }, dir / "missing" / "v.nii",
                     "does not exist");
  EXPECT_TRUE(dir.files().empty());
  // An existing file is left as it was when the new one cannot be written.
  write_bytes(dir / "keep.nii", "old");
  expect_input_error([&] { io::write_volume(dir / "keep.nii", huge_axis.view()); }, dir / "keep.nii", "32767");
  EXPECT_EQ(read_bytes(dir / "keep.nii"), "old");
  EXPECT_EQ(dir.files().size(), 1u);
}

// ---- orientation -------------------------------------------------------------------------------
namespace {

using Affine = std::array<double, 16>;

void expect_affine_near(const Affine& got, const Affine& want, double tolerance) {
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(got[i], want[i], tolerance) << "element " << i / 4 << "," << i % 4;
}

// The spatial bytes of a NIfTI-1 header: pixdim[0..3], xyzt_units, then qform_code to srow_z.
std::string spatial_bytes(const std::string& file) {
  return file.substr(76, 16) + file.substr(123, 1) + file.substr(252, 76);
}

NiftiSpec oblique_nifti_spec(bool big) {
  NiftiSpec s = nifti_spec<std::int16_t>(7, 6, 5);
  s.big = big;
  const float pixdim[4] = {-1, -2.5f, 3.25f, 0.7f};  // qfac -1 and a negative pixdim, as some scanners write
  std::copy(pixdim, pixdim + 4, s.pixdim);
  s.qform_code = 1, s.sform_code = 4;
  s.quatern[0] = 0.1f, s.quatern[1] = -0.2f, s.quatern[2] = 0.3f;
  s.qoffset[0] = -90.5f, s.qoffset[1] = 12.25f, s.qoffset[2] = 1e-3f;
  const float srow[3][4] = {{-2.4f, 0.1f, 0.2f, 90}, {0.05f, 3.2f, -0.3f, -126.5f}, {0, 0.25f, 0.69f, -72}};
  for (int r = 0; r < 3; ++r) std::copy(srow[r], srow[r] + 4, s.srow[r]);
  s.xyzt_units = 10;  // mm and seconds
  return s;
}

}  // namespace

TEST(VolumeIo, NiftiSpatialFieldsAreKeptAndWrittenBackBitForBit) {
  TempDir dir;
  for (const bool big : {false, true}) {
    const auto voxels = random_voxels<std::int16_t>(7 * 6 * 5, big ? 201 : 202);
    const NiftiSpec s = oblique_nifti_spec(big);
    write_bytes(dir / "in.nii", nifti_file(s, to_bytes(voxels, big)));
    io::SpatialHeader header;
    const io::AnyVolume v = io::read_volume(dir / "in.nii", &header);
    expect_voxels(v, 7, 6, 5, voxels, 2.5, 3.25, 0.7f);
    ASSERT_EQ(header.source, io::SpatialHeader::Source::nifti);
    EXPECT_EQ(header.nifti.qform_code, 1);
    EXPECT_EQ(header.nifti.sform_code, 4);
    EXPECT_EQ(header.nifti.pixdim[0], -1.0f);
    EXPECT_EQ(header.nifti.pixdim[1], -2.5f);
    EXPECT_EQ(header.nifti.quatern_c, -0.2f);
    EXPECT_EQ(header.nifti.qoffset_z, 1e-3f);
    EXPECT_EQ(header.nifti.srow[1][3], -126.5f);
    EXPECT_EQ(header.nifti.xyzt_units, 10);
    // sform code 4 (MNI): the affine is the sform's rows.
    const Affine want = {-2.4f, 0.1f, 0.2f, 90, 0.05f, 3.2f, -0.3f, -126.5f, 0, 0.25f, 0.69f, -72, 0, 0, 0, 1};
    EXPECT_EQ(header.affine(), want);

    // Written from it (whatever byte order it came in): the same fields, bit for bit, in the
    // host's byte order; .nii.gz the same file compressed.
    NiftiSpec host = s;
    host.big = std::endian::native == std::endian::big;
    const std::string expected = spatial_bytes(nifti_file(host, ""));
    io::VolumeWriteOptions options;
    options.like = header;
    io::write_volume(dir / "out.nii", v, options);
    io::write_volume(dir / "out.nii.gz", v, options);
    EXPECT_EQ(spatial_bytes(read_bytes(dir / "out.nii")), expected);
    EXPECT_EQ(gunzip(read_bytes(dir / "out.nii.gz")), read_bytes(dir / "out.nii"));
    io::SpatialHeader again;
    expect_voxels(io::read_volume(dir / "out.nii.gz", &again), 7, 6, 5, voxels, 2.5, 3.25, 0.7f);
    EXPECT_EQ(again.affine(), want);
  }
  // Without a header to copy, a writer keeps the spacing and says nothing of orientation.
  const auto voxels = random_voxels<std::int16_t>(7 * 6 * 5, 203);
  Volume<std::int16_t> plain(7, 6, 5);
  std::copy(voxels.begin(), voxels.end(), plain.data());
  plain.set_spacing(2, 3, 4);
  io::write_volume(dir / "plain.nii", plain.view());
  const std::string f = read_bytes(dir / "plain.nii");
  EXPECT_EQ(get<std::int16_t>(f, 252), 0);
  EXPECT_EQ(get<std::int16_t>(f, 254), 0);
  io::SpatialHeader none;
  io::read_volume(dir / "plain.nii", &none);
  EXPECT_EQ(none.source, io::SpatialHeader::Source::nifti);
  io::write_volume(dir / "plain.npy", plain.view());
  io::read_volume(dir / "plain.npy", &none);
  EXPECT_EQ(none.source, io::SpatialHeader::Source::none);
}

// The affine of each NIfTI case against matrices worked out by hand from the NIfTI-1 standard and
// nibabel's rules (the pytest suite compares with nibabel itself).
TEST(VolumeIo, NiftiAffineFollowsSformThenQformThenTheAnalyzeDefault) {
  io::SpatialHeader h;
  h.source = io::SpatialHeader::Source::nifti;
  auto& n = h.nifti;
  n.dim = {3, 10, 20, 30, 1, 1, 1, 1};
  // qform: 90 degrees about z (b = c = 0, d = sin 45), pixdim 2 3 4, qfac -1: R diag(2, 3, -4).
  n.qform_code = 1;
  n.sform_code = 7;  // not a code NIfTI defines: read as 0
  n.quatern_d = static_cast<float>(std::sqrt(0.5));
  n.pixdim = {-1, 2, 3, 4};
  n.qoffset_x = 5, n.qoffset_y = -6, n.qoffset_z = 7.5f;
  const Affine rotated = {0, -3, 0, 5, 2, 0, 0, -6, 0, 0, -4, 7.5, 0, 0, 0, 1};
  expect_affine_near(h.affine(), rotated, 1e-6);
  n.pixdim = {-1, -2, 3, -4};  // negative pixdims read as their magnitudes
  expect_affine_near(h.affine(), rotated, 1e-6);
  n.pixdim = {0, 2, 3, 4};  // a qfac other than -1 reads as 1
  expect_affine_near(h.affine(), {0, -3, 0, 5, 2, 0, 0, -6, 0, 0, 4, 7.5, 0, 0, 0, 1}, 1e-6);
  // Codes 0: |pixdim| with x flipped, the centre voxel ((dim - 1) / 2) at 0; a zero pixdim is 1.
  n.qform_code = 0, n.sform_code = 0;
  n.pixdim = {1, -2, 3, 0};
  EXPECT_EQ(h.affine(), (Affine{-2, 0, 0, 9, 0, 3, 0, -28.5, 0, 0, 1, -14.5, 0, 0, 0, 1}));
  n.dim = {2, 10, 20, 1, 1, 1, 1, 1};  // a 2-D image: its z has size and zoom 1
  n.pixdim = {1, 2, 3, 5};
  EXPECT_EQ(h.affine(), (Affine{-2, 0, 0, 9, 0, 3, 0, -28.5, 0, 0, 1, 0, 0, 0, 0, 1}));
  // The sform wins when its code is set.
  n.sform_code = 3;
  n.qform_code = 1;
  n.srow = {{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}};
  EXPECT_EQ(h.affine(), (Affine{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 1}));
  EXPECT_EQ(io::SpatialHeader{}.affine(), (Affine{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
}

namespace {
// An NRRD of 6 x 5 x 4 f32 voxels in `space` with these directions and origin, gzip encoding.
std::string oblique_nrrd(const std::string& space, const std::string& directions, const std::string& origin,
                         const std::vector<float>& voxels) {
  return "NRRD0004\ntype: float\ndimension: 3\nspace: " + space + "\nsizes: 6 5 4\nspace directions: " + directions +
         "\nspace units: \"mm\" \"mm\" \"mm\"\nendian: little\nencoding: gzip\nspace origin: " + origin + "\n\n" +
         gzip(to_bytes(voxels, false));
}
}  // namespace

TEST(VolumeIo, NrrdSpaceFieldsGiveTheAffineAndTravelToNrrdAndNifti) {
  TempDir dir;
  const auto voxels = random_voxels<float>(6 * 5 * 4, 210);
  // A rotation of 30 degrees about z times spacings 0.5, 0.75 and 2, in LPS (as DICOM tools write).
  const double c = std::cos(M_PI / 6), s = std::sin(M_PI / 6);
  const std::array<std::array<double, 3>, 3> d = {{{0.5 * c, 0.5 * s, 0}, {-0.75 * s, 0.75 * c, 0}, {0, 0, 2}}};
  char text[256];
  std::snprintf(text, sizeof text, "(%.17g, %.17g, 0) (%.17g,%.17g,0) (0,0,2)", d[0][0], d[0][1], d[1][0], d[1][1]);
  write_bytes(dir / "lps.nrrd", oblique_nrrd("left-posterior-superior", text, "(-10.5,20.25,-30)", voxels));
  io::SpatialHeader header;
  expect_voxels(io::read_volume(dir / "lps.nrrd", &header), 6, 5, 4, voxels, 0.5, 0.75, 2);
  ASSERT_EQ(header.source, io::SpatialHeader::Source::nrrd);
  EXPECT_EQ(header.nrrd.space, "left-posterior-superior");
  EXPECT_TRUE(header.nrrd.has_directions && header.nrrd.has_origin);
  EXPECT_EQ(header.nrrd.directions, d);
  // LPS to RAS negates x and y: of the directions and of the origin.
  const Affine want = {-d[0][0], -d[1][0], -d[2][0], 10.5, -d[0][1], -d[1][1], -d[2][1], -20.25,
                       d[0][2],  d[1][2],  d[2][2],  -30,  0,        0,        0,        1};
  EXPECT_EQ(header.affine(), want);

  // An NRRD written from it keeps the fields exactly, gzip or raw.
  for (const bool gz : {true, false}) {
    io::VolumeWriteOptions options;
    options.like = header;
    options.nrrd_gzip = gz;
    io::write_volume(dir / "out.nrrd", io::read_volume(dir / "lps.nrrd"), options);
    EXPECT_NE(read_bytes(dir / "out.nrrd").find(gz ? "encoding: gzip\n" : "encoding: raw\n"), std::string::npos);
    io::SpatialHeader back;
    expect_voxels(io::read_volume(dir / "out.nrrd", &back), 6, 5, 4, voxels, 0.5, 0.75, 2);
    EXPECT_EQ(back.nrrd.space, header.nrrd.space);
    EXPECT_EQ(back.nrrd.directions, header.nrrd.directions);
    EXPECT_EQ(back.nrrd.origin, header.nrrd.origin);
    EXPECT_EQ(back.nrrd.space_units, "\"mm\" \"mm\" \"mm\"");
    EXPECT_EQ(back.affine(), want);
  }

  // A NIfTI written from it: sform code 1 holding the affine, the same transform in the qform
  // (its directions are orthogonal), pixdim their lengths, units mm.
  io::VolumeWriteOptions options;
  options.like = header;
  io::write_volume(dir / "out.nii", io::read_volume(dir / "lps.nrrd"), options);
  io::SpatialHeader nifti;
  expect_voxels(io::read_volume(dir / "out.nii", &nifti), 6, 5, 4, voxels, 0.5, 0.75, 2);
  EXPECT_EQ(nifti.nifti.sform_code, 1);
  EXPECT_EQ(nifti.nifti.qform_code, 1);
  EXPECT_EQ(nifti.nifti.xyzt_units, 2);
  expect_affine_near(nifti.affine(), want, 1e-5);
  nifti.nifti.sform_code = 0;  // now the qform's
  expect_affine_near(nifti.affine(), want, 1e-5);
  // And that NIfTI, written as NRRD again: the right-anterior-superior space, the same affine.
  nifti.nifti.sform_code = 1;
  options.like = nifti;
  io::write_volume(dir / "again.nrrd", io::read_volume(dir / "out.nii"), options);
  io::SpatialHeader ras;
  io::read_volume(dir / "again.nrrd", &ras);
  EXPECT_EQ(ras.nrrd.space, "right-anterior-superior");
  EXPECT_EQ(ras.affine(), nifti.affine());  // floats as doubles, printed and read back exactly

  // A left-handed frame (LAS with +x directions): qfac -1 in the NIfTI.
  write_bytes(dir / "las.nrrd", oblique_nrrd("LAS", "(1,0,0) (0,1,0) (0,0,1)", "(0,0,0)", voxels));
  io::read_volume(dir / "las.nrrd", &header);
  options.like = header;
  io::write_volume(dir / "las.nii", io::read_volume(dir / "las.nrrd"), options);
  io::read_volume(dir / "las.nii", &nifti);
  EXPECT_EQ(nifti.nifti.pixdim[0], -1.0f);
  const Affine flipped = {-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  expect_affine_near(nifti.affine(), flipped, 1e-6);
  nifti.nifti.sform_code = 0;
  expect_affine_near(nifti.affine(), flipped, 1e-6);
  // Sheared directions have no qform: its code is 0, the sform holds them.
  write_bytes(dir / "shear.nrrd", oblique_nrrd("RAS", "(1,0,0) (0.5,1,0) (0,0,1)", "(1,2,3)", voxels));
  io::read_volume(dir / "shear.nrrd", &header);
  options.like = header;
  io::write_volume(dir / "shear.nii", io::read_volume(dir / "shear.nrrd"), options);
  io::read_volume(dir / "shear.nii", &nifti);
  EXPECT_EQ(nifti.nifti.qform_code, 0);
  EXPECT_EQ(nifti.affine(), (Affine{1, 0.5, 0, 1, 0, 1, 0, 2, 0, 0, 1, 3, 0, 0, 0, 1}));
}

TEST(VolumeIo, NrrdWriterRoundTripsEveryType) {
  TempDir dir;
  unsigned seed = 220;
  for_each_voxel_type([&](auto t) {
    using T = decltype(t);
    const auto voxels = random_voxels<T>(9 * 4 * 3, seed++);
    Volume<T> v(9, 4, 3);
    std::copy(voxels.begin(), voxels.end(), v.data());
    v.set_spacing(0.5, 1.25, 4);
    for (const bool gz : {true, false}) {
      const auto p = dir / (std::string(io::voxel_type_name(Names<T>::type)) + (gz ? ".nrrd" : "-raw.nrrd"));
      io::VolumeWriteOptions options;
      options.nrrd_gzip = gz;
      io::write_volume(p, v.view(), options);
      io::SpatialHeader header;
      expect_voxels(io::read_volume(p, &header), 9, 4, 3, voxels, 0.5, 1.25, 4);
      EXPECT_FALSE(header.nrrd.has_directions);  // no orientation to carry: spacings only
      EXPECT_EQ(header.nrrd.spacings, (std::array<double, 3>{0.5, 1.25, 4}));
      const std::string file = read_bytes(p);
      EXPECT_EQ(file.substr(0, 9), "NRRD0004\n");
      if (!gz)
        EXPECT_EQ(file.substr(file.size() - voxels.size() * sizeof(T)),
                  to_bytes(voxels, std::endian::native == std::endian::big));
    }
  });
  EXPECT_EQ(dir.files().size(), 20u);
}

// A damaged file named for a volume format is read as that format, so its real problem is named.
TEST(VolumeIo, DamagedFilesAreReadAsTheirNamesSay) {
  TempDir dir;
  const std::string junk =
      "this is no volume, only a sentence long enough to pass for a header or two. " + std::string(400, '.');
  auto check = [&](const std::string& name, const std::string& bytes, const std::string& fragment) {
    write_bytes(dir / name, bytes);
    EXPECT_TRUE(io::is_volume_file(dir / name)) << name;
    expect_input_error([&] { io::read_volume(dir / name); }, dir / name, fragment);
  };
  check("a.nii", junk, "not a NIfTI-1 file: bad header");
  check("b.nii.gz", gzip(junk), "not a NIfTI-1 file: bad header");
  check("c.NII.GZ", junk, "not a NIfTI-1 file: bad header");
  check("d.nrrd", junk, "not a NRRD file: bad header");
  check("e.nhdr", junk, "not a NRRD file: bad header");
  check("f.npy", junk, "not a .npy file: bad header");
  const auto voxels = random_voxels<std::int16_t>(16 * 16 * 16, 230);
  const std::string gz = gzip(nifti_file(nifti_spec<std::int16_t>(16, 16, 16), to_bytes(voxels, false)));
  check("g.nii.gz", gz.substr(0, gz.size() - 200), "gzip stream truncated");
  check("h.gz", gzip(junk), "unknown volume format inside the gzip stream");
  // Other names are told by their bytes: junk is no volume (an image reader reports it).
  write_bytes(dir / "i.bin", junk);
  EXPECT_FALSE(io::is_volume_file(dir / "i.bin"));
}

TEST(VolumeIo, ProgressIsToldWhileReadingAndWriting) {
  TempDir dir;
  Volume<std::uint16_t> v(128, 128, 96);
  std::mt19937 rng(240);
  for (auto& x : v.voxels()) x = static_cast<std::uint16_t>(rng());  // 3 MiB that do not compress
  struct Calls {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
    ProgressSink sink() {
      return [this](std::uint64_t done, std::uint64_t total) { seen.emplace_back(done, total); };
    }
    void expect_complete(std::uint64_t total, std::size_t at_least) const {
      ASSERT_GE(seen.size(), at_least);
      for (std::size_t i = 0; i < seen.size(); ++i) {
        EXPECT_EQ(seen[i].second, total);
        if (i > 0) EXPECT_GE(seen[i].first, seen[i - 1].first);
      }
      EXPECT_EQ(seen.back().first, total);
    }
  };
  for (const char* name : {"p.nii.gz", "p.nii", "p.nrrd"}) {
    Calls writing, reading;
    io::VolumeWriteOptions w;
    w.progress = writing.sink();
    io::write_volume(dir / name, v.view(), w);
    writing.expect_complete(v.size() * 2, 1);
    io::VolumeReadOptions r;
    r.progress = reading.sink();
    const auto back = std::get<Volume<std::uint16_t>>(io::read_volume(dir / name, nullptr, r));
    EXPECT_TRUE(std::equal(back.voxels().begin(), back.voxels().end(), v.voxels().begin()));
    // A compressed file tells its compressed bytes consumed, MiB by MiB; a plain one its voxel
    // bytes copied (16 MiB pieces: one call here).
    if (std::string(name) == "p.nii") reading.expect_complete(v.size() * 2, 1);
    else if (std::string(name) == "p.nii.gz") reading.expect_complete(fs::file_size(dir / name), 3);
    else reading.expect_complete(reading.seen.at(0).second, 3);  // the NRRD's gzip data
  }
}

// ---- the bundled real volumes ------------------------------------------------------------------
namespace {
// Sum of the voxels and sum of voxel[i] * (i % 1000) over the file order (x fastest), in double.
template <class T>
std::pair<double, double> checksums(const Volume<T>& v) {
  double sum = 0, weighted = 0;
  for (std::int64_t i = 0; i < v.size(); ++i) {
    sum += static_cast<double>(v.data()[i]);
    weighted += static_cast<double>(v.data()[i]) * static_cast<double>(i % 1000);
  }
  return {sum, weighted};
}
}  // namespace

// The expected sums were computed here with Python and NumPy, independently of winnow:
//   a = numpy.frombuffer(gzip.open(f).read(), dtype, offset=352).astype(numpy.float64)
//   (a.sum(), (a * (numpy.arange(a.size) % 1000)).sum())
// (both headers: vox_offset 352, scl_slope 1, scl_inter 0), and for the TIFF stack
// tifffile.imread(f).ravel() in place of a; nibabel and tifffile report the same shapes.
TEST(VolumeIo, BundledMni152GreyMatter) {
  const auto v = io::read_volume(data_path("volumes/mni152_gm.nii.gz"));
  const auto info = io::describe(v);
  EXPECT_EQ(info.type, io::VoxelType::u8);
  EXPECT_EQ(info.nx, 197);
  EXPECT_EQ(info.ny, 233);
  EXPECT_EQ(info.nz, 189);
  EXPECT_EQ(info.sx, 1.0);
  EXPECT_EQ(info.sy, 1.0);
  EXPECT_EQ(info.sz, 1.0);
  const auto [sum, weighted] = checksums(std::get<Volume<std::uint8_t>>(v));
  EXPECT_EQ(sum, 257090788.0);  // integers: exact in double
  EXPECT_EQ(weighted, 128392799603.0);
}

TEST(VolumeIo, BundledMotorActivation) {
  const auto v = io::read_volume(data_path("volumes/motor_activation.nii.gz"));
  const auto info = io::describe(v);
  EXPECT_EQ(info.type, io::VoxelType::f32);
  EXPECT_EQ(info.nx, 53);
  EXPECT_EQ(info.ny, 63);
  EXPECT_EQ(info.nz, 46);
  EXPECT_EQ(info.sx, 3.0);
  EXPECT_EQ(info.sy, 3.0);
  EXPECT_EQ(info.sz, 3.0);
  const auto [sum, weighted] = checksums(std::get<Volume<float>>(v));
  EXPECT_NEAR(sum, 3460.168992704268, 1e-6);  // summation order may differ from NumPy's pairwise sum
  EXPECT_NEAR(weighted, 1717996.0205553737, 1e-3);
}

TEST(VolumeIo, BundledBlobsTiffStack) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  // 30 pages of 32 x 32: x and y are a page's columns and rows, z the page.
  const auto v = io::read_volume(data_path("volumes/blobs3d.tif"));
  const auto info = io::describe(v);
  EXPECT_EQ(info.type, io::VoxelType::u8);
  EXPECT_EQ(info.nx, 32);
  EXPECT_EQ(info.ny, 32);
  EXPECT_EQ(info.nz, 30);
  const auto& blobs = std::get<Volume<std::uint8_t>>(v);
  const auto [sum, weighted] = checksums(blobs);
  EXPECT_EQ(sum, 1020765.0);
  EXPECT_EQ(weighted, 512448000.0);
  EXPECT_EQ(blobs(20, 10, 5), 255);  // tifffile: a[5, 10, 20] (page, row, column)
  EXPECT_EQ(blobs(3, 2, 1), 0);
#endif
}

// ---- bad files ---------------------------------------------------------------------------------
TEST(VolumeIo, BadNiftiFiles) {
  TempDir dir;
  const auto voxels = random_voxels<std::int16_t>(8 * 8 * 8, 170);
  const NiftiSpec good = nifti_spec<std::int16_t>(8, 8, 8);
  auto check = [&](const std::string& name, const std::string& bytes, const std::string& fragment) {
    write_bytes(dir / name, bytes);
    expect_input_error([&] { io::read_volume(dir / name); }, dir / name, fragment);
  };
  const std::string whole = nifti_file(good, to_bytes(voxels, false));
  check("trunc.nii", whole.substr(0, whole.size() - 100),
        "truncated: the header's 8 x 8 x 8 i16 voxels from offset 352 need 1024 bytes, the file holds 924");
  check("header.nii", whole.substr(0, 200), "truncated NIfTI header");
  NiftiSpec s = good;
  s.dim[1] = s.dim[2] = s.dim[3] = 32767;  // 2^45 voxels claimed, a few hundred bytes present
  check("huge.nii", nifti_file(s, to_bytes(voxels, false)), "need 70362301923326 bytes, the file holds 1024");
  s = good;
  s.dim[0] = 4, s.dim[4] = 5;
  check("4d.nii", nifti_file(s, to_bytes(voxels, false)), "a 4-D NIfTI image of 8 x 8 x 8 x 5 voxels");
  s = good;
  s.dim[2] = 0;
  check("zero.nii", nifti_file(s, ""), "zero-sized dimension");
  s = good;
  s.dim[2] = -4;
  check("negative.nii", nifti_file(s, ""), "zero-sized dimension");
  s = good;
  s.datatype = 32, s.bitpix = 64;
  check("complex.nii", nifti_file(s, to_bytes(voxels, false)), "unsupported NIfTI datatype 32 (complex64)");
  s = good;
  s.magic = std::string("ni1\0", 4);
  check("pair.hdr", nifti_file(s, ""), ".hdr/.img pair");
  s = good;
  s.magic = std::string(4, '\0');
  check("analyze.nii", nifti_file(s, to_bytes(voxels, false)), "no \"n+1\" magic");
  s = good;
  s.vox_offset = 100;
  check("offset.nii",
        nifti_file(NiftiSpec(good), to_bytes(voxels, false)).replace(108, 4, to_bytes(std::vector<float>{100}, false)),
        "vox_offset");
  std::string nifti2 = whole;
  nifti2.replace(0, 4, to_bytes(std::vector<std::int32_t>{540}, false));
  check("two.nii", nifti2, "NIfTI-2");
  s = good;
  s.dim[0] = 9;
  check("dims.nii", nifti_file(s, to_bytes(voxels, false)), "dim[0] = 9");

  // gzip: damaged in the middle, cut short.
  std::string gz = gzip(whole);
  std::string damaged = gz;
  for (std::size_t i = 40; i < 60; ++i) damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
  check("damaged.nii.gz", damaged, "corrupt gzip data");
  check("cut.nii.gz", gz.substr(0, gz.size() / 2), "gzip stream truncated");
  check("gzipped.tif", gzip("II*\0" + std::string(100, '\0')), "gzip-compressed TIFF");
}

TEST(VolumeIo, BadNrrdFiles) {
  TempDir dir;
  auto check = [&](const std::string& name, const std::string& bytes, const fs::path& named,
                   const std::string& fragment) {
    write_bytes(dir / name, bytes);
    expect_input_error([&] { io::read_volume(dir / name); }, named, fragment);
  };
  const std::string head = "NRRD0004\ntype: short\ndimension: 3\nsizes: 4 4 4\nendian: little\n";
  check("trunc.nrrd", head + "encoding: raw\n\n" + std::string(100, 'a'), dir / "trunc.nrrd",
        "truncated: the header's 4 x 4 x 4 i16 voxels after a byte skip of 0 need 128 bytes, the file holds 100");
  check("text.nrrd", head + "encoding: ascii\n\n1 2 3", dir / "text.nrrd", "unsupported NRRD encoding 'ascii'");
  check("bz2.nrrd", head + "encoding: bzip2\n\n", dir / "bz2.nrrd", "unsupported NRRD encoding 'bzip2'");
  check("block.nrrd", "NRRD0004\ntype: block\ndimension: 3\nsizes: 4 4 4\nencoding: raw\n\n", dir / "block.nrrd",
        "unsupported NRRD type 'block'");
  check("4d.nrrd", "NRRD0004\ntype: short\ndimension: 4\nsizes: 4 4 4 3\nendian: little\nencoding: raw\n\n",
        dir / "4d.nrrd", "a 4-D NRRD of sizes '4 4 4 3'");
  check("zero.nrrd", "NRRD0004\ntype: short\ndimension: 3\nsizes: 4 0 4\nendian: little\nencoding: raw\n\n",
        dir / "zero.nrrd", "zero-sized dimension");
  check("noendian.nrrd", "NRRD0004\ntype: short\ndimension: 3\nsizes: 4 4 4\nencoding: raw\n\n", dir / "noendian.nrrd",
        "no 'endian' field");
  check("gz.nrrd", head + "encoding: gzip\n\n" + std::string(50, 'z'), dir / "gz.nrrd", "corrupt gzip data");
  check("nofile.nhdr", head + "encoding: raw\ndata file: absent.raw\n", dir / "absent.raw", "no such file");
  check("list.nhdr", head + "encoding: raw\ndata file: LIST\na.raw\n", dir / "list.nhdr", "several files");
  check("overflow.nrrd",
        "NRRD0004\ntype: double\ndimension: 3\nsizes: 4294967296 4294967296 4294967296\nendian: little\n"
        "encoding: raw\n\n",
        dir / "overflow.nrrd", "larger than any memory");
  check("noend.nrrd", head + "encoding: raw", dir / "noend.nrrd", "no empty line ends the header");
  write_bytes(dir / "short.raw", std::string(64, 'r'));
  check("short.nhdr", head + "encoding: raw\ndata file: short.raw\n", dir / "short.raw",
        "need 128 bytes, the file holds 64");
}

TEST(VolumeIo, BadNpyFiles) {
  TempDir dir;
  auto check = [&](const std::string& name, const std::string& bytes, const std::string& fragment) {
    write_bytes(dir / name, bytes);
    expect_input_error([&] { io::read_volume(dir / name); }, dir / name, fragment);
  };
  const std::string data(4 * 3 * 5 * 2, 'd');
  check("trunc.npy", npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (4, 3, 5), }", data.substr(10)),
        "truncated: the npy array of shape (4, 3, 5) and dtype '<u2' need 120 bytes, the file holds 110");
  check("complex.npy", npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (4, 3, 5), }", data),
        "unsupported npy dtype '<c8'");
  check("half.npy", npy_file("{'descr': '<f2', 'fortran_order': False, 'shape': (4, 3, 5), }", data),
        "unsupported npy dtype '<f2'");
  check("struct.npy", npy_file("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (4,), }", data),
        "structured dtype");
  check("zero.npy", npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (4, 0, 5), }", ""),
        "zero-sized dimension");
  check("4d.npy", npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 4, 3, 5), }", data),
        "shape (2, 4, 3, 5) (2-D or 3-D expected)");
  check("1d.npy", npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (60,), }", data), "shape (60,)");
  check("overflow.npy",
        npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3037000500, 3037000500, 2), }", data),
        "larger than any memory");
  check("toobig.npy", npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999, 1), }", data),
        "too large");
  check("nokey.npy", npy_file("{'descr': '<u2', 'shape': (4, 3, 5), }", data),
        "'fortran_order' and 'shape' are all required");
  check("garbage.npy", npy_file("not a dict at all", data), "bad npy header: expected '{'");
  check("badorder.npy", npy_file("{'descr': '<u2', 'fortran_order': maybe, 'shape': (4, 3, 5), }", data),
        "neither True nor False");
  check("badshape.npy", npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (4, -3, 5), }", data),
        "non-negative integers");
  std::string long_header = npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (4, 3, 5), }", data);
  put(long_header, 8, std::uint16_t{60000}, false);
  check("hlen.npy", long_header, "60000 header bytes announced");
  std::string version = npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (4, 3, 5), }", data);
  version[6] = 9;
  check("version.npy", version, "unsupported npy format version 9.0");
}

// Found by scripts/fuzz.sh (fuzz_volume): a mutated blobs3d.tif of 35,828 bytes whose pages claim
// 16,777,225-byte strips. It was refused only after the whole volume (16.1 GB) had been allocated;
// now the pages' claim is checked against the bytes the file holds first.
TEST(VolumeIo, TiffStackClaimingMoreThanItsFileHolds) {
  const auto path = winnow::test::test_data_path("fuzz/volume-tiff-stack-claims-16GB.tif");
#ifdef WINNOW_HAVE_TIFF
  expect_input_error([&] { (void)io::read_volume(path); }, path, "more than its data in the file can hold");
#else
  GTEST_SKIP() << "built without TIFF";
#endif
}

// Limits audit: the image reader checks a TIFF page's claim the way the stack reader does. The
// fuzzed stack above, read as an image (its first page), must be refused before allocating.
TEST(VolumeIo, TiffImageClaimingMoreThanItsFileHoldsIsNotAllocated) {
#ifdef WINNOW_HAVE_TIFF
  const auto path = winnow::test::test_data_path("fuzz/volume-tiff-stack-claims-16GB.tif");
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgba8(path); }, "cannot come from a file of");
#else
  GTEST_SKIP() << "built without TIFF";
#endif
}

// Found by fuzz_tiff_stack (out of memory): a 443-byte TIFF whose page of 8 x 16 pixels names
// tiles 3,430,023,169 pixels wide. The page's claim passed; the tile buffer (27 GB) was then
// allocated before the first tile was read. A tile decodes from its bytes in the file, so its
// size is bounded as the page's is: refused as corrupt before the buffer, as a volume and as an
// image alike.
TEST(VolumeIo, TiffTileClaimingMoreThanItsFileHoldsIsNotAllocated) {
#ifdef WINNOW_HAVE_TIFF
  const auto path = winnow::test::test_data_path("fuzz/volume-tiff-stack-huge-tiles.tif");
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_volume(path); }, "corrupt TIFF: tiles of");
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_rgba8(path); }, "corrupt TIFF: tiles of");
#else
  GTEST_SKIP() << "built without TIFF";
#endif
}

// Found by fuzz_tiff_stack (out of memory): a 218-byte TIFF of 62981 x 29479 16-bit pixels whose
// compression tag says CCITT fax 4. Fax pages were exempt from the claim check (a bilevel fax
// line of any width can take a few bits), so the 3.7 GB volume was allocated; but fax codes
// 1-bit pages only, and a 16-bit page under it cannot decode at all.
TEST(VolumeIo, TiffFaxPageOfSixteenBitsIsNotAllocated) {
#ifdef WINNOW_HAVE_TIFF
  const auto path = winnow::test::test_data_path("fuzz/volume-tiff-stack-16bit-fax.tif");
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_volume(path); },
                                               "more than its data in the file can hold");
#else
  GTEST_SKIP() << "built without TIFF";
#endif
}

// The claim check must not refuse valid pages that compress far: ZSTD codes a page of one value
// in a few dozen bytes (an expansion beyond 4096, the bound of LZW and Deflate).
TEST(VolumeIo, ZstdTiffStackOfConstantPagesIsRead) {
#ifdef WINNOW_HAVE_TIFF
  if (!TIFFIsCODECConfigured(COMPRESSION_ZSTD)) GTEST_SKIP() << "libtiff without ZSTD";
  TempDir dir;
  const auto path = dir / "zstd.tif";
  std::mt19937 rng(17);
  const std::uint32_t w = 2048, h = 2048;
  std::vector<std::uint8_t> values;
  {
    TIFF* t = TIFFOpen(path.c_str(), "w");
    ASSERT_NE(t, nullptr);
    for (int page = 0; page < 3; ++page) {
      values.push_back(static_cast<std::uint8_t>(1 + rng() % 255));
      TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
      TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
      TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
      TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_ZSTD);
      TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, h);
      std::vector<std::uint8_t> row(w, values.back());
      for (std::uint32_t y = 0; y < h; ++y) ASSERT_EQ(TIFFWriteScanline(t, row.data(), y, 0), 1);
      ASSERT_TRUE(TIFFWriteDirectory(t));
    }
    TIFFClose(t);
  }
  // Each page (its strip and tags) in under 1/4096 of its pixels.
  ASSERT_LT(std::filesystem::file_size(path) / 3 * 4096, std::uintmax_t{w} * h) << "not compressed beyond 4096";
  const auto any = io::read_volume(path);
  const auto& v = std::get<Volume<std::uint8_t>>(any);
  ASSERT_EQ(v.nx(), w);
  ASSERT_EQ(v.ny(), h);
  ASSERT_EQ(v.nz(), 3);
  for (std::int64_t z = 0; z < 3; ++z)
    for (std::int64_t i = 0; i < std::int64_t{w} * h; ++i)
      ASSERT_EQ(v.data()[z * w * h + i], values[z]) << "page " << z;
#else
  GTEST_SKIP() << "built without TIFF";
#endif
}

// A fuzzed .nii.gz (1.8 MB) whose damaged gzip trailer claims 2 GB: the reader must find the
// corruption without first allocating what the trailer claims. Run in a child process limited to
// 1 GiB of address space: an allocation of the claimed size fails there, and the error would then
// be the out-of-memory one instead of the corrupt-data one. (Sanitizers reserve terabytes of
// address space, so the child cannot be limited under them.)
TEST(VolumeIo, GzipTrailerClaimingGigabytesIsNotAllocated) {
  const auto path = winnow::test::test_data_path("fuzz/volume-gzip-trailer-claims-2GB.nii.gz");
  winnow::test::expect_input_error_within_1GiB([&] { (void)io::read_volume(path); }, "corrupt gzip data");
}

TEST(VolumeIo, BadTiffStacks) {
#ifndef WINNOW_HAVE_TIFF
  GTEST_SKIP() << "TIFF support not compiled in";
#else
  TempDir dir;
  // Pages of different sizes.
  {
    TIFF* t = TIFFOpen((dir / "sizes.tif").c_str(), "w");
    ASSERT_NE(t, nullptr);
    for (std::uint32_t w : {8u, 9u}) {
      TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
      TIFFSetField(t, TIFFTAG_IMAGELENGTH, 4u);
      TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
      TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      std::vector<std::uint8_t> row(w, 7);
      for (std::uint32_t y = 0; y < 4; ++y) ASSERT_EQ(TIFFWriteScanline(t, row.data(), y, 0), 1);
      ASSERT_TRUE(TIFFWriteDirectory(t));
    }
    TIFFClose(t);
  }
  expect_input_error([&] { io::read_volume(dir / "sizes.tif"); }, dir / "sizes.tif",
                     "TIFF pages differ: page 0 is 8 x 4, 1 sample(s) of 8-bit unsigned integer, page 1 is 9 x 4");
  // RGB pages.
  {
    TIFF* t = TIFFOpen((dir / "rgb.tif").c_str(), "w");
    ASSERT_NE(t, nullptr);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 4u);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 2u);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 3);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    std::vector<std::uint8_t> row(12, 9);
    for (std::uint32_t y = 0; y < 2; ++y) ASSERT_EQ(TIFFWriteScanline(t, row.data(), y, 0), 1);
    TIFFClose(t);
  }
  expect_input_error([&] { io::read_volume(dir / "rgb.tif"); }, dir / "rgb.tif", "3 sample(s)");
  // A stack cut short.
  const auto voxels = random_voxels<std::uint16_t>(32 * 32 * 4, 190);
  write_tiff_stack(dir / "full.tif", 32, 32, 4, voxels, false);
  const std::string whole = read_bytes(dir / "full.tif");
  write_bytes(dir / "cut.tif", whole.substr(0, whole.size() / 2));
  expect_input_error([&] { io::read_volume(dir / "cut.tif"); }, dir / "cut.tif", "TIFF");
#endif
}

TEST(VolumeIo, BadRawAndUnknownFiles) {
  TempDir dir;
  write_bytes(dir / "v.raw", std::string(4 * 5 * 6 * 2 - 1, 'r'));
  expect_input_error([&] { io::read_raw_volume(dir / "v.raw", 4, 5, 6, io::VoxelType::u16); }, dir / "v.raw",
                     "raw volume of 4 x 5 x 6 u16 voxels should be 240 bytes, the file holds 239");
  expect_input_error([&] { io::read_raw_volume(dir / "v.raw", 4, 0, 6, io::VoxelType::u16); }, dir / "v.raw",
                     "zero-sized dimension");
  expect_input_error(
      [&] { io::read_raw_volume(dir / "v.raw", std::int64_t{1} << 40, std::int64_t{1} << 40, 2, io::VoxelType::f64); },
      dir / "v.raw", "larger than any memory");
  write_bytes(dir / "what.bin", "hello, this is no volume");
  expect_input_error([&] { io::read_volume(dir / "what.bin"); }, dir / "what.bin", "unknown volume format");
  write_bytes(dir / "what.gz", gzip("hello, this is no volume"));
  expect_input_error([&] { io::read_volume(dir / "what.gz"); }, dir / "what.gz",
                     "unknown volume format inside the gzip stream");
  write_bytes(dir / "empty.nii", "");
  expect_input_error([&] { io::read_volume(dir / "empty.nii"); }, dir / "empty.nii", "empty file");
  expect_input_error([&] { io::read_volume(dir / "absent.nii"); }, dir / "absent.nii", "no such file");
  expect_input_error([&] { io::read_volume(dir.path()); }, dir.path(), "is a directory");
}
