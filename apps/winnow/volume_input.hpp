#pragma once
// The volume argument the volume commands (voxels, isosurface) share: a volume file, or a raw
// one with --dims X,Y,Z and --dtype; the --level number and the --coordinates frame they both
// take; and the words their summaries and warnings use for a volume's values.
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
  /// Reads the volume: read_volume, or read_raw_volume (little-endian) with --dims and --dtype,
  /// with a progress bar while it reads (stderr, a terminal only, none when `quiet`). `header`
  /// (when not null) gets the file's spatial header (none for raw files).
  io::AnyVolume read(io::SpatialHeader* header = nullptr, bool quiet = true) const;
  /// True for a raw volume (--dims and --dtype): it has no header.
  bool raw() const { return raw_dims_.has_value(); }

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

/// The frame of output positions (--coordinates): voxel indices, indices times the voxel spacing
/// (the default), or the file's world coordinates (its NIfTI or NRRD affine, RAS+).
enum class Coordinates { index, scaled, world };
/// Adds --coordinates to `cmd`, its text into `text` ("index", "scaled" or "world").
CLI::Option* add_coordinates_option(CLI::App* cmd, std::string& text, const std::string& what);
Coordinates parse_coordinates(const std::string& text);
/// InputError naming `input` unless `header` gives world coordinates (a NIfTI or NRRD file).
void require_orientation(const io::SpatialHeader& header, const std::string& input);

/// "values 0..255" (finite values; "no finite value" when there is none), for warnings.
std::string value_range_text(const io::AnyVolume& volume);
/// The smallest and largest finite voxel values (NaN when there is none).
std::pair<double, double> finite_range(const io::AnyVolume& volume);

}  // namespace winnow::cli
