// Front end of voxel compaction (winnow::compact_voxels): the voxels of a volume above a level,
// below it, or non-zero, as positions and values in raster order.
//
// Algorithm. A volume of n voxels is a stream in raster order (x fastest, then y, then z), so the
// kept voxels are the stream compaction's index form over it: compact_indices writes the raster
// indices i of the kept voxels, ascending (stable order), on the CPU (count per group, scan,
// scatter) or on a CUDA device (the same, copies in and out), chosen by CompactOptions.backend.
// Each index is then decoded on the host: z = i / (nx ny), y = (i mod nx ny) / nx, x = i mod nx,
// and the value read from the volume at (x, y, z). The capability has no backend code of its own:
// its backends are the compaction's, reached through its public API.
//
// The selection becomes one Predicate `key <op> threshold` in the voxel's own type, so every
// backend compares exactly what a scalar loop compares (see VoxelSelection for how the double
// level is turned into a threshold of the type). Three details:
// - Strided views (padding between rows or slices) are copied into a contiguous buffer first,
//   one pass, rather than compacted row by row: one compaction of n elements beats ny nz small
//   ones, above all on a device where each call is a launch and a copy; the indices then count
//   voxels of the packed volume, which is what the decoding expects.
// - i8 and i16 have no precompiled value predicate in the compaction (its bytes-only carried
//   path knows no order), so their voxels are copied as u8 and u16 with the sign bit flipped
//   (v + 2^(b-1)): an order-preserving map, so `v > t` is `flip(v) > flip(t)` exactly.
// - Non-zero floats: the predicate is v != 0, under which NaN (unequal to everything) passes;
//   the decoding drops NaN, so NaN is never kept, as under above and below.
//
// Index width: 32-bit indices below 2^32 voxels, 64-bit from there on. The index buffer is sized
// by a guess (all n up to 2^24 voxels, else n / 4, at least 2^24): compact_indices returns the
// number kept even when the buffer is smaller, and then runs once more into a buffer of exactly
// that size. Only a volume of more than 2^24 voxels that keeps more than max(2^24, n / 4) of
// them pays that second pass; the indices take at most max(2^24, n / 4, k) entries, never one
// per voxel of a large volume.
//
// Complexity: O(n) reads and predicate evaluations (plus one O(n) copy for strided, i8 and i16
// volumes), O(k) for decoding k kept voxels; memory O(k) beside the volume (O(n) for a copy).
#include "winnow/voxels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "common/level_comparison.hpp"
#include "winnow/compact.hpp"
#include "winnow/error.hpp"

namespace winnow {
namespace {

// The type the compaction compares (the voxel type itself where it is precompiled) and the
// order-preserving map from voxels to it.
template <class T>
struct Key {
  using type = T;
  static constexpr T map(T v) { return v; }
};
template <>
struct Key<std::int8_t> {
  using type = std::uint8_t;
  static constexpr std::uint8_t map(std::int8_t v) {
    return static_cast<std::uint8_t>(static_cast<std::uint8_t>(v) ^ 0x80u);
  }
};
template <>
struct Key<std::int16_t> {
  using type = std::uint16_t;
  static constexpr std::uint16_t map(std::int16_t v) {
    return static_cast<std::uint16_t>(static_cast<std::uint16_t>(v) ^ 0x8000u);
  }
};

// `voxel <op> threshold` in the voxel's own type (common/level_comparison.hpp: the rule the
// volume thresholds share).
template <class T>
using Comparison = detail::LevelComparison<T>;

template <class T>
Comparison<T> comparison_for(const VoxelSelection& selection) {
  if (selection.mode == VoxelMode::nonzero) return {CompareOp::not_equal, T{0}};
  return detail::level_comparison<T>(selection.level, selection.mode == VoxelMode::above);
}

// The volume as a contiguous span of keys: the voxels themselves when they already are, else
// mapped into `staging`.
template <class T>
std::span<const typename Key<T>::type> keys_of(const VolumeView<const T>& volume,
                                               std::unique_ptr<typename Key<T>::type[]>& staging) {
  using K = typename Key<T>::type;
  const auto n = static_cast<std::size_t>(volume.size());
  if constexpr (std::is_same_v<K, T>)
    if (volume.contiguous()) return {volume.data, n};
  staging = std::make_unique_for_overwrite<K[]>(n);
  K* out = staging.get();
  const std::int64_t rows = volume.ny * volume.nz;
#pragma omp parallel for schedule(static) num_threads(detail::cpu_threads())
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* in = volume.row(r % volume.ny, r / volume.ny);
    K* dst = out + r * volume.nx;
    for (std::int64_t x = 0; x < volume.nx; ++x) dst[x] = Key<T>::map(in[x]);
  }
  return {out, n};
}

// The raster indices of the keys `pred` keeps, ascending, and how many there are.
template <class Index>
struct KeptIndices {
  std::unique_ptr<Index[]> index;
  std::uint64_t count = 0;
};

template <class Index, class K>
KeptIndices<Index> kept_indices(std::span<const K> keys, const Predicate& pred, const CompactOptions& options) {
  constexpr std::uint64_t kSmall = std::uint64_t{1} << 24;
  const std::uint64_t n = keys.size();
  std::uint64_t capacity = n <= kSmall ? n : std::max(kSmall, n / 4);
  KeptIndices<Index> kept;
  kept.index = std::make_unique_for_overwrite<Index[]>(capacity);
  kept.count = compact_indices(keys, pred, std::span<Index>(kept.index.get(), capacity), options);
  if (kept.count > capacity) {  // the guess was short: once more into a buffer of the exact size
    capacity = kept.count;
    kept.index = std::make_unique_for_overwrite<Index[]>(capacity);
    kept.count = compact_indices(keys, pred, std::span<Index>(kept.index.get(), capacity), options);
  }
  return kept;
}

// Positions and values of the kept voxels; NaN dropped (only non-zero floats can have kept one).
template <class T, class Index>
void decode(const VolumeView<const T>& volume, const KeptIndices<Index>& kept, Voxels<T>& out) {
  const auto count = static_cast<std::int64_t>(kept.count);
  out.positions.resize(kept.count);
  out.values.resize(kept.count);
  const std::int64_t nx = volume.nx, slice = volume.nx * volume.ny;
#pragma omp parallel for schedule(static) num_threads(detail::cpu_threads())
  for (std::int64_t k = 0; k < count; ++k) {
    const auto i = static_cast<std::int64_t>(kept.index[k]);
    const std::int64_t z = i / slice, in_slice = i - z * slice;
    const std::int64_t y = in_slice / nx, x = in_slice - y * nx;
    out.positions[k] = {x, y, z};
    out.values[k] = volume(x, y, z);
  }
  if constexpr (std::is_floating_point_v<T>) {
    std::size_t kept_so_far = 0;
    for (std::size_t k = 0; k < out.values.size(); ++k) {
      if (std::isnan(out.values[k])) continue;
      out.positions[kept_so_far] = out.positions[k];
      out.values[kept_so_far++] = out.values[k];
    }
    out.positions.resize(kept_so_far);
    out.values.resize(kept_so_far);
  }
}

}  // namespace

template <class T>
Voxels<T> compact_voxels(VolumeView<const T> volume, const VoxelSelection& selection, const VoxelOptions& options) {
  if (selection.mode != VoxelMode::nonzero && std::isnan(selection.level))
    throw InputError("compact_voxels: the level is NaN");
  Voxels<T> result;
  result.backend = resolve_backend(options.backend);
  if (volume.empty()) return result;
  const auto start = std::chrono::steady_clock::now();

  const Comparison<T> comparison = comparison_for<T>(selection);
  const Predicate pred = where(comparison.op, Key<T>::map(comparison.threshold));
  CompactOptions compact_options;
  compact_options.backend = result.backend;
  std::unique_ptr<typename Key<T>::type[]> staging;
  const auto keys = keys_of(volume, staging);
  if (keys.size() >= (std::uint64_t{1} << 32))
    decode(volume, kept_indices<std::uint64_t>(keys, pred, compact_options), result);
  else decode(volume, kept_indices<std::uint32_t>(keys, pred, compact_options), result);

  result.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

#define WINNOW_INSTANTIATE(T) \
  template Voxels<T> compact_voxels<T>(VolumeView<const T>, const VoxelSelection&, const VoxelOptions&);
WINNOW_INSTANTIATE(std::uint8_t)
WINNOW_INSTANTIATE(std::int8_t)
WINNOW_INSTANTIATE(std::uint16_t)
WINNOW_INSTANTIATE(std::int16_t)
WINNOW_INSTANTIATE(std::uint32_t)
WINNOW_INSTANTIATE(std::int32_t)
WINNOW_INSTANTIATE(std::uint64_t)
WINNOW_INSTANTIATE(std::int64_t)
WINNOW_INSTANTIATE(float)
WINNOW_INSTANTIATE(double)
#undef WINNOW_INSTANTIATE

}  // namespace winnow
