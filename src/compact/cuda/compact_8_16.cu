// Stream compaction instantiated for the element types of 8 and 16 bytes (one unit per size
// group, so the library's CUDA units compile in parallel). See kernels/compact_kernels.cuh.
#include "compact/cuda/compact_impl.cuh"

WINNOW_CUDA_COMPACT_INSTANTIATE(std::int64_t)
WINNOW_CUDA_COMPACT_INSTANTIATE(std::uint64_t)
WINNOW_CUDA_COMPACT_INSTANTIATE(double)
WINNOW_CUDA_COMPACT_INSTANTIATE(::winnow::RgbaF32)
