// Device voxel compaction (winnow/cuda/voxels.hpp): the selection as one predicate in the voxel's
// own type (common/level_comparison.hpp, the rule the host API and the volume thresholds share)
// and the compaction's index form on the device. Host code: the kernels are the compaction's.
#include "winnow/cuda/voxels.hpp"

#include <cmath>

#include "common/level_comparison.hpp"
#include "winnow/error.hpp"

namespace winnow::cuda {

template <class T>
void voxel_indices(CompactWorkspace& workspace, const T* d_volume, std::uint64_t n, const VoxelSelection& selection,
                   std::uint64_t* d_indices, std::uint64_t* d_count, cudaStream_t stream) {
  if (std::isnan(selection.level) && selection.mode != VoxelMode::nonzero) throw InputError("voxels: the level is NaN");
  Predicate pred = nonzero();
  if (selection.mode == VoxelMode::nonzero) {
    pred = where(CompareOp::not_equal, T{0});
  } else {
    const detail::LevelComparison<T> c =
        detail::level_comparison<T>(selection.level, selection.mode == VoxelMode::above);
    pred = where(c.op, c.threshold);
  }
  compact_indices<T, std::uint64_t>(workspace, d_volume, n, d_indices, d_count, pred,
                                    CompactOptions{.order = Order::stable}, stream);
}

template void voxel_indices<std::uint8_t>(CompactWorkspace&, const std::uint8_t*, std::uint64_t, const VoxelSelection&,
                                          std::uint64_t*, std::uint64_t*, cudaStream_t);
template void voxel_indices<std::uint16_t>(CompactWorkspace&, const std::uint16_t*, std::uint64_t,
                                           const VoxelSelection&, std::uint64_t*, std::uint64_t*, cudaStream_t);
template void voxel_indices<std::int32_t>(CompactWorkspace&, const std::int32_t*, std::uint64_t, const VoxelSelection&,
                                          std::uint64_t*, std::uint64_t*, cudaStream_t);
template void voxel_indices<std::uint32_t>(CompactWorkspace&, const std::uint32_t*, std::uint64_t,
                                           const VoxelSelection&, std::uint64_t*, std::uint64_t*, cudaStream_t);
template void voxel_indices<std::int64_t>(CompactWorkspace&, const std::int64_t*, std::uint64_t, const VoxelSelection&,
                                          std::uint64_t*, std::uint64_t*, cudaStream_t);
template void voxel_indices<std::uint64_t>(CompactWorkspace&, const std::uint64_t*, std::uint64_t,
                                           const VoxelSelection&, std::uint64_t*, std::uint64_t*, cudaStream_t);
template void voxel_indices<float>(CompactWorkspace&, const float*, std::uint64_t, const VoxelSelection&,
                                   std::uint64_t*, std::uint64_t*, cudaStream_t);
template void voxel_indices<double>(CompactWorkspace&, const double*, std::uint64_t, const VoxelSelection&,
                                    std::uint64_t*, std::uint64_t*, cudaStream_t);

}  // namespace winnow::cuda
