// Stream compaction instantiated for the element types of 4 bytes (one unit per size
// group, so the library's CUDA units compile in parallel). See kernels/compact_kernels.cuh.
#include "compact/cuda/compact_impl.cuh"

WINNOW_CUDA_COMPACT_INSTANTIATE(std::int32_t)
WINNOW_CUDA_COMPACT_INSTANTIATE(std::uint32_t)
WINNOW_CUDA_COMPACT_INSTANTIATE(float)
WINNOW_CUDA_COMPACT_INSTANTIATE(::winnow::Rgba8)
