// Front end of volume labeling (and of images labelled through the volume path: multi-label images,
// 16/32/64-bit images): validates the view and options, chooses the backend, runs it, then applies
// min_area and largest_k on the host (the survivors renumbered in the same raster order) and turns
// the backend's exact integer sums into statistics.
//
// Backend rule (`automatic`): the CPU, unless CUDA is compiled in and answers, and the job pays
// for the copies: the device has already been started in this process and the volume has at least
// 2^22 voxels (160^3), or the volume has at least 2^28 voxels (640^3), where a device start
// (100-300 ms on the H200 machine) is small beside the CPU's seconds. The CUDA backend labels
// what one call cannot take (2^32 voxels and more, more than the device's memory holds, 64-bit
// labels) in bands of layers merged on the host (label/bands.cpp).
//
// Labels are 64-bit when asked for (`options.wide_labels`) or when the count reaches 2^32; a volume of 2^32
// voxels and more is labelled into 64-bit labels and narrowed to 32 bits when the count fits.
#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "common/backend.hpp"
#include "common/cuda/runtime.hpp"
#include "common/huge_pages.hpp"
#include "common/threads.hpp"
#include "label/backends.hpp"
#include "winnow/error.hpp"
#include "winnow/label.hpp"

namespace winnow {
namespace {

constexpr std::uint64_t k32 = std::uint64_t{1} << 32;

template <class T>
void check_view(const VolumeView<T>& v, const char* what) {
  if (v.nx < 0 || v.ny < 0 || v.nz < 0) throw InputError(std::string("label: negative ") + what + " size");
  if (v.empty()) return;
  if (!v.data || v.row_stride < v.nx || v.slice_stride < v.row_stride * (v.ny - 1) + v.nx)
    throw InputError(std::string("label: invalid ") + what +
                     " view (null data, or strides that overlap rows or slices)");
}

Backend choose_backend(const LabelOptions& options, std::int64_t voxels) {
  const Backend asked = detail::requested_backend(options.backend);
#ifdef WINNOW_HAVE_CUDA
  if (asked != Backend::automatic) return resolve_backend(asked);
  const bool worth_a_start = voxels >= (std::int64_t{1} << 28);
  const bool worth_the_copies = detail::cuda::device_started() && voxels >= (std::int64_t{1} << 22);
  if (!worth_a_start && !worth_the_copies) return Backend::cpu;  // never wakes the driver for nothing
  return resolve_backend(Backend::automatic);
#else
  (void)voxels;
  return resolve_backend(asked);
#endif
}

LabelAlgorithm volume_algorithm(Backend backend, LabelAlgorithm asked) {
  // One algorithm per backend for volumes: row runs in slabs on the CPU, bricks merged across
  // their faces on CUDA.
  const LabelAlgorithm own = backend == Backend::cuda ? LabelAlgorithm::tile_merge : LabelAlgorithm::row_stripes;
  if (asked != LabelAlgorithm::automatic && asked != own)
    throw BackendError("labeling algorithm '" + std::string(to_string(asked)) +
                       "' is not available for volumes on the " + std::string(to_string(backend)) +
                       " backend (it has " + std::string(to_string(own)) + ")");
  return own;
}

VolumeComponentStats to_volume_stats(const detail::VolumeComponentSums& m) {
  VolumeComponentStats s;
  s.voxels = m.voxels;
  s.x = m.min_x, s.y = m.min_y, s.z = m.min_z;
  s.width = m.max_x - m.min_x + 1, s.height = m.max_y - m.min_y + 1, s.depth = m.max_z - m.min_z + 1;
  const auto n = static_cast<double>(m.voxels);
  s.cx = static_cast<double>(m.sum_x) / n, s.cy = static_cast<double>(m.sum_y) / n,
  s.cz = static_cast<double>(m.sum_z) / n;
  s.value = m.value;
  return s;
}

template <class L, class M>
void remap(VolumeView<L> labels, const std::vector<M>& map) {
  const std::int64_t rows = labels.ny * labels.nz;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    L* row = labels.row(r % labels.ny, r / labels.ny);
    for (std::int64_t x = 0; x < labels.nx; ++x) row[x] = static_cast<L>(map[row[x]]);
  }
}

/// What the core below returns besides the labels it wrote.
struct CoreResult {
  std::uint64_t count = 0;
  std::vector<VolumeComponentStats> stats;
  Backend backend = Backend::cpu;
  LabelAlgorithm algorithm = LabelAlgorithm::row_stripes;
  StageTimes stages;
  double milliseconds = 0;
};

/// The backend for `voxels` and the milliseconds it took to choose (a CUDA start counts there).
std::pair<Backend, double> timed_backend_choice(const LabelOptions& options, std::int64_t voxels) {
  const auto t0 = std::chrono::steady_clock::now();
  const Backend backend = choose_backend(options, voxels);
  return {backend, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()};
}

/// A volume labeling's result from label_core's (the labels, where there are any, set apart).
void take_core(VolumeLabeling& result, CoreResult&& core) {
  result.count = core.count;
  result.stats = std::move(core.stats);
  result.backend = core.backend;
  result.algorithm = core.algorithm;
  result.milliseconds = core.milliseconds;
  result.stages = core.stages;
}

/// Labels `volume` into exactly one of out32 / out64 (the other has null data; the volume's size,
/// any strides), then filters and renumbers. Connectivity already checked (6, 18 or 26).
/// `backend`: the one choose_backend gave (`choice_ms` to choose it); `labels_zero`: the labels hold
/// zeros already (the CPU then writes only the foreground's).
template <class T>
CoreResult label_core(VolumeView<const T> volume, VolumeView<std::uint32_t> out32, VolumeView<std::uint64_t> out64,
                      const LabelOptions& options, int connectivity, Backend backend, double choice_ms,
                      bool labels_zero = false) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool wide = out64.data != nullptr;
  CoreResult result;
  result.backend = backend;
  result.algorithm = volume_algorithm(result.backend, options.algorithm);

  const bool filter = options.min_area > 1 || options.largest_k > 0;
  detail::VolumeLabelRequest<T> req;
  req.volume = volume;
  req.labels32 = out32;
  req.labels64 = out64;
  req.connectivity = connectivity;
  req.multilabel = options.multilabel;
  req.want_stats = options.want_stats || filter;
  req.labels_zero = labels_zero;
  req.times = &result.stages;
  if (options.progress) req.progress = &options.progress;
  std::vector<detail::VolumeComponentSums> sums;
  std::vector<detail::VolumeComponentSums>* want_sums = req.want_stats ? &sums : nullptr;
  std::uint64_t n = 0;
#ifdef WINNOW_HAVE_CUDA
  if (result.backend == Backend::cuda) {
    // The CUDA backend takes contiguous labels: strided ones go through a contiguous copy.
    if (wide || out32.contiguous()) {
      n = detail::cuda::label_volume(req, want_sums);
    } else {
      Volume<std::uint32_t> packed(volume.nx, volume.ny, volume.nz);
      req.labels32 = packed.view();
      n = detail::cuda::label_volume(req, want_sums);
      const std::int64_t rows = volume.ny * volume.nz;
#pragma omp parallel for schedule(static)
      for (std::int64_t r = 0; r < rows; ++r)
        std::copy_n(packed.view().row(r % volume.ny, r / volume.ny), volume.nx,
                    out32.row(r % volume.ny, r / volume.ny));
    }
  } else
#endif
    n = detail::cpu::label_volume(req, want_sums);

  if (filter && n > 0) {
    std::vector<std::uint64_t> map;
    const std::uint64_t kept = detail::surviving_labels(
        n, options.min_area, options.largest_k, [&](std::uint64_t i) { return sums[i].voxels; }, map);
    if (kept != n) {
      if (wide) remap(out64, map);
      else remap(out32, map);
      std::vector<detail::VolumeComponentSums> survivors;
      survivors.reserve(kept);
      for (std::uint64_t i = 0; i < n; ++i)
        if (map[i + 1]) survivors.push_back(sums[i]);
      sums = std::move(survivors);
    }
    n = kept;
  }
  if (options.want_stats) {
    result.stats.resize(sums.size());
    const auto ns = static_cast<std::int64_t>(sums.size());
#pragma omp parallel for schedule(static) if (ns > 65536)
    for (std::int64_t i = 0; i < ns; ++i)
      result.stats[static_cast<std::size_t>(i)] = to_volume_stats(sums[static_cast<std::size_t>(i)]);
  }
  result.count = n;
  result.milliseconds =
      choice_ms + std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  result.stages.device_setup += choice_ms;
  result.stages.compute = result.milliseconds - result.stages.device_setup - result.stages.transfers;
  return result;
}

}  // namespace

template <class T>
VolumeLabeling label(VolumeView<const T> volume, const LabelOptions& options) {
  check_view(volume, "volume");
  const int connectivity = resolve_connectivity(options.connectivity, 3);
  const bool wide_labels = options.wide_labels;
  VolumeLabeling result;
  const auto [backend, choice_ms] = timed_backend_choice(options, volume.size());
  // The CUDA backend knows the count before it writes a label (two passes over bands beyond one
  // call): 32-bit labels unless it refuses them. The CPU labels 2^32 voxels or more into 64 bits.
  const bool cpu = backend == Backend::cpu;
  bool label_wide = wide_labels || (cpu && static_cast<std::uint64_t>(volume.size()) >= k32);
  // Allocated before the clock starts, as for images: the milliseconds are the labeling's. Zeroed
  // pages fresh from the system, never filled here (the labels are most of the call's memory): the
  // CPU's labeling writes only the foreground (into pages asked to be huge ones, first touched by
  // its threads), the CUDA backend's copies write every voxel.
  const auto allocate = [&]<class L>(Volume<L>& labels) {
    labels = Volume<L>(volume.nx, volume.ny, volume.nz, zero_pages);
    if (cpu) detail::advise_huge_pages(labels.data(), static_cast<std::size_t>(labels.size()) * sizeof(L));
  };
  if (label_wide) allocate(result.labels64);
  else allocate(result.labels);
  CoreResult core;
  try {
    core = label_core(volume, label_wide ? VolumeView<std::uint32_t>() : result.labels.view(),
                      label_wide ? result.labels64.view() : VolumeView<std::uint64_t>(), options, connectivity, backend,
                      choice_ms, cpu);
  } catch (const detail::CountBeyond32Bits&) {
    if (label_wide || cpu) throw;
    result.labels = Volume<std::uint32_t>();
    label_wide = true;
    allocate(result.labels64);
    core = label_core(volume, VolumeView<std::uint32_t>(), result.labels64.view(), options, connectivity, backend,
                      choice_ms, cpu);
  }
  if (label_wide && !wide_labels && core.count < k32) {
    // A volume of 2^32 voxels or more whose count fits: 32-bit labels, as promised.
    result.labels = Volume<std::uint32_t>(volume.nx, volume.ny, volume.nz, zero_pages);
    const std::int64_t n = volume.size();
    const std::uint64_t* wide_data = result.labels64.data();
    std::uint32_t* narrow = result.labels.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) narrow[i] = static_cast<std::uint32_t>(wide_data[i]);
    result.labels64 = Volume<std::uint64_t>();
  }
  if (!result.labels.empty()) result.labels.set_spacing(volume.sx, volume.sy, volume.sz);
  if (!result.labels64.empty()) result.labels64.set_spacing(volume.sx, volume.sy, volume.sz);
  take_core(result, std::move(core));
  return result;
}

template <class T>
VolumeLabeling label_into(VolumeView<const T> volume, VolumeView<std::uint32_t> labels, const LabelOptions& options) {
  check_view(volume, "volume");
  check_view(labels, "labels");
  if (labels.nx != volume.nx || labels.ny != volume.ny || labels.nz != volume.nz)
    throw InputError("label: the labels must have the volume's size");
  if (static_cast<std::uint64_t>(volume.size()) >= k32 || options.wide_labels)
    throw InputError("label: labels into a caller's 32-bit volume need fewer than 2^32 voxels and no wide_labels");
  const int connectivity = resolve_connectivity(options.connectivity, 3);
  const auto [backend, choice_ms] = timed_backend_choice(options, volume.size());
  VolumeLabeling result;
  take_core(result, label_core(volume, labels, VolumeView<std::uint64_t>(), options, connectivity, backend, choice_ms));
  return result;
}

template VolumeLabeling label<std::uint8_t>(VolumeView<const std::uint8_t>, const LabelOptions&);
template VolumeLabeling label<std::uint16_t>(VolumeView<const std::uint16_t>, const LabelOptions&);
template VolumeLabeling label<std::uint32_t>(VolumeView<const std::uint32_t>, const LabelOptions&);
template VolumeLabeling label<std::uint64_t>(VolumeView<const std::uint64_t>, const LabelOptions&);
template VolumeLabeling label_into<std::uint8_t>(VolumeView<const std::uint8_t>, VolumeView<std::uint32_t>,
                                                 const LabelOptions&);
template VolumeLabeling label_into<std::uint16_t>(VolumeView<const std::uint16_t>, VolumeView<std::uint32_t>,
                                                  const LabelOptions&);
template VolumeLabeling label_into<std::uint32_t>(VolumeView<const std::uint32_t>, VolumeView<std::uint32_t>,
                                                  const LabelOptions&);
template VolumeLabeling label_into<std::uint64_t>(VolumeView<const std::uint64_t>, VolumeView<std::uint32_t>,
                                                  const LabelOptions&);

namespace detail {

template <class T>
Labeling label_image_as_volume(ImageView<const T> image, ImageView<std::uint32_t> labels, const LabelOptions& options) {
  // One slice: 4-connectivity is 6 (faces), 8 is 18 = 26 (edges; no corners in one slice).
  const int connectivity = resolve_connectivity(options.connectivity, 2) == 4 ? 6 : 26;
  if (image.width < 0 || image.height < 0 || (image.size() > 0 && (!image.data || image.stride < image.width)))
    throw InputError("label: invalid image view");
  if (labels.width != image.width || labels.height != image.height ||
      (labels.size() > 0 && (!labels.data || labels.stride < labels.width)))
    throw InputError("label: the label image must have the image's size");
  const VolumeView<const T> volume(image.data, image.width, image.height, 1, image.stride,
                                   image.stride * std::max<std::int64_t>(image.height, 1));
  const VolumeView<std::uint32_t> out(labels.data, labels.width, labels.height, 1, labels.stride,
                                      labels.stride * std::max<std::int64_t>(labels.height, 1));
  if (static_cast<std::uint64_t>(image.size()) >= k32)
    throw Error(
        "label: an image of 2^32 pixels or more through the volume path may need 64-bit labels; label it as a volume");
  const auto [backend, choice_ms] = timed_backend_choice(options, volume.size());
  CoreResult core = label_core(volume, out, VolumeView<std::uint64_t>(), options, connectivity, backend, choice_ms);
  Labeling result;
  result.count = static_cast<std::uint32_t>(core.count);
  result.stats.reserve(core.stats.size());
  for (const VolumeComponentStats& s : core.stats)
    result.stats.push_back(ComponentStats{.area = s.voxels,
                                          .left = s.x,
                                          .top = s.y,
                                          .width = s.width,
                                          .height = s.height,
                                          .cx = s.cx,
                                          .cy = s.cy,
                                          .value = options.multilabel ? s.value : 0});
  result.backend = core.backend;
  result.algorithm = core.algorithm;
  result.milliseconds = core.milliseconds;
  result.stages = core.stages;
  return result;
}

template Labeling label_image_as_volume<std::uint8_t>(ImageView<const std::uint8_t>, ImageView<std::uint32_t>,
                                                      const LabelOptions&);
template Labeling label_image_as_volume<std::uint16_t>(ImageView<const std::uint16_t>, ImageView<std::uint32_t>,
                                                       const LabelOptions&);
template Labeling label_image_as_volume<std::uint32_t>(ImageView<const std::uint32_t>, ImageView<std::uint32_t>,
                                                       const LabelOptions&);
template Labeling label_image_as_volume<std::uint64_t>(ImageView<const std::uint64_t>, ImageView<std::uint32_t>,
                                                       const LabelOptions&);

}  // namespace detail
}  // namespace winnow
