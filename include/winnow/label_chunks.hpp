#pragma once
/// @file label_chunks.hpp
/// What labeling a volume chunk by chunk needs from each chunk's labels: per label, its first
/// voxel, its voxel count and, on request, its bounding box and exact coordinate sums
/// (chunk_label_summary); the pairs of labels that touch across the border of two
/// neighbouring chunks (chunk_border_pairs); and each chunk's final labels from its table
/// (relabel_chunk).
///
/// A volume too large for one call is labelled in chunks, each chunk once, and the chunks'
/// labels are joined across their faces afterwards (the Python package's winnow.dask does it).
/// For the joined result to be numbered as one call on the whole volume numbers it (raster order
/// of each component's first voxel), the merge needs where each chunk label starts; for exact
/// statistics and the min_area / largest_k filters across chunks it needs counts, boxes and
/// integer coordinate sums that add up across chunks. One pass over a chunk's labels gives all of
/// them. The union of the chunk labels that touch across chunk borders (faces, and for 18- and
/// 26-connectivity edges and corners too) is the rest of the join.
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "winnow/volume.hpp"

namespace winnow {

struct ChunkSummaryOptions {
  /// Fill ChunkLabelSummary::voxels (else first voxels only: the fastest pass).
  bool counts = true;
  /// Also fill ChunkLabelSummary::lower, upper and sums (and voxels, whatever `counts` says).
  bool boxes_and_sums = false;
};

/// Per-label facts of a labelled chunk. Every array is indexed by label, 0..count: row 0 is the
/// background (the voxels labelled 0). Axes are in array order (z, y, x); coordinates are local
/// to the chunk (voxel (x, y, z) of the view), flat indices are (z * ny + y) * nx + x.
struct ChunkLabelSummary {
  std::uint64_t count = 0;  ///< N, the chunk's largest label
  /// [N + 1] flat index of the label's first voxel in raster order (first[0] = -1: the
  /// background's is not looked for).
  std::vector<std::int64_t> first;
  std::vector<std::uint64_t> voxels;  ///< [N + 1] voxel counts (empty unless counts or boxes_and_sums)
  /// [N + 1][3] inclusive bounding box, z y x; a label without voxels has lower > upper
  /// (INT64_MAX and -1). Empty unless boxes_and_sums.
  std::vector<std::int64_t> lower, upper;
  /// [N + 1][3] sums of the voxels' z, y and x coordinates (exact). Empty unless boxes_and_sums.
  std::vector<std::uint64_t> sums;
};

/// The summary of `labels`, a chunk's labels 0..count numbered as winnow::label numbers them
/// (label k's first voxel in raster order comes after label k - 1's; every label 1..count
/// present). Any strides. One pass over the voxels: first voxels alone a block of voxels at a
/// time, counts, boxes and sums by runs of equal labels along x.
/// Throws InputError when a label exceeds `count`, when labels are not numbered in raster order
/// of their first voxels, or when a label in 1..count is missing. Instantiated for std::uint32_t
/// and std::uint64_t.
template <class L>
ChunkLabelSummary chunk_label_summary(VolumeView<const L> labels, std::uint64_t count,
                                      const ChunkSummaryOptions& options = {});
template <class L>
requires(!std::is_const_v<L>) ChunkLabelSummary
    chunk_label_summary(VolumeView<L> labels, std::uint64_t count, const ChunkSummaryOptions& options = {}) {
  return chunk_label_summary<L>(VolumeView<const L>(labels), count, options);
}

/// The borders of two neighbouring chunks that face each other: `near` from the first chunk,
/// `far` from the second, of the same size. The chunks are neighbours along the axes where
/// `across` is true (one axis: they share a face; two: an edge; three: a corner), and each border
/// is one voxel thick along those axes (the first chunk's last layer, the second's first); along
/// the other axes voxel i of `near` sits beside voxel i of `far`. Axes are z, y, x.
struct ChunkBorder {
  bool across[3] = {false, false, false};
  /// 6, 18 or 26: which voxels touch: near voxel p and far voxel q touch when q - p (in the
  /// borders' shared coordinates, a step of 1 along every across axis) moves along at most 1, 2
  /// or 3 axes; so 18 and 26 also join diagonal neighbours across a face, and an edge or corner
  /// border joins nothing under 6 (nor a corner under 18).
  int connectivity = 26;
};

/// The distinct pairs (near label, far label) of touching voxels that are both labelled (non-zero)
/// and, when values are given (multi-label input), hold equal values: the equivalences a chunked
/// labeling unites. Returned flat, [near0, far0, near1, far1, ...], sorted. `near_values` and
/// `far_values` are both empty views (binary) or both the borders' input values, compared as
/// integers of their width (floating-point values by their bits: equal non-zero floats are equal
/// bits). Throws InputError on borders of different sizes, a bad connectivity or no across axis.
/// Instantiated for labels std::uint32_t, std::uint64_t and values std::uint8_t ... std::uint64_t.
template <class L, class V>
std::vector<std::uint64_t> chunk_border_pairs(VolumeView<const L> near, VolumeView<const L> far,
                                              VolumeView<const V> near_values, VolumeView<const V> far_values,
                                              const ChunkBorder& border);

/// A chunk's final labels: out[v] = table[labels[v]] for every voxel, `out` of the same size as
/// `labels` (any strides of each). The last step of a chunked labeling, once the merge has given
/// every provisional label of the chunk its number in the whole volume. One pass, single-threaded
/// (a chunked labeling runs many chunks at once). Throws InputError when the sizes differ or a
/// label is not below table.size() (then `out` is partly written). Instantiated for labels and
/// table entries std::uint32_t and std::uint64_t (each with each).
template <class L, class T>
void relabel_chunk(VolumeView<const L> labels, std::span<const T> table, VolumeView<T> out);

}  // namespace winnow
