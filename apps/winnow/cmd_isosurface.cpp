// winnow isosurface VOLUME --level L: the surface where the volume crosses L, as a welded
// triangle mesh (marching cubes, winnow::isosurface) written as PLY, OBJ or STL, and optionally
// a shaded preview picture of it (PNG). Voxel types the library has no isosurface for (i8, u32,
// i32, u64, i64) are converted to f64 first. Positions are voxel indices, indices times the
// spacing (the default), or world coordinates: the mesh extracted in index coordinates, then
// moved by the file's affine (winnow::transform_mesh: normals by its inverse transpose, winding
// kept outward where the affine mirrors).
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>

#include "commands.hpp"
#include "volume_input.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"
#include "winnow/isosurface.hpp"
#include "winnow/mesh_io.hpp"
#include "winnow/progress.hpp"
#include "winnow/volume_io.hpp"

namespace winnow::cli {
namespace {

constexpr std::int64_t kPreviewWidth = 800, kPreviewHeight = 800;

struct IsosurfaceCli {
  CommonOptions common;
  VolumeArguments volume;
  std::string level;
  std::string spacing;  // "SX,SY,SZ"; empty: the file's
  std::string coordinates = "scaled";
  bool normals = false;
  bool flip = false;
  std::string out;
  std::string preview;
};

template <class T>
constexpr bool kHasIsosurface =
    std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::int16_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double>;

// A copy of `volume` in double (exact for i8, u32 and i32; u64 and i64 beyond 2^53 are rounded).
template <class T>
Volume<double> as_double(const Volume<T>& volume, const std::string& input) {
  try {
    Volume<double> converted(volume.nx(), volume.ny(), volume.nz());
    converted.set_spacing(volume.sx(), volume.sy(), volume.sz());
    const auto from = volume.voxels();
    const auto to = converted.voxels();
    for (std::size_t i = 0; i < from.size(); ++i) to[i] = static_cast<double>(from[i]);
    return converted;
  } catch (const std::bad_alloc&) {
    throw InputError(input + ": not enough memory to convert the volume to f64");
  }
}

// The spacing the mesh is extracted with: the file's (`scaled`), --spacing's, or 1 (index
// coordinates, which `world` then moves by the affine).
template <class T>
Mesh extract(VolumeView<const T> view, const std::optional<std::array<double, 3>>& spacing, Coordinates coordinates,
             double level, const IsosurfaceOptions& options) {
  if (coordinates != Coordinates::scaled) view.sx = view.sy = view.sz = 1;
  else if (spacing) view.sx = (*spacing)[0], view.sy = (*spacing)[1], view.sz = (*spacing)[2];
  return isosurface(view, level, options);
}

// Why a mesh is empty, in words: an axis too short for a cell, or no voxel (or every voxel)
// above the level.
std::string empty_mesh_reason(const io::AnyVolume& volume, const std::string& input, double level,
                              const std::string& level_text) {
  const io::VolumeInfo info = io::describe(volume);
  if (info.nx < 2 || info.ny < 2 || info.nz < 2)
    return input + " has fewer than 2 voxels along an axis (" + std::to_string(info.nx) + "x" +
           std::to_string(info.ny) + "x" + std::to_string(info.nz) + "): no cell to cut";
  const auto [lo, hi] = finite_range(volume);
  const std::string range = " (" + value_range_text(volume) + ")";
  if (std::isnan(lo) || hi <= level) return "no voxel of " + input + " is above level " + level_text + range;
  if (lo > level) return "every voxel of " + input + " is above level " + level_text + range;
  return input + " crosses level " + level_text + " only where voxels equal it" + range;
}

void run(const IsosurfaceCli& o) {
  // Everything the arguments can get wrong is checked before the volume is read.
  const double level = parse_level(o.level);
  const Coordinates coordinates = parse_coordinates(o.coordinates);
  std::optional<std::array<double, 3>> spacing;
  if (!o.spacing.empty()) {
    if (coordinates != Coordinates::scaled)
      throw InputError(o.volume.input +
                       ": --spacing is for --coordinates scaled (index and world coordinates do not "
                       "use a spacing)");
    spacing = parse_spacing(o.spacing);
  }
  const VolumeSource source(o.volume);
  if (coordinates == Coordinates::world && source.raw()) require_orientation(io::SpatialHeader{}, o.volume.input);
  refuse_overwriting({o.volume.input}, {&o.out, &o.preview});
  const io::MeshFormat format = io::mesh_format_of(o.out);
  check_output_name(o.preview, {".png"}, "PNG");
  io::check_writable(o.out);
  if (!o.preview.empty()) io::check_writable(o.preview);
  IsosurfaceOptions options;
  options.normals = o.normals;
  options.flip = o.flip;
  options.backend = o.common.requested();

  io::SpatialHeader header;
  const io::AnyVolume volume = source.read(&header, o.common.quiet);
  if (coordinates == Coordinates::world) require_orientation(header, o.volume.input);
  const io::VolumeInfo info = io::describe(volume);
  bool converted = false;
  Mesh mesh;
  {
    Progress meshing("meshing", 1, o.common.quiet);
    options.progress = meshing.sink();
    mesh = std::visit(
        [&](const auto& vol) {
          using T = std::remove_cvref_t<decltype(*vol.data())>;
          if constexpr (kHasIsosurface<T>) {
            return extract(vol.view(), spacing, coordinates, level, options);
          } else {
            converted = true;
            const Volume<double> as_f64 = as_double(vol, o.volume.input);
            return extract(as_f64.view(), spacing, coordinates, level, options);
          }
        },
        volume);
    options.progress = nullptr;
  }
  if (coordinates == Coordinates::world) {
    try {
      transform_mesh(mesh, header.affine());
    } catch (const InputError& e) {
      throw InputError(o.volume.input + ": its orientation cannot place a mesh (" + e.what() + ")");
    }
  }

  Image<Rgba8> preview;
  if (!o.preview.empty()) preview = io::render_mesh_preview(mesh, kPreviewWidth, kPreviewHeight);
  auto mesh_file = [&](const std::string& path) {
    Progress writing("writing " + std::filesystem::path(o.out).filename().string(), 1, o.common.quiet);
    io::write_mesh(path, mesh, format, writing.sink());
  };
  auto preview_file = [&](const std::string& path) { io::write_png(path, preview.view()); };
  write_outputs({{o.out, mesh_file}, {o.preview, preview_file}});
  const bool empty = mesh.triangle_count() == 0;
  if (!o.common.quiet)
    std::printf("%s: %" PRId64 "x%" PRId64 "x%" PRId64 " %s%s, level %s, %" PRIu64 " vertices, %" PRIu64
                " triangles%s%s, backend %s, %.2f ms\n",
                o.volume.input.c_str(), info.nx, info.ny, info.nz, io::voxel_type_name(info.type),
                converted ? " (as f64)" : "", o.level.c_str(), mesh.vertex_count(), mesh.triangle_count(),
                empty ? " (an empty mesh)" : "",
                coordinates == Coordinates::scaled ? "" : (", " + o.coordinates + " coordinates").c_str(),
                std::string(to_string(mesh.backend)).c_str(), mesh.milliseconds);
  if (empty) warn("empty mesh: " + empty_mesh_reason(volume, o.volume.input, level, o.level));
}

}  // namespace

std::array<double, 3> parse_spacing(const std::string& text) {
  std::array<double, 3> spacing{};
  const char* p = text.c_str();
  for (std::size_t axis = 0; axis < 3; ++axis) {
    char* end = nullptr;
    spacing[axis] = std::strtod(p, &end);
    const char expected = axis < 2 ? ',' : '\0';
    const bool digits_first = *p >= '0' && *p <= '9';  // no blanks, signs, "inf" or "nan"
    if (!digits_first || end == p || *end != expected || !std::isfinite(spacing[axis]) || !(spacing[axis] > 0))
      throw InputError("--spacing '" + text + "' is not SX,SY,SZ (three positive numbers)");
    p = end + 1;
  }
  return spacing;
}

void register_isosurface(CLI::App& app) {
  auto o = std::make_shared<IsosurfaceCli>();
  auto* cmd = app.add_subcommand("isosurface", "extract the surface where a volume crosses a level as a triangle mesh");
  cmd->footer(
      "Voxel types: u8, u16, i16, f32 and f64 are used as they are; i8, u32, i32, u64 and i64 are converted to "
      "f64 first (exact up to 2^53). A voxel is above the level when its value > L; the mesh is welded, "
      "watertight away from the volume's border and oriented toward decreasing values (--flip: increasing). "
      "Positions (x, y, z) are given by --coordinates: scaled (voxel index times spacing, the default), index, or "
      "world (the NIfTI qform/sform or NRRD space directions and origin applied, RAS+, as nibabel's img.affine; "
      "normals follow and the winding stays outward where the affine mirrors). An output naming the input is "
      "refused; an empty mesh is written, with a warning. The summary's milliseconds are the extraction's "
      "(reading and writing excluded).");
  cmd->add_option("volume", o->volume.input, "input volume (NIfTI, NRRD, npy, TIFF stack; raw with --dims and --dtype)")
      ->required()
      ->check(kFileName);
  // Parsed and checked in run() so the messages name the argument.
  cmd->add_option("--level", o->level, "the surface's level L (voxels > L are inside)")->required();
  cmd->add_option("--spacing", o->spacing, "SX,SY,SZ voxel size (default: the file's; --coordinates scaled only)");
  add_coordinates_option(cmd, o->coordinates, "mesh positions");
  cmd->add_flag("--normals", o->normals, "write vertex normals (from the field's gradient)");
  cmd->add_flag("--flip", o->flip, "orient the surface toward increasing values");
  cmd->add_option("--out", o->out, "mesh.ply (binary), mesh.obj or mesh.stl (binary)")->required()->check(kFileName);
  cmd->add_option("--preview", o->preview, "preview.png: an 800x800 shaded picture of the mesh")->check(kFileName);
  add_raw_volume_options(cmd, o->volume);
  add_common_options(cmd, o->common);
  cmd->callback([o] { run(*o); });
}

}  // namespace winnow::cli
