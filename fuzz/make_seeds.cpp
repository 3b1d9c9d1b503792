// Writes the fuzz targets' seed corpora: small files (under a few KB, so the fuzzer spends its
// executions on parsing rather than on decoding big rasters) of every layout the readers know,
// written by winnow's own writers where it has one (PNG, TIFF, NIfTI, .nii.gz, .npy, TIFF
// stacks), by libjpeg for JPEG, by hand for FITS and NRRD (their headers are text), and the
// puzzle JSON files and command lines for fuzz_json and fuzz_cli_args. The pixels are random
// (fixed seed), so every decoder path sees real data.
//   make_seeds DIR      writes DIR/<target>/... for every target of fuzz/CMakeLists.txt
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "winnow/image.hpp"
#include "winnow/io.hpp"
#include "winnow/volume.hpp"
#include "winnow/volume_io.hpp"

// jpeglib.h needs size_t and FILE (<cstdio>) first: kept after the standard headers.
// clang-format off
#include <jpeglib.h>
// clang-format on

namespace {

namespace fs = std::filesystem;
std::mt19937 rng(20261124);

void write_file(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

template <class T>
winnow::Volume<T> random_volume(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  winnow::Volume<T> v(nx, ny, nz);
  std::uniform_int_distribution<int> d(0, 200);
  for (std::int64_t i = 0; i < nx * ny * nz; ++i) v.data()[i] = static_cast<T>(d(rng));
  return v;
}

void write_jpeg(const fs::path& path, int width, int height, int components, bool progressive) {
  std::vector<unsigned char> pixels(static_cast<std::size_t>(width * height * components));
  for (auto& p : pixels) p = static_cast<unsigned char>(rng());
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  jpeg_mem_dest(&c, &out, &out_size);
  c.image_width = static_cast<JDIMENSION>(width);
  c.image_height = static_cast<JDIMENSION>(height);
  c.input_components = components;
  c.in_color_space = components == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 70, TRUE);
  if (progressive) jpeg_simple_progression(&c);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = pixels.data() + static_cast<std::size_t>(c.next_scanline) * width * components;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  write_file(path, std::string(reinterpret_cast<char*>(out), out_size));
  jpeg_destroy_compress(&c);
  std::free(out);
}

// FITS: 80-character header cards in 2880-byte blocks, then big-endian data padded to 2880.
std::string fits_card(const std::string& key, const std::string& value) {
  std::string card = key;
  card.resize(8, ' ');
  if (!value.empty()) card += "= " + std::string(20 - std::min<std::size_t>(value.size(), 20), ' ') + value;
  card.resize(80, ' ');
  return card;
}
void write_fits(const fs::path& path, int bitpix, int width, int height, const std::string& extra_cards) {
  std::string h = fits_card("SIMPLE", "T") + fits_card("BITPIX", std::to_string(bitpix)) + fits_card("NAXIS", "2") +
                  fits_card("NAXIS1", std::to_string(width)) + fits_card("NAXIS2", std::to_string(height)) +
                  extra_cards + fits_card("END", "");
  h.resize((h.size() + 2879) / 2880 * 2880, ' ');
  std::string data(static_cast<std::size_t>(width * height * (bitpix < 0 ? -bitpix : bitpix) / 8), '\0');
  if (bitpix == -32) {
    for (std::size_t i = 0; i < data.size(); i += 4) {
      const auto bits =
          __builtin_bswap32(std::bit_cast<std::uint32_t>(std::uniform_real_distribution<float>(-1, 1)(rng)));
      std::memcpy(&data[i], &bits, 4);
    }
  } else {
    for (auto& b : data) b = static_cast<char>(rng());
  }
  data.resize((data.size() + 2879) / 2880 * 2880, '\0');
  write_file(path, h + data);
}

std::string gzip(const std::string& raw) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, static_cast<uLong>(raw.size())) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string random_bytes(std::size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// A puzzle file as `winnow scramble --truth` / `unscramble --placement` write it.
std::string puzzle_json(const char* format, const char* key, int rows, int cols) {
  std::vector<int> perm(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::string s = std::string("{\"format\": \"") + format + "\", \"version\": 1, \"rows\": " + std::to_string(rows) +
                  ", \"cols\": " + std::to_string(cols) + ", \"tile\": 28, \"" + key + "\": [";
  for (std::size_t i = 0; i < perm.size(); ++i) s += (i ? ", " : "") + std::to_string(perm[i]);
  return s + "]}";
}

// argv joined by NUL, as fuzz_cli_args splits its input.
std::string command_line(std::initializer_list<const char*> args) {
  std::string s;
  for (const char* a : args) s += std::string(a) + '\0';
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  namespace io = winnow::io;
  using winnow::Image;
  using winnow::Rgba8;

  // Images.
  fs::create_directories(dir / "png");
  Image<Rgba8> rgba(16, 12);
  for (std::int64_t i = 0; i < rgba.size(); ++i)
    rgba.data()[i] = Rgba8{static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng()),
                           static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng())};
  io::write_png(dir / "png/rgba8.png", rgba.view());
  Image<std::uint8_t> grey(13, 7);
  for (std::int64_t i = 0; i < grey.size(); ++i) grey.data()[i] = static_cast<std::uint8_t>(rng());
  io::write_png(dir / "png/grey8.png", grey.view());
  write_jpeg(dir / "jpeg/rgb.jpg", 16, 16, 3, false);
  write_jpeg(dir / "jpeg/grey-progressive.jpg", 17, 9, 1, true);
  fs::create_directories(dir / "tiff");
  Image<std::uint32_t> labels(9, 5);
  for (std::int64_t i = 0; i < labels.size(); ++i) labels.data()[i] = rng() % 1000;
  io::write_tiff(dir / "tiff/u32.tif", labels.view());
  io::write_volume(dir / "tiff/u8.tif", random_volume<std::uint8_t>(11, 6, 1).view());
  io::write_volume(dir / "tiff/u16.tif", random_volume<std::uint16_t>(7, 5, 1).view());
  io::write_volume(dir / "tiff/f32.tif", random_volume<float>(6, 4, 1).view());
  write_fits(dir / "fits/i16.fits", 16, 8, 6, fits_card("BZERO", "32768") + fits_card("BSCALE", "1"));
  write_fits(dir / "fits/f32.fits", -32, 5, 4, "");
  write_fits(dir / "fits/u8.fits", 8, 9, 3, "");

  // Volumes.
  fs::create_directories(dir / "nifti");
  io::write_volume(dir / "nifti/u8.nii", random_volume<std::uint8_t>(6, 5, 4).view());
  io::write_volume(dir / "nifti/i16.nii.gz", random_volume<std::int16_t>(5, 4, 3).view());
  io::write_volume(dir / "nifti/f32.nii", random_volume<float>(3, 4, 2).view());
  fs::create_directories(dir / "npy");
  io::write_volume(dir / "npy/u8.npy", random_volume<std::uint8_t>(6, 5, 4).view());
  io::write_volume(dir / "npy/i32.npy", random_volume<std::int32_t>(3, 4, 2).view());
  io::write_volume(dir / "npy/f64.npy", random_volume<double>(2, 3, 2).view());
  fs::create_directories(dir / "tiff_stack");
  io::write_volume(dir / "tiff_stack/u8.tif", random_volume<std::uint8_t>(8, 6, 3).view());
  io::write_volume(dir / "tiff_stack/u16.tif", random_volume<std::uint16_t>(5, 4, 2).view());
  const std::string nrrd_head = "NRRD0004\n# seed\ntype: unsigned short\ndimension: 3\nsizes: 5 4 3\nendian: little\n";
  write_file(dir / "nrrd/u16-raw.nrrd",
             nrrd_head + "spacings: 1 1 2.5\nencoding: raw\n\n" + random_bytes(5 * 4 * 3 * 2));
  write_file(dir / "nrrd/f32-gzip.nrrd",
             "NRRD0005\ntype: float\ndimension: 3\nspace: left-posterior-superior\nsizes: 3 3 2\n"
             "space directions: (1,0,0) (0,1,0) (0,0,2)\nendian: big\nencoding: gzip\n\n" +
                 gzip(random_bytes(3 * 3 * 2 * 4)));
  write_file(
      dir / "nrrd/i8-skip.nrrd",
      "NRRD0004\ntype: signed char\ndimension: 3\nsizes: 4 3 2\nbyte skip: -1\nencoding: raw\n\n" + random_bytes(40));

  // The dispatching targets take every format of their kind.
  for (const auto& [target, parts] :
       {std::pair{"image", std::vector<const char*>{"png", "jpeg", "tiff", "fits"}},
        std::pair{"volume", std::vector<const char*>{"nifti", "nrrd", "npy", "tiff_stack"}}})
    for (const char* part : parts)
      for (const auto& f : fs::directory_iterator(dir / part)) {
        fs::create_directories(dir / target);
        fs::copy_file(f.path(), dir / target / (std::string(part) + "-" + f.path().filename().string()),
                      fs::copy_options::overwrite_existing);
      }

  // JSON and command lines.
  write_file(dir / "json/placement.json", puzzle_json("winnow-puzzle-placement", "tile_at", 3, 4));
  write_file(dir / "json/truth.json", puzzle_json("winnow-puzzle-truth", "truth", 2, 5));
  const std::pair<const char*, std::string> lines[] = {
      {"compact", command_line({"compact", "in.png", "--threshold", "40.5", "--key", "alpha", "--sort", "asc",
                                "--out-packed", "p.png", "--backend", "cpu"})},
      {"label", command_line({"label", "in.png", "--otsu", "--invert", "--connectivity", "4", "--min-area", "20",
                              "--out-labels", "l.tif", "-q"})},
      {"label-volume", command_line({"label", "v.nii.gz", "--connectivity", "18", "--multilabel", "--largest-k", "3",
                                     "--stats", "s.csv"})},
      {"scramble",
       command_line({"scramble", "in.png", "--grid", "3x4", "--seed", "7", "--out", "s.png", "--truth", "t.json"})},
      {"unscramble", command_line({"unscramble", "s.png", "--tile", "28", "--method", "greedy", "--measure", "mgc",
                                   "--out", "r.png", "--placement", "p.json"})},
      {"score", command_line({"puzzle-score", "p.json", "t.json"})},
      {"voxels", command_line({"voxels", "v.raw", "--level", "12.5", "--below", "--dims", "4,5,6", "--dtype", "u16",
                               "--out", "v.csv"})},
      {"isosurface", command_line({"isosurface", "v.nii", "--level", "0.5", "--spacing", "1,1,2.5", "--normals",
                                   "--flip", "--out", "m.ply", "--preview", "m.png"})},
      {"devices", command_line({"devices", "--backend", "auto"})},
  };
  for (const auto& [name, line] : lines) write_file(dir / "cli_args" / name, line);
  return 0;
}
