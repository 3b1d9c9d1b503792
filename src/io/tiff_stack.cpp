// Multi-page TIFF stacks as volumes, read and written: page k is slice z = k, its columns x and rows y. Every page
// must be grey (one sample per pixel, not a palette) of the same size and sample type: 8-, 16-,
// 32- or 64-bit unsigned or signed integers, or 32- or 64-bit floats. Samples are kept as stored
// (no min-is-white inversion, no scaling). Pages are read by libtiff (strips or tiles, any
// compression it knows) through read_tiff_pixels, the routine the image reader uses. TIFF holds
// no voxel spacing that all writers agree on, so the spacing is 1.
#include <algorithm>
#include <memory>
#include <new>
#include <optional>
#include <system_error>

#include "io/volume_detail.hpp"
#ifdef WINNOW_HAVE_TIFF
#include "io/tiff_read.hpp"
#endif

namespace winnow::io::detail {

#ifdef WINNOW_HAVE_TIFF
namespace {

struct PageFormat {
  std::uint32_t width = 0, height = 0;
  std::uint16_t spp = 1, bps = 0, sample_format = SAMPLEFORMAT_UINT, photometric = PHOTOMETRIC_MINISBLACK;
};

PageFormat page_format(TIFF* tif) {
  PageFormat f;
  TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &f.width);
  TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &f.height);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &f.spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &f.bps);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &f.sample_format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PHOTOMETRIC, &f.photometric);
  return f;
}

std::string describe_page(const PageFormat& f) {
  const char* kind = f.sample_format == SAMPLEFORMAT_IEEEFP ? "float"
                     : f.sample_format == SAMPLEFORMAT_INT  ? "signed integer"
                                                            : "unsigned integer";
  return std::to_string(f.width) + " x " + std::to_string(f.height) + ", " + std::to_string(f.spp) + " sample(s) of " +
         std::to_string(f.bps) + "-bit " + kind;
}

std::optional<VoxelType> voxel_type_of(const PageFormat& f) {
  const bool is_signed = f.sample_format == SAMPLEFORMAT_INT;
  if (f.sample_format == SAMPLEFORMAT_IEEEFP) {
    if (f.bps == 32) return VoxelType::f32;
    if (f.bps == 64) return VoxelType::f64;
    return std::nullopt;
  }
  if (f.sample_format != SAMPLEFORMAT_UINT && f.sample_format != SAMPLEFORMAT_INT) return std::nullopt;
  switch (f.bps) {
    case 8: return is_signed ? VoxelType::i8 : VoxelType::u8;
    case 16: return is_signed ? VoxelType::i16 : VoxelType::u16;
    case 32: return is_signed ? VoxelType::i32 : VoxelType::u32;
    case 64: return is_signed ? VoxelType::i64 : VoxelType::u64;
    default: return std::nullopt;
  }
}

}  // namespace

AnyVolume read_tiff_stack(const fs::path& path, const ReadContext& context) {
  const TiffHandle tif = open_tiff_for_reading(path);
  const PageFormat first = page_format(tif.get());
  const auto type = voxel_type_of(first);
  if (first.spp != 1 || first.photometric == PHOTOMETRIC_PALETTE || !type)
    fail(path, "unsupported TIFF volume: page 0 is " + describe_page(first) +
                   (first.photometric == PHOTOMETRIC_PALETTE ? " (palette)" : "") +
                   "; grey pages of 8/16/32/64-bit integers or 32/64-bit floats are read");
  const tdir_t pages = TIFFNumberOfDirectories(tif.get());
  const std::int64_t nx = first.width, ny = first.height, nz = pages;
  const std::size_t pixel_bytes = static_cast<std::size_t>(voxel_bytes(*type));
  {  // what the pages claim against what the file can hold, before allocating
    std::error_code ec;
    const std::uint64_t file_bytes = fs::file_size(path, ec);
    const std::uint64_t page_claim = static_cast<std::uint64_t>(first.width) * first.height * pixel_bytes;
    for (tdir_t z = 0; z < pages; ++z) {
      if (!TIFFSetDirectory(tif.get(), z))
        fail(path, "corrupt TIFF: cannot read page " + std::to_string(z) + ": " + g_tiff_error);
      require_codec(tif.get(), path);
      if (!ec && page_claim > page_decoded_bound(tif.get(), file_bytes))
        fail(path, "corrupt TIFF: page " + std::to_string(z) + " claims " + std::to_string(first.width) + " x " +
                       std::to_string(first.height) + " samples of " + std::to_string(pixel_bytes) +
                       " bytes, more than its data in the file can hold");
    }
  }
  AnyVolume v = allocate_volume(path, *type, nx, ny, nz);
  const std::size_t slice_bytes = static_cast<std::size_t>(nx * ny) * pixel_bytes;
  for (tdir_t z = 0; z < pages; ++z) {
    if (!TIFFSetDirectory(tif.get(), z))
      fail(path, "corrupt TIFF: cannot read page " + std::to_string(z) + ": " + g_tiff_error);
    const PageFormat f = page_format(tif.get());
    if (f.width != first.width || f.height != first.height || f.spp != first.spp || f.bps != first.bps ||
        voxel_type_of(f) != type)
      fail(path, "TIFF pages differ: page 0 is " + describe_page(first) + ", page " + std::to_string(z) + " is " +
                     describe_page(f));
    // libtiff hands samples over in the host's byte order.
    read_tiff_pixels(tif.get(), path, first.width, first.height, pixel_bytes, voxel_data(v) + z * slice_bytes);
    if (context.progress) context.progress(z + 1, pages);
  }
  return v;
}

std::int64_t tiff_page_count(const fs::path& path) {
  const TiffHandle tif = open_tiff_for_reading(path);
  return TIFFNumberOfDirectories(tif.get());
}

void write_tiff_stack(const fs::path& path, const fs::path& temp, const ErasedView& v, const ProgressSink& progress) {
  TIFFSetErrorHandler(tiff_error);
  TIFFSetWarningHandler(tiff_warning);
  g_tiff_error.clear();
  const int bytes = voxel_bytes(v.type);
  // "w8": BigTIFF when the data could pass 4 GiB.
  const bool big = static_cast<double>(v.nx) * static_cast<double>(v.ny) * static_cast<double>(v.nz) * bytes > 2e9;
  const TiffHandle tif(TIFFOpen(temp.c_str(), big ? "w8" : "w"));
  if (!tif) fail(path, "cannot write TIFF: " + g_tiff_error);
  const bool is_float = v.type == VoxelType::f32 || v.type == VoxelType::f64;
  const bool is_signed =
      v.type == VoxelType::i8 || v.type == VoxelType::i16 || v.type == VoxelType::i32 || v.type == VoxelType::i64;
  for (std::int64_t z = 0; z < v.nz; ++z) {
    TIFF* t = tif.get();
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(v.nx));
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(v.ny));
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, bytes * 8);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT,
                 is_float    ? SAMPLEFORMAT_IEEEFP
                 : is_signed ? SAMPLEFORMAT_INT
                             : SAMPLEFORMAT_UINT);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
    TIFFSetField(t, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
    TIFFSetField(t, TIFFTAG_PAGENUMBER, static_cast<std::uint16_t>(std::min<std::int64_t>(z, 65535)),
                 static_cast<std::uint16_t>(std::min<std::int64_t>(v.nz, 65535)));
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(t, 0));
    for (std::int64_t y = 0; y < v.ny; ++y)
      if (TIFFWriteScanline(t, const_cast<unsigned char*>(v.row(y, z)), static_cast<std::uint32_t>(y), 0) < 0)
        fail(path, "cannot write TIFF: " + g_tiff_error);
    if (!TIFFWriteDirectory(t)) fail(path, "cannot write TIFF: " + g_tiff_error);
    if (progress) progress(static_cast<std::uint64_t>(z + 1), static_cast<std::uint64_t>(v.nz));
  }
}
#else
AnyVolume read_tiff_stack(const fs::path& path, const ReadContext&) {
  fail(path, "TIFF support is not compiled into this build");
}
std::int64_t tiff_page_count(const fs::path& path) { fail(path, "TIFF support is not compiled into this build"); }
void write_tiff_stack(const fs::path& path, const fs::path&, const ErasedView&, const ProgressSink&) {
  fail(path, "TIFF support is not compiled into this build");
}
#endif

}  // namespace winnow::io::detail
