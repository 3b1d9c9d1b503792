// CUDA connected-component labeling of volumes: 6-, 18- or 26-connectivity, binary or multi-label
// (neighbours join when both are foreground, or, multi-label, when their values are equal), with
// statistics on request; the dispatch of its passes and the host staging around them.
//
// Contract. Labels are 1..N in raster order (x fastest, then y, then z) of each component's first
// voxel, background 0 -- the numbering of scipy.ndimage.label and cc3d -- and N goes to d_count.
// With statistics, record i - 1 holds label i's voxel count, coordinate sums, bounding box and
// value (the voxels' value in a multi-label volume, else 1), for the labels up to the records'
// capacity. One device call takes fewer than 2^32 voxels (32-bit keys); the host path labels
// larger volumes, and any volume into 64-bit labels, in bands of layers in two passes: the seams
// united on the host, each band's final labels written by the device (label/bands.cpp,
// DeviceBand below).
//
// Algorithm: union-find on the device (union_find.cuh) over voxel keys that order like raster
// indices. Unions link the larger root under the smaller, so every component's root is its
// raster-first voxel, the one that decides its number. One kernel per pass, in stream order:
//   1. local (volume_local.cuh): every brick labelled alone in shared memory -- x-runs from warp
//      ballots, one union per run and stretch of joining voxels in each backward row; a single
//      layer in tiles of 4 x 2 bricks. Every voxel's parent is then its brick-local root, and the
//      rows' root words mark the brick-local roots. A binary volume of several layers (rows of 16
//      columns a word or more) is labelled over its x-runs instead: bricks as rows of bit words,
//      and a forest of runs, not voxels (volume_plan.cuh), through passes 1, 2 and 4.
//   2. merge (volume_merge.cuh): the voxels on brick faces unite with their backward neighbours in
//      other bricks, union-find in global memory; each link takes the root it linked out of the
//      root words and marks the root it went under (its component spans bricks).
//   3. numbering (volume_numbering.cuh): an exclusive scan (CUB) of the root words' bit counts
//      numbers the roots in raster order, and gives N.
//   4. labels (volume_numbering.cuh): every voxel takes its root's number.
//   5. statistics (volume_statistics.cuh): a warp per brick adds up the brick's runs per label in
//      shared memory and flushes each label once per brick.
// volume_plan.cuh holds the bricks, the tuning (VolumeTuning) and the temporary storage's layout.
// Concurrent finds and links follow union_find.cuh (volatile loads, stores only by atomicMin of an
// ancestor over a descendant); the passes after the merge only read the forest.
//
// References: K. Wu, E. Otoo, K. Suzuki, "Optimizing two-pass connected-component labeling
// algorithms", Pattern Anal. Appl. 2009 (union-find with the smaller root as parent);
// D. P. Playne, K. Hawick, "A new algorithm for parallel connected-component labelling on GPUs",
// IEEE TPDS 2018 (atomicMin union-find on the GPU); S. Allegretti, F. Bolelli, C. Grana,
// "Optimized block-based algorithms to label connected components on GPUs", IEEE TPDS 2019.
//
// Complexity: O(nx * ny * nz) work (union-find trees stay shallow in practice: near-linear);
// memory: 4 bytes per voxel of temporary storage (the forest; the run forest uses at most 2 of
// them), and four words of 4 bytes per 32 columns of each row (foreground, roots, marks, numbering
// offsets: 1 bit per voxel each, up to 4 bytes per voxel for volumes 1 voxel wide).
//
// How the design came about, with its measurements and what was tried and dropped:
// bench/results/label.md, "Volume labeling on CUDA: design history".
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/cuda/arch.cuh"
#include "common/cuda/check.cuh"
#include "common/cuda/runtime.hpp"
#include "common/cuda/staging.cuh"
#include "label/backends.hpp"
#include "label/cuda/volume_local.cuh"
#include "label/cuda/volume_merge.cuh"
#include "label/cuda/volume_numbering.cuh"
#include "label/cuda/volume_plan.cuh"
#include "label/cuda/volume_statistics.cuh"
#include "winnow/cuda/label.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cuda {

// ---- the benchmark's phase events ---------------------------------------------------------------
//
// For bench/label_volume_gpu_bench.cu --breakdown only, which declares set_volume_phase_events
// itself: with `events` (6 CUDA events, or null to stop), every labeling records events[0..5] in
// its stream at its phase boundaries -- 0 start, 1 after the local pass, 2 merge, 3 roots counted
// and scanned, 4 labels written, 5 statistics (none without them) -- so the benchmark can time
// each phase. Not for concurrent use.
void set_volume_phase_events(cudaEvent_t* events);
namespace {
cudaEvent_t* g_phase_events = nullptr;
void mark_phase(int boundary, cudaStream_t s) {
  if (g_phase_events) WINNOW_CUDA_CHECK(cudaEventRecord(g_phase_events[boundary], s));
}
}  // namespace
void set_volume_phase_events(cudaEvent_t* events) { g_phase_events = events; }

// ---- dispatch -----------------------------------------------------------------------------------

namespace {

// One call's plan: the size checked, the bricks counted, the temporary storage laid out (the CUB
// scan's part sized). `o.connectivity` is resolved (6, 18 or 26): the front end or the device
// API did it.
VolumePlan make_volume_plan(std::int64_t nx, std::int64_t ny, std::int64_t nz,
                            const winnow::cuda::DeviceLabelOptions& o) {
  VolumePlan p;
  p.conn = o.connectivity;
  if (o.algorithm != LabelAlgorithm::automatic && o.algorithm != LabelAlgorithm::tile_merge)
    throw BackendError("labeling algorithm '" + std::string(to_string(o.algorithm)) +
                       "' is not available for volumes on the cuda backend");
  if (nx < 0 || ny < 0 || nz < 0)
    throw InputError("label: negative volume size " + std::to_string(nx) + "x" + std::to_string(ny) + "x" +
                     std::to_string(nz));
  p.multilabel = o.multilabel;
  if (nx == 0 || ny == 0 || nz == 0) return p;  // n = 0: nothing to label
  // Guard the product against overflow before forming it.
  constexpr std::uint64_t kMaxVoxels = 0xFFFFFFFFull;  // keys < 2^32 - 1; 0xFFFFFFFF is background
  const auto ux = static_cast<std::uint64_t>(nx), uy = static_cast<std::uint64_t>(ny),
             uz = static_cast<std::uint64_t>(nz);
  // Sides below 2^31 keep a brick's coordinates (side + 31) within 32 bits.
  constexpr std::uint64_t kMaxSide = std::uint64_t{1} << 31;
  if (ux >= kMaxSide || uy >= kMaxSide || uz >= kMaxSide || uy > kMaxVoxels / ux || uz > kMaxVoxels / (ux * uy))
    throw Error("label: a volume of " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                " voxels is beyond one CUDA call's 32-bit keys (fewer than 2^32 voxels, sides below 2^31)");
  p.n = ux * uy * uz;
  p.g.nx = static_cast<std::uint32_t>(nx);
  p.g.ny = static_cast<std::uint32_t>(ny);
  p.g.nz = static_cast<std::uint32_t>(nz);
  p.g.sxy = static_cast<std::uint32_t>(ux * uy);
  p.g.n = static_cast<std::uint32_t>(p.n);
  p.g.nbx = static_cast<std::uint32_t>((ux + kBX - 1) / kBX);
  // In one layer 18- and 26-connectivity pair the same voxels: one instantiation serves both.
  p.layer = nz == 1;
  if (p.layer && p.conn == 18) p.conn = 26;
  const std::uint64_t by = p.layer ? LayerBrick::kY : VolumeBrick::kY, bz = p.layer ? LayerBrick::kZ : VolumeBrick::kZ;
  p.g.nby = static_cast<std::uint32_t>((uy + by - 1) / by);
  // Every brick holds a voxel of the volume, so there are at most n of them.
  p.g.nbricks = static_cast<std::uint32_t>(std::uint64_t{p.g.nbx} * p.g.nby * ((uz + bz - 1) / bz));
  p.g.ntx = static_cast<std::uint32_t>((ux + LayerTile::kX - 1) / LayerTile::kX);
  // <= nbricks
  p.g.ntiles = static_cast<std::uint32_t>(std::uint64_t{p.g.ntx} * ((uy + LayerTile::kY - 1) / LayerTile::kY));
  p.nwords = static_cast<std::uint32_t>(std::uint64_t{p.g.nbx} * uy * uz);
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, p.scan_bytes, root_counts(nullptr),
                                                  static_cast<std::uint32_t*>(nullptr), p.nwords));
  const std::size_t word_bytes = std::size_t{p.nwords} * 4;
  // The run forest's nodes (16 a word) fit the voxel forest's place when a word has 16 columns.
  p.bits = !p.layer && !p.multilabel && std::uint64_t{p.g.nbx} * kWordRuns <= ux;
  p.off_P = 0;
  p.off_rows = align256(p.off_P + p.n * 4);
  p.off_marks = align256(p.off_rows + std::size_t{p.nwords} * sizeof(RowWord));
  p.off_offsets = align256(p.off_marks + std::size_t{p.nwords} * sizeof(RowMarks));
  p.off_scan = align256(p.off_offsets + word_bytes);
  p.total = align256(p.off_scan + p.scan_bytes);
  return p;
}

// Thread blocks for a grid-stride kernel: as many as the device holds at once (the kernel's
// occupancy: its registers and shared memory decide), so that no block waits for a second wave
// (a layer tile's 33 KB of parents and marks leave room for 6 blocks per SM, not 8), and no more
// than the work needs.
template <class... Params>
unsigned resident_blocks(std::uint64_t wanted, void (*kernel)(Params...), int block_threads = kThreads) {
  const unsigned resident = resident_blocks_on_device(reinterpret_cast<const void*>(kernel), block_threads);
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(wanted, resident)));
}

// Passes 1 and 2 of a volume of bricks B: local_kernel, bits_local_kernel or layer_local_kernel,
// then merge_kernel or bits_merge_kernel.
template <class T, int Conn, class B>
void launch_link(const VolumePlan& p, const T* d_vol, const VolumeTemp& t, cudaStream_t s) {
  constexpr unsigned kWarps = kThreads / 32;
  const unsigned brick_warp_blocks = (p.g.nbricks + kWarps - 1) / kWarps;  // a warp per brick
  const bool bits = !B::kLayer && p.bits;
  if constexpr (B::kLayer)
    launch_dependent(layer_local_kernel<T, Conn>, resident_blocks(p.g.ntiles, layer_local_kernel<T, Conn>), kThreads, s,
                     d_vol, t.P, t.rows, t.marks, p.g, p.multilabel);
  else if (bits)
    launch_dependent(bits_local_kernel<T, Conn>, resident_blocks(brick_warp_blocks, bits_local_kernel<T, Conn>),
                     kThreads, s, d_vol, t.P, t.rows, t.marks, p.g,
                     sizeof(T) == 1 && reinterpret_cast<std::uintptr_t>(d_vol) % 16 == 0 && p.g.nx % 16 == 0);
  else
    launch_dependent(local_kernel<T, Conn, B>, resident_blocks(p.g.nbricks, local_kernel<T, Conn, B>), kThreads, s,
                     d_vol, t.P, t.rows, p.g, p.multilabel);
  mark_phase(1, s);
  if constexpr (!B::kLayer)
    if (bits)
      launch_dependent(bits_merge_kernel<Conn>, resident_blocks(brick_warp_blocks, bits_merge_kernel<Conn>), kThreads,
                       s, t.rows, t.P, t.marks, p.g);
  if (!bits) {
    const std::uint64_t face_warps = std::uint64_t{brick_count<B>(p.g)} * (face_slots<Conn, B>() / 32);
    const unsigned blocks = resident_blocks((face_warps + kWarps - 1) / kWarps, merge_kernel<T, Conn, B>);
    launch_dependent(merge_kernel<T, Conn, B>, blocks, kThreads, s, d_vol, t.P, t.rows, t.marks, p.g, p.multilabel);
  }
  mark_phase(2, s);
}

// Passes 1-3: the forest, the roots' words scanned, N in *d_count.
template <class T>
void run_link_count(const VolumePlan& p, void* d_temp, const T* d_vol, std::uint32_t* d_count, cudaStream_t s) {
  if (p.n == 0) {
    WINNOW_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(std::uint32_t), s));
    return;
  }
  const VolumeTemp t = volume_temp(p, d_temp);
  mark_phase(0, s);
  if (!p.layer)  // the layer kernel writes every marks word
    WINNOW_CUDA_CHECK(cudaMemsetAsync(t.marks, 0, std::size_t{p.nwords} * sizeof(RowMarks), s));
  if (p.layer) {
    if (p.conn == 6) launch_link<T, 6, LayerTile>(p, d_vol, t, s);
    else launch_link<T, 26, LayerTile>(p, d_vol, t, s);
  } else if (p.conn == 6) {
    launch_link<T, 6, VolumeBrick>(p, d_vol, t, s);
  } else if (p.conn == 18) {
    launch_link<T, 18, VolumeBrick>(p, d_vol, t, s);
  } else {
    launch_link<T, 26, VolumeBrick>(p, d_vol, t, s);
  }
  std::size_t scan_bytes = p.scan_bytes;
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(t.scan, scan_bytes, root_counts(t.rows), t.offsets, p.nwords, s));
  launch_dependent(total_kernel, 1, 1, s, t.rows, t.offsets, p.nwords, d_count);
  mark_phase(3, s);
}

// Passes 4 and 5: labels, and the statistics of labels <= cap when st.
template <class T>
void run_number_label(const VolumePlan& p, void* d_temp, const T* d_vol, std::uint32_t* d_labels,
                      const std::uint32_t* d_count, RawVolumeComponentStats* st, std::uint64_t cap, cudaStream_t s) {
  if (p.n == 0) return;
  if (!cap) st = nullptr;
  const VolumeTemp t = volume_temp(p, d_temp);
  if (p.bits) {
    launch_dependent(resolve_local_roots_kernel,
                     resident_blocks((p.nwords + kThreads - 1) / kThreads, resolve_local_roots_kernel), kThreads, s,
                     t.P, t.rows, t.marks, t.offsets, p.nwords, d_count);
    const std::uint64_t rows = std::uint64_t{p.g.ny} * p.g.nz;
    launch_dependent(bits_labels_kernel,
                     resident_blocks((rows + kThreads / 32 - 1) / (kThreads / 32), bits_labels_kernel), kThreads, s,
                     t.P, t.rows, t.offsets, d_labels, p.g, d_count, p.nwords);
  } else {
    launch_dependent(labels_kernel, resident_blocks((p.n + kThreads - 1) / kThreads, labels_kernel), kThreads, s, t.P,
                     t.rows, t.offsets, d_labels, p.g);
  }
  mark_phase(4, s);
  if (st) {  // the records brick by brick, from the row words or from the labels just written
    // Threads for the fill's work: a binary volume's records (more than its row words whenever the
    // count could ask for passes), a multi-label volume's row words.
    const std::uint64_t records = std::min<std::uint64_t>(cap, p.n);
    const std::uint64_t fill_items = p.multilabel ? p.nwords : records * 8;
    launch_dependent(init_records_kernel<T>,
                     resident_blocks((fill_items + kThreads - 1) / kThreads, init_records_kernel<T>), kThreads, s,
                     d_vol, t.rows, t.marks, t.offsets, p.g, st, cap, d_count, p.multilabel);
    // Both ways are launched when the capacity leaves the count free to ask for either; the one it
    // does not ask for returns at once.
    auto launch = [&](auto kernel) {
      const unsigned blocks = resident_blocks((p.g.nbricks + kStatsWarps - 1) / kStatsWarps, kernel, kStatsWarps * 32);
      launch_dependent(kernel, blocks, kStatsWarps * 32, s, t.rows, t.marks, d_labels, t.offsets, p.g, st, cap, d_count,
                       p.multilabel);
    };
    const bool passes_possible = stats_in_passes(records, p.g);
    auto launch_ways = [&](auto one_pass, auto in_passes) {
      launch(one_pass);
      if (passes_possible) launch(in_passes);
    };
    if (p.bits) launch_ways(brick_stats_kernel<VolumeBrick, true, false>, brick_stats_kernel<VolumeBrick, true, true>);
    else if (p.layer)
      launch_ways(brick_stats_kernel<LayerBrick, false, false>, brick_stats_kernel<LayerBrick, false, true>);
    else launch_ways(brick_stats_kernel<VolumeBrick, false, false>, brick_stats_kernel<VolumeBrick, false, true>);
  }
  mark_phase(5, s);
}

template <class T>
void device_label_volume(void* d_temp, std::size_t& temp_bytes, VolumeView<const T> volume, std::uint32_t* d_labels,
                         std::uint32_t* d_count, RawVolumeComponentStats* d_stats, std::uint64_t stats_capacity,
                         const winnow::cuda::DeviceLabelOptions& options, cudaStream_t stream) {
  const std::int64_t nx = volume.nx, ny = volume.ny, nz = volume.nz;
  if (!volume.empty() && !volume.contiguous())
    throw InputError("winnow::cuda::label_volume: the volume must be contiguous (row stride nx, slice stride nx*ny)");
  winnow::cuda::DeviceLabelOptions resolved = options;
  resolved.connectivity = resolve_connectivity(options.connectivity, 3);
  const VolumePlan p = make_volume_plan(nx, ny, nz, resolved);
  const T* d_volume = volume.data;
  if (!d_temp) {
    temp_bytes = std::max<std::size_t>(p.total, 1);
    return;
  }
  if (temp_bytes < p.total) throw InputError("winnow::cuda::label_volume: temporary storage too small");
  if (d_stats && reinterpret_cast<std::uintptr_t>(d_stats) % alignof(RawVolumeComponentStats) != 0)
    throw InputError("winnow::cuda::label_volume: d_stats must be 16-byte aligned");
  run_link_count(p, d_temp, d_volume, d_count, stream);
  run_number_label(p, d_temp, d_volume, d_labels, d_count, d_stats, d_stats ? stats_capacity : 0, stream);
}

}  // namespace

// ---- host staging and bands ---------------------------------------------------------------------

namespace {

/// Band b's final labels from its provisional ones (label_volume_in_passes): l > 0 becomes the
/// final label of id base + l -- merged[k]'s label when the id joined a smaller one, else the id
/// less the k merged ids below it -- with k found by binary search in merged[lo, hi), the part of
/// the list within the band. In place when OutT is 32-bit (in == out).
template <class OutT>
__global__ void renumber_band_kernel(const std::uint32_t* in, OutT* out, std::uint64_t n, std::uint64_t base,
                                     const std::uint64_t* __restrict__ merged,
                                     const std::uint64_t* __restrict__ final_labels, std::uint64_t lo,
                                     std::uint64_t hi) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint32_t l = in[i];
    OutT r = 0;
    if (l) {
      const std::uint64_t g = base + l;
      std::uint64_t a = lo, b = hi;
      while (a < b) {
        const std::uint64_t m = (a + b) / 2;
        if (merged[m] < g) a = m + 1;
        else b = m;
      }
      r = static_cast<OutT>(a < hi && merged[a] == g ? final_labels[a] : g - a);
    }
    out[i] = r;
  }
}

/// The device's buffers for one band at a time, grown to the largest band asked for: the volume,
/// its labels, the passes' temporary storage and the count. Each label() is one call of the passes
/// on the default stream; the host copies go through the pinned staging (staging.cuh).
template <class T>
class DeviceBand final : public ResidentBand<T> {
 public:
  explicit DeviceBand(StageTimes& times) : times_(times) {}

  std::uint64_t label(const VolumeView<const T>& v, int connectivity, bool multilabel,
                      std::vector<VolumeComponentSums>* sums) override {
    if (sums) sums->clear();
    nx_ = v.nx, ny_ = v.ny, nz_ = v.nz;
    if (v.empty()) return 0;
    auto t = clock::now();
    const VolumePlan p = make_volume_plan(
        v.nx, v.ny, v.nz,
        {.connectivity = connectivity, .multilabel = multilabel});  // the context: started by layers_per_call
    const auto n = static_cast<std::size_t>(p.n);
    if (vol_.size() < n) vol_ = DeviceBuffer<T>(), vol_ = DeviceBuffer<T>(n, s_);
    if (labels_.size() < n) labels_ = DeviceBuffer<std::uint32_t>(), labels_ = DeviceBuffer<std::uint32_t>(n, s_);
    if (temp_.size() < p.total) temp_ = DeviceBuffer<char>(), temp_ = DeviceBuffer<char>(p.total, s_);
    if (!d_count_.size()) d_count_ = DeviceBuffer<std::uint32_t>(1, s_);
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(s_));
    times_.device_setup += since(t);
    t = clock::now();
    const std::size_t row_bytes = static_cast<std::size_t>(v.nx) * sizeof(T);
    if (v.slice_stride == v.row_stride * v.ny)  // rows evenly spaced: one pitched copy
      copy_to_device(vol_.get(), row_bytes, v.data, static_cast<std::size_t>(v.row_stride) * sizeof(T), row_bytes,
                     static_cast<std::size_t>(v.ny * v.nz), s_);
    else
      for (std::int64_t z = 0; z < v.nz; ++z)
        copy_to_device(vol_.get() + static_cast<std::size_t>(z * v.nx * v.ny), row_bytes, v.row(0, z),
                       static_cast<std::size_t>(v.row_stride) * sizeof(T), row_bytes, static_cast<std::size_t>(v.ny),
                       s_);
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(s_));
    times_.transfers += since(t);
    t = clock::now();
    run_link_count(p, temp_.get(), vol_.get(), d_count_.get(), s_);
    std::uint32_t count = 0;
    WINNOW_CUDA_CHECK(cudaMemcpyAsync(&count, d_count_.get(), 4, cudaMemcpyDeviceToHost, s_));
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(s_));
    DeviceBuffer<RawVolumeComponentStats> d_stats(sums && count ? count : 0, s_);
    run_number_label(p, temp_.get(), vol_.get(), labels_.get(), d_count_.get(), d_stats.get(), d_stats.size(), s_);
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(s_));
    times_.compute += since(t);
    if (sums && count) {
      t = clock::now();
      std::vector<RawVolumeComponentStats> raw(count);
      copy_to_host(raw.data(), raw.size() * sizeof(raw[0]), d_stats.get(), raw.size() * sizeof(raw[0]),
                   raw.size() * sizeof(raw[0]), 1, s_);
      sums->resize(count);
      for (std::uint32_t i = 0; i < count; ++i) {
        const RawVolumeComponentStats& r = raw[i];
        VolumeComponentSums& m = (*sums)[i];
        m.voxels = r.voxels;
        m.sum_x = r.sum_x, m.sum_y = r.sum_y, m.sum_z = r.sum_z;
        m.min_x = r.min_x, m.min_y = r.min_y, m.min_z = r.min_z;
        m.max_x = r.max_x, m.max_y = r.max_y, m.max_z = r.max_z;
        m.value = r.value;
      }
      times_.transfers += since(t);
    }
    return count;
  }

  void copy_layer(std::int64_t z, std::uint32_t* out) override {
    const auto t = clock::now();
    const std::size_t layer = static_cast<std::size_t>(nx_ * ny_);
    copy_to_host(out, layer * 4, labels_.get() + static_cast<std::size_t>(z) * layer, layer * 4, layer * 4, 1, s_);
    times_.transfers += since(t);
  }

  /// Into the caller's labels (any strides): 32-bit ones renumbered in place and copied out whole;
  /// 64-bit ones a slab of layers at a time through a device buffer of the slab's size.
  void write_labels(std::uint64_t base, const SeamNumbering& numbering, std::size_t lo, std::size_t hi,
                    const VolumeView<std::uint32_t>& out32, const VolumeView<std::uint64_t>& out64) override {
    if (!nx_ || !ny_ || !nz_) return;
    auto t = clock::now();
    if (&numbering != numbering_ || merged_.size() != numbering.merged.size()) {
      merged_ = DeviceBuffer<std::uint64_t>(numbering.merged.size(), s_);
      finals_ = DeviceBuffer<std::uint64_t>(numbering.label.size(), s_);
      if (merged_.size()) {
        WINNOW_CUDA_CHECK(
            cudaMemcpyAsync(merged_.get(), numbering.merged.data(), merged_.bytes(), cudaMemcpyHostToDevice, s_));
        WINNOW_CUDA_CHECK(
            cudaMemcpyAsync(finals_.get(), numbering.label.data(), finals_.bytes(), cudaMemcpyHostToDevice, s_));
      }
      numbering_ = &numbering;
    }
    const std::int64_t layer = nx_ * ny_;
    if (out32.data) {
      if (base != 0 || hi > lo)  // else every label is final already (the first band, nothing merged in it)
        renumber(labels_.get(), labels_.get(), static_cast<std::uint64_t>(layer * nz_), base, lo, hi);
      WINNOW_CUDA_CHECK(cudaStreamSynchronize(s_));
      times_.compute += since(t);
      t = clock::now();
      copy_out(out32, labels_.get(), 0, nz_);
      times_.transfers += since(t);
      return;
    }
    const std::int64_t slab = std::max<std::int64_t>(1, (std::int64_t{1} << 24) / layer);
    const auto slab_voxels = static_cast<std::size_t>(std::min(slab, nz_) * layer);
    if (slab_.size() < slab_voxels)
      slab_ = DeviceBuffer<std::uint64_t>(), slab_ = DeviceBuffer<std::uint64_t>(slab_voxels, s_);
    for (std::int64_t z0 = 0; z0 < nz_; z0 += slab) {
      const std::int64_t d = std::min(slab, nz_ - z0);
      t = clock::now();
      renumber(labels_.get() + z0 * layer, slab_.get(), static_cast<std::uint64_t>(d * layer), base, lo, hi);
      WINNOW_CUDA_CHECK(cudaStreamSynchronize(s_));
      times_.compute += since(t);
      t = clock::now();
      copy_out(out64, slab_.get(), z0, d);
      times_.transfers += since(t);
    }
  }

 private:
  using clock = std::chrono::steady_clock;
  static double since(clock::time_point t) {
    return std::chrono::duration<double, std::milli>(clock::now() - t).count();
  }

  template <class OutT>
  void renumber(const std::uint32_t* in, OutT* out, std::uint64_t n, std::uint64_t base, std::size_t lo,
                std::size_t hi) {
    renumber_band_kernel<OutT>
        <<<resident_blocks((n + kThreads - 1) / kThreads, renumber_band_kernel<OutT>), kThreads, 0, s_>>>(
            in, out, n, base, merged_.get(), finals_.get(), lo, hi);
    WINNOW_CUDA_CHECK_LAUNCH();
  }

  /// Layers [z0, z0 + d) of `out` from `from` (d layers, contiguous).
  template <class OutT>
  void copy_out(const VolumeView<OutT>& out, const OutT* from, std::int64_t z0, std::int64_t d) {
    const std::size_t row = static_cast<std::size_t>(nx_) * sizeof(OutT);
    if (out.slice_stride == out.row_stride * out.ny)
      copy_to_host(out.row(0, z0), static_cast<std::size_t>(out.row_stride) * sizeof(OutT), from, row, row,
                   static_cast<std::size_t>(ny_ * d), s_);
    else
      for (std::int64_t z = 0; z < d; ++z)
        copy_to_host(out.row(0, z0 + z), static_cast<std::size_t>(out.row_stride) * sizeof(OutT),
                     from + static_cast<std::size_t>(z * nx_ * ny_), row, row, static_cast<std::size_t>(ny_), s_);
  }

  StageTimes& times_;
  cudaStream_t s_ = nullptr;
  DeviceBuffer<T> vol_;
  DeviceBuffer<std::uint32_t> labels_, d_count_;
  DeviceBuffer<char> temp_;
  DeviceBuffer<std::uint64_t> merged_, finals_, slab_;
  const SeamNumbering* numbering_ = nullptr;
  std::int64_t nx_ = 0, ny_ = 0, nz_ = 0;
};

/// One call: the whole request on the device at once (fewer than 2^32 voxels, 32-bit labels), after
/// layers_per_call has started the device.
template <class T>
std::uint64_t label_volume_once(const VolumeLabelRequest<T>& req, std::vector<VolumeComponentSums>* sums) {
  StageTimes times;
  DeviceBand<T> device(times);
  const std::uint64_t count = device.label(req.volume, req.connectivity, req.multilabel, sums);
  // The labels as they are: no id joins another (an empty numbering, base 0).
  const SeamNumbering none;
  device.write_labels(0, none, 0, 0, req.labels32, VolumeView<std::uint64_t>());
  if (req.times) *req.times += times;
  return count;
}

/// The most layers of nx x ny voxels one call takes: fewer than 2^32 voxels (the keys), and what
/// the device's free memory holds (input, labels, parents and a margin for the rest: 9 bytes a
/// voxel besides the input's). Throws Error when not even one layer fits.
std::int64_t layers_per_call(std::int64_t nx, std::int64_t ny, std::size_t voxel_bytes, StageTimes* times) {
  const auto layer = static_cast<std::uint64_t>(nx) * static_cast<std::uint64_t>(ny);
  const std::uint64_t by_keys = static_cast<std::uint64_t>(nx) < (std::uint64_t{1} << 31) &&
                                        static_cast<std::uint64_t>(ny) < (std::uint64_t{1} << 31)
                                    ? 0xFFFFFFFFull / layer
                                    : 0;
  const auto t = std::chrono::steady_clock::now();
  WINNOW_CUDA_CHECK(cudaFree(nullptr));  // the context, if this is the process's first CUDA call
  note_device_started();
  std::size_t free_bytes = 0, total_bytes = 0;
  WINNOW_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (times)
    times->device_setup += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  const std::uint64_t by_memory =
      static_cast<std::uint64_t>(0.9 * static_cast<double>(free_bytes)) / (layer * (voxel_bytes + 9));
  const std::uint64_t layers = std::min(by_keys, by_memory);
  if (layers == 0)
    throw Error("label: a layer of " + std::to_string(nx) + "x" + std::to_string(ny) +
                " voxels is beyond one CUDA call (" +
                (by_keys == 0 ? std::string("fewer than 2^32 voxels, sides below 2^31")
                              : std::to_string(free_bytes >> 20) + " MiB of device memory free") +
                ")");
  return static_cast<std::int64_t>(layers);  // at most 2^32 - 1
}

}  // namespace

template <class T>
std::uint64_t label_volume(const VolumeLabelRequest<T>& req, std::vector<VolumeComponentSums>* sums,
                           std::int64_t band_layers) {
  if (sums) sums->clear();
  const VolumeView<const T>& v = req.volume;
  if (v.empty()) return 0;
  const std::int64_t max_layers = layers_per_call(v.nx, v.ny, sizeof(T), req.times);
  band_layers = band_layers > 0 ? std::min(band_layers, max_layers) : max_layers;
  if (v.nz > band_layers || !req.labels32.data) {  // beyond one call, or 64-bit labels: two passes (label/bands.cpp)
    StageTimes times;
    DeviceBand<T> device(times);
    const std::uint64_t count = label_volume_in_passes<T>(req, sums, band_layers, device);
    if (req.times) *req.times += times;
    return count;
  }
  return label_volume_once(req, sums);
}

template std::uint64_t label_volume<std::uint8_t>(const VolumeLabelRequest<std::uint8_t>&,
                                                  std::vector<VolumeComponentSums>*, std::int64_t);
template std::uint64_t label_volume<std::uint16_t>(const VolumeLabelRequest<std::uint16_t>&,
                                                   std::vector<VolumeComponentSums>*, std::int64_t);
template std::uint64_t label_volume<std::uint32_t>(const VolumeLabelRequest<std::uint32_t>&,
                                                   std::vector<VolumeComponentSums>*, std::int64_t);
template std::uint64_t label_volume<std::uint64_t>(const VolumeLabelRequest<std::uint64_t>&,
                                                   std::vector<VolumeComponentSums>*, std::int64_t);

}  // namespace winnow::detail::cuda

namespace winnow::cuda {

template <VolumeVoxel T>
void label_volume(void* d_temp, std::size_t& temp_bytes, VolumeView<const T> volume, std::uint32_t* d_labels,
                  std::uint32_t* d_count, RawVolumeComponentStats* d_stats, std::uint64_t stats_capacity,
                  const DeviceLabelOptions& options, cudaStream_t stream) {
  detail::cuda::device_label_volume(d_temp, temp_bytes, volume, d_labels, d_count, d_stats, stats_capacity, options,
                                    stream);
}
#define WINNOW_INSTANTIATE(T)                                                                             \
  template void label_volume<T>(void*, std::size_t&, VolumeView<const T>, std::uint32_t*, std::uint32_t*, \
                                RawVolumeComponentStats*, std::uint64_t, const DeviceLabelOptions&, cudaStream_t);
WINNOW_INSTANTIATE(std::uint8_t)
WINNOW_INSTANTIATE(std::uint16_t)
WINNOW_INSTANTIATE(std::uint32_t)
WINNOW_INSTANTIATE(std::uint64_t)
#undef WINNOW_INSTANTIATE

}  // namespace winnow::cuda
