// NIfTI-1 volumes (.nii, and .nii.gz once volume_io.cpp has decompressed it), read and written
// here rather than through nifti_clib: the header is a fixed, fully specified 348-byte struct
// (NIfTI-1 standard, nifti1.h, https://nifti.nimh.nih.gov/nifti-1), so reading the dozen fields
// winnow needs at their offsets is short and exact; nifti_clib is not packaged on the GPU build
// machine, and it is one library less to depend on.
//
// Reading: the byte order is the one in which sizeof_hdr reads 348; magic "n+1\0" (data in the
// same file from vox_offset). "ni1\0" (a .hdr/.img pair) and NIfTI-2 (sizeof_hdr 540) are
// refused with a message saying so. dim[0] is the number of axes: 2 (nz = 1) or 3, or more when
// every axis beyond the third has size 1; a 4-D series is refused. Spacing is |pixdim[1..3]|
// (a zero or non-finite value reads as 1). scl_slope/scl_inter are applied when the slope is
// set (not 0, not NaN) and not the identity (1, 0); the voxels are then f32 (f64 for f64 data).
// Orientation (qform/sform) is not applied: voxels are returned as stored, x fastest; the spatial
// fields (qform/sform codes, quaternion, offsets, pixdim[0..3], srow, xyzt_units) are returned as
// they are stored, in a SpatialHeader (its affine() is in spatial_header.cpp).
//
// Writing: a 348-byte header in the host's byte order (readers detect it) with dim, datatype,
// bitpix, vox_offset 352, scl_slope 1 / scl_inter 0 and the spatial fields of nifti_fields_for:
// a NIfTI header's own, bit for bit (floats copied, never recomputed), an NRRD header's
// equivalent, or pixdim = spacing with no orientation codes and spatial units unknown; then 4
// zero bytes (no extensions) and the voxels.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "io/volume_detail.hpp"

namespace winnow::io::detail {
namespace {

// Byte offsets of the fields used, from nifti1.h.
constexpr std::size_t header_size = 348, off_dim = 40, off_datatype = 70, off_bitpix = 72, off_pixdim = 76,
                      off_vox_offset = 108, off_scl_slope = 112, off_scl_inter = 116, off_xyzt_units = 123,
                      off_descrip = 148, off_qform_code = 252, off_sform_code = 254, off_quatern_b = 256,
                      off_quatern_c = 260, off_quatern_d = 264, off_qoffset_x = 268, off_qoffset_y = 272,
                      off_qoffset_z = 276, off_srow_x = 280, off_magic = 344;
constexpr std::size_t data_offset = 352;  // header + the 4-byte extension flag

struct Datatype {
  std::int16_t code;
  VoxelType type;
};
constexpr std::array<Datatype, 10> datatypes{{{2, VoxelType::u8},
                                              {256, VoxelType::i8},
                                              {4, VoxelType::i16},
                                              {512, VoxelType::u16},
                                              {8, VoxelType::i32},
                                              {768, VoxelType::u32},
                                              {16, VoxelType::f32},
                                              {64, VoxelType::f64},
                                              {1024, VoxelType::i64},
                                              {1280, VoxelType::u64}}};

const char* unsupported_datatype_name(int code) {
  switch (code) {
    case 0: return "unknown";
    case 1: return "binary";
    case 32: return "complex64";
    case 128: return "rgb24";
    case 1536: return "float128";
    case 1792: return "complex128";
    case 2048: return "complex256";
    case 2304: return "rgba32";
    default: return "not a NIfTI-1 datatype";
  }
}

// Fields of a header in either byte order.
class HeaderReader {
 public:
  HeaderReader(const unsigned char* h, bool swap) : h_(h), swap_(swap) {}
  template <class T>
  T get(std::size_t offset) const {
    unsigned char b[sizeof(T)];
    std::memcpy(b, h_ + offset, sizeof(T));
    if (swap_) std::reverse(b, b + sizeof(T));
    T v;
    std::memcpy(&v, b, sizeof(T));
    return v;
  }

 private:
  const unsigned char* h_;
  bool swap_;
};

double spacing_or_one(float pixdim) {
  const double s = std::fabs(static_cast<double>(pixdim));
  return std::isfinite(s) && s > 0 ? s : 1.0;
}

}  // namespace

AnyVolume read_nifti(const fs::path& path, std::span<const unsigned char> file, const ReadContext& context) {
  std::int32_t sizeof_hdr = 0;
  if (file.size() >= 4) std::memcpy(&sizeof_hdr, file.data(), 4);
  const auto swapped = static_cast<std::int32_t>(__builtin_bswap32(static_cast<std::uint32_t>(sizeof_hdr)));
  if (sizeof_hdr != 348 && sizeof_hdr != 540 && swapped != 348 && swapped != 540)
    fail(path, file.size() < 4 ? "not a NIfTI-1 file: bad header (" + std::to_string(file.size()) + " bytes)"
                               : "not a NIfTI-1 file: bad header (sizeof_hdr reads " + std::to_string(sizeof_hdr) +
                                     ", 348 expected)");
  if (file.size() < header_size)
    fail(path, "truncated NIfTI header: " + std::to_string(file.size()) + " bytes, 348 needed");
  const bool swap = sizeof_hdr != 348 && sizeof_hdr != 540;
  const std::endian order = swap ? (std::endian::native == std::endian::little ? std::endian::big : std::endian::little)
                                 : std::endian::native;
  const HeaderReader h(file.data(), swap);
  if (h.get<std::int32_t>(0) == 540) fail(path, "NIfTI-2 files are not supported (only NIfTI-1)");
  const unsigned char* magic = file.data() + off_magic;
  if (std::memcmp(magic, "ni1\0", 4) == 0)
    fail(path, "a NIfTI-1 header of a .hdr/.img pair; only single-file NIfTI-1 (.nii) is supported");
  if (std::memcmp(magic, "n+1\0", 4) != 0) fail(path, "not a NIfTI-1 file (no \"n+1\" magic; an ANALYZE 7.5 header?)");

  std::int16_t dim[8];
  for (int i = 0; i < 8; ++i) dim[i] = h.get<std::int16_t>(off_dim + 2 * i);
  const int ndim = dim[0];
  if (ndim < 1 || ndim > 7) fail(path, "corrupt NIfTI header: dim[0] = " + std::to_string(ndim) + " (1 to 7 allowed)");
  std::string found;  // "53 x 63 x 46 x 10", for messages
  for (int i = 1; i <= ndim; ++i) found += (i > 1 ? " x " : "") + std::to_string(dim[i]);
  if (ndim < 2) fail(path, "a 1-D NIfTI image of " + found + " voxels (2-D or 3-D expected)");
  for (int i = 4; i <= ndim; ++i)
    if (dim[i] != 1)
      fail(path, "a " + std::to_string(ndim) + "-D NIfTI image of " + found +
                     " voxels; only a single 2-D or 3-D volume is read (dim[4] and beyond must be 1)");
  const std::int64_t nx = dim[1], ny = dim[2], nz = ndim >= 3 ? dim[3] : 1;

  const std::int16_t code = h.get<std::int16_t>(off_datatype);
  const Datatype* dt = nullptr;
  for (const Datatype& d : datatypes)
    if (d.code == code) dt = &d;
  if (!dt)
    fail(path, "unsupported NIfTI datatype " + std::to_string(code) + " (" + unsupported_datatype_name(code) + ")");
  const std::int64_t bytes = checked_byte_count(path, nx, ny, nz, dt->type);

  const float vox_offset = h.get<float>(off_vox_offset);
  if (!std::isfinite(vox_offset) || vox_offset < static_cast<float>(header_size) ||
      vox_offset != std::floor(vox_offset) || vox_offset > 1e15f)
    fail(path, "corrupt NIfTI header: vox_offset " + std::to_string(vox_offset) + " (a whole number >= 348 expected)");
  const auto offset = static_cast<std::int64_t>(vox_offset);
  require_bytes(path,
                "the header's " + dims_text(nx, ny, nz) + " " + voxel_type_name(dt->type) + " voxels from offset " +
                    std::to_string(offset),
                bytes, static_cast<std::int64_t>(file.size()) - offset);
  const auto data = file.subspan(static_cast<std::size_t>(offset));

  const float slope = h.get<float>(off_scl_slope), inter = h.get<float>(off_scl_inter);
  const bool scaled = std::isfinite(slope) && slope != 0 && std::isfinite(inter) && !(slope == 1 && inter == 0);
  AnyVolume v = scaled ? scaled_volume_from_bytes(path, dt->type, nx, ny, nz, data, order, slope, inter,
                                                  dt->type == VoxelType::f64 ? VoxelType::f64 : VoxelType::f32)
                       : volume_from_bytes(path, dt->type, nx, ny, nz, data, order, context.progress);
  const double sx = spacing_or_one(h.get<float>(off_pixdim + 4)), sy = spacing_or_one(h.get<float>(off_pixdim + 8)),
               sz = ndim >= 3 ? spacing_or_one(h.get<float>(off_pixdim + 12)) : 1.0;
  std::visit([&](auto& vol) { vol.set_spacing(sx, sy, sz); }, v);
  if (context.header) {
    SpatialHeader& out = *context.header;
    out = SpatialHeader{};
    out.source = SpatialHeader::Source::nifti;
    SpatialHeader::Nifti& n = out.nifti;
    for (int i = 0; i < 8; ++i) n.dim[i] = dim[i];
    n.qform_code = h.get<std::int16_t>(off_qform_code);
    n.sform_code = h.get<std::int16_t>(off_sform_code);
    n.quatern_b = h.get<float>(off_quatern_b), n.quatern_c = h.get<float>(off_quatern_c);
    n.quatern_d = h.get<float>(off_quatern_d);
    n.qoffset_x = h.get<float>(off_qoffset_x), n.qoffset_y = h.get<float>(off_qoffset_y);
    n.qoffset_z = h.get<float>(off_qoffset_z);
    for (int i = 0; i < 4; ++i) n.pixdim[i] = h.get<float>(off_pixdim + 4 * i);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) n.srow[r][c] = h.get<float>(off_srow_x + 16 * r + 4 * c);
    n.xyzt_units = file[off_xyzt_units];
  }
  return v;
}

void write_nifti(const fs::path& path, Sink& sink, const ErasedView& v, const SpatialHeader& like,
                 const ProgressSink& progress) {
  for (std::int64_t n : {v.nx, v.ny, v.nz})
    if (n > 32767)
      fail(path, "NIfTI-1 holds at most 32767 voxels along an axis; the volume is " + dims_text(v.nx, v.ny, v.nz));
  unsigned char h[data_offset] = {};
  auto put = [&](std::size_t offset, auto value) { std::memcpy(h + offset, &value, sizeof value); };
  put(0, std::int32_t{348});
  const std::int16_t dim[8] = {
      3, static_cast<std::int16_t>(v.nx), static_cast<std::int16_t>(v.ny), static_cast<std::int16_t>(v.nz), 1, 1, 1, 1};
  std::memcpy(h + off_dim, dim, sizeof dim);
  std::int16_t code = 0;
  for (const Datatype& d : datatypes)
    if (d.type == v.type) code = d.code;
  put(off_datatype, code);
  put(off_bitpix, static_cast<std::int16_t>(8 * voxel_bytes(v.type)));
  const SpatialHeader::Nifti n = nifti_fields_for(like, v);
  const float pixdim[8] = {n.pixdim[0], n.pixdim[1], n.pixdim[2], n.pixdim[3], 1, 1, 1, 1};
  std::memcpy(h + off_pixdim, pixdim, sizeof pixdim);
  put(off_vox_offset, static_cast<float>(data_offset));
  put(off_scl_slope, 1.0f);
  put(off_scl_inter, 0.0f);
  h[off_xyzt_units] = n.xyzt_units;
  std::memcpy(h + off_descrip, "winnow", 6);
  put(off_qform_code, n.qform_code);
  put(off_sform_code, n.sform_code);
  put(off_quatern_b, n.quatern_b);
  put(off_quatern_c, n.quatern_c);
  put(off_quatern_d, n.quatern_d);
  put(off_qoffset_x, n.qoffset_x);
  put(off_qoffset_y, n.qoffset_y);
  put(off_qoffset_z, n.qoffset_z);
  for (int r = 0; r < 3; ++r) std::memcpy(h + off_srow_x + 16 * r, n.srow[r].data(), 16);
  std::memcpy(h + off_magic, "n+1\0", 4);
  sink.write(h, sizeof h);  // bytes 348..351 stay 0: no extensions
  write_voxels(sink, v, progress);
}

}  // namespace winnow::io::detail
