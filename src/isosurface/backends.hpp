#pragma once
// The contract between the isosurface front end (isosurface.cpp) and each backend (cpu/, cuda/):
// the view (validated: non-empty, strides that hold a row and a slice, positive finite spacing),
// a level that is not NaN, and the options; the backend fills the mesh's vertices, triangles (or
// triangles64 beyond 2^32 - 1 vertices), normals and values as the output contract of
// winnow/isosurface.hpp says, identically on every backend. `backend` and `milliseconds` are
// the front end's.
#include <cstdint>

#include "winnow/isosurface.hpp"

/// The voxel types with precompiled isosurfaces (the front end, pieces, both backends and the
/// device API).
#define WINNOW_ISOSURFACE_TYPES(X) \
  X(std::uint8_t)                  \
  X(std::uint16_t)                 \
  X(std::int16_t)                  \
  X(float)                         \
  X(double)

namespace winnow::detail {

namespace cpu {
/// OpenMP marching cubes over slabs of z (src/isosurface/cpu/marching_cubes.cpp).
/// Instantiated for WINNOW_ISOSURFACE_TYPES.
template <class T>
void isosurface(VolumeView<const T> volume, double level, const IsosurfaceOptions& options, Mesh& mesh);
}  // namespace cpu

namespace cuda {
/// The same mesh from a CUDA device: copies in, extracts, copies out; synchronises
/// (src/isosurface/cuda/isosurface.cu). Same instantiations as the CPU one.
template <class T>
void isosurface(VolumeView<const T> volume, double level, const IsosurfaceOptions& options, Mesh& mesh);
}  // namespace cuda

}  // namespace winnow::detail
