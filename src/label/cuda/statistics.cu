// Statistics of a label array on a CUDA device (winnow/cuda/label_statistics.hpp): the device
// form of src/label/statistics.cpp, the same results.
//
// Algorithm. Each thread takes a segment of kSegment voxels of one row (a warp reads 32 adjacent
// segments) and walks its runs of equal labels, adding them up in registers while the label
// stays the same (runs of one label with background between them are one partial): its length to
// the count, (x0 + x1) n / 2, n y and n z to the coordinate sums, its ends to the box, its first
// voxel's flat index to the first voxel, and with an intensity its values' sum, minimum and
// maximum. The partial goes to its label's row (one set of atomics) when another label starts,
// and at the end of the thread's work; there a warp whose lanes all hold the same label (one
// component filling the region, the common case of dense masks) reduces them first and adds them
// once, so a component that spans the volume is not a hot spot of one atomic per run. A run that
// crosses a segment's end is two runs of the same label, which add up to the same sums. The
// background (label 0) holds most voxels of a sparse labeling: its runs go to the thread's own
// sums, reduced over the warp and added once per warp. Minima and maxima of the intensity are
// kept as order-preserving 64-bit keys (unsigned integers as they are, signed ones with the sign
// bit flipped, floating point through double with the usual bit flip; NaN skipped) in the
// temporary storage, turned back into values by a last pass.
//
// Complexity: O(voxels) reads, O(label changes along the segments) atomics spread over the
// labels' rows; three launches (initialise, accumulate, finish). Nothing is synchronised.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "common/cuda/check.cuh"
#include "winnow/cuda/label_statistics.hpp"
#include "winnow/error.hpp"

namespace winnow::cuda {
namespace {

constexpr int kThreads = 256;
constexpr long long kSegment = 32;  // voxels per thread

/// Order-preserving 64-bit keys of intensity values.
template <class V>
__device__ inline std::uint64_t key_of(V v) {
  if constexpr (std::is_floating_point_v<V>) {
    const auto bits = static_cast<std::uint64_t>(__double_as_longlong(static_cast<double>(v)));
    return (bits >> 63) ? ~bits : bits | (std::uint64_t{1} << 63);
  } else if constexpr (std::is_signed_v<V>) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) ^ (std::uint64_t{1} << 63);
  } else {
    return static_cast<std::uint64_t>(v);
  }
}

template <class V>
__device__ inline V value_of(std::uint64_t key) {
  if constexpr (std::is_floating_point_v<V>) {
    const std::uint64_t bits = (key >> 63) ? key & ~(std::uint64_t{1} << 63) : ~key;
    return static_cast<V>(__longlong_as_double(static_cast<long long>(bits)));
  } else if constexpr (std::is_signed_v<V>) {
    return static_cast<V>(static_cast<std::int64_t>(key ^ (std::uint64_t{1} << 63)));
  } else {
    return static_cast<V>(key);
  }
}

template <class V>
using Sum = IntensitySum<V>;

struct Outputs {
  unsigned long long* voxels;
  unsigned long long* first;  // nullptr: not asked for
  long long* lower;
  long long* upper;
  unsigned long long* sums;
  void* intensity_sum;
  unsigned long long* keys;  // [M][2]: minimum, maximum key
  unsigned long long* beyond;
};

__global__ void initialise(Outputs out, std::uint64_t rows, bool intensity) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < rows; i += stride) {
    out.voxels[i] = 0;
    if (out.first) out.first[i] = std::numeric_limits<unsigned long long>::max();
    for (int d = 0; d < 3; ++d) {
      out.lower[i * 3 + d] = std::numeric_limits<long long>::max();
      out.upper[i * 3 + d] = -1;
      out.sums[i * 3 + d] = 0;
    }
    if (intensity) {
      static_cast<unsigned long long*>(out.intensity_sum)[i] = 0;  // 0, 0u and 0.0 share their bits
      out.keys[i * 2] = std::numeric_limits<unsigned long long>::max();
      out.keys[i * 2 + 1] = 0;
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) out.beyond[0] = out.beyond[1] = 0;
}

/// What a thread adds up of one label over its runs (the background's, over all its runs).
template <class V, bool kIntensity>
struct Partial {
  unsigned long long voxels = 0, sums[3] = {0, 0, 0};
  unsigned long long first = std::numeric_limits<unsigned long long>::max();  // flat index of the first voxel
  long long lower[3] = {std::numeric_limits<long long>::max(), std::numeric_limits<long long>::max(),
                        std::numeric_limits<long long>::max()};
  long long upper[3] = {-1, -1, -1};
  Sum<V> sum = 0;
  unsigned long long min_key = std::numeric_limits<unsigned long long>::max(), max_key = 0;

  /// Voxels x0..x1 of row (y, z), whose first voxel has the flat index `flat`.
  __device__ void add_run(const V* values, long long x0, long long x1, long long y, long long z,
                          unsigned long long flat) {
    first = min(first, flat);
    const auto n = static_cast<unsigned long long>(x1 - x0 + 1);
    const auto ends = static_cast<unsigned long long>(x0 + x1);
    voxels += n;
    sums[0] += (ends % 2 == 0) ? ends / 2 * n : n / 2 * ends;
    sums[1] += n * static_cast<unsigned long long>(y);
    sums[2] += n * static_cast<unsigned long long>(z);
    const long long at_lo[3] = {x0, y, z}, at_hi[3] = {x1, y, z};
    for (int d = 0; d < 3; ++d) lower[d] = min(lower[d], at_lo[d]), upper[d] = max(upper[d], at_hi[d]);
    if constexpr (kIntensity) {
      for (long long x = x0; x <= x1; ++x) {
        const V v = values[x];
        sum += static_cast<Sum<V>>(v);
        if constexpr (std::is_floating_point_v<V>)
          if (v != v) continue;  // NaN: in the sum, not in the minimum or maximum
        const unsigned long long k = key_of(v);
        min_key = min(min_key, k), max_key = max(max_key, k);
      }
    }
  }

  __device__ void flush(const Outputs& out, std::uint64_t label) const {
    if (voxels == 0) return;
    atomicAdd(&out.voxels[label], voxels);
    if (out.first) atomicMin(&out.first[label], first);
    for (int d = 0; d < 3; ++d) {
      atomicAdd(&out.sums[label * 3 + d], sums[d]);
      atomicMin(&out.lower[label * 3 + d], lower[d]);
      atomicMax(&out.upper[label * 3 + d], upper[d]);
    }
    if constexpr (kIntensity) {
      if constexpr (std::is_floating_point_v<V>) {
        atomicAdd(&static_cast<double*>(out.intensity_sum)[label], static_cast<double>(sum));
      } else {
        atomicAdd(&static_cast<unsigned long long*>(out.intensity_sum)[label], static_cast<unsigned long long>(sum));
      }
      atomicMin(&out.keys[label * 2], min_key);
      atomicMax(&out.keys[label * 2 + 1], max_key);
    }
  }

  /// The warp's partials summed into lane 0's.
  __device__ void reduce_warp() {
    for (int offset = 16; offset > 0; offset /= 2) {
      voxels += __shfl_down_sync(0xffffffffu, voxels, offset);
      first = min(first, __shfl_down_sync(0xffffffffu, first, offset));
      for (int d = 0; d < 3; ++d) {
        sums[d] += __shfl_down_sync(0xffffffffu, sums[d], offset);
        lower[d] = min(lower[d], __shfl_down_sync(0xffffffffu, lower[d], offset));
        upper[d] = max(upper[d], __shfl_down_sync(0xffffffffu, upper[d], offset));
      }
      if constexpr (kIntensity) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
        min_key = min(min_key, __shfl_down_sync(0xffffffffu, min_key, offset));
        max_key = max(max_key, __shfl_down_sync(0xffffffffu, max_key, offset));
      }
    }
  }
};

template <class L, class V, bool kIntensity>
__global__ void __launch_bounds__(kThreads) accumulate(VolumeView<const L> labels, VolumeView<const V> intensity,
                                                       std::uint64_t m, bool background_only, Outputs out) {
  const long long segments = (labels.nx + kSegment - 1) / kSegment;
  const long long items = segments * labels.ny * labels.nz;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  Partial<V, kIntensity> background, pending;
  std::uint64_t pending_label = 0;  // the label `pending` adds up (0: none yet)
  for (long long item = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; item < items; item += stride) {
    const long long segment = item % segments, r = item / segments;
    const long long y = r % labels.ny, z = r / labels.ny;
    const L* row = labels.data + z * labels.slice_stride + y * labels.row_stride;  // (VolumeView's row() is host code)
    const V* values = nullptr;
    if constexpr (kIntensity) values = intensity.data + z * intensity.slice_stride + y * intensity.row_stride;
    const auto row_flat = static_cast<unsigned long long>(r) * static_cast<unsigned long long>(labels.nx);
    const long long end = min(static_cast<long long>(labels.nx), (segment + 1) * kSegment);
    long long x = segment * kSegment;
    while (x < end) {
      const L l = row[x];
      const long long x0 = x;
      ++x;
      while (x < end && row[x] == l) ++x;
      if (l == 0) {
        background.add_run(values, x0, x - 1, y, z, row_flat + x0);
        continue;
      }
      if (background_only) continue;
      if (static_cast<std::uint64_t>(l) >= m) {
        out.beyond[0] = 1;
        atomicMax(&out.beyond[1], static_cast<unsigned long long>(l));
        continue;
      }
      if (static_cast<std::uint64_t>(l) != pending_label) {
        if (pending_label != 0) pending.flush(out, pending_label);
        pending = Partial<V, kIntensity>();
        pending_label = static_cast<std::uint64_t>(l);
      }
      pending.add_run(values, x0, x - 1, y, z, row_flat + x0);
    }
  }
  background.reduce_warp();
  if ((threadIdx.x & 31) == 0) background.flush(out, 0);
  // Every lane's last partial: one flush for the warp when the lanes agree on the label.
  const auto lane0_label = __shfl_sync(0xffffffffu, static_cast<unsigned long long>(pending_label), 0);
  if (__all_sync(0xffffffffu, pending_label == lane0_label)) {
    pending.reduce_warp();
    if ((threadIdx.x & 31) == 0 && pending_label != 0) pending.flush(out, pending_label);
  } else if (pending_label != 0) {
    pending.flush(out, pending_label);
  }
}

template <class V>
__global__ void finish(Outputs out, V* minimum, V* maximum, std::uint64_t rows) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < rows; i += stride) {
    const unsigned long long lo = out.keys[i * 2], hi = out.keys[i * 2 + 1];
    if (out.voxels[i] == 0 || lo > hi) {  // no voxels, or NaN values alone
      if constexpr (std::is_floating_point_v<V>) {
        minimum[i] = maximum[i] = static_cast<V>(__longlong_as_double(0x7ff8000000000000ll));
      } else {
        minimum[i] = maximum[i] = V{0};
      }
    } else {
      minimum[i] = value_of<V>(lo);
      maximum[i] = value_of<V>(hi);
    }
  }
}

int blocks_for(std::uint64_t work) {
  const std::uint64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(blocks, std::uint64_t{1} << 20)));
}

template <class T>
void check_view(const VolumeView<const T>& v, const char* what) {
  if (v.nx < 0 || v.ny < 0 || v.nz < 0) throw InputError(std::string(what) + ": negative size");
  if (!v.empty() && !v.data) throw InputError(std::string(what) + ": null data");
}

template <class L, class V, bool kIntensity>
void run(void* d_temp, std::size_t& temp_bytes, VolumeView<const L> labels, VolumeView<const V> intensity,
         std::uint64_t m, bool background_only, const DeviceLabelStatistics& out, cudaStream_t stream) {
  check_view(labels, "labels");
  if (kIntensity) {
    check_view(intensity, "intensity");
    if (intensity.nx != labels.nx || intensity.ny != labels.ny || intensity.nz != labels.nz)
      throw InputError("intensity: expected the shape of labels");
  }
  if (m == 0 && !background_only) throw InputError("labels: the number of labels M must be at least 1");
  const std::uint64_t rows = background_only ? 1 : m;
  const std::size_t needed = std::max<std::size_t>(16, kIntensity ? rows * 16 : 0);
  if (!d_temp) {
    temp_bytes = needed;
    return;
  }
  if (temp_bytes < needed) throw InputError("label_statistics: temporary storage too small");
  if (!out.d_voxels || !out.d_lower || !out.d_upper || !out.d_sums || !out.d_beyond ||
      (kIntensity && (!out.d_intensity_sum || !out.d_minimum || !out.d_maximum)))
    throw InputError("label_statistics: an output pointer is null");
  Outputs o{reinterpret_cast<unsigned long long*>(out.d_voxels),
            reinterpret_cast<unsigned long long*>(out.d_first),
            reinterpret_cast<long long*>(out.d_lower),
            reinterpret_cast<long long*>(out.d_upper),
            reinterpret_cast<unsigned long long*>(out.d_sums),
            out.d_intensity_sum,
            static_cast<unsigned long long*>(d_temp),
            reinterpret_cast<unsigned long long*>(out.d_beyond)};
  initialise<<<blocks_for(rows), kThreads, 0, stream>>>(o, rows, kIntensity);
  WINNOW_CUDA_CHECK_LAUNCH();
  if (!labels.empty()) {
    const std::uint64_t items = static_cast<std::uint64_t>((labels.nx + kSegment - 1) / kSegment) *
                                static_cast<std::uint64_t>(labels.ny) * static_cast<std::uint64_t>(labels.nz);
    accumulate<L, V, kIntensity><<<blocks_for(items), kThreads, 0, stream>>>(labels, intensity, m, background_only, o);
    WINNOW_CUDA_CHECK_LAUNCH();
  }
  if constexpr (kIntensity) {
    finish<V><<<blocks_for(rows), kThreads, 0, stream>>>(o, static_cast<V*>(out.d_minimum),
                                                         static_cast<V*>(out.d_maximum), rows);
    WINNOW_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

template <class L>
void label_statistics(void* d_temp, std::size_t& temp_bytes, VolumeView<const L> labels, std::uint64_t m,
                      bool background_only, const DeviceLabelStatistics& out, cudaStream_t stream) {
  run<L, std::uint8_t, false>(d_temp, temp_bytes, labels, VolumeView<const std::uint8_t>(), m, background_only, out,
                              stream);
}

template <class L, class V>
void label_statistics(void* d_temp, std::size_t& temp_bytes, VolumeView<const L> labels, VolumeView<const V> intensity,
                      std::uint64_t m, bool background_only, const DeviceLabelStatistics& out, cudaStream_t stream) {
  run<L, V, true>(d_temp, temp_bytes, labels, intensity, m, background_only, out, stream);
}

#define WINNOW_DEVICE_STATISTICS(L, V)                                                                               \
  template void label_statistics<L, V>(void*, std::size_t&, VolumeView<const L>, VolumeView<const V>, std::uint64_t, \
                                       bool, const DeviceLabelStatistics&, cudaStream_t);
#define WINNOW_DEVICE_STATISTICS_OF(L)                                                             \
  template void label_statistics<L>(void*, std::size_t&, VolumeView<const L>, std::uint64_t, bool, \
                                    const DeviceLabelStatistics&, cudaStream_t);                   \
  WINNOW_DEVICE_STATISTICS(L, std::uint8_t)                                                        \
  WINNOW_DEVICE_STATISTICS(L, std::int8_t)                                                         \
  WINNOW_DEVICE_STATISTICS(L, std::uint16_t)                                                       \
  WINNOW_DEVICE_STATISTICS(L, std::int16_t)                                                        \
  WINNOW_DEVICE_STATISTICS(L, std::uint32_t)                                                       \
  WINNOW_DEVICE_STATISTICS(L, std::int32_t)                                                        \
  WINNOW_DEVICE_STATISTICS(L, std::uint64_t)                                                       \
  WINNOW_DEVICE_STATISTICS(L, std::int64_t)                                                        \
  WINNOW_DEVICE_STATISTICS(L, float)                                                               \
  WINNOW_DEVICE_STATISTICS(L, double)
WINNOW_DEVICE_STATISTICS_OF(std::uint8_t)
WINNOW_DEVICE_STATISTICS_OF(std::uint16_t)
WINNOW_DEVICE_STATISTICS_OF(std::uint32_t)
WINNOW_DEVICE_STATISTICS_OF(std::uint64_t)
#undef WINNOW_DEVICE_STATISTICS_OF
#undef WINNOW_DEVICE_STATISTICS

}  // namespace winnow::cuda
