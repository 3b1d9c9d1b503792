#pragma once
/// @file volume_io.hpp
/// Volume files in and out. Read: NIfTI-1 (.nii, .nii.gz), NRRD (.nrrd, and .nhdr with a
/// detached data file; raw or gzip encoding), NumPy .npy (versions 1 to 3), multi-page TIFF
/// stacks (one grey page per z) and headerless raw files. Written: NIfTI-1 (.nii, .nii.gz),
/// .npy and multi-page TIFF. A volume is read in the voxel type the file holds (AnyVolume); the format is found from
/// the file's first bytes, not its name (a gzip stream is opened and looked into). Errors are
/// InputError with a one-line message that names the file; writers go through AtomicFile, so a
/// failed write leaves nothing behind.
#include <bit>
#include <cstdint>
#include <filesystem>
#include <string>
#include <type_traits>
#include <variant>

#include "winnow/volume.hpp"

namespace winnow::io {

/// The voxel types a volume file can hold.
enum class VoxelType { u8, i8, u16, i16, u32, i32, u64, i64, f32, f64 };

/// A volume in the voxel type of its file.
using AnyVolume = std::variant<Volume<std::uint8_t>, Volume<std::int8_t>, Volume<std::uint16_t>, Volume<std::int16_t>,
                               Volume<std::uint32_t>, Volume<std::int32_t>, Volume<std::uint64_t>,
                               Volume<std::int64_t>, Volume<float>, Volume<double>>;

/// "u8", "i8", "u16", ..., "f32", "f64".
const char* voxel_type_name(VoxelType type);
/// Bytes per voxel (1, 2, 4 or 8).
int voxel_bytes(VoxelType type);

/// What an AnyVolume holds, without visiting it.
struct VolumeInfo {
  std::int64_t nx = 0, ny = 0, nz = 0;
  double sx = 1, sy = 1, sz = 1;
  VoxelType type = VoxelType::u8;
};
/// Dimensions, spacing and voxel type of `volume`.
VolumeInfo describe(const AnyVolume& volume);

/// True when `path` holds a volume rather than an image: NIfTI-1, NRRD or .npy (gzip-compressed
/// too), or a TIFF of more than one page. A one-page TIFF, PNG, JPEG or FITS file is an image.
/// InputError naming the file when it cannot be read.
bool is_volume_file(const std::filesystem::path& path);

/// Reads a NIfTI-1, NRRD, .npy or multi-page TIFF volume in the voxel type the file holds.
/// NIfTI scaling (scl_slope, scl_inter) is applied when set and not the identity; the result is
/// then f32 (f64 for f64 data). Spacing comes from NIfTI pixdim, NRRD spacings or space
/// directions; .npy and TIFF stacks have spacing 1. A 2-D image is a volume with nz = 1.
AnyVolume read_volume(const std::filesystem::path& path);

/// Reads a headerless file of nx x ny x nz voxels of `type` (x fastest) in `byte_order`. The
/// file's size must be exactly nx * ny * nz * voxel_bytes(type).
AnyVolume read_raw_volume(const std::filesystem::path& path, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                          VoxelType type, std::endian byte_order = std::endian::little);

/// Writes `volume` in the format its name asks for: `.nii` (NIfTI-1, spacing in pixdim),
/// `.nii.gz` (the same, gzip-compressed), `.npy` (C order, shape (nz, ny, nx); spacing is not
/// kept) or `.tif` / `.tiff` (a multi-page TIFF, one grey page per z, deflate; spacing is not
/// kept). Any other name is an InputError. Instantiated for the ten voxel types of AnyVolume.
template <class T>
void write_volume(const std::filesystem::path& path, VolumeView<const T> volume);
/// The same for a view of non-const voxels (Volume<T>::view() of a non-const volume).
template <class T>
  requires(!std::is_const_v<T>)
void write_volume(const std::filesystem::path& path, VolumeView<T> volume) {
  write_volume<T>(path, VolumeView<const T>(volume));
}
/// The same, in the format `format_name`'s name asks for, to `path` (a temporary name, say).
template <class T>
void write_volume_as(const std::filesystem::path& path, VolumeView<const T> volume,
                     const std::filesystem::path& format_name);
/// Writes an AnyVolume as above.
void write_volume(const std::filesystem::path& path, const AnyVolume& volume);

}  // namespace winnow::io
