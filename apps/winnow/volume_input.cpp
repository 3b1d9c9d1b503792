// The input volume of the volume commands: a file read_volume recognises, or a headerless raw
// file described by --dims and --dtype; and the --level they take.
#include "volume_input.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <utility>

#include "winnow/error.hpp"
#include "winnow/progress.hpp"

namespace winnow::cli {

std::array<std::int64_t, 3> parse_dims(const std::string& text) {
  std::array<std::int64_t, 3> dims{};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (std::size_t axis = 0; axis < 3; ++axis) {
    const auto [next, ec] = std::from_chars(p, end, dims[axis]);
    const bool separator_ok = axis < 2 ? (next < end && *next == ',') : next == end;
    if (ec != std::errc() || dims[axis] <= 0 || !separator_ok)
      throw InputError("--dims '" + text + "' is not X,Y,Z (three positive integers)");
    p = next + 1;
  }
  return dims;
}

io::VoxelType parse_dtype(const std::string& text) {
  using io::VoxelType;
  for (VoxelType t : {VoxelType::u8, VoxelType::i8, VoxelType::u16, VoxelType::i16, VoxelType::u32, VoxelType::i32,
                      VoxelType::u64, VoxelType::i64, VoxelType::f32, VoxelType::f64})
    if (text == io::voxel_type_name(t)) return t;
  throw InputError("--dtype '" + text + "' is not one of u8 i8 u16 i16 u32 i32 u64 i64 f32 f64");
}

void add_raw_volume_options(CLI::App* cmd, VolumeArguments& arguments) {
  cmd->add_option("--dims", arguments.dims, "raw volume: X,Y,Z voxels");
  cmd->add_option("--dtype", arguments.dtype, "raw volume: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 (little-endian)");
}

VolumeSource::VolumeSource(const VolumeArguments& arguments) : input_(arguments.input) {
  if (arguments.dims.empty() != arguments.dtype.empty())
    throw InputError(arguments.input + ": a raw volume needs both --dims and --dtype");
  if (!arguments.dims.empty()) {
    raw_dims_ = parse_dims(arguments.dims);
    raw_type_ = parse_dtype(arguments.dtype);
  }
}

io::AnyVolume VolumeSource::read(io::SpatialHeader* header, bool quiet) const {
  if (raw_dims_) {
    if (header) *header = io::SpatialHeader{};
    return io::read_raw_volume(input_, (*raw_dims_)[0], (*raw_dims_)[1], (*raw_dims_)[2], raw_type_);
  }
  Progress reading("reading " + std::filesystem::path(input_).filename().string(), 1, quiet);
  io::VolumeReadOptions options;
  options.progress = reading.sink();
  return io::read_volume(input_, header, options);
}

double parse_level(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double level = std::strtod(begin, &end);
  // A finite decimal number; strtod would also take leading blanks, hex, "inf" and "nan". Its
  // ERANGE is not an error here: an overflow shows as infinite, an underflow is a subnormal or
  // zero level, which f64 voxels can hold.
  const bool plain = !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  if (!plain || end != begin + text.size() || !std::isfinite(level))
    throw InputError("--level '" + text + "' is not a finite number");
  return level;
}

CLI::Option* add_coordinates_option(CLI::App* cmd, std::string& text, const std::string& what) {
  return cmd
      ->add_option("--coordinates", text,
                   what +
                       ": index (voxel indices), scaled (indices times the voxel spacing; the default) or world "
                       "(the NIfTI/NRRD file's affine: scanner or template coordinates, RAS+)")
      ->check(CLI::IsMember({"index", "scaled", "world"}));
}

Coordinates parse_coordinates(const std::string& text) {
  if (text == "index") return Coordinates::index;
  if (text == "world") return Coordinates::world;
  return Coordinates::scaled;
}

void require_orientation(const io::SpatialHeader& header, const std::string& input) {
  if (header.source == io::SpatialHeader::Source::none)
    throw InputError(input +
                     ": --coordinates world needs a NIfTI or NRRD file's orientation; .npy, TIFF stacks and "
                     "raw volumes carry none (use index or scaled)");
}

std::pair<double, double> finite_range(const io::AnyVolume& volume) {
  return std::visit(
      [](const auto& v) {
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const auto x : v.voxels()) {
          const auto d = static_cast<double>(x);
          if (std::isfinite(d)) lo = std::min(lo, d), hi = std::max(hi, d);
        }
        const double nan = std::numeric_limits<double>::quiet_NaN();
        return lo <= hi ? std::pair{lo, hi} : std::pair{nan, nan};
      },
      volume);
}

std::string value_range_text(const io::AnyVolume& volume) {
  const auto [lo, hi] = finite_range(volume);
  if (std::isnan(lo)) return "no finite value";
  char text[80];
  std::snprintf(text, sizeof text, "values %.9g..%.9g", lo, hi);
  return text;
}

}  // namespace winnow::cli
