// winnow label IMAGE: connected components of the thresholded luminance.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"
#include "winnow/label.hpp"

namespace winnow::cli {
namespace {

struct LabelCli {
  CommonOptions common;
  std::string input;
  std::string threshold;
  bool threshold_given = false;  // else Otsu
  bool otsu = false;
  bool invert = false;
  int connectivity = 8;
  std::uint64_t min_area = 0;
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

void run(const LabelCli& o) {
  // Checked here rather than by the parser, so the message names the file (exit status 2).
  const bool use_otsu = !o.threshold_given;
  const double threshold = use_otsu ? 0.0 : parse_threshold(o.threshold, o.input);
  if (o.connectivity != 4 && o.connectivity != 8)
    throw InputError(o.input + ": connectivity " + std::to_string(o.connectivity) + " is not 4 or 8");
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
  lo.connectivity = o.connectivity;
  lo.min_area = o.min_area;
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
                o.input.c_str(), W, H, r.count, o.connectivity, shown, use_otsu ? " otsu" : "",
                o.invert ? ", inverted" : "", std::string(to_string(r.backend)).c_str(),
                std::string(to_string(r.algorithm)).c_str(), r.milliseconds, stages);
  }
}

}  // namespace

void register_label(CLI::App& app) {
  auto o = std::make_shared<LabelCli>();
  auto* cmd = app.add_subcommand("label", "label the connected components of a thresholded image");
  cmd->add_option("image", o->input, "input image (PNG, JPEG, TIFF, FITS)")->required()->check(kFileName);
  // Ranges are checked in run() so the message names the file.
  auto* thr = cmd->add_option("--threshold", o->threshold, "foreground: luminance > T (0..255; default Otsu)");
  cmd->add_flag("--otsu", o->otsu, "threshold by Otsu's method (the default)")->excludes(thr);
  cmd->add_flag("--invert", o->invert, "label dark objects (luminance <= T)");
  cmd->add_option("--connectivity", o->connectivity, "4 or 8 (default 8)");
  cmd->add_option("--min-area", o->min_area, "remove components with fewer pixels, renumber the rest");
  cmd->add_option("--out-colored", o->out_colored, "PNG: each label in a colour of its own, background black")->check(kFileName);
  cmd->add_option("--out-labels", o->out_labels, "32-bit TIFF of the label numbers")->check(kFileName);
  cmd->add_option("--stats", o->stats_csv, "CSV: label,area,left,top,width,height,cx,cy")->check(kFileName);
  cmd->add_option("--algorithm", o->algorithm, "auto | tile_merge | block_union_find | row_stripes")
      ->check(CLI::IsMember({"auto", "automatic", "tile_merge", "block_union_find", "row_stripes"}));
  add_common_options(cmd, o->common);
  cmd->callback([o, thr] {
    o->threshold_given = thr->count() > 0;
    run(*o);
  });
}

}  // namespace winnow::cli
