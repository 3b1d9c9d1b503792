#pragma once
// The volume argument the volume commands (voxels, isosurface) share: a volume file, or a raw
// one with --dims X,Y,Z and --dtype; and the --level number they both take.
#include <CLI/CLI.hpp>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "winnow/volume_io.hpp"

namespace winnow::cli {

/// What the user gave for the input volume.
struct VolumeArguments {
  std::string input;
  std::string dims;   ///< raw volumes: "X,Y,Z"
  std::string dtype;  ///< raw volumes: u8 ... f64
};

/// Adds --dims and --dtype to `cmd`.
void add_raw_volume_options(CLI::App* cmd, VolumeArguments& arguments);

/// The volume to read, its arguments checked (InputError naming the argument) before any reading.
class VolumeSource {
 public:
  explicit VolumeSource(const VolumeArguments& arguments);
  /// Reads the volume: read_volume, or read_raw_volume (little-endian) with --dims and --dtype.
  io::AnyVolume read() const;

 private:
  std::string input_;
  std::optional<std::array<std::int64_t, 3>> raw_dims_;
  io::VoxelType raw_type_ = io::VoxelType::u8;
};

/// "X,Y,Z" of --dims: three positive integers, else InputError naming --dims.
std::array<std::int64_t, 3> parse_dims(const std::string& text);
/// --dtype's voxel type name (u8 ... f64), else InputError naming --dtype.
io::VoxelType parse_dtype(const std::string& text);

/// A finite decimal number from --level's text, else InputError naming --level.
double parse_level(const std::string& text);

}  // namespace winnow::cli
