// What labeling a volume chunk by chunk (winnow.dask in the Python package) needs from each
// chunk's labels: the per-label summary (for every label of one chunk, its first voxel in raster
// order, its voxel count and, on request, its bounding box and the exact sums of its voxels'
// coordinates), and the pairs of labels that touch across the border of two neighbouring chunks.
//
// Why these: a chunked labeling labels each chunk once, unites the chunk labels that touch across
// chunk faces, and numbers the components as one call on the whole volume would, in raster order
// of each component's first voxel. A chunk's labels are numbered in raster order of their first
// voxels too (winnow::label's contract), so the first voxel of label k is where the running
// maximum of the labels in raster order first reaches k; a component's first voxel is the
// earliest of its parts' in the whole volume. Counts decide min_area and largest_k; boxes take
// minima and maxima across chunks; integer coordinate sums add exactly across chunks (a centroid
// carried as a double would not), so the joined centroids equal the whole-volume call's bit for
// bit.
//
// Algorithm: one pass over the rows. First voxels alone (no counts asked for: a labeling without
// min_area, largest_k or statistics): the labels are compared a block of 16 at a time, and only a
// block whose largest label exceeds the running maximum is looked at voxel by voxel, so the pass
// costs about a read of the labels. Counts, boxes and sums: each row is cut into runs of equal
// labels (their starts from word-wide compares of each voxel with its left neighbour, the bit
// row's set bits), and a label's runs in a row add up its count (their lengths), box (their ends)
// and sums (z and y times the count, the x sums arithmetic series) in registers, written to the
// label's entry once per stretch of the row (the background's and the last foreground label's
// stretches are gathered side by side). Either
// way the running maximum checks the numbering: a label above it must be the next one (else the
// labels are not in raster order) and nothing may exceed `count`.
//
// Complexity: O(voxels) time, one sequential read; O(count) memory (one, two or eight 64-bit words
// per label). Single-threaded: chunks are small and a chunked labeling runs many at once.
//
// Output contract: arrays indexed by label 0..count, row 0 the background's (its first voxel is
// not looked for: first[0] = -1); coordinates local to the chunk, axes z, y, x; an empty box
// (lower > upper) for a label without voxels (only the background can be one).
//
// Border pairs: two neighbouring chunks touch through a face (6 neighbours of a chunk), an edge
// (12) or a corner (8); which of them join voxels depends on the connectivity (6: faces only, with
// the voxel straight across; 18: faces with the in-plane diagonals too, and edges; 26: all, with
// every diagonal). The caller cuts the one-voxel-thick borders that face each other out of the
// two chunks (a plane, a line or a voxel each) and says along which axes they are neighbours;
// every allowed offset along the other axes is a shifted comparison of the two borders, and the
// pairs of non-zero labels (with equal values for multi-label input) are collected, a pair equal
// to the one before it skipped (runs of the same two labels along a row are the common case),
// then sorted and made distinct. O(border voxels x offsets (at most 9)) time, O(pairs) memory;
// the result is what the union-find across chunks takes, so distinct pairs keep it small.
//
// Relabeling: once the merge has numbered every component, each chunk's provisional labels go
// through the chunk's table, a gather per voxel with the largest label of each row checked
// against the table's size once per row. Single-threaded for the same reason as the summary.
#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <vector>

#include "label/cpu/row_bits.hpp"
#include "winnow/error.hpp"
#include "winnow/label_chunks.hpp"

namespace winnow {

namespace {

/// Labels above the running maximum, in raster order: each must be the next label (else the
/// labels are not numbered as winnow::label numbers them), and none may exceed the count.
class FirstVoxels {
 public:
  FirstVoxels(std::vector<std::int64_t>& first, std::uint64_t count) : first_(first), count_(count) {}
  std::uint64_t seen() const { return seen_; }
  void meet(std::uint64_t k, std::int64_t flat) {
    if (k <= seen_) return;
    if (k > count_)
      throw InputError("chunk_label_summary: label " + std::to_string(k) + " exceeds the count " +
                       std::to_string(count_));
    if (k != seen_ + 1)
      throw InputError("chunk_label_summary: label " + std::to_string(k) + " comes before label " +
                       std::to_string(seen_ + 1) + " (labels not numbered in raster order of their first voxels)");
    first_[k] = flat;
    seen_ = k;
  }

 private:
  std::vector<std::int64_t>& first_;
  std::uint64_t count_;
  std::uint64_t seen_ = 0;
};

constexpr std::int64_t kBlock = 16;  // voxels compared at once (the compiler's vectors)

/// First voxels only: blocks of a row whose largest label is not above the running maximum hold
/// no first voxel and are passed over (one vector maximum each).
template <class L>
void first_voxels(VolumeView<const L> labels, FirstVoxels& firsts) {
  for (std::int64_t z = 0; z < labels.nz; ++z)
    for (std::int64_t y = 0; y < labels.ny; ++y) {
      const L* row = labels.row(y, z);
      const std::int64_t row_start = (z * labels.ny + y) * labels.nx;
      std::int64_t x = 0;
      for (; x + kBlock <= labels.nx; x += kBlock) {
        L largest = 0;
        for (std::int64_t i = 0; i < kBlock; ++i) largest = std::max(largest, row[x + i]);
        if (static_cast<std::uint64_t>(largest) <= firsts.seen()) continue;
        for (std::int64_t i = 0; i < kBlock; ++i) firsts.meet(row[x + i], row_start + x + i);
      }
      for (; x < labels.nx; ++x) firsts.meet(row[x], row_start + x);
    }
}

/// Counts (and with Boxes, boxes and sums) by runs of equal labels along x. A row's run starts
/// come from word-wide compares of each voxel with its left neighbour (no loop whose exit depends
/// on the data, which mispredicts once a run when runs are short). Within a row the runs of one
/// label are added up in registers (the background's, and the last foreground label's) and go to
/// the label's entry once, when another foreground label comes or the row ends.
template <bool Boxes, class L>
void run_sums(VolumeView<const L> labels, FirstVoxels& firsts, ChunkLabelSummary& s) {
  struct Gathered {
    std::uint64_t label = 0, voxels = 0, sum_x = 0;
    std::int64_t first_x = 0, last_x = 0;
  };
  const auto add = [&s](const Gathered& g, std::int64_t y, std::int64_t z) {
    const std::uint64_t k = g.label;
    s.voxels[k] += g.voxels;
    if constexpr (Boxes) {
      std::int64_t* lo = &s.lower[k * 3];
      std::int64_t* hi = &s.upper[k * 3];
      std::uint64_t* sum = &s.sums[k * 3];
      lo[0] = std::min(lo[0], z), hi[0] = std::max(hi[0], z);
      lo[1] = std::min(lo[1], y), hi[1] = std::max(hi[1], y);
      lo[2] = std::min(lo[2], g.first_x), hi[2] = std::max(hi[2], g.last_x);
      sum[0] += static_cast<std::uint64_t>(z) * g.voxels;
      sum[1] += static_cast<std::uint64_t>(y) * g.voxels;
      sum[2] += g.sum_x;
    }
  };
  const std::int64_t nx = labels.nx;
  std::vector<std::uint32_t> starts(static_cast<std::size_t>(std::max<std::int64_t>(nx, 0)) + 1);
  for (std::int64_t z = 0; z < labels.nz; ++z)
    for (std::int64_t y = 0; y < labels.ny; ++y) {
      const L* row = labels.row(y, z);
      const std::int64_t row_start = (z * labels.ny + y) * nx;
      std::uint32_t runs = 0;
      for (std::int64_t x0 = 0; x0 < nx; x0 += 64) {
        const int n = static_cast<int>(std::min<std::int64_t>(64, nx - x0));
        const std::uint64_t inside = n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
        const std::uint64_t change = ~detail::cpu::same_as_left_bits(row, x0, n, nx) & inside;
        runs = detail::cpu::append_bit_positions(change, static_cast<std::uint32_t>(x0), starts.data(), runs);
      }
      starts[runs] = static_cast<std::uint32_t>(nx);
      Gathered gathered[2];  // [0] the background, [1] the last foreground label
      for (std::uint32_t i = 0; i < runs; ++i) {
        const std::int64_t x = starts[i], end = starts[i + 1];
        const auto k = static_cast<std::uint64_t>(row[x]);
        firsts.meet(k, row_start + x);
        Gathered& g = gathered[k != 0];
        if (g.voxels != 0 && g.label != k) {
          add(g, y, z);
          g.voxels = 0, g.sum_x = 0;
        }
        if (g.voxels == 0) g.label = k, g.first_x = x;
        const auto n = static_cast<std::uint64_t>(end - x);
        g.voxels += n;
        g.last_x = end - 1;
        if constexpr (Boxes) {
          // x + (x + 1) + ... + (end - 1); one of n and x + end - 1 is even.
          const auto ends = static_cast<std::uint64_t>(x + end - 1);
          g.sum_x += n % 2 == 0 ? n / 2 * ends : ends / 2 * n;
        }
      }
      for (const Gathered& g : gathered)
        if (g.voxels != 0) add(g, y, z);
    }
}

}  // namespace

template <class L>
ChunkLabelSummary chunk_label_summary(VolumeView<const L> labels, std::uint64_t count,
                                      const ChunkSummaryOptions& options) {
  if (labels.nx < 0 || labels.ny < 0 || labels.nz < 0) throw InputError("chunk_label_summary: negative labels size");
  if (!labels.empty() && (!labels.data || labels.row_stride < labels.nx ||
                          labels.slice_stride < labels.row_stride * (labels.ny - 1) + labels.nx))
    throw InputError("chunk_label_summary: invalid labels view (null data, or strides that overlap rows or slices)");
  if (count > static_cast<std::uint64_t>(std::max<std::int64_t>(labels.size(), 0)))
    throw InputError("chunk_label_summary: count " + std::to_string(count) + " exceeds the chunk's " +
                     std::to_string(labels.size()) + " voxels");
  ChunkLabelSummary s;
  s.count = count;
  const std::size_t rows = static_cast<std::size_t>(count) + 1;
  s.first.assign(rows, -1);
  FirstVoxels firsts(s.first, count);
  if (options.boxes_and_sums) {
    s.voxels.assign(rows, 0);
    s.lower.assign(rows * 3, std::numeric_limits<std::int64_t>::max());
    s.upper.assign(rows * 3, -1);
    s.sums.assign(rows * 3, 0);
    run_sums<true>(labels, firsts, s);
  } else if (options.counts) {
    s.voxels.assign(rows, 0);
    run_sums<false>(labels, firsts, s);
  } else {
    first_voxels(labels, firsts);
  }
  if (firsts.seen() != count)
    throw InputError("chunk_label_summary: labels 1.." + std::to_string(count) + " expected, the largest present is " +
                     std::to_string(firsts.seen()));
  return s;
}

namespace {

template <class T>
bool no_view(const VolumeView<const T>& v) {
  return v.data == nullptr && v.empty();
}

template <class A, class B>
bool same_size(const VolumeView<const A>& a, const VolumeView<const B>& b) {
  return a.nx == b.nx && a.ny == b.ny && a.nz == b.nz;
}

template <class T>
void check_border_view(const VolumeView<const T>& v, const char* what) {
  if (v.nx < 0 || v.ny < 0 || v.nz < 0) throw InputError(std::string("chunk_border_pairs: negative ") + what + " size");
  if (!v.empty() && (!v.data || v.row_stride < v.nx || v.slice_stride < v.row_stride * (v.ny - 1) + v.nx))
    throw InputError(std::string("chunk_border_pairs: invalid ") + what + " view");
}

}  // namespace

template <class L, class V>
std::vector<std::uint64_t> chunk_border_pairs(VolumeView<const L> near, VolumeView<const L> far,
                                              VolumeView<const V> near_values, VolumeView<const V> far_values,
                                              const ChunkBorder& border) {
  check_border_view(near, "near labels");
  check_border_view(far, "far labels");
  if (!same_size(near, far)) throw InputError("chunk_border_pairs: the two borders differ in size");
  const bool values = !no_view(near_values) || !no_view(far_values);
  if (values) {
    check_border_view(near_values, "near values");
    check_border_view(far_values, "far values");
    if (!same_size(near, near_values) || !same_size(near, far_values))
      throw InputError("chunk_border_pairs: the values differ in size from the labels");
  }
  const int reach = border.connectivity == 6 ? 1 : border.connectivity == 18 ? 2 : border.connectivity == 26 ? 3 : 0;
  if (reach == 0)
    throw InputError("chunk_border_pairs: connectivity must be 6, 18 or 26, not " +
                     std::to_string(border.connectivity));
  const int across = border.across[0] + border.across[1] + border.across[2];
  if (across == 0) throw InputError("chunk_border_pairs: the chunks must be neighbours along at least one axis");
  std::vector<std::array<int, 3>> offsets;  // z, y, x steps along the axes that are not across
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int step[3] = {dz, dy, dx};
        int moved = across;
        bool allowed = true;
        for (int d = 0; d < 3; ++d) {
          if (step[d] != 0 && border.across[d]) allowed = false;
          moved += step[d] != 0;
        }
        if (allowed && moved <= reach) offsets.push_back({dz, dy, dx});
      }
  // Each voxel's pair is written whether it counts or not, and the end advances only when it does
  // (both labelled, values equal, not the pair just written): no branch on random borders.
  std::vector<std::array<std::uint64_t, 2>> pairs;
  std::size_t kept = 0;
  for (const auto& [dz, dy, dx] : offsets) {
    const std::int64_t z0 = std::max<std::int64_t>(0, -dz), z1 = std::min(near.nz, near.nz - dz);
    const std::int64_t y0 = std::max<std::int64_t>(0, -dy), y1 = std::min(near.ny, near.ny - dy);
    const std::int64_t x0 = std::max<std::int64_t>(0, -dx), x1 = std::min(near.nx, near.nx - dx);
    if (x1 <= x0) continue;
    std::uint64_t last_near = 0, last_far = 0;
    for (std::int64_t z = z0; z < z1; ++z)
      for (std::int64_t y = y0; y < y1; ++y) {
        const L* a = near.row(y, z);
        const L* b = far.row(y + dy, z + dz) + dx;
        const V* va = values ? near_values.row(y, z) : nullptr;
        const V* vb = values ? far_values.row(y + dy, z + dz) + dx : nullptr;
        pairs.resize(kept + static_cast<std::size_t>(x1 - x0));
        std::array<std::uint64_t, 2>* out = pairs.data();
        for (std::int64_t x = x0; x < x1; ++x) {
          const auto la = static_cast<std::uint64_t>(a[x]), lb = static_cast<std::uint64_t>(b[x]);
          bool counts = (la != 0) & (lb != 0) & !((la == last_near) & (lb == last_far));
          if (values) counts &= va[x] == vb[x];
          out[kept] = {la, lb};
          kept += counts;
          last_near = counts ? la : last_near;
          last_far = counts ? lb : last_far;
        }
      }
  }
  pairs.resize(kept);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<std::uint64_t> flat(pairs.size() * 2);
  for (std::size_t i = 0; i < pairs.size(); ++i) flat[2 * i] = pairs[i][0], flat[2 * i + 1] = pairs[i][1];
  return flat;
}

#define WINNOW_BORDER_PAIRS(L, V)                               \
  template std::vector<std::uint64_t> chunk_border_pairs<L, V>( \
      VolumeView<const L>, VolumeView<const L>, VolumeView<const V>, VolumeView<const V>, const ChunkBorder&);
WINNOW_BORDER_PAIRS(std::uint32_t, std::uint8_t)
WINNOW_BORDER_PAIRS(std::uint32_t, std::uint16_t)
WINNOW_BORDER_PAIRS(std::uint32_t, std::uint32_t)
WINNOW_BORDER_PAIRS(std::uint32_t, std::uint64_t)
WINNOW_BORDER_PAIRS(std::uint64_t, std::uint8_t)
WINNOW_BORDER_PAIRS(std::uint64_t, std::uint16_t)
WINNOW_BORDER_PAIRS(std::uint64_t, std::uint32_t)
WINNOW_BORDER_PAIRS(std::uint64_t, std::uint64_t)
#undef WINNOW_BORDER_PAIRS

template <class L, class T>
void relabel_chunk(VolumeView<const L> labels, std::span<const T> table, VolumeView<T> out) {
  if (labels.nx != out.nx || labels.ny != out.ny || labels.nz != out.nz)
    throw InputError("relabel_chunk: the labels and the output differ in size");
  const auto entries = static_cast<std::uint64_t>(table.size());
  if (entries == 0 && !labels.empty())  // (the loop reads entry 0 before its row's check)
    throw InputError("relabel_chunk: the table is empty");
  for (std::int64_t z = 0; z < labels.nz; ++z)
    for (std::int64_t y = 0; y < labels.ny; ++y) {
      const L* in = labels.row(y, z);
      T* to = out.row(y, z);
      std::uint64_t high = 0;  // checked once a row: the loop stays a plain gather
      for (std::int64_t x = 0; x < labels.nx; ++x) {
        const auto k = static_cast<std::uint64_t>(in[x]);
        high = std::max(high, k);
        to[x] = table[k < entries ? k : 0];
      }
      if (labels.nx > 0 && high >= entries)
        throw InputError("relabel_chunk: label " + std::to_string(high) + " has no entry in a table of " +
                         std::to_string(entries));
    }
}

#define WINNOW_RELABEL(L, T) template void relabel_chunk<L, T>(VolumeView<const L>, std::span<const T>, VolumeView<T>);
WINNOW_RELABEL(std::uint32_t, std::uint32_t)
WINNOW_RELABEL(std::uint32_t, std::uint64_t)
WINNOW_RELABEL(std::uint64_t, std::uint32_t)
WINNOW_RELABEL(std::uint64_t, std::uint64_t)
#undef WINNOW_RELABEL

template ChunkLabelSummary chunk_label_summary<std::uint32_t>(VolumeView<const std::uint32_t>, std::uint64_t,
                                                              const ChunkSummaryOptions&);
template ChunkLabelSummary chunk_label_summary<std::uint64_t>(VolumeView<const std::uint64_t>, std::uint64_t,
                                                              const ChunkSummaryOptions&);

}  // namespace winnow
