// Labeling in horizontal bands: each band labelled by one backend call, components united across
// the seams between bands with a host union-find over the bands' labels, then renumbered.
//
// Why: the CUDA backend's keys are 32-bit ((y << shift) | x), so one call takes at most
// 2^31 / next_pow2(width) rows. Bands make any height work: a band's labels are in raster order
// of first pixels within the band, bands are in row order, so the global id base[b] + label
// orders components like their first pixels; a union keeps the smaller id as root, and the
// roots numbered in id order are exactly the raster-order numbering of one call.
#include <algorithm>
#include <numeric>
#include <string>

#include "label/backends.hpp"
#include "winnow/error.hpp"

namespace winnow::detail {

std::uint64_t label_in_bands(const LabelRequest& req, std::vector<ComponentStats>* stats, std::int64_t band_rows,
                             const BandLabeler& label_band) {
  const std::int64_t W = req.mask.width, H = req.mask.height;
  if (stats) stats->clear();
  if (W <= 0 || H <= 0) return 0;
  band_rows = std::clamp<std::int64_t>(band_rows, 1, H);
  const std::int64_t bands = (H + band_rows - 1) / band_rows;
  auto band_request = [&](std::int64_t b) {
    const std::int64_t y0 = b * band_rows, h = std::min(band_rows, H - y0);
    LabelRequest band = req;
    band.mask = ImageView<const std::uint8_t>{req.mask.row(y0), W, h, req.mask.stride};
    band.labels = ImageView<std::uint32_t>{req.labels.row(y0), W, h, req.labels.stride};
    return band;
  };

  // Each band; global id of label l of band b: base[b] + l.
  std::vector<std::uint64_t> base(static_cast<std::size_t>(bands) + 1, 0);
  std::vector<ComponentSums> parts;  // by global id - 1
  for (std::int64_t b = 0; b < bands; ++b) {
    std::vector<ComponentSums> band_stats;
    const std::uint64_t n = label_band(band_request(b), b * band_rows, stats ? &band_stats : nullptr);
    base[b + 1] = base[b] + n;
    if (base[b + 1] >= (std::uint64_t{1} << 32))
      throw Error("label: more than " + std::to_string(base[b + 1]) + " components before merging bands; "
                  "they do not fit 32-bit labels");
    if (stats) parts.insert(parts.end(), band_stats.begin(), band_stats.end());
  }
  const std::uint64_t ids = base[bands];

  // Union-find over global ids; the smaller id stays the root (path halving).
  std::vector<std::uint32_t> parent(ids + 1);
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](std::uint32_t a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  auto unite = [&](std::uint32_t a, std::uint32_t b) {
    a = find(a), b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  };
  const int reach = req.connectivity == 8 ? 1 : 0;  // columns either side that touch across a seam
  for (std::int64_t b = 1; b < bands; ++b) {
    const std::int64_t y = b * band_rows;
    const std::uint32_t* above = req.labels.row(y - 1);
    const std::uint32_t* below = req.labels.row(y);
    for (std::int64_t x = 0; x < W; ++x) {
      if (!below[x]) continue;
      const auto id = static_cast<std::uint32_t>(base[b] + below[x]);
      for (std::int64_t xa = std::max<std::int64_t>(x - reach, 0); xa <= std::min(x + reach, W - 1); ++xa)
        if (above[xa]) unite(static_cast<std::uint32_t>(base[b - 1] + above[xa]), id);
    }
  }

  // Roots in id order get 1..N; every id takes its root's number (a root precedes its members).
  std::vector<std::uint32_t> number(ids + 1, 0);
  std::uint32_t count = 0;
  for (std::uint64_t g = 1; g <= ids; ++g) {
    const std::uint32_t r = find(static_cast<std::uint32_t>(g));
    number[g] = r == g ? ++count : number[r];
  }
  for (std::int64_t b = 0; b < bands; ++b) {
    std::vector<std::uint32_t> band_map(number.begin() + static_cast<std::ptrdiff_t>(base[b]),
                                        number.begin() + static_cast<std::ptrdiff_t>(base[b + 1]) + 1);
    band_map[0] = 0;  // background (the entry of the previous band's last id)
    cpu::remap_labels(band_request(b).labels, band_map);
  }

  if (stats) {
    std::vector<ComponentSums> merged(count);
    for (std::uint64_t g = 1; g <= ids; ++g) merged[number[g] - 1].add(parts[g - 1]);
    stats->resize(count);
    for (std::uint32_t i = 0; i < count; ++i) (*stats)[i] = to_component_stats(merged[i]);
  }
  return count;
}

}  // namespace winnow::detail
