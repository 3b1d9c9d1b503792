// Private pieces shared by the volume readers and writers (src/io/volume_io.cpp and one file
// per format): a file's bytes (mapped, or decompressed from gzip), checked size arithmetic,
// allocation and filling of an AnyVolume, a type-erased view for the writers, and the translation
// of spatial headers between the formats (spatial_header.cpp).
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/io_detail.hpp"
#include "winnow/volume_io.hpp"

namespace winnow::io::detail {

namespace fs = std::filesystem;

/// The bytes of a file: a read-only mapping of a plain file, or a buffer it was decompressed into.
class FileBytes {
 public:
  /// Maps `path` (InputError when it is missing, a directory, unreadable or empty).
  static FileBytes map(const fs::path& path);
  /// Maps `path` and, when it is a gzip stream, decompresses it (reporting the compressed bytes
  /// consumed to `progress` when it is set).
  static FileBytes load(const fs::path& path, const ProgressSink& progress = {});
  FileBytes() = default;
  FileBytes(FileBytes&& o) noexcept;
  FileBytes& operator=(FileBytes&& o) noexcept;
  ~FileBytes();
  std::span<const unsigned char> bytes() const { return bytes_; }
  bool was_gzip() const { return was_gzip_; }

 private:
  void* mapping_ = nullptr;
  std::size_t mapped_size_ = 0;
  std::vector<unsigned char> held_;
  std::span<const unsigned char> bytes_;
  bool was_gzip_ = false;
};

bool is_gzip(std::span<const unsigned char> bytes);
/// Decompresses every member of a gzip stream (InputError naming `path` when it is corrupt,
/// truncated or too large for memory), telling `progress` (when set) the compressed bytes
/// consumed, every MiB of them.
std::vector<unsigned char> gunzip(std::span<const unsigned char> compressed, const fs::path& path,
                                  const ProgressSink& progress = {});

/// "197 x 233 x 189".
std::string dims_text(std::int64_t nx, std::int64_t ny, std::int64_t nz);
/// nx * ny * nz * voxel_bytes(type) in bytes, after checking that every dimension is positive
/// and that no product overflows (InputError naming `path` otherwise). Called before allocating.
std::int64_t checked_byte_count(const fs::path& path, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                                VoxelType type);
/// InputError unless `available` >= `needed`: "truncated: <what> need N bytes, the file holds M".
void require_bytes(const fs::path& path, const std::string& what, std::int64_t needed, std::int64_t available);

/// A zero-filled volume of `type` (sizes checked as checked_byte_count does; allocation failure
/// is an InputError naming `path`).
AnyVolume allocate_volume(const fs::path& path, VoxelType type, std::int64_t nx, std::int64_t ny, std::int64_t nz);
/// The first byte of `volume`'s voxels.
unsigned char* voxel_data(AnyVolume& volume);

/// A volume of `type` holding the nx * ny * nz voxels at the start of `data` (x fastest), read in
/// `byte_order`. `data` must hold them (checked_byte_count, require_bytes). Allocation failure is
/// an InputError naming `path`. `progress` (when set) hears of the bytes copied, every 16 MiB.
AnyVolume volume_from_bytes(const fs::path& path, VoxelType type, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                            std::span<const unsigned char> data, std::endian byte_order,
                            const ProgressSink& progress = {});
/// The same with every voxel v (of any type) turned into v * slope + inter, as f32 or f64.
AnyVolume scaled_volume_from_bytes(const fs::path& path, VoxelType type, std::int64_t nx, std::int64_t ny,
                                   std::int64_t nz, std::span<const unsigned char> data, std::endian byte_order,
                                   double slope, double inter, VoxelType result);

/// A view of any voxel type, for the writers: row (y, z) starts at
/// data + (z * slice_stride + y * row_stride) * voxel_bytes(type).
struct ErasedView {
  const unsigned char* data = nullptr;
  std::int64_t nx = 0, ny = 0, nz = 0, row_stride = 0, slice_stride = 0;
  double sx = 1, sy = 1, sz = 1;
  VoxelType type = VoxelType::u8;
  const unsigned char* row(std::int64_t y, std::int64_t z) const {
    return data + (z * slice_stride + y * row_stride) * voxel_bytes(type);
  }
};

/// A file being written, plain or gzip-compressed (zlib's gzFile either way).
class Sink {
 public:
  virtual void write(const void* bytes, std::size_t count) = 0;

 protected:
  ~Sink() = default;
};
/// Writes every row of `v` in order (x fastest, then y, then z), telling `progress` (when set) the
/// bytes written, every 4 MiB.
void write_voxels(Sink& sink, const ErasedView& v, const ProgressSink& progress = {});

/// What a format's reader returns besides the voxels, and whom it tells of its progress.
struct ReadContext {
  SpatialHeader* header = nullptr;  ///< filled when not null (left `none` by formats without one)
  ProgressSink progress;            ///< bytes copied (volume_from_bytes), or pages read
};

// One function per format (nifti.cpp, nrrd.cpp, npy.cpp, tiff_stack.cpp). Each refuses bytes that
// do not start with its format's header in words naming that format ("not a NIfTI-1 file: ..."):
// read_volume hands a damaged file to the format its name asks for.
AnyVolume read_nifti(const fs::path& path, std::span<const unsigned char> file, const ReadContext& context = {});
AnyVolume read_nrrd(const fs::path& path, std::span<const unsigned char> file, const ReadContext& context = {});
AnyVolume read_npy(const fs::path& path, std::span<const unsigned char> file, const ReadContext& context = {});
AnyVolume read_tiff_stack(const fs::path& path, const ReadContext& context = {});
/// Writes a NIfTI-1 header carrying `like` (see nifti_fields_for) and then the voxels.
void write_nifti(const fs::path& path, Sink& sink, const ErasedView& v, const SpatialHeader& like,
                 const ProgressSink& progress = {});
/// The text header of an NRRD file with attached data carrying `like` (see nrrd_fields_for):
/// everything up to and including the blank line; the voxels follow, raw or gzip-compressed.
std::string nrrd_header(const ErasedView& v, const SpatialHeader& like, bool gzip);
void write_npy(const fs::path& path, Sink& sink, const ErasedView& v, const SpatialHeader::Npy& layout = {},
               const ProgressSink& progress = {});

/// The NIfTI-1 spatial fields a file written from `like` carries (spatial_header.cpp): a NIfTI
/// header's own; for an NRRD header with space directions, the equivalent sform (code 1 for
/// anatomical and scanner spaces, 2 for the others), a qform where the directions are orthogonal
/// (else qform code 0) and pixdim from their lengths; otherwise codes 0 and pixdim = the spacing of
/// `v`. `dim` is set from `v`.
SpatialHeader::Nifti nifti_fields_for(const SpatialHeader& like, const ErasedView& v);
/// The NRRD space fields a file written from `like` carries: an NRRD header's own; for a NIfTI
/// header with a qform or sform code, the right-anterior-superior space with the NIfTI affine's
/// columns and translation; otherwise the spacings of `v` and no space.
SpatialHeader::Nrrd nrrd_fields_for(const SpatialHeader& like, const ErasedView& v);
/// Writes `v` as a multi-page TIFF (one page per z, grey samples of the voxel type, deflate) to
/// `temp`, the temporary file of `path`'s AtomicFile (tiff_stack.cpp), telling `progress` (when
/// set) the pages written.
void write_tiff_stack(const fs::path& path, const fs::path& temp, const ErasedView& v,
                      const ProgressSink& progress = {});
/// The number of pages of the TIFF file `path` (tiff_stack.cpp).
std::int64_t tiff_page_count(const fs::path& path);

/// The volume formats read_volume tells apart by their first bytes (after gzip).
enum class VolumeFormat { nifti, nrrd, npy, tiff_stack };
/// read_volume with the format given instead of sniffed (gzip still undone first): each format's
/// reader on any bytes, with read_volume's handling of allocation failure (the per-format fuzz
/// targets' entry; volume_io.cpp).
AnyVolume read_volume_as(const fs::path& path, VolumeFormat format);
/// The volume format a file's name asks for (.nii, .nii.gz, .nrrd, .nhdr, .npy, each also with
/// .gz after it), if any: what a file whose bytes name no format is read as, so that its real
/// problem is reported.
std::optional<VolumeFormat> volume_format_of_name(const fs::path& path);

/// Reverses the byte order of `count` values of `width` bytes in place.
void swap_bytes(unsigned char* data, std::size_t count, int width);

}  // namespace winnow::io::detail
