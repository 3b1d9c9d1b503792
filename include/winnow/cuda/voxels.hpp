#pragma once
/// @file cuda/voxels.hpp
/// Device API of voxel compaction (winnow/voxels.hpp says what it selects) for CUDA users: the
/// raster indices of the voxels of a device volume that a VoxelSelection keeps, compared exactly
/// as compact_voxels compares them, on a stream, the count written to device memory, no host
/// synchronisation. Needs no CUDA header. Positions and values follow from the indices (z =
/// i / (nx ny), y = i / nx mod ny, x = i mod nx; the value d_volume[i]), which the caller reads
/// with its own array library.
#include <cstdint>

#include "winnow/cuda/compact.hpp"
#include "winnow/voxels.hpp"

namespace winnow::cuda {

/// Writes the raster indices i of the kept voxels of d_volume (n voxels, contiguous, x fastest),
/// ascending, to d_indices (room for every kept index: n at most) and their number to *d_count.
/// VoxelMode::nonzero keeps NaN voxels of a float volume (NaN != 0): the host API drops them after
/// reading their values, as a caller of this one must. T: std::uint8_t, std::uint16_t,
/// std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double (the compaction's
/// precompiled value types; widen 8- and 16-bit signed voxels first). InputError for a NaN level;
/// BackendError on a CUDA error.
template <class T>
void voxel_indices(CompactWorkspace& workspace, const T* d_volume, std::uint64_t n, const VoxelSelection& selection,
                   std::uint64_t* d_indices, std::uint64_t* d_count, cudaStream_t stream);

}  // namespace winnow::cuda
