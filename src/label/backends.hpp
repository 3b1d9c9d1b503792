#pragma once
// The contract between the labeling front end (label.cpp) and each backend (cpu/, cuda/).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "winnow/error.hpp"
#include "winnow/label.hpp"
#include "winnow/label_statistics.hpp"

namespace winnow::detail {

/// One labeling, host memory in and out. The backend writes labels 1..N in raster order of each
/// component's first pixel (before any min_area filtering, which the front end does).
struct LabelRequest {
  ImageView<const std::uint8_t> mask;
  ImageView<std::uint32_t> labels;  ///< same size as mask
  int connectivity = 8;
  bool want_stats = true;
  LabelAlgorithm algorithm = LabelAlgorithm::tile_merge;  ///< never automatic here
  StageTimes* times = nullptr;                            ///< CUDA: device setup, transfers and compute are added here
};

/// Statistics of a component, or of a part of one, as exact integer sums (image coordinates), so
/// that parts labelled apart (tiles, bands) merge exactly.
struct ComponentSums {
  std::uint64_t area = 0, sum_x = 0, sum_y = 0;
  std::int64_t left = std::numeric_limits<std::int64_t>::max(), top = std::numeric_limits<std::int64_t>::max();
  std::int64_t right = -1, bottom = -1;  ///< inclusive
  void add_pixel(std::int64_t x, std::int64_t y) {
    ++area;
    sum_x += static_cast<std::uint64_t>(x);
    sum_y += static_cast<std::uint64_t>(y);
    left = std::min(left, x), right = std::max(right, x);
    top = std::min(top, y), bottom = std::max(bottom, y);
  }
  void add(const ComponentSums& o) {
    area += o.area;
    sum_x += o.sum_x;
    sum_y += o.sum_y;
    left = std::min(left, o.left), right = std::max(right, o.right);
    top = std::min(top, o.top), bottom = std::max(bottom, o.bottom);
  }
};
inline ComponentStats to_component_stats(const ComponentSums& m) {
  ComponentStats s;
  s.area = m.area;
  s.left = m.left;
  s.top = m.top;
  s.width = m.right - m.left + 1;
  s.height = m.bottom - m.top + 1;
  s.cx = static_cast<double>(m.sum_x) / static_cast<double>(m.area);
  s.cy = static_cast<double>(m.sum_y) / static_cast<double>(m.area);
  return s;
}
/// Labels one band (its own request: rows of the image) and returns its N; with `stats`, one
/// record per label of the band, in image coordinates (the band's first row is `top`).
using BandLabeler =
    std::function<std::uint64_t(const LabelRequest& band, std::int64_t top, std::vector<ComponentSums>* stats)>;
/// Labels an image in horizontal bands of `band_rows` rows, one call of `label_band` each, then
/// unites components across the seams and renumbers in raster order: the same labels and
/// statistics as one call on the whole image. For backends whose single call is limited in size
/// (the CUDA backend's 32-bit keys). Throws Error when N >= 2^32. (label/bands.cpp)
std::uint64_t label_in_bands(const LabelRequest& request, std::vector<ComponentStats>* stats, std::int64_t band_rows,
                             const BandLabeler& label_band);

namespace cpu {
/// Algorithms: tile_merge, row_stripes. Returns N (throws Error when N >= 2^32).
std::uint64_t label(const LabelRequest& request, std::vector<ComponentStats>* stats);
/// The pixel pass over tiles (tile_merge) or full-width stripes (row_stripes): what `label` runs
/// for tile_merge, and for row_stripes when the image has too many runs for 32-bit run indices.
std::uint64_t label_pixels(const LabelRequest& request, std::vector<ComponentStats>* stats);
/// Renumbers labels through `map` (map[old] = new, map[0] = 0), in parallel.
void remap_labels(ImageView<std::uint32_t> labels, const std::vector<std::uint32_t>& map);
}  // namespace cpu

namespace cuda {
/// Copies in, labels on the device, copies labels (and stats) out; synchronises.
/// Algorithms: tile_merge, block_union_find. Images beyond one call's key limit (height *
/// next_pow2(width) > 2^31) are labelled in bands of `band_rows` rows (0: as many rows as one
/// call takes; a test may ask for fewer), merged on the host.
std::uint64_t label(const LabelRequest& request, std::vector<ComponentStats>* stats, std::int64_t band_rows = 0);
LabelAlgorithm automatic_algorithm(std::int64_t width, std::int64_t height, int connectivity);
}  // namespace cuda

// ---- volumes ----------------------------------------------------------------------------------

/// One volume labeling, host memory in and out. The backend writes labels 1..N in raster order of
/// each component's first voxel (x fastest, then y, then z), before any min_area / largest_k
/// filtering (the front end does those), into exactly one of labels32 / labels64 (the other has a
/// null data pointer; contiguous, the volume's size).
template <class T>
struct VolumeLabelRequest {
  VolumeView<const T> volume;
  VolumeView<std::uint32_t> labels32;
  VolumeView<std::uint64_t> labels64;
  int connectivity = 26;    ///< 6, 18 or 26
  bool multilabel = false;  ///< neighbours join only when their values are equal (and non-zero)
  bool want_stats = true;
  /// CPU: the labels hold zeros already (a ZeroPages volume): background is left alone, so only
  /// the foreground's labels are written.
  bool labels_zero = false;
  StageTimes* times = nullptr;             ///< CUDA: device setup, transfers and compute are added here
  const ProgressSink* progress = nullptr;  ///< CPU: told of the slab passes done (LabelOptions::progress)
  /// CPU: rows per slab of the parallel labeling (0: chosen by the volume's size and the thread
  /// count; a test sets a few rows to force thin slabs and many seams).
  std::int64_t slab_rows = 0;
  /// CPU: volumes whose rows could hold this many runs or more index their runs with 64 bits (else
  /// 32: 2^31, the numbering's flag bit leaves 31); a test sets 0 to take the 64-bit path.
  double narrow_run_index_limit = 2147483648.0;
};

/// Statistics of a component of a volume (or of a part of one) as exact integer sums, so that
/// parts labelled apart (bricks, slabs, bands) merge exactly.
struct VolumeComponentSums {
  std::uint64_t voxels = 0, sum_x = 0, sum_y = 0, sum_z = 0;
  std::int64_t min_x = std::numeric_limits<std::int64_t>::max(), min_y = min_x, min_z = min_x;
  std::int64_t max_x = -1, max_y = -1, max_z = -1;  ///< inclusive
  std::uint64_t value = 0;                          ///< the voxels' value (multilabel), else 1
  void add_voxel(std::int64_t x, std::int64_t y, std::int64_t z) {
    ++voxels;
    sum_x += static_cast<std::uint64_t>(x), sum_y += static_cast<std::uint64_t>(y),
        sum_z += static_cast<std::uint64_t>(z);
    min_x = std::min(min_x, x), max_x = std::max(max_x, x);
    min_y = std::min(min_y, y), max_y = std::max(max_y, y);
    min_z = std::min(min_z, z), max_z = std::max(max_z, z);
  }
  void add(const VolumeComponentSums& o) {
    voxels += o.voxels, sum_x += o.sum_x, sum_y += o.sum_y, sum_z += o.sum_z;
    min_x = std::min(min_x, o.min_x), max_x = std::max(max_x, o.max_x);
    min_y = std::min(min_y, o.min_y), max_y = std::max(max_y, o.max_y);
    min_z = std::min(min_z, o.min_z), max_z = std::max(max_z, o.max_z);
  }
};

/// The numbering of a volume labelled in bands of layers (label/bands.cpp). Band b's label l is
/// provisional id base[b] + l; only ids on the seams between bands can join a smaller one, so the
/// numbering is the ids that did (ascending) with each one's final label, and every other id g is
/// numbered g - (how many of those lie below g): a list as long as the seams, not the components.
struct SeamNumbering {
  std::vector<std::uint64_t> merged;  ///< ids that joined a smaller id, ascending
  std::vector<std::uint64_t> label;   ///< the final label of each
  std::uint64_t count = 0;            ///< N
  /// The final label of id g; `lo`, `hi`: the part of `merged` that can hold it (a band's).
  std::uint64_t label_of(std::uint64_t g, std::size_t lo, std::size_t hi) const {
    const std::size_t k =
        static_cast<std::size_t>(std::lower_bound(merged.begin() + static_cast<std::ptrdiff_t>(lo),
                                                  merged.begin() + static_cast<std::ptrdiff_t>(hi), g) -
                                 merged.begin());
    return k < hi && merged[k] == g ? label[k] : g - k;
  }
};

/// A backend that holds one band of a volume's layers at a time (the CUDA backend: on the device),
/// for the labeling in two passes (label_volume_in_passes).
template <class T>
class ResidentBand {
 public:
  virtual ~ResidentBand() = default;
  /// Labels the band into 32-bit labels the backend keeps until the next call; returns its N. With
  /// `sums`, one record per label in the band's coordinates.
  virtual std::uint64_t label(const VolumeView<const T>& band, int connectivity, bool multilabel,
                              std::vector<VolumeComponentSums>* sums) = 0;
  /// Copies layer z of the band's labels to `out` (nx * ny values, rows of nx).
  virtual void copy_layer(std::int64_t z, std::uint32_t* out) = 0;
  /// Writes the band's final labels, numbering.label_of(base + l, lo, hi) for l > 0, into out32 or
  /// out64 (the band's layers of the output; the other view is empty).
  virtual void write_labels(std::uint64_t base, const SeamNumbering& numbering, std::size_t lo, std::size_t hi,
                            const VolumeView<std::uint32_t>& out32, const VolumeView<std::uint64_t>& out64) = 0;
};

/// Thrown before any label is written when the components outnumber 32-bit labels (2^32 - 1):
/// the caller may ask again with 64-bit labels.
class CountBeyond32Bits : public Error {
 public:
  using Error::Error;
};

/// Labels a volume in bands of `band_layers` layers (z) held by `backend` one at a time, in two
/// passes: the first labels every band and keeps only its first and last layers (and its sums),
/// the seams are united and numbered on the host, the second labels each band again and writes its
/// final labels. The same labels and sums as one call on the whole volume, into labels32 or
/// labels64 (throws CountBeyond32Bits for a count 32 bits do not hold). For backends whose single
/// call is limited in size (the CUDA backend's 32-bit keys, the device's memory), and whose labeling
/// costs less than moving labels twice. (label/bands.cpp)
template <class T>
std::uint64_t label_volume_in_passes(const VolumeLabelRequest<T>& request, std::vector<VolumeComponentSums>* sums,
                                     std::int64_t band_layers, ResidentBand<T>& backend);

/// The survivor rule of min_area and largest_k: winnow/label_statistics.hpp (public, so that callers
/// that filter a labeling themselves apply the same rule).
using winnow::surviving_labels;

/// Labels an image through the volume path (nz = 1: 4-connectivity is 6, 8 is 26): multi-label
/// images and images of 16-, 32- and 64-bit values. `labels` has the image's size. (label_volume.cpp)
template <class T>
Labeling label_image_as_volume(ImageView<const T> image, ImageView<std::uint32_t> labels, const LabelOptions& options);

namespace cpu {
/// Multi-threaded volume labeling (src/label/cpu/label_volume_impl.hpp). Returns N; with `sums`, one
/// record per label. Instantiated for std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t.
template <class T>
std::uint64_t label_volume(const VolumeLabelRequest<T>& request, std::vector<VolumeComponentSums>* sums);
}  // namespace cpu

namespace cuda {
/// Copies in, labels on the device, copies labels (and sums) out; synchronises
/// (src/label/cuda/label_volume.cu). Volumes beyond one call (2^32 voxels and more, or more than
/// the device's free memory holds) and 64-bit labels go through bands of layers in two passes
/// (label_volume_in_passes), as do volumes deeper than `band_layers` (0: as deep as one call
/// takes; a test may ask for fewer). Throws CountBeyond32Bits when N does not fit 32-bit labels32.
/// Same instantiations as the CPU one.
template <class T>
std::uint64_t label_volume(const VolumeLabelRequest<T>& request, std::vector<VolumeComponentSums>* sums,
                           std::int64_t band_layers = 0);
}  // namespace cuda

}  // namespace winnow::detail
