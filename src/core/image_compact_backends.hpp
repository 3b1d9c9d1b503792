#pragma once
// The contract between the image-compaction front end (cpu/image_compact.cpp: compact_image)
// and the CUDA backend (cuda/image_compact.cu). Private: not installed.
#include "winnow/image.hpp"
#include "winnow/image_compact.hpp"

namespace winnow::detail::cuda {

/// Runs image compaction on the current CUDA device: copies the image in (not timed), keeps
/// pixels with pixel_key_milli(p, key) > static_cast<uint32_t>(threshold * 1000 + 1e-9),
/// packed_index in raster order, sorted_index by key (stable radix sort; empty for
/// SortOrder::none), copies the indices out. `milliseconds` is the device time of compaction +
/// sort (CUDA events), without the copies. Sets result.backend = Backend::cuda.
/// Precondition (checked by the front end): image.size() < 2^32, image not empty.
/// Throws BackendError on a CUDA error.
ImageCompactResult compact_image(ImageView<const Rgba8> image, const ImageCompactOptions& options);

}  // namespace winnow::detail::cuda
