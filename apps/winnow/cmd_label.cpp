// winnow label IMAGE|VOLUME: connected components of an image's thresholded luminance, or of a
// volume's non-zero voxels (6/18/26-connectivity, binary or multi-label).
//
// What is a volume: a file io::is_volume_file calls one -- NIfTI-1, NRRD, .npy, or a TIFF of more
// than one page; a one-page TIFF, PNG, JPEG or FITS file is an image. Volume voxels are labelled
// in their own type: non-zero is foreground (NaN is background); --multilabel joins only equal
// values. Signed integers are labelled through their unsigned bits (equality and zero are kept),
// floats through theirs after -0 and NaN are made 0.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "commands.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"
#include "winnow/label.hpp"
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

void run_image(const LabelCli& o) {
  // Checked here rather than by the parser, so the message names the file (exit status 2).
  const bool use_otsu = !o.threshold_given;
  const double threshold = use_otsu ? 0.0 : parse_threshold(o.threshold, o.input);
  const int connectivity = o.connectivity == 0 ? 8 : o.connectivity;
  if (connectivity != 4 && connectivity != 8)
    throw InputError(o.input + ": connectivity " + std::to_string(connectivity) + " is not 4 or 8");
  if (o.multilabel)
    throw InputError(o.input + ": --multilabel labels volumes (an image is thresholded into one foreground)");
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
  for (std::int64_t i = 0; i < W * H; ++i) {
    const bool above = static_cast<std::int64_t>(lum.data()[i]) > thr_milli;
    mask.data()[i] = above != o.invert ? 1 : 0;
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
      std::snprintf(stages, sizeof stages, " (device query %.1f, labeling %.3f)", r.stages.device_setup, r.stages.compute);
    std::printf("%s: %" PRId64 "x%" PRId64 ", %u components (%d-connectivity, threshold %g%s%s), %s %s, %.3f ms%s\n",
                o.input.c_str(), W, H, r.count, connectivity, shown, use_otsu ? " otsu" : "",
                o.invert ? ", inverted" : "", std::string(to_string(r.backend)).c_str(),
                std::string(to_string(r.algorithm)).c_str(), r.milliseconds, stages);
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

void run_volume(const LabelCli& o) {
  if (o.threshold_given || o.otsu || o.invert)
    throw InputError(o.input + ": --threshold, --otsu and --invert are for images; a volume's foreground is its non-zero voxels");
  const int connectivity = o.connectivity == 0 ? 26 : o.connectivity;
  if (connectivity != 6 && connectivity != 18 && connectivity != 26)
    throw InputError(o.input + ": connectivity " + std::to_string(connectivity) + " is not 6, 18 or 26 (a volume)");
  for (const auto* p : {&o.out_colored, &o.out_labels, &o.stats_csv})
    if (!p->empty()) io::check_writable(*p);
  check_output_name(o.out_colored, {".png"}, "PNG");
  if (!o.out_labels.empty()) {
    const std::string& n = o.out_labels;
    auto ends = [&](const char* t) { return n.size() >= std::strlen(t) && n.compare(n.size() - std::strlen(t), std::string::npos, t) == 0; };
    if (!ends(".nii") && !ends(".nii.gz") && !ends(".npy") && !ends(".tif") && !ends(".tiff"))
      throw InputError(n + ": the labels of a volume are written as .nii, .nii.gz, .npy, .tif or .tiff");
  }
  check_output_name(o.stats_csv, {".csv", ".txt"}, "CSV");

  const io::AnyVolume volume = io::read_volume(o.input);
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
  VolumeLabeling r = std::visit([&](const auto& v) { return label_any(v, lo); }, volume);

  const bool wide = r.labels.empty();
  auto label_at = [&](std::int64_t x, std::int64_t y, std::int64_t z) -> std::uint64_t {
    return wide ? r.labels64(x, y, z) : r.labels(x, y, z);
  };
  auto colored = [&](const std::string& path) {
    const std::int64_t z = info.nz / 2;  // the middle slice
    Image<Rgba8> col(info.nx, info.ny, Rgba8{0, 0, 0, 255});
    for (std::int64_t y = 0; y < info.ny; ++y)
      for (std::int64_t x = 0; x < info.nx; ++x)
        if (const std::uint64_t l = label_at(x, y, z)) col(x, y) = label_colour(static_cast<std::uint32_t>(l ^ (l >> 32)));
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
    // `path` is the temporary name beside the target: the format is the target's.
    if (wide) io::write_volume_as<std::uint64_t>(path, r.labels64.view(), o.out_labels);
    else io::write_volume_as<std::uint32_t>(path, r.labels.view(), o.out_labels);
  };
  write_outputs({{o.out_colored, colored}, {o.out_labels, labels_file}, {o.stats_csv, stats_csv}});
  if (!o.common.quiet) {
    char stages[160] = "";
    if (r.backend == Backend::cuda)
      std::snprintf(stages, sizeof stages, " (device start %.1f, transfers %.1f, labeling %.3f)", r.stages.device_setup,
                    r.stages.transfers, r.stages.compute);
    std::string filters;
    if (o.min_area > 1) filters += ", min-area " + std::to_string(o.min_area);
    if (o.largest_k > 0) filters += ", largest " + std::to_string(o.largest_k);
    std::printf("%s: %" PRId64 "x%" PRId64 "x%" PRId64 " %s, %" PRIu64 " components (%d-connectivity%s%s), %s %s, %.3f ms%s\n",
                o.input.c_str(), info.nx, info.ny, info.nz, io::voxel_type_name(info.type), r.count, connectivity,
                o.multilabel ? ", multilabel" : "", filters.c_str(), std::string(to_string(r.backend)).c_str(),
                std::string(to_string(r.algorithm)).c_str(), r.milliseconds, stages);
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
  cmd->add_option("input", o->input,
                  "input image (PNG, JPEG, one-page TIFF, FITS) or volume (NIfTI, NRRD, .npy, TIFF of more than one page)")
      ->required()
      ->check(kFileName);
  // Ranges are checked in run() so the message names the file.
  auto* thr = cmd->add_option("--threshold", o->threshold, "foreground: luminance > T (0..255; default Otsu)");
  cmd->add_flag("--otsu", o->otsu, "threshold by Otsu's method (the default)")->excludes(thr);
  cmd->add_flag("--invert", o->invert, "label dark objects (luminance <= T)");
  cmd->add_option("--connectivity", o->connectivity, "image: 4 or 8 (default 8); volume: 6, 18 or 26 (default 26)");
  cmd->add_flag("--multilabel", o->multilabel, "volume: neighbours join only when their values are equal");
  cmd->add_option("--min-area", o->min_area, "remove components with fewer pixels (voxels), renumber the rest");
  cmd->add_option("--largest-k", o->largest_k, "keep the K largest components (after --min-area), renumbered");
  cmd->add_option("--out-colored", o->out_colored,
                  "PNG: each label in a colour of its own, background black (a volume: its middle slice)")
      ->check(kFileName);
  cmd->add_option("--out-labels", o->out_labels,
                  "label numbers: image, 32-bit TIFF; volume, .nii, .nii.gz, .npy or multi-page .tif")
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
