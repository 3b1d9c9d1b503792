// winnow voxels VOLUME: the voxels above a level (below it, or non-zero) as a point list: CSV
// `x,y,z,value` (voxel indices, the value as the file holds it) or a binary little-endian PLY
// point cloud (x y z as floats: index times voxel spacing by default, or indices, or the file's
// world coordinates (--coordinates); the value as a property of the voxel's own PLY type).
#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>

#include "commands.hpp"
#include "volume_input.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"
#include "winnow/volume_io.hpp"
#include "winnow/voxels.hpp"

namespace winnow::cli {
namespace {

struct VoxelsCli {
  CommonOptions common;
  VolumeArguments volume;
  std::string level;
  bool level_given = false;
  bool below = false;
  bool nonzero = false;
  std::string out;
  std::string coordinates = "scaled";
  bool coordinates_given = false;
};

enum class PointFormat { csv, ply };

PointFormat format_of(const std::string& out) {
  std::string ext = std::filesystem::path(out).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".csv") return PointFormat::csv;
  if (ext == ".ply") return PointFormat::ply;
  throw InputError(out + ": voxels are written as CSV (.csv) or PLY (.ply); name the output so");
}

// The value as CSV text: integers exactly, floating point in the shortest form that reads back
// to the same value.
template <class T>
void append_value(std::string& text, T value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  text.append(buffer, end);
}

template <class T>
std::string csv_of(const Voxels<T>& voxels) {
  std::string csv = "x,y,z,value\n";
  csv.reserve(csv.size() + voxels.values.size() * 24);
  char line[80];
  for (std::size_t i = 0; i < voxels.values.size(); ++i) {
    const VoxelPosition& p = voxels.positions[i];
    const int len = std::snprintf(line, sizeof line, "%" PRId64 ",%" PRId64 ",%" PRId64 ",", p.x, p.y, p.z);
    csv.append(line, static_cast<std::size_t>(len));
    append_value(csv, voxels.values[i]);
    csv += '\n';
  }
  return csv;
}

// The PLY property type of a voxel type, and the type its value is stored as. PLY has no 64-bit
// integers: i64 and u64 values go as double (exact up to 2^53 in magnitude, rounded beyond).
template <class T>
struct PlyValue {
  using stored = std::conditional_t<sizeof(T) == 8 && std::is_integral_v<T>, double, T>;
  static constexpr const char* name() {
    if constexpr (std::is_same_v<T, std::uint8_t>) return "uchar";
    else if constexpr (std::is_same_v<T, std::int8_t>) return "char";
    else if constexpr (std::is_same_v<T, std::uint16_t>) return "ushort";
    else if constexpr (std::is_same_v<T, std::int16_t>) return "short";
    else if constexpr (std::is_same_v<T, std::uint32_t>) return "uint";
    else if constexpr (std::is_same_v<T, std::int32_t>) return "int";
    else if constexpr (std::is_same_v<T, float>) return "float";
    else return "double";
  }
};

template <class V>
void append_little_endian(std::string& bytes, V value) {
  char raw[sizeof(V)];
  std::memcpy(raw, &value, sizeof(V));
  if constexpr (std::endian::native == std::endian::big) std::reverse(raw, raw + sizeof(V));
  bytes.append(raw, sizeof(V));
}

// Binary little-endian PLY: one vertex per voxel, x y z in the frame asked for: voxel indices,
// index times spacing (the volume's units, origin at voxel (0, 0, 0)), or the file's world
// coordinates (its affine applied in double, rounded to float).
template <class T>
std::string ply_of(const Voxels<T>& voxels, const io::VolumeInfo& info, Coordinates coordinates,
                   const io::SpatialHeader& header) {
  using Value = PlyValue<T>;
  std::array<double, 16> affine = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  char comment[200];
  if (coordinates == Coordinates::world) {
    affine = header.affine();
    std::snprintf(comment, sizeof comment,
                  "comment x y z: world coordinates (RAS+, the file's affine); value: %s voxel\n",
                  io::voxel_type_name(info.type));
  } else if (coordinates == Coordinates::scaled) {
    affine[0] = info.sx, affine[5] = info.sy, affine[10] = info.sz;
    std::snprintf(comment, sizeof comment, "comment x y z: voxel index times voxel spacing %g %g %g; value: %s voxel\n",
                  info.sx, info.sy, info.sz, io::voxel_type_name(info.type));
  } else {
    std::snprintf(comment, sizeof comment, "comment x y z: voxel index; value: %s voxel\n",
                  io::voxel_type_name(info.type));
  }
  std::string ply = "ply\nformat binary_little_endian 1.0\n";
  ply += comment;
  ply += "element vertex " + std::to_string(voxels.values.size()) + "\n";
  ply += "property float x\nproperty float y\nproperty float z\n";
  ply += std::string("property ") + Value::name() + " value\nend_header\n";
  ply.reserve(ply.size() + voxels.values.size() * (3 * sizeof(float) + sizeof(typename Value::stored)));
  for (std::size_t i = 0; i < voxels.values.size(); ++i) {
    const VoxelPosition& p = voxels.positions[i];
    const double x = static_cast<double>(p.x), y = static_cast<double>(p.y), z = static_cast<double>(p.z);
    for (int r = 0; r < 3; ++r)
      append_little_endian(ply, static_cast<float>(affine[4 * r] * x + affine[4 * r + 1] * y + affine[4 * r + 2] * z +
                                                   affine[4 * r + 3]));
    append_little_endian(ply, static_cast<typename Value::stored>(voxels.values[i]));
  }
  return ply;
}

std::string selection_text(const VoxelSelection& s, const std::string& level_text) {
  if (s.mode == VoxelMode::nonzero) return "non-zero";
  return (s.mode == VoxelMode::above ? "> " : "< ") + level_text;
}

void run(const VoxelsCli& o) {
  // Everything the arguments can get wrong is checked before the volume is read.
  if (!o.level_given && !o.nonzero)
    throw InputError(o.volume.input + ": give --level L (with --below for < L) or --nonzero");
  VoxelSelection selection;
  if (o.nonzero) {
    selection.mode = VoxelMode::nonzero;
  } else {
    selection.level = parse_level(o.level);
    selection.mode = o.below ? VoxelMode::below : VoxelMode::above;
  }
  const VolumeSource source(o.volume);
  const PointFormat format = format_of(o.out);
  const Coordinates coordinates = parse_coordinates(o.coordinates);
  if (o.coordinates_given && format == PointFormat::csv)
    throw InputError(o.out + ": --coordinates is for PLY output; CSV holds voxel indices");
  if (coordinates == Coordinates::world && source.raw()) require_orientation(io::SpatialHeader{}, o.volume.input);
  refuse_overwriting({o.volume.input}, {&o.out});
  io::check_writable(o.out);
  VoxelOptions options;
  options.backend = o.common.requested();

  io::SpatialHeader header;
  const io::AnyVolume volume = source.read(&header, o.common.quiet);
  if (coordinates == Coordinates::world) require_orientation(header, o.volume.input);
  const io::VolumeInfo info = io::describe(volume);
  std::visit(
      [&](const auto& vol) {
        const auto voxels = compact_voxels(vol.view(), selection, options);
        write_outputs({{o.out, [&](const std::string& path) {
                          io::write_text(path, format == PointFormat::csv ? csv_of(voxels)
                                                                          : ply_of(voxels, info, coordinates, header));
                        }}});
        const bool none = voxels.values.empty();
        if (!o.common.quiet) {
          const auto total = static_cast<std::uint64_t>(vol.size());
          std::printf("%s: %" PRId64 "x%" PRId64 "x%" PRId64 " %s, kept %zu of %" PRIu64
                      " voxels (%.2f%%, %s)%s, backend %s, %.2f ms\n",
                      o.volume.input.c_str(), info.nx, info.ny, info.nz, io::voxel_type_name(info.type),
                      voxels.values.size(), total,
                      100.0 * static_cast<double>(voxels.values.size()) / static_cast<double>(total),
                      selection_text(selection, o.level).c_str(), none ? ": none kept" : "",
                      std::string(to_string(voxels.backend)).c_str(), voxels.milliseconds);
        }
        if (none) {
          const std::string range = " (" + value_range_text(volume) + ")";
          if (selection.mode == VoxelMode::nonzero)
            warn("no voxel kept: " + o.volume.input + " has no non-zero voxel" + range);
          else
            warn("no voxel kept: no voxel of " + o.volume.input + " is " +
                 (selection.mode == VoxelMode::above ? "above" : "below") + " level " + o.level + range);
        }
      },
      volume);
}

}  // namespace

void register_voxels(CLI::App& app) {
  auto o = std::make_shared<VoxelsCli>();
  auto* cmd =
      app.add_subcommand("voxels", "write the voxels of a volume above a level (or below, or non-zero) as points");
  cmd->add_option("volume", o->volume.input, "input volume (NIfTI, NRRD, npy, TIFF stack; raw with --dims and --dtype)")
      ->required()
      ->check(kFileName);
  // Parsed and checked in run() so the message names the argument.
  auto* level = cmd->add_option("--level", o->level, "keep voxels with value > L (< L with --below)");
  auto* below = cmd->add_flag("--below", o->below, "keep voxels with value < L")->needs(level);
  cmd->add_flag("--nonzero", o->nonzero, "keep voxels with value != 0")->excludes(level)->excludes(below);
  cmd->add_option("--out", o->out, "voxels.csv (x,y,z,value) or voxels.ply (binary point cloud, spacing applied)")
      ->required()
      ->check(kFileName);
  auto* coordinates = add_coordinates_option(cmd, o->coordinates, "PLY positions");
  add_raw_volume_options(cmd, o->volume);
  add_common_options(cmd, o->common);
  cmd->callback([o, level, coordinates] {
    o->level_given = level->count() > 0;
    o->coordinates_given = coordinates->count() > 0;
    run(*o);
  });
}

}  // namespace winnow::cli
