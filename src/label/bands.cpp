// Labeling in bands: what one backend call cannot take, labelled a band at a time and united
// across the seams between bands on the host. Images are cut into bands of rows, volumes into bands
// of layers (z).
//
// Why: the CUDA backend's keys are 32-bit: one image call takes at most 2^31 / next_pow2(width)
// rows, one volume call fewer than 2^32 voxels (and what the device's memory holds). Bands make
// any height or depth work: a band's labels are in raster order of first pixels (voxels) within
// the band, bands are in raster order, so the provisional id base[b] + label orders components
// like their first pixels; a union keeps the smaller id as root, and the roots numbered in id
// order are exactly the raster-order numbering of one call.
//
// Images: every band labelled into the output, a union-find over all provisional ids, and a host
// pass that renumbers every pixel.
//
// Volumes (label_volume_in_passes): such volumes are billions of voxels, and a host pass over
// them, or a union-find over all their components, costs far more than the device's labeling. So
// the labels cross to the host once, final:
//   1. every band is labelled; only its first and last layers (and its sums) come back;
//   2. the seams: the ids on them (sorted), a union-find over those alone (the smaller id the
//      root), and the numbering as the ids that joined a smaller one with their final labels --
//      every other id g is numbered g - (how many of those lie below g) (SeamNumbering): work and
//      memory in proportion to the seams' voxels;
//   3. every band is labelled again (labels are deterministic) and the backend writes its final
//      labels, id by id through the numbering. The first band of pass 2 is the last of pass 1
//      (pass 1 goes backwards), so it is labelled once.
// The count is known before any label is written: 32-bit labels that cannot hold it are refused
// before the work of writing them.
#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "label/backends.hpp"
#include "winnow/error.hpp"

namespace winnow::detail {
namespace {

/// The union-find over the bands' provisional ids (0 is background); the smaller id stays the
/// root, so every parent is smaller than its child.
template <class Id>
class ProvisionalIds {
 public:
  explicit ProvisionalIds(std::uint64_t ids) : parent_(ids + 1) { std::iota(parent_.begin(), parent_.end(), Id{0}); }
  Id find(Id a) {
    while (parent_[a] != a) a = parent_[a] = parent_[parent_[a]];  // path halving
    return a;
  }
  void unite(Id a, Id b) {
    a = find(a), b = find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }
  /// Numbers the roots 1..N in id order and returns N; afterwards number(g) is g's final label.
  /// In place, in one ascending pass: g's parent p < g already holds the number of p's root,
  /// which is g's root too.
  std::uint64_t number_in_id_order() {
    Id count = 0;
    for (std::size_t g = 1; g < parent_.size(); ++g) {
      const Id p = parent_[g];
      parent_[g] = p == g ? ++count : parent_[p];
    }
    return count;
  }
  Id number(std::uint64_t g) const { return parent_[g]; }
  const Id* numbers() const { return parent_.data(); }

 private:
  std::vector<Id> parent_;
};

}  // namespace

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
      throw Error("label: more than " + std::to_string(base[b + 1]) +
                  " components before merging bands; "
                  "they do not fit 32-bit labels");
    if (stats) parts.insert(parts.end(), band_stats.begin(), band_stats.end());
  }
  const std::uint64_t ids = base[bands];

  ProvisionalIds<std::uint32_t> uf(ids);
  const int reach = req.connectivity == 8 ? 1 : 0;  // columns either side that touch across a seam
  for (std::int64_t b = 1; b < bands; ++b) {
    const std::int64_t y = b * band_rows;
    const std::uint32_t* above = req.labels.row(y - 1);
    const std::uint32_t* below = req.labels.row(y);
    for (std::int64_t x = 0; x < W; ++x) {
      if (!below[x]) continue;
      const auto id = static_cast<std::uint32_t>(base[b] + below[x]);
      for (std::int64_t xa = std::max<std::int64_t>(x - reach, 0); xa <= std::min(x + reach, W - 1); ++xa)
        if (above[xa]) uf.unite(static_cast<std::uint32_t>(base[b - 1] + above[xa]), id);
    }
  }

  const auto count = static_cast<std::uint32_t>(uf.number_in_id_order());
  for (std::int64_t b = 0; b < bands; ++b) {
    std::vector<std::uint32_t> band_map(uf.numbers() + base[b], uf.numbers() + base[b + 1] + 1);
    band_map[0] = 0;  // background (the entry of the previous band's last id)
    cpu::remap_labels(band_request(b).labels, band_map);
  }

  if (stats) {
    std::vector<ComponentSums> merged(count);
    for (std::uint64_t g = 1; g <= ids; ++g) merged[uf.number(g) - 1].add(parts[g - 1]);
    stats->resize(count);
    for (std::uint32_t i = 0; i < count; ++i) (*stats)[i] = to_component_stats(merged[i]);
  }
  return count;
}

namespace {

/// Unions over the ids on the seams (indices into their sorted list); the smaller index (the smaller
/// id) stays the root.
class SeamUnions {
 public:
  explicit SeamUnions(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), std::uint32_t{0}); }
  std::uint32_t find(std::uint32_t a) {
    while (parent_[a] != a) a = parent_[a] = parent_[parent_[a]];  // path halving
    return a;
  }
  void unite(std::uint32_t a, std::uint32_t b) {
    a = find(a), b = find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<std::uint32_t> parent_;
};

constexpr std::uint32_t kNoId = 0xFFFFFFFFu;

/// The seams' numbering (step 2 of the file's description). first[b] / last[b]: band b's first and
/// last layer of labels (empty where there is no seam).
template <class T>
SeamNumbering number_seams(const VolumeView<const T>& v, std::int64_t band_layers,
                           const std::vector<std::uint64_t>& base, const std::vector<std::vector<std::uint32_t>>& first,
                           const std::vector<std::vector<std::uint32_t>>& last, int connectivity, bool multilabel) {
  const auto bands = static_cast<std::int64_t>(base.size()) - 1;
  const std::int64_t layer = v.nx * v.ny;
  // The ids on the seams, ascending (a run of one label is one entry before the sort).
  std::vector<std::uint64_t> ids;
  for (std::int64_t b = 1; b < bands; ++b)
    for (const auto& [labels, offset] : {std::pair{&last[b - 1], base[b - 1]}, std::pair{&first[b], base[b]}}) {
      std::uint32_t previous = 0;
      for (const std::uint32_t l : *labels)
        if (l && l != previous) ids.push_back(offset + (previous = l));
    }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.size() >= kNoId) throw Error("label: more ids on the seams between bands than 32-bit indices hold");

  // Each seam's two layers as indices into ids, then the unions (6: the voxel below; 18: and the
  // four beside it; 26: the 3 x 3 square; multi-label: equal values only).
  SeamUnions unions(ids.size());
  std::vector<std::uint32_t> below(static_cast<std::size_t>(layer)), above(static_cast<std::size_t>(layer));
  auto index_layer = [&](const std::vector<std::uint32_t>& labels, std::uint64_t offset,
                         std::vector<std::uint32_t>& out) {
#pragma omp parallel for schedule(static)
    for (std::int64_t y = 0; y < v.ny; ++y) {
      std::uint32_t previous = 0, index = kNoId;
      for (std::int64_t x = 0; x < v.nx; ++x) {
        const std::uint32_t l = labels[static_cast<std::size_t>(y * v.nx + x)];
        if (l != previous)
          index = l ? static_cast<std::uint32_t>(std::lower_bound(ids.begin(), ids.end(), offset + l) - ids.begin())
                    : kNoId;
        previous = l;
        out[static_cast<std::size_t>(y * v.nx + x)] = index;
      }
    }
  };
  const int reach = connectivity == 6 ? 0 : 1;
  for (std::int64_t b = 1; b < bands; ++b) {
    const std::int64_t z = b * band_layers;
    index_layer(last[b - 1], base[b - 1], below);
    index_layer(first[b], base[b], above);
    for (std::int64_t y = 0; y < v.ny; ++y)
      for (std::int64_t x = 0; x < v.nx; ++x) {
        const std::uint32_t upper = above[static_cast<std::size_t>(y * v.nx + x)];
        if (upper == kNoId) continue;
        for (std::int64_t ya = std::max<std::int64_t>(y - reach, 0); ya <= std::min(y + reach, v.ny - 1); ++ya)
          for (std::int64_t xa = std::max<std::int64_t>(x - reach, 0); xa <= std::min(x + reach, v.nx - 1); ++xa) {
            if (connectivity == 18 && xa != x && ya != y) continue;  // a corner of the square
            const std::uint32_t lower = below[static_cast<std::size_t>(ya * v.nx + xa)];
            if (lower != kNoId && lower != upper && (!multilabel || v.row(ya, z - 1)[xa] == v.row(y, z)[x]))
              unions.unite(lower, upper);
          }
      }
  }

  // Numbered in id order: a root g is g less the ids below it that joined a smaller one; every
  // other id takes its root's number (its root is a smaller index, numbered before it).
  SeamNumbering numbering;
  std::vector<std::uint64_t> number(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::uint32_t root = unions.find(static_cast<std::uint32_t>(i));
    if (root == i) {
      number[i] = ids[i] - numbering.merged.size();
    } else {
      number[i] = number[root];
      numbering.merged.push_back(ids[i]);
      numbering.label.push_back(number[i]);
    }
  }
  numbering.count = base[static_cast<std::size_t>(bands)] - numbering.merged.size();
  return numbering;
}

}  // namespace

template <class T>
std::uint64_t label_volume_in_passes(const VolumeLabelRequest<T>& req, std::vector<VolumeComponentSums>* sums,
                                     std::int64_t band_layers, ResidentBand<T>& backend) {
  if (sums) sums->clear();
  const VolumeView<const T>& v = req.volume;
  if (v.empty()) return 0;
  band_layers = std::clamp<std::int64_t>(band_layers, 1, v.nz);
  const std::int64_t bands = (v.nz + band_layers - 1) / band_layers;
  const auto layer = static_cast<std::size_t>(v.nx * v.ny);
  auto depth_of = [&](std::int64_t b) { return std::min(band_layers, v.nz - b * band_layers); };
  auto band_of = [&](std::int64_t b) {
    return VolumeView<const T>(v.row(0, b * band_layers), v.nx, v.ny, depth_of(b), v.row_stride, v.slice_stride);
  };

  // Pass 1, the last band first: the first band stays with the backend for pass 2.
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(bands));
  std::vector<std::vector<std::uint32_t>> first(static_cast<std::size_t>(bands)), last(first.size());
  std::vector<std::vector<VolumeComponentSums>> band_sums(sums ? first.size() : 0);
  for (std::int64_t b = bands - 1; b >= 0; --b) {
    const auto i = static_cast<std::size_t>(b);
    counts[i] = backend.label(band_of(b), req.connectivity, req.multilabel, sums ? &band_sums[i] : nullptr);
    if (b > 0) first[i].resize(layer), backend.copy_layer(0, first[i].data());
    if (b + 1 < bands) last[i].resize(layer), backend.copy_layer(depth_of(b) - 1, last[i].data());
  }
  std::vector<std::uint64_t> base(static_cast<std::size_t>(bands) + 1, 0);
  for (std::size_t b = 0; b < counts.size(); ++b) base[b + 1] = base[b] + counts[b];

  const SeamNumbering numbering = number_seams(v, band_layers, base, first, last, req.connectivity, req.multilabel);
  const bool wide = req.labels64.data != nullptr;
  if (!wide && numbering.count >= (std::uint64_t{1} << 32))
    throw CountBeyond32Bits("label: " + std::to_string(numbering.count) + " components do not fit 32-bit labels");

  // Pass 2: each band's final labels, the part of the numbering that lies in it.
  auto part_of = [&](std::int64_t b) {
    const auto at = [&](std::uint64_t g) {
      return static_cast<std::size_t>(std::lower_bound(numbering.merged.begin(), numbering.merged.end(), g) -
                                      numbering.merged.begin());
    };
    return std::pair{at(base[static_cast<std::size_t>(b)] + 1), at(base[static_cast<std::size_t>(b) + 1] + 1)};
  };
  for (std::int64_t b = 0; b < bands; ++b) {
    if (b > 0) backend.label(band_of(b), req.connectivity, req.multilabel, nullptr);
    const std::int64_t z0 = b * band_layers, d = depth_of(b);
    const auto [lo, hi] = part_of(b);
    const VolumeView<std::uint32_t>& o32 = req.labels32;
    const VolumeView<std::uint64_t>& o64 = req.labels64;
    backend.write_labels(
        base[static_cast<std::size_t>(b)], numbering, lo, hi,
        wide ? VolumeView<std::uint32_t>()
             : VolumeView<std::uint32_t>(o32.row(0, z0), v.nx, v.ny, d, o32.row_stride, o32.slice_stride),
        wide ? VolumeView<std::uint64_t>(o64.row(0, z0), v.nx, v.ny, d, o64.row_stride, o64.slice_stride)
             : VolumeView<std::uint64_t>());
  }

  if (sums) {  // each id's sums into its component's, ids ascending beside the merged ones
    sums->assign(numbering.count, VolumeComponentSums{});
    std::size_t k = 0;
    for (std::int64_t b = 0; b < bands; ++b) {
      const std::uint64_t z0 = static_cast<std::uint64_t>(b * band_layers);
      const std::vector<VolumeComponentSums>& part = band_sums[static_cast<std::size_t>(b)];
      for (std::size_t l = 0; l < part.size(); ++l) {
        const std::uint64_t g = base[static_cast<std::size_t>(b)] + l + 1;
        while (k < numbering.merged.size() && numbering.merged[k] < g) ++k;
        const std::uint64_t label =
            k < numbering.merged.size() && numbering.merged[k] == g ? numbering.label[k] : g - k;
        VolumeComponentSums m = part[l];  // band coordinates to the volume's
        m.min_z += static_cast<std::int64_t>(z0), m.max_z += static_cast<std::int64_t>(z0);
        m.sum_z += z0 * m.voxels;
        VolumeComponentSums& into = (*sums)[label - 1];
        into.add(m);
        into.value = m.value;
      }
    }
  }
  return numbering.count;
}

#define WINNOW_INSTANTIATE(T)                                                                                       \
  template std::uint64_t label_volume_in_passes<T>(const VolumeLabelRequest<T>&, std::vector<VolumeComponentSums>*, \
                                                   std::int64_t, ResidentBand<T>&);
WINNOW_INSTANTIATE(std::uint8_t)
WINNOW_INSTANTIATE(std::uint16_t)
WINNOW_INSTANTIATE(std::uint32_t)
WINNOW_INSTANTIATE(std::uint64_t)
#undef WINNOW_INSTANTIATE

}  // namespace winnow::detail
