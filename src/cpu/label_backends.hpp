#pragma once
// The contract between the labeling front end (cpu/label_dispatch.cpp) and each backend.
#include <cstdint>
#include <vector>

#include "winnow/label.hpp"

namespace winnow::detail {

/// One labeling, host memory in and out. The backend writes labels 1..N in raster order of each
/// component's first pixel (before any min_area filtering, which the front end does).
struct LabelRequest {
  ImageView<const std::uint8_t> mask;
  ImageView<std::uint32_t> labels;  ///< same size as mask
  int connectivity = 8;
  bool want_stats = true;
  LabelAlgorithm algorithm = LabelAlgorithm::tile_merge;  ///< never automatic here
};

namespace cpu {
/// Algorithms: tile_merge, row_stripes. Returns N (throws Error when N >= 2^32).
std::uint64_t label(const LabelRequest& request, std::vector<ComponentStats>* stats);
/// Renumbers labels through `map` (map[old] = new, map[0] = 0), in parallel.
void remap_labels(ImageView<std::uint32_t> labels, const std::vector<std::uint32_t>& map);
}  // namespace cpu

namespace cuda {
/// Copies in, labels on the device, copies labels (and stats) out; synchronises.
/// Algorithms: tile_merge, block_union_find.
std::uint64_t label(const LabelRequest& request, std::vector<ComponentStats>* stats);
LabelAlgorithm automatic_algorithm(std::int64_t width, std::int64_t height, int connectivity);
}  // namespace cuda

}  // namespace winnow::detail
