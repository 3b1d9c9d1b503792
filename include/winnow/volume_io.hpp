#pragma once
/// @file volume_io.hpp
/// Volume files in and out. Read: NIfTI-1 (.nii, .nii.gz), NRRD (.nrrd, and .nhdr with a
/// detached data file; raw or gzip encoding), NumPy .npy (versions 1 to 3), multi-page TIFF
/// stacks (one grey page per z) and headerless raw files. Written: NIfTI-1 (.nii, .nii.gz), NRRD
/// (.nrrd, gzip or raw encoding), .npy and multi-page TIFF. A volume is read in the voxel type the
/// file holds (AnyVolume), its voxels as stored (x fastest, no reorientation); the format is found
/// from the file's first bytes, and where they name none, from its name (a damaged .nii.gz is
/// read as NIfTI, so its real problem is named). Errors are InputError with a one-line message
/// that names the file; writers go through AtomicFile, so a failed write leaves nothing behind.
///
/// Orientation: reading a NIfTI-1 or NRRD file can return its spatial header (SpatialHeader), and
/// a writer given it (VolumeWriteOptions::like) writes it back: a NIfTI written from a NIfTI keeps
/// qform, sform, pixdim and xyzt_units bit for bit; a NIfTI written from an NRRD gets the
/// equivalent sform and qform; an NRRD written from an NRRD keeps its space fields, one written
/// from a NIfTI gets the NIfTI's world (RAS+) frame. .npy, TIFF stacks and raw files carry no
/// orientation: they are written without one, and read with none.
#include <array>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <string>
#include <type_traits>
#include <variant>

#include "winnow/progress.hpp"
#include "winnow/volume.hpp"

namespace winnow::io {

/// The voxel types a volume file can hold.
enum class VoxelType { u8, i8, u16, i16, u32, i32, u64, i64, f32, f64 };

/// A volume in the voxel type of its file.
using AnyVolume = std::variant<Volume<std::uint8_t>, Volume<std::int8_t>, Volume<std::uint16_t>, Volume<std::int16_t>,
                               Volume<std::uint32_t>, Volume<std::int32_t>, Volume<std::uint64_t>, Volume<std::int64_t>,
                               Volume<float>, Volume<double>>;

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

/// Where the voxels of a volume lie in space, as its file says: NIfTI-1's qform and sform, or
/// NRRD's space fields, kept as stored (the voxels themselves are never reordered).
struct SpatialHeader {
  enum class Source : std::uint8_t {
    none,   ///< no orientation (.npy, TIFF, raw files, or a volume made in memory)
    nifti,  ///< the NIfTI-1 fields below
    nrrd,   ///< the NRRD fields below
  };
  /// NIfTI-1's spatial fields, as stored (nifti1.h), signs and codes unchecked.
  struct Nifti {
    std::array<std::int16_t, 8> dim = {3, 1, 1, 1, 1, 1, 1, 1};  ///< dim[0..7] (codes 0 centre the affine on dim[1..3])
    std::int16_t qform_code = 0, sform_code = 0;
    float quatern_b = 0, quatern_c = 0, quatern_d = 0;
    float qoffset_x = 0, qoffset_y = 0, qoffset_z = 0;
    std::array<float, 4> pixdim = {1, 1, 1, 1};  ///< pixdim[0] (qfac) and pixdim[1..3]
    std::array<std::array<float, 4>, 3> srow{};  ///< srow_x, srow_y, srow_z
    std::uint8_t xyzt_units = 0;
  };
  /// NRRD's space fields, as written (http://teem.sourceforge.net/nrrd/format.html).
  struct Nrrd {
    std::string space;                                  ///< "left-posterior-superior", "RAS", ...; empty when not given
    int space_dimension = 0;                            ///< the "space dimension" field (0: not given)
    bool has_directions = false;                        ///< "space directions" given (for every axis)
    std::array<std::array<double, 3>, 3> directions{};  ///< axis x, y, z: its step in the space
    bool has_origin = false;                            ///< "space origin" given
    std::array<double, 3> origin{};
    std::array<double, 3> spacings = {1, 1, 1};  ///< "spacings" (without directions; 1 where none)
    std::string space_units;  ///< the "space units" value as written ("\"mm\" \"mm\" \"mm\""); empty: none
  };
  /// A .npy file's array layout (read_volume fills it for a .npy, whose source stays `none`): a
  /// .npy written like this header keeps the input's rank (2: a volume of one layer as shape
  /// (ny, nx)) and order (Fortran: shape (nx, ny, nz), fortran_order True; the bytes the same),
  /// so that the output indexes as the input did.
  struct Npy {
    int rank = 3;  ///< 2 or 3
    bool fortran_order = false;
  };
  Source source = Source::none;
  Nifti nifti;
  Nrrd nrrd;
  Npy npy;

  /// The 4 x 4 matrix (row-major, last row 0 0 0 1) from voxel index (x, y, z, 1) to world
  /// coordinates, RAS+ (x to the right, y anterior, z superior), in the file's units. NIfTI: as
  /// nibabel's `img.affine` computes it: the sform when sform_code is 1..5, else the qform when
  /// qform_code is 1..5 (quaternion, qfac, |pixdim|), else the Analyze default of |pixdim| with x
  /// flipped and the volume's centre at 0; nibabel's fixes apply (qfac other than -1 sets 1, a
  /// zero pixdim reads 1). NRRD: origin + index times the space directions, turned from the file's
  /// space to RAS+ (LPS negates x and y, LAS x; scanner-xyz, 3D-right-handed and a bare space
  /// dimension are taken as they are); without directions, the spacings. `none`: the identity.
  std::array<double, 16> affine() const;
};

/// True when `path` holds a volume rather than an image: a file named .nii, .nii.gz, .nrrd, .nhdr
/// or .npy, any gzip-compressed file, or a file whose first bytes are a NIfTI-1, NRRD or .npy
/// header, or a TIFF of more than one page. A one-page TIFF, PNG, JPEG or FITS file is an image.
/// InputError naming the file when it cannot be read.
bool is_volume_file(const std::filesystem::path& path);

/// How read_volume reads.
struct VolumeReadOptions {
  /// Called with (bytes done, bytes in all) as the file is decompressed (compressed bytes) or
  /// copied (its bytes), every MiB or so; TIFF stacks report pages.
  ProgressSink progress;
};

/// Reads a NIfTI-1, NRRD, .npy or multi-page TIFF volume in the voxel type the file holds.
/// NIfTI scaling (scl_slope, scl_inter) is applied when set and not the identity; the result is
/// then f32 (f64 for f64 data). Spacing comes from NIfTI |pixdim|, NRRD spacings or the lengths of
/// its space directions; .npy and TIFF stacks have spacing 1. A 2-D image is a volume with nz = 1.
AnyVolume read_volume(const std::filesystem::path& path);
/// The same, and the file's spatial header into `*header` (when not null; Source::none for .npy
/// and TIFF stacks).
AnyVolume read_volume(const std::filesystem::path& path, SpatialHeader* header, const VolumeReadOptions& options = {});

/// Reads a headerless file of nx x ny x nz voxels of `type` (x fastest) in `byte_order`. The
/// file's size must be exactly nx * ny * nz * voxel_bytes(type).
AnyVolume read_raw_volume(const std::filesystem::path& path, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                          VoxelType type, std::endian byte_order = std::endian::little);

/// How write_volume writes.
struct VolumeWriteOptions {
  /// The spatial header to write (that of the volume this one was made from): NIfTI and NRRD
  /// outputs carry it (see the file's description); `none` writes spacing only.
  SpatialHeader like;
  bool nrrd_gzip = true;  ///< .nrrd: gzip encoding (false: raw)
  ProgressSink progress;  ///< called with (bytes written, bytes in all) every few MiB
};

/// Writes `volume` in the format its name asks for: `.nii` (NIfTI-1, spacing in pixdim),
/// `.nii.gz` (the same, gzip-compressed), `.nrrd` (NRRD, attached data, gzip or raw encoding,
/// spacings or the header's space fields), `.npy` (C order, shape (nz, ny, nx), or the rank and
/// order of the .npy the header `like` was read from; spacing is not kept) or `.tif` / `.tiff`
/// (a multi-page TIFF, one grey page per z, deflate; spacing is not kept). Any other name is an
/// InputError. Instantiated for the ten voxel types of AnyVolume.
template <class T>
void write_volume(const std::filesystem::path& path, VolumeView<const T> volume,
                  const VolumeWriteOptions& options = {});
/// The same for a view of non-const voxels (Volume<T>::view() of a non-const volume).
template <class T>
requires(!std::is_const_v<T>) void write_volume(const std::filesystem::path& path, VolumeView<T> volume,
                                                const VolumeWriteOptions& options = {}) {
  write_volume<T>(path, VolumeView<const T>(volume), options);
}
/// The same, in the format `format_name`'s name asks for, to `path` (a temporary name, say).
template <class T>
void write_volume_as(const std::filesystem::path& path, VolumeView<const T> volume,
                     const std::filesystem::path& format_name, const VolumeWriteOptions& options = {});
/// Writes an AnyVolume as above.
void write_volume(const std::filesystem::path& path, const AnyVolume& volume, const VolumeWriteOptions& options = {});

}  // namespace winnow::io
