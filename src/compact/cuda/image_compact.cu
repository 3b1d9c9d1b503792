// Image compaction on the GPU: the pixels whose key (luminance or alpha, in thousandths) exceeds
// the threshold, packed in raster order, then ordered by key.
//
// 1. single-pass stable compaction of the pixel indices (decoupled look-back, see
//    kernels/compact_kernels.cuh), the key evaluated in registers from the 16-byte pixel loads;
// 2. a gather of the kept pixels' keys;
// 3. cub::DeviceRadixSort::SortPairs(Descending) on (key, index) over the 18 key bits that a key
//    can use (255000 < 2^18). LSD radix sort is stable, so ties keep raster order, exactly as the
//    CPU backend's stable sort does.
// The image is copied in before and the indices out after the timed region (CUDA events).
#include <cub/device/device_radix_sort.cuh>

#include <cmath>
#include <string>

#include "common/cuda/check.cuh"
#include "compact/backends.hpp"
#include "compact/cuda/compact_impl.cuh"

namespace winnow::detail::cuda {
namespace {

/// keep pixel i where pixel_key_milli(img[i], key) > threshold_milli.
struct ImageKeySource {
  using value_type = Rgba8;
  static constexpr int size = 4;
  static constexpr bool eval_reads_values = true;
  static constexpr int vec = kern::Tuning<size>::vec;
  const Rgba8* in;
  std::uint32_t threshold_milli;
  PixelKey key;
  bool aligned;

  using raw_type = kern::NoRaw;
  template <bool NeedValues>
  __device__ __forceinline__ void fetch(std::uint64_t i, std::uint64_t n, Rgba8 (&v)[vec], raw_type&) const {
    kern::load_run<Rgba8, vec>(in, i, n, aligned, v);
  }
  __device__ __forceinline__ unsigned finish(std::uint64_t i, std::uint64_t n, const Rgba8 (&v)[vec],
                                             const raw_type&) const {
    unsigned b = 0;
#pragma unroll
    for (int e = 0; e < vec; ++e) b |= static_cast<unsigned>(pixel_key_milli(v[e], key) > threshold_milli) << e;
    return b & kern::valid_bits<vec>(i, n);
  }
};

__global__ void gather_keys(const Rgba8* __restrict__ img, const std::uint32_t* __restrict__ index, std::uint32_t count,
                            PixelKey key, std::uint32_t* __restrict__ keys) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) keys[i] = pixel_key_milli(img[index[i]], key);
}

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    WINNOW_CUDA_CHECK(cudaEventCreate(&start));
    WINNOW_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
  }
};

}  // namespace

ImageCompactResult compact_image(ImageView<const Rgba8> image, const ImageCompactOptions& options) {
  ImageCompactResult result;
  result.backend = Backend::cuda;
  const std::uint64_t n = static_cast<std::uint64_t>(image.width) * static_cast<std::uint64_t>(image.height);
  if (image.empty()) return result;
  if (n >= (std::uint64_t{1} << 32)) throw InputError("image compaction: more than 2^32 - 1 pixels");
  cudaStream_t s = cudaStreamPerThread;
  const auto threshold_milli = static_cast<std::uint32_t>(options.threshold * 1000.0 + 1e-9);
  const bool sort = options.sort != SortOrder::none;

  DeviceBuffer<Rgba8> d_img(n, s);
  DeviceBuffer<std::uint32_t> d_index(n, s);
  DeviceBuffer<std::uint64_t> d_count(1, s);
  WINNOW_CUDA_CHECK(cudaMemcpy2DAsync(d_img.get(), image.width * sizeof(Rgba8), image.data,
                                      image.stride * sizeof(Rgba8), image.width * sizeof(Rgba8), image.height,
                                      cudaMemcpyHostToDevice, s));
  const ImageKeySource src{d_img.get(), threshold_milli, options.key, aligned_to(d_img.get(), 16)};
  const kern::IndexSink<std::uint32_t> sink{d_index.get()};
  std::size_t compact_bytes = 0;
  run_compaction(src, n, sink, d_count.get(), CompactAlgorithm::single_pass, Order::stable, nullptr, compact_bytes, s);
  DeviceBuffer<unsigned char> d_compact_temp(compact_bytes, s);

  DeviceBuffer<std::uint32_t> d_keys, d_keys_sorted, d_index_sorted;
  DeviceBuffer<unsigned char> d_sort_temp;
  std::size_t sort_bytes = 0;
  constexpr int end_bit = 18;  // keys <= 255000 < 2^18
  if (sort) {
    d_keys = DeviceBuffer<std::uint32_t>(n, s);
    d_keys_sorted = DeviceBuffer<std::uint32_t>(n, s);
    d_index_sorted = DeviceBuffer<std::uint32_t>(n, s);
    WINNOW_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, sort_bytes, d_keys.get(), d_keys_sorted.get(),
                                                                d_index.get(), d_index_sorted.get(),
                                                                static_cast<std::int64_t>(n), 0, end_bit, s));
    std::size_t asc_bytes = 0;
    WINNOW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, asc_bytes, d_keys.get(), d_keys_sorted.get(),
                                                      d_index.get(), d_index_sorted.get(), static_cast<std::int64_t>(n),
                                                      0, end_bit, s));
    sort_bytes = std::max(sort_bytes, asc_bytes);
    d_sort_temp = DeviceBuffer<unsigned char>(sort_bytes, s);
  }

  Events ev;
  WINNOW_CUDA_CHECK(cudaEventRecord(ev.start, s));
  run_compaction(src, n, sink, d_count.get(), CompactAlgorithm::single_pass, Order::stable, d_compact_temp.get(),
                 compact_bytes, s);
  std::uint64_t kept = 0;
  WINNOW_CUDA_CHECK(cudaMemcpyAsync(&kept, d_count.get(), sizeof(kept), cudaMemcpyDeviceToHost, s));
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  if (sort && kept > 0) {
    const auto k = static_cast<std::uint32_t>(kept);
    gather_keys<<<(k + 255) / 256, 256, 0, s>>>(d_img.get(), d_index.get(), k, options.key, d_keys.get());
    WINNOW_CUDA_CHECK_LAUNCH();
    if (options.sort == SortOrder::descending)
      WINNOW_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
          d_sort_temp.get(), sort_bytes, d_keys.get(), d_keys_sorted.get(), d_index.get(), d_index_sorted.get(),
          static_cast<std::int64_t>(kept), 0, end_bit, s));
    else
      WINNOW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(d_sort_temp.get(), sort_bytes, d_keys.get(),
                                                        d_keys_sorted.get(), d_index.get(), d_index_sorted.get(),
                                                        static_cast<std::int64_t>(kept), 0, end_bit, s));
  }
  WINNOW_CUDA_CHECK(cudaEventRecord(ev.stop, s));
  WINNOW_CUDA_CHECK(cudaEventSynchronize(ev.stop));
  float ms = 0;
  WINNOW_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
  result.milliseconds = ms;

  result.packed_index.resize(kept);
  if (kept)
    WINNOW_CUDA_CHECK(cudaMemcpyAsync(result.packed_index.data(), d_index.get(), kept * sizeof(std::uint32_t),
                                      cudaMemcpyDeviceToHost, s));
  if (sort) {
    result.sorted_index.resize(kept);
    if (kept)
      WINNOW_CUDA_CHECK(cudaMemcpyAsync(result.sorted_index.data(), d_index_sorted.get(), kept * sizeof(std::uint32_t),
                                        cudaMemcpyDeviceToHost, s));
  }
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  return result;
}

}  // namespace winnow::detail::cuda
