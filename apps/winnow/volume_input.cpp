// The input volume of the volume commands: a file read_volume recognises, or a headerless raw
// file described by --dims and --dtype; and the --level they take.
#include "volume_input.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "winnow/error.hpp"

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

io::AnyVolume VolumeSource::read() const {
  if (raw_dims_) return io::read_raw_volume(input_, (*raw_dims_)[0], (*raw_dims_)[1], (*raw_dims_)[2], raw_type_);
  return io::read_volume(input_);
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

}  // namespace winnow::cli
