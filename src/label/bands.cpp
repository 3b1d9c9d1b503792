// Labeling in bands: each band labelled by one backend call, components united across the seams
// between bands with a host union-find over the bands' labels, then renumbered. Images are cut
// into bands of rows, volumes into bands of layers (z).
//
// Why: the CUDA backend's keys are 32-bit: one image call takes at most 2^31 / next_pow2(width)
// rows, one volume call fewer than 2^32 voxels (and what the device's memory holds). Bands make
// any height or depth work: a band's labels are in raster order of first pixels (voxels) within
// the band, bands are in raster order, so the provisional id base[b] + label orders components
// like their first pixels; a union keeps the smaller id as root, and the roots numbered in id
// order are exactly the raster-order numbering of one call.
#include <algorithm>
#include <numeric>
#include <string>

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

/// The volume bands' work for one id width: 32-bit ids when the labels are 32-bit (the sum of the
/// bands' counts must then stay below 2^32), 64-bit ids for 64-bit labels.
template <class Id, class T>
std::uint64_t label_volume_bands_with(const VolumeLabelRequest<T>& req, std::vector<VolumeComponentSums>* sums,
                                      std::int64_t band_layers, const VolumeBandLabeler<T>& label_band) {
  const VolumeView<const T>& v = req.volume;
  const bool wide = req.labels64.data != nullptr;
  const std::int64_t bands = (v.nz + band_layers - 1) / band_layers;
  const std::int64_t rows_per_layer = v.ny;
  auto layers_of = [&](std::int64_t b) { return std::min(band_layers, v.nz - b * band_layers); };

  // 64-bit labels: each band is labelled into a 32-bit buffer of one band, then widened into the
  // output as provisional ids; 32-bit labels: each band labels its own layers of the output.
  Volume<std::uint32_t> band_buffer =
      wide ? Volume<std::uint32_t>(v.nx, v.ny, std::min(band_layers, v.nz)) : Volume<std::uint32_t>();
  auto band_labels = [&](std::int64_t b) {
    const std::int64_t z0 = b * band_layers, d = layers_of(b);
    if (wide) {
      VolumeView<std::uint32_t> buf = band_buffer.view();
      return VolumeView<std::uint32_t>(buf.data, v.nx, v.ny, d, buf.row_stride, buf.slice_stride);
    }
    const VolumeView<std::uint32_t>& o = req.labels32;
    return VolumeView<std::uint32_t>(o.row(0, z0), v.nx, v.ny, d, o.row_stride, o.slice_stride);
  };

  std::vector<std::uint64_t> base(static_cast<std::size_t>(bands) + 1, 0);
  std::vector<VolumeComponentSums> parts;  // by provisional id - 1
  for (std::int64_t b = 0; b < bands; ++b) {
    const std::int64_t z0 = b * band_layers, d = layers_of(b);
    VolumeLabelRequest<T> band = req;
    band.volume = VolumeView<const T>(v.row(0, z0), v.nx, v.ny, d, v.row_stride, v.slice_stride);
    band.labels32 = band_labels(b);
    band.labels64 = VolumeView<std::uint64_t>();
    std::vector<VolumeComponentSums> band_sums;
    const std::uint64_t n = label_band(band, sums ? &band_sums : nullptr);
    base[b + 1] = base[b] + n;
    if (sizeof(Id) == 4 && base[b + 1] >= (std::uint64_t{1} << 32))
      throw Error("label: more than " + std::to_string(base[b + 1]) +
                  " components before merging bands; "
                  "they do not fit 32-bit labels");
    if (sums) {
      for (VolumeComponentSums& m : band_sums) {  // band coordinates to the volume's
        m.min_z += z0, m.max_z += z0;
        m.sum_z += static_cast<std::uint64_t>(z0) * m.voxels;
      }
      parts.insert(parts.end(), band_sums.begin(), band_sums.end());
    }
    if (wide) {
      const std::uint64_t offset = base[b];
      const VolumeView<std::uint32_t> from = band_labels(b);
#pragma omp parallel for schedule(static)
      for (std::int64_t r = 0; r < d * rows_per_layer; ++r) {
        const std::uint32_t* src = from.row(r % v.ny, r / v.ny);
        std::uint64_t* dst = req.labels64.row(r % v.ny, z0 + r / v.ny);
        for (std::int64_t x = 0; x < v.nx; ++x) dst[x] = src[x] ? offset + src[x] : 0;
      }
    }
  }
  const std::uint64_t ids = base[bands];

  // The seams: each voxel of a band's first layer against its neighbours in the layer below
  // (6: the voxel under it; 18: and the four beside that one; 26: the 3 x 3 square).
  ProvisionalIds<Id> uf(ids);
  auto id_at = [&](std::int64_t b, std::int64_t x, std::int64_t y, std::int64_t z) -> Id {
    if (wide) return static_cast<Id>(req.labels64.row(y, z)[x]);
    const std::uint32_t l = req.labels32.row(y, z)[x];
    return l ? static_cast<Id>(base[b] + l) : Id{0};
  };
  const int reach = req.connectivity == 6 ? 0 : 1;
  for (std::int64_t b = 1; b < bands; ++b) {
    const std::int64_t z = b * band_layers;
    for (std::int64_t y = 0; y < v.ny; ++y)
      for (std::int64_t x = 0; x < v.nx; ++x) {
        const Id upper = id_at(b, x, y, z);
        if (!upper) continue;
        for (std::int64_t ya = std::max<std::int64_t>(y - reach, 0); ya <= std::min(y + reach, v.ny - 1); ++ya)
          for (std::int64_t xa = std::max<std::int64_t>(x - reach, 0); xa <= std::min(x + reach, v.nx - 1); ++xa) {
            if (req.connectivity == 18 && xa != x && ya != y) continue;  // a corner of the square
            const Id lower = id_at(b - 1, xa, ya, z - 1);
            if (lower && (!req.multilabel || v.row(ya, z - 1)[xa] == v.row(y, z)[x])) uf.unite(lower, upper);
          }
      }
  }

  const std::uint64_t count = uf.number_in_id_order();
  for (std::int64_t b = 0; b < bands; ++b) {
    const std::int64_t z0 = b * band_layers, d = layers_of(b);
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < d * rows_per_layer; ++r) {
      const std::int64_t y = r % v.ny, z = z0 + r / v.ny;
      if (wide) {
        std::uint64_t* row = req.labels64.row(y, z);
        for (std::int64_t x = 0; x < v.nx; ++x) row[x] = row[x] ? uf.number(row[x]) : 0;
      } else {
        std::uint32_t* row = req.labels32.row(y, z);
        for (std::int64_t x = 0; x < v.nx; ++x)
          row[x] = row[x] ? static_cast<std::uint32_t>(uf.number(base[b] + row[x])) : 0;
      }
    }
  }

  if (sums) {
    sums->assign(count, VolumeComponentSums{});
    for (std::uint64_t g = 1; g <= ids; ++g) {
      VolumeComponentSums& m = (*sums)[uf.number(g) - 1];
      m.add(parts[g - 1]);
      m.value = parts[g - 1].value;
    }
  }
  return count;
}

}  // namespace

template <class T>
std::uint64_t label_volume_in_bands(const VolumeLabelRequest<T>& req, std::vector<VolumeComponentSums>* sums,
                                    std::int64_t band_layers, const VolumeBandLabeler<T>& label_band) {
  if (sums) sums->clear();
  if (req.volume.empty()) return 0;
  band_layers = std::clamp<std::int64_t>(band_layers, 1, req.volume.nz);
  return req.labels64.data ? label_volume_bands_with<std::uint64_t>(req, sums, band_layers, label_band)
                           : label_volume_bands_with<std::uint32_t>(req, sums, band_layers, label_band);
}

template std::uint64_t label_volume_in_bands<std::uint8_t>(const VolumeLabelRequest<std::uint8_t>&,
                                                           std::vector<VolumeComponentSums>*, std::int64_t,
                                                           const VolumeBandLabeler<std::uint8_t>&);
template std::uint64_t label_volume_in_bands<std::uint16_t>(const VolumeLabelRequest<std::uint16_t>&,
                                                            std::vector<VolumeComponentSums>*, std::int64_t,
                                                            const VolumeBandLabeler<std::uint16_t>&);
template std::uint64_t label_volume_in_bands<std::uint32_t>(const VolumeLabelRequest<std::uint32_t>&,
                                                            std::vector<VolumeComponentSums>*, std::int64_t,
                                                            const VolumeBandLabeler<std::uint32_t>&);
template std::uint64_t label_volume_in_bands<std::uint64_t>(const VolumeLabelRequest<std::uint64_t>&,
                                                            std::vector<VolumeComponentSums>*, std::int64_t,
                                                            const VolumeBandLabeler<std::uint64_t>&);

}  // namespace winnow::detail
