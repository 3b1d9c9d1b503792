// CUDA connected-component labeling: union-find on the device with keys that order like raster
// indices, sequential numbering by a scan over "first pixels", statistics by aggregated atomics.
//
// Algorithms
//   block_union_find (BUF; Allegretti, Bolelli, Grana, "Optimized Block-Based Algorithms to Label
//     Connected Components on GPUs", IEEE TPDS 2019): with 8-connectivity the image is cut into
//     2x2 blocks -- all foreground pixels of a block are 8-connected -- and union-find runs over
//     blocks (a quarter of the nodes). With 4-connectivity the pixels of a 2x2 block need not be
//     connected, so the nodes are pixels (Playne & Hawick 2018). Kernels: init, merge (atomicMin
//     union of a node with its backward neighbours), compress (every node -> its root).
//   tile_merge (the write-up's method): one thread block per tile labels the tile in shared memory,
//     writes each node's tile-local root as a global key, then one kernel walks only the tile
//     perimeters and unites across tile borders. 8-connectivity: 64x64-pixel tiles of 2x2 blocks,
//     ballot-built horizontal runs swept down 4-row strips, per-tile statistics
//     (tile_merge8.cu), programmatic dependent launches; no
//     compress pass. 4-connectivity: 32x32-pixel tiles of pixels (ballot-built runs, halving
//     finds, pointer jumping), the border pass, a flatten of the linked local roots; roots
//     counted as on 2x2 blocks, no compress pass (tile_merge4.cu).
//
// Keys. A node's value is a key (y << shift) | x of a foreground pixel, shift = ceil(log2 W), so
// keys order exactly like raster indices and decode to their node with shifts. A block's own key
// is its first foreground pixel in raster order, and unions link the larger root key under the
// smaller (atomicMin), so every component's root is the node holding its raster-first pixel.
//
// Numbering. A root is "first" in pixel row y when its key lies in row y. Counting those per row
// chunk (tile_merge: per row and tile column, counted by the tile pass, linked
// roots subtracted by the border pass), an exclusive scan (CUB), and a block or warp ranking give
// every root its number 1..N in raster order -- the numbering of OpenCV's SAUF and scipy --
// written into the root node with the high bit set (keys stay below 2^31).
//
// Labels and statistics. tile_merge 8-connectivity: the statistics are complete before the label
// pass -- components inside one tile are copied from the tile pass's records when numbered, the
// tile-local parts of the others are added by merge_stats -- and the label pass only writes
// labels (vectorised). Other paths: the final kernel gives each pixel its root's number and
// accumulates statistics: per-thread runs, warp aggregation (__match_any_sync +
// __reduce_*_sync on values relative to the block origin), and one shared accumulator per thread
// block for its dominant label, so a giant component costs a few atomics per 4096 pixels.
//
// Complexity: O(W*H) work; union-find trees are shallow in practice (near-linear).
// Limits: one call takes height * next_pow2(width) <= 2^31 (32-bit keys); the host API labels
// larger images in bands of rows and merges them on the host (label/bands.cpp).
//
// Files: this one plans a call, runs the passes and holds the host and device APIs;
// union_find.cuh (keys, union-find, flatten) and plan.cuh (plan, launches) are shared by
// block_union_find.cu, tile_merge4.cu and tile_merge8.cu; numbering.cuh has the label pass.
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/cuda/check.cuh"
#include "common/cuda/runtime.hpp"
#include "common/cuda/staging.cuh"
#include "label/backends.hpp"
#include "label/cuda/numbering.cuh"
#include "label/cuda/plan.cuh"
#include "winnow/cuda/label.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cuda {
namespace {

std::size_t align256(std::size_t v) { return (v + 255) & ~std::size_t{255}; }

/// Keys are (y << shift) | x with shift = ceil(log2 W); one call takes the rows whose keys stay
/// below 2^31.
int key_shift(std::int64_t W) {
  int shift = 0;
  while ((std::int64_t{1} << shift) < W) ++shift;
  return shift;
}
std::int64_t rows_per_call(std::int64_t W) { return (std::int64_t{1} << 31) >> key_shift(W); }

// `o.connectivity` is resolved (4 or 8): the front end or the device API did it.
Plan make_plan(std::int64_t W, std::int64_t H, std::int64_t mstride, const winnow::cuda::DeviceLabelOptions& o) {
  if (W <= 0 || H <= 0) throw InputError("label: empty image");
  const int shift = key_shift(W);
  if (H > rows_per_call(W))
    throw InputError("label: " + std::to_string(W) + "x" + std::to_string(H) +
                     " is too large for the CUDA backend (height * next_pow2(width) must be <= 2^31)");
  Plan p;
  p.conn = o.connectivity;
  p.algorithm = o.algorithm == LabelAlgorithm::automatic ? automatic_algorithm(W, H, o.connectivity) : o.algorithm;
  if (p.algorithm != LabelAlgorithm::block_union_find && p.algorithm != LabelAlgorithm::tile_merge)
    throw BackendError("labeling algorithm '" + std::string(to_string(p.algorithm)) +
                       "' is not available on the cuda backend");
  p.B = p.conn == 8 ? 2 : 1;
  p.local2 = p.conn == 8 && p.algorithm == LabelAlgorithm::tile_merge;
  p.local1 = p.conn == 4 && p.algorithm == LabelAlgorithm::tile_merge;
  p.g.W = static_cast<int>(W);
  p.g.H = static_cast<int>(H);
  p.g.mstride = mstride;
  p.g.shift = shift;
  p.g.bw = static_cast<int>((W + p.B - 1) / p.B);
  p.g.bh = static_cast<int>((H + p.B - 1) / p.B);
  p.nodes = static_cast<std::size_t>(p.g.bw) * static_cast<std::size_t>(p.g.bh);
  p.nchunks = (p.g.bw + kChunk - 1) / kChunk;
  // counts per (pixel row, chunk of kChunk nodes); local2, local1: per (pixel row, tile column)
  const int count_cols = p.local2 ? (p.g.bw + kTB - 1) / kTB : p.local1 ? (p.g.W + kTile - 1) / kTile : p.nchunks;
  p.ncounts = static_cast<std::size_t>(count_cols) * static_cast<std::size_t>(H);
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, p.scan_bytes, static_cast<std::uint32_t*>(nullptr),
                                                  static_cast<std::uint32_t*>(nullptr), p.ncounts));
  p.off_P = 0;
  p.off_S = align256(p.off_P + p.nodes * 4);
  if (p.local2)
    p.ntiles = static_cast<std::size_t>((p.g.bw + kTB - 1) / kTB) * static_cast<std::size_t>((p.g.bh + kTB - 1) / kTB);
  p.off_xlist = align256(p.off_S + (p.local2 ? p.nodes * sizeof(uint4) : 0));
  p.off_xcount = align256(p.off_xlist + p.ntiles * kXCap * 4);
  p.off_counts = align256(p.off_xcount + p.ntiles * 4);
  p.off_offsets = align256(p.off_counts + p.ncounts * 4);
  p.off_scan = align256(p.off_offsets + p.ncounts * 4);
  p.total = align256(p.off_scan + p.scan_bytes);
  return p;
}

// Everything up to and including the numbering (N in *d_count). With st (capacity cap), the
// statistics records of labels <= cap are initialised, or written in full where final already.
void run_core(const Plan& p, void* d_temp, const std::uint8_t* d_mask, std::uint32_t* d_count, RawComponentStats* st,
              std::uint64_t cap, cudaStream_t s) {
  const Scratch t(p, d_temp);
  if (!cap) st = nullptr;
  if (p.local2) link_tile_merge8(p, t, d_mask, st != nullptr, s);
  else if (p.local1) link_tile_merge4(p, t, d_mask, s);
  else link_block_union_find(p, t, d_mask, s);
  std::size_t scan_bytes = p.scan_bytes;
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(static_cast<char*>(d_temp) + p.off_scan, scan_bytes, t.counts,
                                                  t.offsets, p.ncounts, s));
  if (p.local2) launch_dependent(total_kernel, dim3(1), dim3(1), s, t.counts, t.offsets, p.ncounts, d_count);
  else {
    total_kernel<<<1, 1, 0, s>>>(t.counts, t.offsets, p.ncounts, d_count);
    WINNOW_CUDA_CHECK_LAUNCH();
  }
  if (p.local2) number_tile_merge8(p, t, st, cap, s);
  else if (p.local1) number_tile_merge4(p, t, st, cap, s);
  else number_block_union_find(p, t, st, cap, s);
}

// Labels (and statistics of labels <= cap when d_stats, whose records run_core prepared).
void run_final(const Plan& p, void* d_temp, const std::uint8_t* d_mask, std::uint32_t* d_labels,
               RawComponentStats* d_stats, std::uint64_t cap, cudaStream_t s) {
  auto* P = reinterpret_cast<const std::uint32_t*>(static_cast<const char*>(d_temp) + p.off_P);
  const Geo g = p.g;
  if (!cap) d_stats = nullptr;
  if (p.local2) d_stats = nullptr;  // complete after run_core (assign + merge_stats)
  const bool vec =
      p.B == 2 && g.W % 4 == 0 && g.mstride % 4 == 0 &&
      ((reinterpret_cast<std::uintptr_t>(d_mask) & 3u) | (reinterpret_cast<std::uintptr_t>(d_labels) & 15u)) == 0;
  if (vec && !d_stats) {
    const dim3 lg((g.bw / 2 + 255) / 256, std::min(g.bh, kMaxGridY));
    if (p.local2) launch_dependent(labels2_kernel, lg, dim3(256), s, d_mask, P, d_labels, g);
    else labels2_kernel<<<lg, 256, 0, s>>>(d_mask, P, d_labels, g);
  } else if (p.B == 2) {
    constexpr int K = 4;
    const dim3 fg_((g.bw + 256 * K - 1) / (256 * K), std::min(g.bh, kMaxGridY));
    final_kernel<2, K><<<fg_, 256, 0, s>>>(d_mask, P, d_labels, g, d_stats, cap);
  } else {
    constexpr int K = 8;
    const dim3 fg_((g.bw + 256 * K - 1) / (256 * K), std::min(g.bh, kMaxGridY));
    final_kernel<1, K><<<fg_, 256, 0, s>>>(d_mask, P, d_labels, g, d_stats, cap);
  }
  WINNOW_CUDA_CHECK_LAUNCH();
}

}  // namespace

LabelAlgorithm automatic_algorithm(std::int64_t, std::int64_t, int connectivity) {
  (void)connectivity;  // tile_merge beats block_union_find at both connectivities (bench/RESULTS.md)
  return LabelAlgorithm::tile_merge;
}

namespace {
/// One device call on an image within rows_per_call; statistics in image rows offset by `top`.
std::uint64_t label_once(const LabelRequest& req, std::int64_t top, std::vector<ComponentSums>* stats) {
  const std::int64_t W = req.mask.width, H = req.mask.height;
  if (stats) stats->clear();
  if (W <= 0 || H <= 0) return 0;
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t) { return std::chrono::duration<double, std::milli>(clock::now() - t).count(); };
  StageTimes times;
  auto t = clock::now();
  const Plan p = make_plan(W, H, W, {.connectivity = req.connectivity, .algorithm = req.algorithm});
  WINNOW_CUDA_CHECK(cudaFree(nullptr));  // the context, if this is the process's first CUDA call
  note_device_started();
  cudaStream_t s = nullptr;
  const auto n = static_cast<std::size_t>(W * H);
  DeviceBuffer<std::uint8_t> d_mask(n, s);
  DeviceBuffer<std::uint32_t> d_labels(n, s);
  DeviceBuffer<char> d_temp(p.total, s);
  DeviceBuffer<std::uint32_t> d_count(1, s);
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  times.device_setup = since(t);
  t = clock::now();
  copy_to_device(d_mask.get(), W, req.mask.data, req.mask.stride, W, H, s);
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  times.transfers = since(t);
  t = clock::now();
  run_core(p, d_temp.get(), d_mask.get(), d_count.get(), nullptr, 0, s);
  std::uint32_t count = 0;
  // Statistics need the count to size their records; labels alone do not wait for it here.
  if (stats) {
    WINNOW_CUDA_CHECK(cudaMemcpyAsync(&count, d_count.get(), 4, cudaMemcpyDeviceToHost, s));
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  DeviceBuffer<RawComponentStats> d_stats(stats && count ? count : 0, s);
  // With statistics the numbering pass runs again, now sized: it initialises (or fills) the records.
  if (d_stats.size()) run_core(p, d_temp.get(), d_mask.get(), d_count.get(), d_stats.get(), d_stats.size(), s);
  run_final(p, d_temp.get(), d_mask.get(), d_labels.get(), d_stats.get(), d_stats.size(), s);
  if (!stats) WINNOW_CUDA_CHECK(cudaMemcpyAsync(&count, d_count.get(), 4, cudaMemcpyDeviceToHost, s));
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  times.compute = since(t);
  t = clock::now();
  copy_to_host(req.labels.data, req.labels.stride * 4, d_labels.get(), W * 4, W * 4, H, s);
  if (stats && count) {
    std::vector<RawComponentStats> raw(count);
    copy_to_host(raw.data(), count * sizeof(RawComponentStats), d_stats.get(), count * sizeof(RawComponentStats),
                 count * sizeof(RawComponentStats), 1, s);
    stats->resize(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      const RawComponentStats& r = raw[i];
      ComponentSums& m = (*stats)[i];
      m.area = r.area;
      m.sum_x = r.sum_x;
      m.sum_y = r.sum_y + static_cast<std::uint64_t>(top) * r.area;
      m.left = r.left, m.right = r.right;
      m.top = r.top + top, m.bottom = r.bottom + top;
    }
  }
  WINNOW_CUDA_CHECK(cudaStreamSynchronize(s));
  times.transfers += since(t);
  if (req.times) *req.times += times;
  return count;
}
}  // namespace

std::uint64_t label(const LabelRequest& req, std::vector<ComponentStats>* stats, std::int64_t band_rows) {
  const std::int64_t W = req.mask.width, H = req.mask.height;
  if (stats) stats->clear();
  if (W <= 0 || H <= 0) return 0;
  const std::int64_t max_rows = rows_per_call(W);
  if (max_rows < 1) throw InputError("label: a width of " + std::to_string(W) + " is too large for the CUDA backend");
  band_rows = band_rows > 0 ? std::min(band_rows, max_rows) : max_rows;
  if (H > band_rows)  // beyond one call's keys: bands, merged on the host (label/bands.cpp)
    return label_in_bands(req, stats, band_rows,
                          [](const LabelRequest& band, std::int64_t top, std::vector<ComponentSums>* band_stats) {
                            return label_once(band, top, band_stats);
                          });
  std::vector<ComponentSums> parts;
  const std::uint64_t count = label_once(req, 0, stats ? &parts : nullptr);
  if (stats) {
    stats->resize(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) (*stats)[i] = to_component_stats(parts[i]);
  }
  return count;
}

}  // namespace winnow::detail::cuda

namespace winnow::cuda {

void label(void* d_temp, std::size_t& temp_bytes, ImageView<const std::uint8_t> mask, std::uint32_t* d_labels,
           std::uint32_t* d_count, RawComponentStats* d_stats, std::uint64_t stats_capacity,
           const DeviceLabelOptions& options, cudaStream_t stream) {
  if (mask.stride < mask.width) throw InputError("winnow::cuda::label: mask stride smaller than the width");
  DeviceLabelOptions resolved = options;
  resolved.connectivity = resolve_connectivity(options.connectivity, 2);
  const detail::cuda::Plan p = detail::cuda::make_plan(mask.width, mask.height, mask.stride, resolved);
  const std::uint8_t* d_mask = mask.data;
  if (!d_temp) {
    temp_bytes = p.total;
    return;
  }
  if (temp_bytes < p.total) throw InputError("winnow::cuda::label: temporary storage too small");
  detail::cuda::run_core(p, d_temp, d_mask, d_count, d_stats, stats_capacity, stream);
  detail::cuda::run_final(p, d_temp, d_mask, d_labels, d_stats, stats_capacity, stream);
}

}  // namespace winnow::cuda
