#pragma once
/// @file label.hpp
/// Connected-component labeling of images and volumes, binary or multi-label, with
/// per-component statistics.
///
/// Output: a 32-bit label image, 0 for background and 1..N for the components, numbered in
/// raster order of each component's first pixel (row by row, left to right) -- the numbering of
/// OpenCV's SAUF and scipy.ndimage.label, identical on every backend and algorithm.
///
/// Host API (this header): host memory in and out, any backend (a CUDA run copies in and out).
/// Sizes: any, beyond 2^31 pixels too. The CUDA backend labels an image whose height *
/// next_pow2(width) exceeds 2^31 (its 32-bit keys) in bands of rows, one device call each, and
/// unites the components across the seams on the host: same labels and statistics.
/// Device API for CUDA users (device pointers and a stream): `winnow/cuda/label.hpp`.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "winnow/backend.hpp"
#include "winnow/image.hpp"
#include "winnow/progress.hpp"
#include "winnow/volume.hpp"

namespace winnow {

enum class LabelAlgorithm {
  automatic,         ///< the fastest variant for the backend (see bench/results/label.md)
  tile_merge,        ///< tiles labelled independently, union-find merge across tile borders (CPU + CUDA)
  block_union_find,  ///< BUF: union-find over 2x2 pixel blocks (8-connectivity) or pixels (4) (CUDA)
  row_stripes,       ///< one full-width row stripe per thread, scan labeling, merge at the seams (CPU)
};
std::string_view to_string(LabelAlgorithm a);
/// Parses the names above ("auto" too); throws InputError otherwise.
LabelAlgorithm parse_label_algorithm(std::string_view name);

struct LabelOptions {
  /// Images: 4 or 8; volumes: 6, 18 or 26; 0 (the default) means the densest (8, 26). Anything
  /// else is an InputError.
  int connectivity = 0;
  /// false: every non-zero value is foreground and all foreground touches. true: neighbours
  /// connect only when their values are equal and non-zero (cc3d's and scikit-image's rule).
  bool multilabel = false;
  /// Keep only the k largest components (by voxel count; ties to the lower label), renumbered in
  /// raster order like the rest; 0 keeps all. Applied after min_area.
  std::uint64_t largest_k = 0;
  std::uint64_t min_area = 0;  ///< components with fewer pixels are removed (set to 0) and the rest renumbered
  bool want_stats = true;      ///< fill Labeling::stats
  bool wide_labels = false;    ///< volumes: 64-bit labels (VolumeLabeling::labels64) whatever the count
  LabelAlgorithm algorithm = LabelAlgorithm::automatic;
  Backend backend = Backend::automatic;
  /// Volumes on the CPU: called with (slab passes done, slab passes in all) as the slabs are
  /// scanned and their labels written, from the labeling's threads (progress.hpp). Not called by
  /// the CUDA backend (seconds of CPU work are milliseconds there).
  ProgressSink progress;
};

/// The connectivity `connectivity` names for an array of `dimensions` dimensions (2: an image, 3:
/// a volume): 4 or 8, or 6, 18 or 26, as given; 0 the densest (8, 26). Any other value is an
/// InputError whose message starts with "connectivity". The one rule every entry point
/// (labeling front ends, device API, command line, Python) applies.
int resolve_connectivity(int connectivity, int dimensions);

/// Statistics of one component. The centroid is the mean of the pixel coordinates (pixel
/// centres at integer coordinates), computed from exact 64-bit integer sums.
struct ComponentStats {
  std::uint64_t area = 0;
  std::int64_t left = 0, top = 0, width = 0, height = 0;
  double cx = 0, cy = 0;
  std::uint64_t value = 0;  ///< multi-label input: the component's pixel value; 0 for binary input
  friend bool operator==(const ComponentStats&, const ComponentStats&) = default;
};

/// Where the time of a call went, in milliseconds (wall clock). On the CPU backend everything is
/// `compute`. On CUDA: `device_setup` is the device's start in this process (the first CUDA call
/// of a process creates its context, often 100 ms and more) plus the device allocations,
/// `transfers` the copies between host and device memory, `compute` the labeling on the device.
struct StageTimes {
  double device_setup = 0, transfers = 0, compute = 0;
  StageTimes& operator+=(const StageTimes& o) {
    device_setup += o.device_setup, transfers += o.transfers, compute += o.compute;
    return *this;
  }
};

struct Labeling {
  Image<std::uint32_t> labels;                            ///< same size as the input; 0 background, 1..count
  std::uint32_t count = 0;                                ///< N, the number of components (after min_area)
  std::vector<ComponentStats> stats;                      ///< stats[i] describes label i + 1 (empty unless want_stats)
  Backend backend = Backend::cpu;                         ///< the backend that ran
  LabelAlgorithm algorithm = LabelAlgorithm::tile_merge;  ///< the algorithm that ran
  double milliseconds = 0;  ///< wall time of the whole call (device start and transfers included)
  StageTimes stages;        ///< the same time by stage
};

/// Labels the non-zero pixels of `mask`. Throws InputError on a bad option, BackendError when
/// the backend/algorithm pair does not exist, and Error when the count would not fit 32 bits.
///
/// Multi-label images (options.multilabel): neighbours join only when their values are equal and
/// non-zero, and ComponentStats::value is the component's value. They are labelled by the volume
/// path as one slice (4-connectivity is the volume's 6, 8 is its 18 = 26), on its backends and
/// algorithms (`row_stripes` on the CPU); so are the 16-, 32- and 64-bit overloads below, binary or
/// multi-label. Binary 8-bit masks keep the image algorithms.
Labeling label(ImageView<const std::uint8_t> mask, const LabelOptions& options = {});
Labeling label(ImageView<const std::uint16_t> image, const LabelOptions& options = {});
Labeling label(ImageView<const std::uint32_t> image, const LabelOptions& options = {});
Labeling label(ImageView<const std::uint64_t> image, const LabelOptions& options = {});

/// Same, into a caller-provided label image (the mask's size, any row stride); the returned
/// Labeling's `labels` is empty. Reusing one output avoids allocating it for every frame.
Labeling label_into(ImageView<const std::uint8_t> mask, ImageView<std::uint32_t> labels,
                    const LabelOptions& options = {});

/// Labels the pixels with value > threshold (dark objects: threshold the inverted image).
Labeling label(ImageView<const std::uint8_t> image, double threshold, const LabelOptions& options = {});
Labeling label(ImageView<const std::uint16_t> image, double threshold, const LabelOptions& options = {});
Labeling label(ImageView<const float> image, double threshold, const LabelOptions& options = {});

/// Statistics of one component of a volume; the centroid is the mean voxel coordinate (voxel
/// centres at integer coordinates), from exact 64-bit integer sums. `value` is the components'
/// voxel value (multi-label input; 1 for binary input).
struct VolumeComponentStats {
  std::uint64_t voxels = 0;
  std::int64_t x = 0, y = 0, z = 0, width = 0, height = 0, depth = 0;  ///< bounding box
  double cx = 0, cy = 0, cz = 0;
  std::uint64_t value = 0;
  friend bool operator==(const VolumeComponentStats&, const VolumeComponentStats&) = default;
};

/// The labels of a volume: 0 background, 1..count in raster order (x fastest, then y, then z) of
/// each component's first voxel, the numbering of scipy.ndimage.label and cc3d. Exactly one of
/// `labels` / `labels64` is filled: 64-bit labels when count >= 2^32 (or when asked for).
struct VolumeLabeling {
  Volume<std::uint32_t> labels;
  Volume<std::uint64_t> labels64;
  std::uint64_t count = 0;
  std::vector<VolumeComponentStats> stats;  ///< stats[i] describes label i + 1 (empty unless want_stats)
  Backend backend = Backend::cpu;
  LabelAlgorithm algorithm = LabelAlgorithm::tile_merge;
  double milliseconds = 0;  ///< wall time of the call (labeling and statistics; a CUDA run's copies included)
  StageTimes stages;
};

/// Labels a volume (any strides; spacing is carried to the labels). Binary (non-zero is
/// foreground) unless options.multilabel. Instantiated for std::uint8_t, std::uint16_t,
/// std::uint32_t, std::uint64_t. `options.wide_labels` asks for 64-bit labels whatever the count.
/// options.connectivity: 6, 18 or 26 (0: 26); InputError otherwise.
///
/// Backends: the CPU labels row runs in parallel slabs of rows (`row_stripes`); CUDA (`tile_merge`,
/// bricks merged across their faces) labels what one device call cannot take (2^32 voxels and
/// more, more than the device's free memory holds, 64-bit labels) in bands of layers, in two
/// passes (the seams united on the host, each band labelled again and its final labels copied out
/// once). Labels are 32-bit unless options.wide_labels asks for 64 or the count needs them.
/// `automatic` takes CUDA when it answers and the volume has 2^22 voxels or more in a process that
/// has started the device, or 2^28 voxels or more in any process (a device start is then small
/// beside the CPU's time); otherwise the CPU. min_area and largest_k are applied on the host after
/// the backend.
template <class T>
VolumeLabeling label(VolumeView<const T> volume, const LabelOptions& options = {});
template <class T>
requires(!std::is_const_v<T>) VolumeLabeling label(VolumeView<T> volume, const LabelOptions& options = {}) {
  return label<T>(VolumeView<const T>(volume), options);
}

/// Same, into a caller-provided volume of 32-bit labels (the volume's size, any row and slice
/// strides): every voxel is written and nothing is allocated for the labels, so a loop over
/// volumes of one size reuses one output (its pages already mapped). The returned labels are
/// empty. Volumes of 2^32 voxels and more (whose labels may need 64 bits) and wide_labels are
/// refused: label() gives those.
template <class T>
VolumeLabeling label_into(VolumeView<const T> volume, VolumeView<std::uint32_t> labels,
                          const LabelOptions& options = {});

/// The (algorithm, backend) pairs that exist, `automatic` excluded; CUDA ones only when available.
struct LabelVariant {
  LabelAlgorithm algorithm;
  Backend backend;
};
std::vector<LabelVariant> label_variants();

/// Otsu's threshold of a 256-bin histogram: the t in 0..254 that maximises the between-class
/// variance of {v <= t} and {v > t} (the smallest such t on ties; 0 for a constant histogram).
int otsu_threshold(std::span<const std::uint64_t, 256> histogram);
/// Otsu's threshold of an 8-bit image: foreground is then value > t.
int otsu_threshold(ImageView<const std::uint8_t> image);

/// Otsu's threshold of a volume of any voxel type (src/label/threshold.cpp), as scikit-image's
/// `threshold_otsu` computes it for the same array: foreground is then value > t.
/// - Integer voxels: one bin per integer value from the minimum to the maximum, t one of those
///   values. Ranges of more than 2^20 values are grouped into 2^20 bins of equal integer width,
///   and t is then the last value of its bin (scikit-image would allocate a bin per value).
/// - Floating-point voxels: 256 bins of equal width over [min, max] of the finite voxels (NaN and
///   infinities are left out, where scikit-image refuses them), t a bin's centre in the voxel's
///   type.
/// A volume of one value gives that value. InputError for an empty volume or one with no finite
/// voxel. Instantiated for the ten voxel types of io::AnyVolume.
template <class T>
double otsu_threshold(VolumeView<const T> volume);
template <class T>
requires(!std::is_const_v<T>) double otsu_threshold(VolumeView<T> volume) {
  return otsu_threshold<T>(VolumeView<const T>(volume));
}

/// The foreground of a thresholded volume as a mask (1 foreground, 0 background; the volume's
/// size and spacing): the voxels above `threshold`, compared in the voxel's own type as
/// compact_voxels compares (an integer voxel is above T when it is above floor(T); NaN never is);
/// with `invert`, the finite voxels that are not above it. InputError for a NaN threshold.
/// Instantiated for the ten voxel types of io::AnyVolume.
template <class T>
Volume<std::uint8_t> threshold_volume(VolumeView<const T> volume, double threshold, bool invert = false);
template <class T>
requires(!std::is_const_v<T>) Volume<std::uint8_t> threshold_volume(VolumeView<T> volume, double threshold,
                                                                    bool invert = false) {
  return threshold_volume<T>(VolumeView<const T>(volume), threshold, invert);
}

}  // namespace winnow
