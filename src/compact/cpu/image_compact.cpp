// Image compaction on the CPU: the kept pixels' raster indices come from the stream compaction of
// the image as Rgba8 elements (index form, group_scan: SIMD luminance and compare, chunked count /
// look-back scan / compress; see compact.cpp beside this file). The sort is a parallel, stable LSD radix sort of
// (key, index) pairs on the 18-bit key (luminance in thousandths <= 255000, or 1000 * alpha):
// two passes of 9 bits, each a per-thread histogram, a bucket-major/thread-minor scan and a
// scatter that keeps input order inside every bucket, so ties stay in raster order.
// Descending order sorts 255000 - key ascending, which keeps the tie order too.
#include <omp.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "compact/backends.hpp"
#include "winnow/compact.hpp"

namespace winnow::detail::cpu {
namespace {

constexpr std::uint32_t kMaxKey = 255000;
constexpr int kRadixBits = 9;
constexpr std::uint32_t kBuckets = 1u << kRadixBits;

// One stable counting pass on bits [shift, shift + 9) of the keys.
void radix_pass(const std::uint32_t* kin, const std::uint32_t* iin, std::uint32_t* kout, std::uint32_t* iout,
                std::size_t m, int shift) {
  const int want = m > (std::size_t{1} << 16) ? detail::cpu_threads() : 1;
  std::vector<std::array<std::size_t, kBuckets>> hist(static_cast<std::size_t>(want));
#pragma omp parallel num_threads(want)
  {
    const int nt = omp_get_num_threads(), t = omp_get_thread_num();
    const std::size_t lo = m * static_cast<std::size_t>(t) / static_cast<std::size_t>(nt);
    const std::size_t hi = m * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(nt);
    auto& h = hist[static_cast<std::size_t>(t)];
    h.fill(0);
    for (std::size_t i = lo; i < hi; ++i) ++h[(kin[i] >> shift) & (kBuckets - 1)];
#pragma omp barrier
#pragma omp single
    {
      std::size_t sum = 0;
      for (std::uint32_t b = 0; b < kBuckets; ++b)
        for (int u = 0; u < nt; ++u) {
          const std::size_t c = hist[static_cast<std::size_t>(u)][b];
          hist[static_cast<std::size_t>(u)][b] = sum;
          sum += c;
        }
    }
    for (std::size_t i = lo; i < hi; ++i) {
      const std::size_t pos = h[(kin[i] >> shift) & (kBuckets - 1)]++;
      kout[pos] = kin[i];
      iout[pos] = iin[i];
    }
  }
}

// Stable sort of `index` by `key` (both length m, keys < 2^18). Returns the sorted indices.
std::vector<std::uint32_t> stable_sort_by_key(std::vector<std::uint32_t> key, std::vector<std::uint32_t> index) {
  const std::size_t m = key.size();
  std::vector<std::uint32_t> k2(m), i2(m);
  radix_pass(key.data(), index.data(), k2.data(), i2.data(), m, 0);
  radix_pass(k2.data(), i2.data(), key.data(), index.data(), m, kRadixBits);
  return index;
}

}  // namespace

ImageCompactResult compact_image(ImageView<const Rgba8> image, const ImageCompactOptions& options) {
  ImageCompactResult result;
  result.backend = Backend::cpu;
  const std::uint64_t pixels = static_cast<std::uint64_t>(image.width) * static_cast<std::uint64_t>(image.height);
  const std::uint32_t t = luminance_threshold_milli(options.threshold);
  // pixel_key_milli(p) > t, as a Predicate: luminance_milli > t, or 1000 * a > t <=> a > t / 1000.
  const Predicate pred = options.key == PixelKey::luminance ? Predicate{KeyKind::luminance, CompareOp::greater, t}
                                                            : Predicate{KeyKind::alpha, CompareOp::greater, t / 1000};
  const CompactOptions copt{Order::stable, CompactAlgorithm::group_scan, Backend::cpu};

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::uint32_t>& packed = result.packed_index;
  packed.resize(pixels);
  std::size_t kept = 0;
  if (image.contiguous()) {
    kept = compact_indices<Rgba8>(std::span<const Rgba8>(image.data, pixels), pred, std::span<std::uint32_t>(packed),
                                  copt);
  } else {
    for (std::int64_t y = 0; y < image.height; ++y) {
      const std::size_t k =
          compact_indices<Rgba8>(std::span<const Rgba8>(image.row(y), static_cast<std::size_t>(image.width)), pred,
                                 std::span<std::uint32_t>(packed).subspan(kept), copt);
      const auto row0 = static_cast<std::uint32_t>(y * image.width);
      for (std::size_t i = kept; i < kept + k; ++i) packed[i] += row0;
      kept += k;
    }
  }
  packed.resize(kept);

  if (options.sort != SortOrder::none) {
    std::vector<std::uint32_t> key(kept);
    const bool desc = options.sort == SortOrder::descending;
    const auto w = static_cast<std::uint32_t>(image.width);
    const auto m = static_cast<std::int64_t>(kept);
#pragma omp parallel for schedule(static) num_threads(detail::cpu_threads()) if (m > 65536)
    for (std::int64_t i = 0; i < m; ++i) {
      const std::uint32_t v = packed[static_cast<std::size_t>(i)];
      const std::uint32_t k = pixel_key_milli(image(v % w, v / w), options.key);
      key[static_cast<std::size_t>(i)] = desc ? kMaxKey - k : k;
    }
    result.sorted_index = stable_sort_by_key(std::move(key), packed);
  }
  result.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace winnow::detail::cpu
