// winnow compact IMAGE: keep the pixels brighter than a threshold, pack them in raster order,
// sort them by luminance (or alpha), write the packed and sorted images and a CSV list.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "winnow/error.hpp"
#include "winnow/image_compact.hpp"
#include "winnow/io.hpp"

namespace winnow::cli {
namespace {

struct CompactCli {
  CommonOptions common;
  std::string input;
  std::string threshold = "40";
  std::string key = "luminance";
  std::string sort = "desc";
  std::string out_packed, out_sorted, out_list;
};

// One CSV line per kept pixel, in packed (raster) order: x,y,r,g,b,a,luminance (3 decimals).
std::string pixel_list(const Image<Rgba8>& img, const std::vector<std::uint32_t>& packed) {
  std::string csv = "x,y,r,g,b,a,luminance\n";
  csv.reserve(csv.size() + packed.size() * 32);
  const auto w = static_cast<std::uint32_t>(img.width());
  char line[96];
  for (const std::uint32_t i : packed) {
    const Rgba8 p = img.data()[i];
    const std::uint32_t l = luminance_milli(p);
    const int len = std::snprintf(line, sizeof line, "%u,%u,%u,%u,%u,%u,%u.%03u\n", i % w, i / w, unsigned{p.r},
                                  unsigned{p.g}, unsigned{p.b}, unsigned{p.a}, l / 1000, l % 1000);
    csv.append(line, static_cast<std::size_t>(len));
  }
  return csv;
}

void run(const CompactCli& o) {
  ImageCompactOptions opt;
  opt.threshold = parse_threshold(o.threshold, o.input);
  opt.key = o.key == "alpha" ? PixelKey::alpha : PixelKey::luminance;
  opt.sort = o.sort == "none" ? SortOrder::none : o.sort == "asc" ? SortOrder::ascending : SortOrder::descending;
  opt.backend = o.common.requested();
  if (opt.sort == SortOrder::none && !o.out_sorted.empty())
    throw InputError(o.out_sorted + ": --out-sorted needs a sort order (--sort desc or asc, not none)");
  refuse_overwriting({o.input}, {&o.out_packed, &o.out_sorted, &o.out_list});
  for (const auto* p : {&o.out_packed, &o.out_sorted, &o.out_list})
    if (!p->empty()) io::check_writable(*p);
  check_output_name(o.out_packed, {".png"}, "PNG");
  check_output_name(o.out_sorted, {".png"}, "PNG");
  check_output_name(o.out_list, {".csv", ".txt"}, "CSV");

  const Image<Rgba8> img = io::read_rgba8(o.input);
  if (img.empty()) throw InputError(o.input + ": image has zero size");
  const ImageCompactResult r = compact_image(img.view(), opt);

  write_outputs({
      {o.out_packed, [&](const std::string& p) { io::write_png(p, render_packed(img.view(), r.packed_index).view()); }},
      {o.out_sorted, [&](const std::string& p) { io::write_png(p, render_packed(img.view(), r.sorted_index).view()); }},
      {o.out_list, [&](const std::string& p) { io::write_text(p, pixel_list(img, r.packed_index)); }},
  });

  if (!o.common.quiet) {
    const auto pixels = static_cast<std::uint64_t>(img.size());
    std::printf("%s: %" PRId64 "x%" PRId64 ", kept %zu of %" PRIu64 " pixels (%.2f%%), backend %s, %.2f ms\n",
                o.input.c_str(), img.width(), img.height(), r.packed_index.size(), pixels,
                100.0 * static_cast<double>(r.packed_index.size()) / static_cast<double>(pixels),
                std::string(to_string(r.backend)).c_str(), r.milliseconds);
  }
}

}  // namespace

void register_compact(CLI::App& app) {
  auto o = std::make_shared<CompactCli>();
  auto* cmd = app.add_subcommand("compact", "pack the pixels brighter than a threshold and sort them by luminance");
  cmd->add_option("image", o->input, "input image (PNG, JPEG, TIFF, FITS)")->required()->check(kFileName);
  // Parsed and checked in run() so the message names the file.
  cmd->add_option("--threshold", o->threshold, "keep pixels whose key > L (0..255, default 40)");
  cmd->add_option("--key", o->key, "luminance (0.299 R + 0.587 G + 0.114 B) or alpha (default luminance)")
      ->check(CLI::IsMember({"luminance", "alpha"}));
  cmd->add_option("--sort", o->sort, "order of --out-sorted: desc, asc or none (default desc)")
      ->check(CLI::IsMember({"desc", "asc", "none"}));
  cmd->add_option("--out-packed", o->out_packed, "PNG: kept pixels in raster order from the top-left, rest transparent")
      ->check(kFileName);
  cmd->add_option("--out-sorted", o->out_sorted, "PNG: kept pixels ordered by key (stable), rest transparent")
      ->check(kFileName);
  cmd->add_option("--out-list", o->out_list, "CSV: x,y,r,g,b,a,luminance, one kept pixel per line, raster order")
      ->check(kFileName);
  add_common_options(cmd, o->common);
  cmd->callback([o] { run(*o); });
}

}  // namespace winnow::cli
