// winnow label IMAGE|VOLUME: connected components of an image's thresholded luminance, or of a
// volume's non-zero or thresholded voxels (6/18/26-connectivity, binary or multi-label).
//
// What is a volume: a file io::is_volume_file calls one -- NIfTI-1, NRRD, .npy (by name or by
// content), any gzip-compressed file, or a TIFF of more than one page; a one-page TIFF, PNG, JPEG
// or FITS file is an image. Volume voxels are labelled in their own type: non-zero is foreground
// (NaN is background); --multilabel joins only equal values. Signed integers are labelled through
// their unsigned bits (equality and zero are kept), floats through theirs after -0 and NaN are
// made 0. With --threshold T or --otsu a volume is thresholded first (winnow::threshold_volume:
// above T in the voxel's own type, as `winnow voxels` compares; --invert: finite voxels not above)
// and its mask labelled. The labels of a NIfTI or NRRD input are written with its spatial header.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>

#include "commands.hpp"
#include "volume_input.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"
#include "winnow/label.hpp"
#include "winnow/progress.hpp"
#include "winnow/volume_io.hpp"

namespace winnow::cli {
namespace {

struct LabelCli {
  CommonOptions common;
  std::string input;
  std::string threshold;
  bool threshold_given = false;  // else Otsu
  bool otsu = false;
  bool invert = false;
  int connectivity = 0;  // 0: the densest (8 for an image, 26 for a volume)
  bool multilabel = false;
  std::uint64_t min_area = 0;
  std::uint64_t largest_k = 0;
  std::string out_colored, out_labels, stats_csv;
  std::string algorithm = "auto";
};

// A deterministic, well-spread colour per label (never black: background is black).
Rgba8 label_colour(std::uint32_t l) {
  std::uint32_t h = l * 0x9E3779B1u;
  h ^= h >> 15;
  h *= 0x85EBCA77u;
  h ^= h >> 13;
  h *= 0xC2B2AE3Du;
  h ^= h >> 16;
  auto c = [](std::uint32_t v) { return static_cast<std::uint8_t>(48 + v % 208); };
  return {c(h), c(h >> 8), c(h >> 16), 255};
}

// --connectivity by the library's rule (winnow::resolve_connectivity), checked before the input is
// read; its message names the file.
int connectivity_for(const LabelCli& o, int dimensions) {
  try {
    return resolve_connectivity(o.connectivity, dimensions);
  } catch (const InputError& e) {
    throw InputError(o.input + ": " + e.what());
  }
}

void run_image(const LabelCli& o) {
  // Checked here rather than by the parser, so the message names the file (exit status 2).
  const bool use_otsu = !o.threshold_given;
  const double threshold = use_otsu ? 0.0 : parse_threshold(o.threshold, o.input);
  const int connectivity = connectivity_for(o, 2);
  if (o.multilabel)
    throw InputError(o.input + ": --multilabel labels volumes (an image is thresholded into one foreground)");
  refuse_overwriting({o.input}, {&o.out_colored, &o.out_labels, &o.stats_csv});
  for (const auto* p : {&o.out_colored, &o.out_labels, &o.stats_csv})
    if (!p->empty()) io::check_writable(*p);
  check_output_name(o.out_colored, {".png"}, "PNG");
  check_output_name(o.out_labels, {".tif", ".tiff"}, "32-bit TIFF");
  check_output_name(o.stats_csv, {".csv", ".txt"}, "CSV");

  const Image<Rgba8> rgba = io::read_rgba8(o.input);
  if (rgba.empty()) throw InputError(o.input + ": image has zero size");
  const std::int64_t W = rgba.width(), H = rgba.height();
  Image<std::uint32_t> lum(W, H);
  std::array<std::uint64_t, 256> hist{};
  for (std::int64_t i = 0; i < W * H; ++i) {
    const std::uint32_t l = luminance_milli(rgba.data()[i]);
    lum.data()[i] = l;
    ++hist[std::min<std::uint32_t>(l / 1000, 255)];
  }
  // Foreground: luminance (thousandths) > thr_milli. Otsu splits the histogram of whole grey
  // levels (floor of luminance) after level t: foreground is level > t, i.e. luminance >= t + 1,
  // which is --threshold t + 0.999, the threshold the summary shows.
  std::int64_t thr_milli;
  double shown;
  if (use_otsu) {
    const int t = otsu_threshold(std::span<const std::uint64_t, 256>(hist));
    thr_milli = std::int64_t{t} * 1000 + 999;
    shown = t + 0.999;
  } else {
    thr_milli = luminance_threshold_milli(threshold);
    shown = threshold;
  }
  Image<std::uint8_t> mask(W, H);
  bool any_foreground = false;
  for (std::int64_t i = 0; i < W * H; ++i) {
    const bool above = static_cast<std::int64_t>(lum.data()[i]) > thr_milli;
    mask.data()[i] = above != o.invert ? 1 : 0;
    any_foreground = any_foreground || above != o.invert;
  }

  LabelOptions lo;
  lo.connectivity = connectivity;
  lo.min_area = o.min_area;
  lo.largest_k = o.largest_k;
  lo.want_stats = !o.stats_csv.empty();
  lo.algorithm = parse_label_algorithm(o.algorithm);
  lo.backend = o.common.requested();
  const Labeling r = label(mask.view(), lo);

  auto colored = [&](const std::string& path) {
    Image<Rgba8> col(W, H, Rgba8{0, 0, 0, 255});
    for (std::int64_t i = 0; i < W * H; ++i)
      if (const std::uint32_t l = r.labels.data()[i]) col.data()[i] = label_colour(l);
    io::write_png(path, col.view());
  };
  auto stats_csv = [&](const std::string& path) {
    std::string csv = "label,area,left,top,width,height,cx,cy\n";
    char line[256];
    for (std::size_t i = 0; i < r.stats.size(); ++i) {
      const ComponentStats& s = r.stats[i];
      std::snprintf(line, sizeof line, "%zu,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%.6f,%.6f\n",
                    i + 1, s.area, s.left, s.top, s.width, s.height, s.cx, s.cy);
      csv += line;
    }
    io::write_text(path, csv);
  };
  write_outputs({
      {o.out_colored, colored},
      {o.out_labels, [&](const std::string& path) { io::write_tiff(path, r.labels.view()); }},
      {o.stats_csv, stats_csv},
  });
  if (!o.common.quiet) {
    // One line; on CUDA the time by stage, so a device's start is not read as the labeling's time.
    char stages[160] = "";
    if (r.backend == Backend::cuda)
      std::snprintf(stages, sizeof stages, " (device start %.1f, transfers %.1f, labeling %.3f)", r.stages.device_setup,
                    r.stages.transfers, r.stages.compute);
    else if (r.stages.device_setup >= 0.05)  // auto asked the device before choosing the CPU
      std::snprintf(stages, sizeof stages, " (device query %.1f, labeling %.3f)", r.stages.device_setup,
                    r.stages.compute);
    std::printf("%s: %" PRId64 "x%" PRId64 ", %u components%s (%d-connectivity, threshold %g%s%s), %s %s, %.3f ms%s\n",
                o.input.c_str(), W, H, r.count, r.count == 0 ? ": none found" : "", connectivity, shown,
                use_otsu ? " otsu" : "", o.invert ? ", inverted" : "", std::string(to_string(r.backend)).c_str(),
                std::string(to_string(r.algorithm)).c_str(), r.milliseconds, stages);
  }
  if (r.count == 0) {
    char t[32];
    std::snprintf(t, sizeof t, "%g", shown);
    warn(any_foreground
             ? "no component: every component of " + o.input + " has fewer than " + std::to_string(o.min_area) +
                   " pixels (--min-area)"
             : "no component: no pixel of " + o.input + " has luminance " + (o.invert ? "at or below " : "above ") + t);
  }
}

/// The voxels as the labeling takes them: unsigned integers of the voxel's width.
template <class T>
auto label_view(const Volume<T>& v, Volume<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>& scratch) {
  if constexpr (std::is_floating_point_v<T>) {
    // -0 and NaN are background; other values keep their bits (equal floats, equal bits).
    using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    scratch = Volume<U>(v.nx(), v.ny(), v.nz());
    const T* in = v.data();
    U* out = scratch.data();
    for (std::int64_t i = 0; i < v.size(); ++i) {
      U bits = 0;
      if (in[i] != T{0} && !std::isnan(in[i])) std::memcpy(&bits, &in[i], sizeof(T));
      out[i] = bits;
    }
    return VolumeView<const U>(scratch.data(), v.nx(), v.ny(), v.nz());
  } else {
    using U = std::make_unsigned_t<T>;
    return VolumeView<const U>(reinterpret_cast<const U*>(v.data()), v.nx(), v.ny(), v.nz());
  }
}

template <class T>
VolumeLabeling label_any(const Volume<T>& v, const LabelOptions& options) {
  Volume<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>> scratch;
  auto view = label_view(v, scratch);
  view.sx = v.sx(), view.sy = v.sy(), view.sz = v.sz();
  return label(view, options);
}

// The foreground rule's words, for the summary and the warnings.
struct VolumeRule {
  bool thresholded = false;
  double threshold = 0;
  bool otsu = false, invert = false;
};

void run_volume(const LabelCli& o) {
  const VolumeRule rule{o.threshold_given || o.otsu || o.invert, 0, o.otsu, o.invert};
  if (o.multilabel && rule.thresholded)
    throw InputError(o.input +
                     ": --multilabel joins equal values; it does not go with --threshold, --otsu or --invert");
  if (o.invert && !o.threshold_given && !o.otsu)
    throw InputError(o.input +
                     ": --invert needs --threshold T or --otsu for a volume (its default foreground is its "
                     "non-zero voxels)");
  double given = 0;
  if (o.threshold_given) {
    char* end = nullptr;
    given = std::strtod(o.threshold.c_str(), &end);
    const bool plain = !o.threshold.empty() && o.threshold.find_first_not_of("0123456789.eE+-") == std::string::npos;
    if (!plain || end != o.threshold.c_str() + o.threshold.size() || !std::isfinite(given))
      throw InputError(o.input + ": threshold '" + o.threshold + "' is not a finite number");
  }
  const int connectivity = connectivity_for(o, 3);
  refuse_overwriting({o.input}, {&o.out_colored, &o.out_labels, &o.stats_csv});
  for (const auto* p : {&o.out_colored, &o.out_labels, &o.stats_csv})
    if (!p->empty()) io::check_writable(*p);
  check_output_name(o.out_colored, {".png"}, "PNG");
  if (!o.out_labels.empty()) {
    const std::string& n = o.out_labels;
    auto ends = [&](const char* t) {
      return n.size() >= std::strlen(t) && n.compare(n.size() - std::strlen(t), std::string::npos, t) == 0;
    };
    if (!ends(".nii") && !ends(".nii.gz") && !ends(".nrrd") && !ends(".npy") && !ends(".tif") && !ends(".tiff"))
      throw InputError(n + ": the labels of a volume are written as .nii, .nii.gz, .nrrd, .npy, .tif or .tiff");
  }
  check_output_name(o.stats_csv, {".csv", ".txt"}, "CSV");

  io::SpatialHeader header;
  io::AnyVolume volume;
  {
    Progress reading("reading " + std::filesystem::path(o.input).filename().string(), 1, o.common.quiet);
    io::VolumeReadOptions read_options;
    read_options.progress = reading.sink();
    volume = io::read_volume(o.input, &header, read_options);
  }
  const io::VolumeInfo info = io::describe(volume);
  if (info.nx * info.ny * info.nz == 0) throw InputError(o.input + ": volume has zero size");
  LabelOptions lo;
  lo.connectivity = connectivity;
  lo.multilabel = o.multilabel;
  lo.min_area = o.min_area;
  lo.largest_k = o.largest_k;
  lo.want_stats = !o.stats_csv.empty();
  lo.algorithm = parse_label_algorithm(o.algorithm);
  lo.backend = o.common.requested();
  VolumeRule used = rule;
  bool any_foreground = false;
  VolumeLabeling r;
  {
    Progress labeling("labeling", 1, o.common.quiet);
    lo.progress = labeling.sink();
    if (rule.thresholded) {
      std::visit(
          [&](const auto& v) {
            used.threshold = o.otsu ? otsu_threshold(v.view()) : given;
            const Volume<std::uint8_t> mask = threshold_volume(v.view(), used.threshold, rule.invert);
            any_foreground =
                std::any_of(mask.voxels().begin(), mask.voxels().end(), [](std::uint8_t m) { return m != 0; });
            r = label(mask.view(), lo);
          },
          volume);
    } else {
      r = std::visit([&](const auto& v) { return label_any(v, lo); }, volume);
      if (r.count == 0)
        any_foreground = std::visit(
            [](const auto& v) {
              return std::any_of(v.voxels().begin(), v.voxels().end(), [](auto x) {
                if constexpr (std::is_floating_point_v<decltype(x)>) return x != 0 && !std::isnan(x);
                else return x != 0;
              });
            },
            volume);
    }
  }

  const bool wide = r.labels.empty();
  auto label_at = [&](std::int64_t x, std::int64_t y, std::int64_t z) -> std::uint64_t {
    return wide ? r.labels64(x, y, z) : r.labels(x, y, z);
  };
  auto colored = [&](const std::string& path) {
    const std::int64_t z = info.nz / 2;  // the middle slice
    Image<Rgba8> col(info.nx, info.ny, Rgba8{0, 0, 0, 255});
    for (std::int64_t y = 0; y < info.ny; ++y)
      for (std::int64_t x = 0; x < info.nx; ++x)
        if (const std::uint64_t l = label_at(x, y, z))
          col(x, y) = label_colour(static_cast<std::uint32_t>(l ^ (l >> 32)));
    io::write_png(path, col.view());
  };
  auto stats_csv = [&](const std::string& path) {
    std::string csv = o.multilabel ? "label,voxels,x,y,z,width,height,depth,cx,cy,cz,value\n"
                                   : "label,voxels,x,y,z,width,height,depth,cx,cy,cz\n";
    char line[320];
    for (std::size_t i = 0; i < r.stats.size(); ++i) {
      const VolumeComponentStats& s = r.stats[i];
      int n = std::snprintf(line, sizeof line,
                            "%zu,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                            ",%.6f,%.6f,%.6f",
                            i + 1, s.voxels, s.x, s.y, s.z, s.width, s.height, s.depth, s.cx, s.cy, s.cz);
      if (o.multilabel) n += std::snprintf(line + n, sizeof line - static_cast<std::size_t>(n), ",%" PRIu64, s.value);
      csv.append(line, static_cast<std::size_t>(n));
      csv += '\n';
    }
    io::write_text(path, csv);
  };
  auto labels_file = [&](const std::string& path) {
    // `path` is the temporary name beside the target: the format is the target's. The input's
    // spatial header goes with the labels, so they overlay it in any viewer.
    Progress writing("writing " + std::filesystem::path(o.out_labels).filename().string(), 1, o.common.quiet);
    io::VolumeWriteOptions options;
    options.like = header;
    options.progress = writing.sink();
    if (wide) io::write_volume_as<std::uint64_t>(path, r.labels64.view(), o.out_labels, options);
    else io::write_volume_as<std::uint32_t>(path, r.labels.view(), o.out_labels, options);
  };
  write_outputs({{o.out_colored, colored}, {o.out_labels, labels_file}, {o.stats_csv, stats_csv}});
  std::string rule_text;
  if (used.thresholded) rule_text = ", threshold " + number_text(used.threshold) + (used.otsu ? " otsu" : "");
  if (used.invert) rule_text += ", inverted";
  if (!o.common.quiet) {
    char stages[160] = "";
    if (r.backend == Backend::cuda)
      std::snprintf(stages, sizeof stages, " (device start %.1f, transfers %.1f, labeling %.3f)", r.stages.device_setup,
                    r.stages.transfers, r.stages.compute);
    std::string filters;
    if (o.min_area > 1) filters += ", min-area " + std::to_string(o.min_area);
    if (o.largest_k > 0) filters += ", largest " + std::to_string(o.largest_k);
    std::printf("%s: %" PRId64 "x%" PRId64 "x%" PRId64 " %s, %" PRIu64
                " components%s (%d-connectivity%s%s%s), %s %s, %.3f ms%s\n",
                o.input.c_str(), info.nx, info.ny, info.nz, io::voxel_type_name(info.type), r.count,
                r.count == 0 ? ": none found" : "", connectivity, rule_text.c_str(), o.multilabel ? ", multilabel" : "",
                filters.c_str(), std::string(to_string(r.backend)).c_str(), std::string(to_string(r.algorithm)).c_str(),
                r.milliseconds, stages);
  }
  if (r.count == 0) {
    std::string why;
    if (any_foreground)
      why = "every component of " + o.input + " has fewer than " + std::to_string(o.min_area) + " voxels (--min-area)";
    else if (used.thresholded)
      why = std::string("no ") + (used.invert ? "finite voxel of " : "voxel of ") + o.input + " is " +
            (used.invert ? "at or below" : "above") + " threshold " + number_text(used.threshold) + " (" +
            value_range_text(volume) + ")";
    else why = o.input + " has no non-zero voxel (" + value_range_text(volume) + ")";
    warn("no component: " + why);
  }
}

void run(const LabelCli& o) {
  if (io::is_volume_file(o.input)) run_volume(o);
  else run_image(o);
}

}  // namespace

void register_label(CLI::App& app) {
  auto o = std::make_shared<LabelCli>();
  auto* cmd = app.add_subcommand("label", "label the connected components of a thresholded image or of a volume");
  cmd->footer(
      "Volumes: the foreground is the non-zero voxels (--multilabel: neighbours join when their values are equal), or "
      "with --threshold T / --otsu the voxels above T compared in the voxel's own type (an integer voxel is above T "
      "when it is above floor(T); NaN never is; --invert: the finite voxels not above T); the summary names the "
      "threshold used. Labels written as NIfTI or NRRD carry the input's orientation (NIfTI qform/sform and pixdim, "
      "NRRD space fields; a NIfTI from an NRRD gets the equivalent sform); .npy and .tif carry none. An output "
      "naming the input, a negative count or a damaged file is refused (exit 2); finding no component is not an "
      "error, but a warning says so.");
  cmd->add_option(
         "input", o->input,
         "input image (PNG, JPEG, one-page TIFF, FITS) or volume (NIfTI, NRRD, .npy, TIFF of more than one page)")
      ->required()
      ->check(kFileName);
  // Ranges are checked in run() so the message names the file.
  auto* thr = cmd->add_option("--threshold", o->threshold,
                              "image: foreground is luminance > T (0..255; default Otsu); volume: voxels > T in their "
                              "own type (any finite T; default: the non-zero voxels)");
  cmd->add_flag("--otsu", o->otsu, "threshold by Otsu's method (an image's default; a volume's over its histogram)")
      ->excludes(thr);
  cmd->add_flag("--invert", o->invert, "label dark objects: luminance <= T; a volume's finite voxels <= T");
  cmd->add_option("--connectivity", o->connectivity, "image: 4 or 8 (default 8); volume: 6, 18 or 26 (default 26)");
  cmd->add_flag("--multilabel", o->multilabel, "volume: neighbours join only when their values are equal");
  cmd->add_option("--min-area", o->min_area, "remove components with fewer pixels (voxels), renumber the rest")
      ->check(kCount);
  cmd->add_option("--largest-k", o->largest_k, "keep the K largest components (after --min-area), renumbered")
      ->check(kCount);
  cmd->add_option("--out-colored", o->out_colored,
                  "PNG: each label in a colour of its own, background black (a volume: its middle slice)")
      ->check(kFileName);
  cmd->add_option("--out-labels", o->out_labels,
                  "label numbers: image, 32-bit TIFF; volume, .nii, .nii.gz, .nrrd (with the input's orientation), "
                  ".npy (a .npy input's shape and order) or multi-page .tif")
      ->check(kFileName);
  cmd->add_option("--stats", o->stats_csv,
                  "CSV: image label,area,left,top,width,height,cx,cy; volume "
                  "label,voxels,x,y,z,width,height,depth,cx,cy,cz[,value]")
      ->check(kFileName);
  cmd->add_option("--algorithm", o->algorithm, "auto | tile_merge | block_union_find | row_stripes")
      ->check(CLI::IsMember({"auto", "automatic", "tile_merge", "block_union_find", "row_stripes"}));
  add_common_options(cmd, o->common);
  cmd->callback([o, thr] {
    o->threshold_given = thr->count() > 0;
    run(*o);
  });
}

}  // namespace winnow::cli
