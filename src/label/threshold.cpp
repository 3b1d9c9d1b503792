// Volume thresholds for labeling: Otsu's threshold of a volume of any voxel type, and the mask of
// the voxels above a threshold (what `winnow label VOLUME --threshold T | --otsu` labels).
//
// Otsu (1979, "A threshold selection method from gray-level histograms"): the t that maximises
// the between-class variance w1 w2 (m1 - m2)^2 of the voxels <= t and those > t, over the
// volume's histogram. The histogram and the arithmetic are those of scikit-image's threshold_otsu
// (skimage/filters/thresholding.py and exposure/exposure.py, 0.19 to 0.26), step for step, so that
// the two give the same t for the same array, ties included (the first maximum, as np.argmax):
// - integers: np.bincount from the minimum to the maximum, the integers themselves the centres;
// - floats: np.histogram(a, 256) over [min, max]: edges from np.linspace in the voxel's type, a
//   voxel's bin (v - min) / (max - min) * 256 truncated, then corrected by one against the edges,
//   centres (e[k] + e[k + 1]) / 2 in the voxel's type;
// - counts as float32 (scikit-image converts them), so the class weights are float32 running sums;
//   count * centre and the class means in double, except for f32 volumes, where NumPy keeps
//   them in float.
// Where this departs from scikit-image: non-finite voxels are left out (it refuses them), and an
// integer range of more than 2^20 values is grouped into 2^20 bins (it would allocate one per value).
//
// The mask compares in the voxel's own type with the rule voxel compaction uses
// (common/level_comparison.hpp).
//
// Complexity: Otsu reads the voxels twice (range, histogram), in parallel over rows with a
// histogram per thread, then O(bins); the mask once.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/level_comparison.hpp"
#include "common/threads.hpp"
#include "winnow/error.hpp"
#include "winnow/label.hpp"

namespace winnow {
namespace {

constexpr std::uint64_t kMaxIntegerBins = std::uint64_t{1} << 20;

template <class T>
bool counts(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isfinite(v);
  else return true;
}

// Calls f(row pointer) for every row of `v`, rows split over threads; f(thread, row).
template <class T, class F>
void for_each_row(const VolumeView<const T>& v, int threads, F&& f) {
  const std::int64_t rows = v.ny * v.nz;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) f(omp_get_thread_num(), v.row(r % v.ny, r / v.ny));
}

template <class T>
struct Range {
  T min = std::numeric_limits<T>::max(), max = std::numeric_limits<T>::lowest();
  bool any = false;
};

template <class T>
Range<T> finite_range(const VolumeView<const T>& v, int threads) {
  std::vector<Range<T>> per_thread(static_cast<std::size_t>(threads));
  for_each_row(v, threads, [&](int t, const T* row) {
    Range<T>& r = per_thread[static_cast<std::size_t>(t)];
    for (std::int64_t x = 0; x < v.nx; ++x)
      if (counts(row[x])) {
        r.min = std::min(r.min, row[x]), r.max = std::max(r.max, row[x]);
        r.any = true;
      }
  });
  Range<T> all;
  for (const Range<T>& r : per_thread)
    if (r.any) all.min = std::min(all.min, r.min), all.max = std::max(all.max, r.max), all.any = true;
  return all;
}

// The histogram of `v` over `bins` bins, bin_of(voxel) giving a counted voxel's bin.
template <class T, class BinOf>
std::vector<std::uint64_t> histogram(const VolumeView<const T>& v, std::size_t bins, int threads, BinOf&& bin_of) {
  // One histogram per thread while they stay small beside the volume; else one, in one thread.
  if (static_cast<std::uint64_t>(threads) * bins > (std::uint64_t{1} << 24)) threads = 1;
  std::vector<std::uint64_t> h(bins * static_cast<std::size_t>(threads), 0);
  for_each_row(v, threads, [&](int t, const T* row) {
    std::uint64_t* mine = h.data() + static_cast<std::size_t>(t) * bins;
    for (std::int64_t x = 0; x < v.nx; ++x)
      if (counts(row[x])) ++mine[bin_of(row[x])];
  });
  for (int t = 1; t < threads; ++t)
    for (std::size_t b = 0; b < bins; ++b) h[b] += h[static_cast<std::size_t>(t) * bins + b];
  h.resize(bins);
  return h;
}

// threshold_otsu's arithmetic on a histogram (counts, centres): the index of the first maximum of
// weight1[:-1] * weight2[1:] * (mean1[:-1] - mean2[1:]) ** 2. `Acc` is the type NumPy computes the
// class sums and means in.
template <class Acc>
std::size_t otsu_index(const std::vector<std::uint64_t>& histogram, const std::vector<Acc>& centres) {
  const std::size_t n = histogram.size();
  std::vector<float> w1(n), w2(n);
  std::vector<Acc> m1(n), m2(n), product(n);
  float weight = 0;
  Acc sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float count = static_cast<float>(histogram[i]);
    product[i] = static_cast<Acc>(count) * centres[i];
    weight += count;
    sum += product[i];
    w1[i] = weight;
    m1[i] = sum / static_cast<Acc>(weight);
  }
  weight = 0, sum = 0;
  for (std::size_t i = n; i-- > 0;) {
    weight += static_cast<float>(histogram[i]);
    sum += product[i];
    w2[i] = weight;
    m2[i] = sum / static_cast<Acc>(weight);
  }
  std::size_t best = 0;
  Acc best_variance = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const Acc difference = m1[i] - m2[i + 1];
    const Acc variance = static_cast<Acc>(w1[i] * w2[i + 1]) * (difference * difference);
    if (std::isnan(variance)) return i;  // np.argmax takes the first NaN
    if (i == 0 || variance > best_variance) best = i, best_variance = variance;
  }
  return best;
}

template <class T>
double integer_otsu(const VolumeView<const T>& v, const Range<T>& range, int threads) {
  using U = std::make_unsigned_t<T>;
  // max - min in the unsigned type is exact (the difference of two values of T is below 2^64).
  const auto span = static_cast<std::uint64_t>(static_cast<U>(static_cast<U>(range.max) - static_cast<U>(range.min)));
  const unsigned __int128 values = static_cast<unsigned __int128>(span) + 1;
  // At most kMaxIntegerBins bins of `width` values, the last one holding the maximum (no empty
  // bins after it: their class means would be 0 / 0).
  const auto width = static_cast<std::uint64_t>((values + kMaxIntegerBins - 1) / kMaxIntegerBins);
  const auto bins = static_cast<std::uint64_t>((values + width - 1) / width);
  const U low = static_cast<U>(range.min);
  const auto h = histogram(v, bins, threads, [&](T x) {
    return static_cast<std::size_t>(static_cast<std::uint64_t>(static_cast<U>(static_cast<U>(x) - low)) / width);
  });
  // The first value of bin k, as T (it lies in [min, max]).
  auto first_of = [&](std::uint64_t k) { return static_cast<T>(static_cast<U>(low + static_cast<U>(k * width))); };
  std::vector<double> centres(bins);
  for (std::uint64_t k = 0; k < bins; ++k)
    centres[k] = static_cast<double>(first_of(k)) + static_cast<double>(width - 1) / 2.0;
  const std::size_t i = otsu_index(h, centres);
  if (width == 1) return static_cast<double>(first_of(i));
  return static_cast<double>(first_of(i)) + static_cast<double>(width - 1);  // the bin's last value
}

template <class T>
double float_otsu(const VolumeView<const T>& v, const Range<T>& range, int threads) {
  constexpr int kBins = 256;
  const T first = range.min, last = range.max;
  // np.linspace(first, last, 257) in T: arange * (delta / 256) + first, the last edge `last`.
  std::vector<T> edges(kBins + 1);
  const T delta = last - first;
  const T step = delta / static_cast<T>(kBins);
  for (int k = 0; k < kBins; ++k) {
    const T position =
        step == 0 ? static_cast<T>(static_cast<T>(k) / static_cast<T>(kBins)) * delta : static_cast<T>(k) * step;
    edges[static_cast<std::size_t>(k)] = position + first;
  }
  edges[kBins] = last;
  const auto h = histogram(v, kBins, threads, [&](T x) {
    // np.histogram's uniform-bin path: scaled, truncated, then corrected against the edges.
    const T scaled = ((x - first) / delta) * static_cast<T>(kBins);
    auto i = static_cast<std::int64_t>(scaled);
    if (i == kBins) --i;
    if (x < edges[static_cast<std::size_t>(i)]) --i;
    if (x >= edges[static_cast<std::size_t>(i) + 1] && i != kBins - 1) ++i;
    return static_cast<std::size_t>(i);
  });
  using Acc = std::conditional_t<std::is_same_v<T, float>, float, double>;
  std::vector<Acc> centres(kBins);
  for (std::size_t k = 0; k < kBins; ++k) centres[k] = (edges[k] + edges[k + 1]) / static_cast<T>(2);
  return static_cast<double>(centres[otsu_index(h, centres)]);
}

template <class T>
void check_volume(const VolumeView<const T>& v, const char* what) {
  if (v.nx < 0 || v.ny < 0 || v.nz < 0 || (!v.empty() && (!v.data || v.row_stride < v.nx)))
    throw InputError(std::string(what) + ": invalid volume view");
}

}  // namespace

template <class T>
double otsu_threshold(VolumeView<const T> volume) {
  check_volume(volume, "otsu_threshold");
  if (volume.empty()) throw InputError("otsu_threshold: the volume is empty");
  const int threads = volume.size() >= (std::int64_t{1} << 18) ? std::max(1, detail::cpu_threads()) : 1;
  const Range<T> range = finite_range(volume, threads);
  if (!range.any) throw InputError("otsu_threshold: the volume has no finite voxel");
  if (range.min == range.max) return static_cast<double>(range.min);  // one value: scikit-image returns it
  if constexpr (std::is_floating_point_v<T>) return float_otsu(volume, range, threads);
  else return integer_otsu(volume, range, threads);
}

template <class T>
Volume<std::uint8_t> threshold_volume(VolumeView<const T> volume, double threshold, bool invert) {
  check_volume(volume, "threshold_volume");
  if (std::isnan(threshold)) throw InputError("threshold_volume: the threshold is NaN");
  Volume<std::uint8_t> mask(volume.nx, volume.ny, volume.nz);
  mask.set_spacing(volume.sx, volume.sy, volume.sz);
  if (volume.empty()) return mask;
  const detail::LevelComparison<T> above = detail::level_comparison<T>(threshold, true);
  const std::int64_t rows = volume.ny * volume.nz;
  std::uint8_t* out = mask.data();
  const bool parallel = volume.size() >= (std::int64_t{1} << 18);
#pragma omp parallel for schedule(static) num_threads(detail::cpu_threads()) if (parallel)
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* row = volume.row(r % volume.ny, r / volume.ny);
    std::uint8_t* m = out + r * volume.nx;
    for (std::int64_t x = 0; x < volume.nx; ++x)
      m[x] = static_cast<std::uint8_t>(invert ? counts(row[x]) && !above(row[x]) : above(row[x]));
  }
  return mask;
}

#define WINNOW_THRESHOLD(T)                               \
  template double otsu_threshold<T>(VolumeView<const T>); \
  template Volume<std::uint8_t> threshold_volume<T>(VolumeView<const T>, double, bool);
WINNOW_THRESHOLD(std::uint8_t)
WINNOW_THRESHOLD(std::int8_t)
WINNOW_THRESHOLD(std::uint16_t)
WINNOW_THRESHOLD(std::int16_t)
WINNOW_THRESHOLD(std::uint32_t)
WINNOW_THRESHOLD(std::int32_t)
WINNOW_THRESHOLD(std::uint64_t)
WINNOW_THRESHOLD(std::int64_t)
WINNOW_THRESHOLD(float)
WINNOW_THRESHOLD(double)
#undef WINNOW_THRESHOLD

}  // namespace winnow
