// Front end of connected-component labeling of images: validates options, resolves backend and
// algorithm through the variant table, runs the backend, then applies min_area and largest_k
// (renumbering the survivors in the same raster order). Multi-label images and images of 16-, 32-
// and 64-bit values go through the volume path (label_volume.cpp). Also Otsu's threshold and the
// thresholding overloads.
#include "winnow/label.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "common/backend.hpp"
#include "common/cuda/runtime.hpp"
#include "common/threads.hpp"
#include "label/backends.hpp"
#include "winnow/error.hpp"

namespace winnow {
namespace {

// The registry: every (algorithm, backend) pair that exists. Explicit, not self-registering.
constexpr LabelVariant kVariants[] = {
    {LabelAlgorithm::row_stripes, Backend::cpu},
    {LabelAlgorithm::tile_merge, Backend::cpu},
    {LabelAlgorithm::block_union_find, Backend::cuda},
    {LabelAlgorithm::tile_merge, Backend::cuda},
};

// `automatic` labels host memory on the CUDA backend only where the whole job is faster there:
// the device's start (when no winnow call has started it in this process: context creation), the
// mask in and the labels out over the host link, and the labeling, against the CPU labeling on
// this machine's threads. The rates are measured ones, rounded in the GPU's disfavour (H200
// machine, 16 cores: `winnow label` one process per call, bench/results/label.md, "Choosing the
// backend"): the device's start took 113-305 ms, so a one-shot job in a fresh process (the CLI)
// stays on the CPU up to about 16384² (CPU 187-229 ms there); in a process that has started the
// device, the GPU takes images from about 1 MP.
#ifdef WINNOW_HAVE_CUDA
struct JobModel {
  double device_start_ms = 200;                  // context creation + first allocations (113-305)
  double gpu_call_ms = 0.5;                      // every call: allocations, launches, synchronisations
  double link_bytes_per_ms = 20e6;               // staged copies, mask in (1 B/px) + labels out (4 B/px): 16-33 GB/s
  double gpu_pixels_per_ms = 70e6;               // labeling, 16384² at density 0.5: 3.4 ms
  double cpu_pixels_per_ms_per_thread = 0.08e6;  // row_stripes, 16 threads: 55-77 k px/ms each
};

constexpr JobModel kJob;

double cpu_job_ms(std::int64_t pixels, int cpu_threads) {
  return static_cast<double>(pixels) / (kJob.cpu_pixels_per_ms_per_thread * std::max(1, cpu_threads));
}
bool cuda_wins(std::int64_t pixels, int cpu_threads, bool device_started) {
  const double px = static_cast<double>(pixels);
  const double gpu = (device_started ? 0.0 : kJob.device_start_ms) + kJob.gpu_call_ms +
                     px * 5 / kJob.link_bytes_per_ms + px / kJob.gpu_pixels_per_ms;
  return gpu < cpu_job_ms(pixels, cpu_threads);
}
#endif

Labeling run(ImageView<const std::uint8_t> mask, ImageView<std::uint32_t> out, const LabelOptions& asked_options) {
  // Multi-label images take the volume path (one slice), whose runs carry their value.
  if (asked_options.multilabel) return detail::label_image_as_volume(mask, out, asked_options);
  LabelOptions options = asked_options;
  options.connectivity = resolve_connectivity(options.connectivity, 2);
  if (mask.width < 0 || mask.height < 0 || (mask.size() > 0 && (!mask.data || mask.stride < mask.width)))
    throw InputError("label: invalid mask view");
  if (out.width != mask.width || out.height != mask.height || (out.size() > 0 && (!out.data || out.stride < out.width)))
    throw InputError("label: the label image must have the mask's size");
  const auto t0 = std::chrono::steady_clock::now();
  const Backend asked = detail::requested_backend(options.backend);
  Backend backend = Backend::cpu;
#ifdef WINNOW_HAVE_CUDA
  // Where the CPU finishes before a device could even start, the device is not asked whether it
  // exists: that question alone starts the driver (100-200 ms on the H200 machine).
  const bool cpu_before_device_start = asked == Backend::automatic && !detail::cuda::device_started() &&
                                       cpu_job_ms(mask.size(), detail::cpu_threads()) < kJob.device_start_ms;
  if (!cpu_before_device_start) {
    backend = resolve_backend(asked);
    if (asked == Backend::automatic && backend == Backend::cuda &&
        !cuda_wins(mask.size(), detail::cpu_threads(), detail::cuda::device_started()))
      backend = Backend::cpu;
  }
#else
  backend = resolve_backend(asked);
#endif
  const double choice_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  LabelAlgorithm algorithm = options.algorithm;
  if (algorithm == LabelAlgorithm::automatic) {
    // CPU: run-based row stripes beat tile_merge and OpenCV (bench/results/label.md).
#ifdef WINNOW_HAVE_CUDA
    algorithm = backend == Backend::cuda
                    ? detail::cuda::automatic_algorithm(mask.width, mask.height, options.connectivity)
                    : LabelAlgorithm::row_stripes;
#else
    algorithm = LabelAlgorithm::row_stripes;
#endif
  }
  const bool exists = std::any_of(std::begin(kVariants), std::end(kVariants), [&](const LabelVariant& v) {
    return v.algorithm == algorithm && v.backend == backend;
  });
  if (!exists)
    throw BackendError("labeling algorithm '" + std::string(to_string(algorithm)) + "' is not available on the " +
                       std::string(to_string(backend)) + " backend");
  detail::LabelRequest req;
  req.mask = mask;
  req.labels = out;
  req.connectivity = options.connectivity;
  req.algorithm = algorithm;
  const bool filter = options.min_area > 1 || options.largest_k > 0;
  req.want_stats = options.want_stats || filter;
  Labeling result;
  req.times = &result.stages;
  result.backend = backend;
  result.algorithm = algorithm;
  std::vector<ComponentStats>* stats = req.want_stats ? &result.stats : nullptr;
  std::uint64_t n = 0;
#ifdef WINNOW_HAVE_CUDA
  if (backend == Backend::cuda) n = detail::cuda::label(req, stats);
  else
#endif
    n = detail::cpu::label(req, stats);
  if (filter && n > 0) {
    std::vector<std::uint32_t> map;
    const std::uint64_t kept = detail::surviving_labels(
        n, options.min_area, options.largest_k, [&](std::uint64_t i) { return result.stats[i].area; }, map);
    if (kept != n) {
      detail::cpu::remap_labels(out, map);
      std::vector<ComponentStats> survivors;
      if (options.want_stats) {
        survivors.reserve(kept);
        for (std::uint64_t i = 0; i < n; ++i)
          if (map[i + 1]) survivors.push_back(result.stats[i]);
      }
      result.stats = std::move(survivors);
    }
    n = kept;
  }
  if (!options.want_stats) result.stats.clear();
  result.count = static_cast<std::uint32_t>(n);
  result.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // The choice (the driver's start when it asked the device) counts as device setup; on CUDA the
  // backend filled its stages. Whatever else the call took is host work: compute.
  result.stages.device_setup += choice_ms;
  result.stages.compute = result.milliseconds - result.stages.device_setup - result.stages.transfers;
  return result;
}

template <class T>
Labeling threshold_and_label(ImageView<const T> image, double threshold, const LabelOptions& options) {
  Image<std::uint8_t> mask(image.width, image.height);
  const std::int64_t H = image.height, W = image.width;
#pragma omp parallel for schedule(static)
  for (std::int64_t y = 0; y < H; ++y) {
    const T* in = image.row(y);
    std::uint8_t* m = mask.data() + y * W;
    for (std::int64_t x = 0; x < W; ++x) m[x] = static_cast<double>(in[x]) > threshold ? 1 : 0;
  }
  return label(mask.view(), options);
}

}  // namespace

std::string_view to_string(LabelAlgorithm a) {
  switch (a) {
    case LabelAlgorithm::automatic: return "auto";
    case LabelAlgorithm::tile_merge: return "tile_merge";
    case LabelAlgorithm::block_union_find: return "block_union_find";
    case LabelAlgorithm::row_stripes: return "row_stripes";
  }
  return "?";
}

int resolve_connectivity(int connectivity, int dimensions) {
  if (dimensions == 2) {
    if (connectivity == 0) return 8;
    if (connectivity == 4 || connectivity == 8) return connectivity;
    throw InputError("connectivity " + std::to_string(connectivity) + " is not 4 or 8 (an image)");
  }
  if (dimensions == 3) {
    if (connectivity == 0) return 26;
    if (connectivity == 6 || connectivity == 18 || connectivity == 26) return connectivity;
    throw InputError("connectivity " + std::to_string(connectivity) + " is not 6, 18 or 26 (a volume)");
  }
  throw InputError("connectivity of an array of " + std::to_string(dimensions) +
                   " dimensions: only 2 or 3 are labelled");
}

LabelAlgorithm parse_label_algorithm(std::string_view name) {
  for (auto a : {LabelAlgorithm::automatic, LabelAlgorithm::tile_merge, LabelAlgorithm::block_union_find,
                 LabelAlgorithm::row_stripes})
    if (name == to_string(a)) return a;
  if (name == "automatic") return LabelAlgorithm::automatic;
  throw InputError("unknown labeling algorithm '" + std::string(name) +
                   "' (expected auto, tile_merge, block_union_find or row_stripes)");
}

std::vector<LabelVariant> label_variants() {
  std::vector<LabelVariant> out;
  for (const auto& v : kVariants)
    if (v.backend == Backend::cpu || cuda_available()) out.push_back(v);
  return out;
}

Labeling label(ImageView<const std::uint8_t> mask, const LabelOptions& options) {
  if (mask.width < 0 || mask.height < 0) throw InputError("label: negative image size");
  Image<std::uint32_t> labels(mask.width, mask.height);
  Labeling r = run(mask, labels.view(), options);
  r.labels = std::move(labels);
  return r;
}

Labeling label_into(ImageView<const std::uint8_t> mask, ImageView<std::uint32_t> labels, const LabelOptions& options) {
  return run(mask, labels, options);
}

namespace {
/// 16-, 32- and 64-bit images: through the volume path (one slice).
template <class T>
Labeling label_wide_image(ImageView<const T> image, const LabelOptions& options) {
  if (image.width < 0 || image.height < 0) throw InputError("label: negative image size");
  Image<std::uint32_t> labels(image.width, image.height);
  Labeling r = detail::label_image_as_volume(image, labels.view(), options);
  r.labels = std::move(labels);
  return r;
}
}  // namespace

Labeling label(ImageView<const std::uint16_t> image, const LabelOptions& options) {
  return label_wide_image(image, options);
}
Labeling label(ImageView<const std::uint32_t> image, const LabelOptions& options) {
  return label_wide_image(image, options);
}
Labeling label(ImageView<const std::uint64_t> image, const LabelOptions& options) {
  return label_wide_image(image, options);
}

Labeling label(ImageView<const std::uint8_t> image, double threshold, const LabelOptions& options) {
  return threshold_and_label(image, threshold, options);
}
Labeling label(ImageView<const std::uint16_t> image, double threshold, const LabelOptions& options) {
  return threshold_and_label(image, threshold, options);
}
Labeling label(ImageView<const float> image, double threshold, const LabelOptions& options) {
  return threshold_and_label(image, threshold, options);
}

int otsu_threshold(std::span<const std::uint64_t, 256> h) {
  double total = 0, sum_all = 0;
  for (int i = 0; i < 256; ++i) {
    total += static_cast<double>(h[i]);
    sum_all += static_cast<double>(i) * static_cast<double>(h[i]);
  }
  if (total == 0) return 0;
  double w0 = 0, sum0 = 0, best = -1;
  int best_t = 0;
  for (int t = 0; t < 255; ++t) {
    w0 += static_cast<double>(h[t]);
    sum0 += static_cast<double>(t) * static_cast<double>(h[t]);
    const double w1 = total - w0;
    if (w0 == 0 || w1 == 0) continue;
    const double m0 = sum0 / w0, m1 = (sum_all - sum0) / w1;
    const double between = w0 * w1 * (m0 - m1) * (m0 - m1);
    if (between > best * (1 + 1e-12) + 1e-300) {
      best = between;
      best_t = t;
    }
  }
  return best_t;
}

int otsu_threshold(ImageView<const std::uint8_t> image) {
  std::array<std::uint64_t, 256> h{};
  for (std::int64_t y = 0; y < image.height; ++y) {
    const std::uint8_t* r = image.row(y);
    for (std::int64_t x = 0; x < image.width; ++x) ++h[r[x]];
  }
  return otsu_threshold(std::span<const std::uint64_t, 256>(h));
}

}  // namespace winnow
