// Stream compaction instantiated for the element types of 1 and 2 bytes (one unit per size
// group, so the library's CUDA units compile in parallel). See kernels/compact_kernels.cuh.
#include "compact/cuda/compact_impl.cuh"

WINNOW_CUDA_COMPACT_INSTANTIATE(std::uint8_t)
WINNOW_CUDA_COMPACT_INSTANTIATE(std::uint16_t)
