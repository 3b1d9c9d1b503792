// Volume files: the front end. read_volume maps the file (no copy for uncompressed files),
// decompresses it first when it is a gzip stream, and hands the bytes to the format its first
// bytes name (nifti.cpp, nrrd.cpp, npy.cpp; TIFF stacks go to libtiff by path); bytes that name
// no format go to the format the file's name asks for, whose reader says what is wrong with them
// (a damaged header), rather than "unknown format". write_volume picks the format from the name
// and writes through AtomicFile and a zlib gzFile (plain files in zlib's transparent mode, so one
// writer serves .nii and .nii.gz; an NRRD's text header plainly, then its voxels as a gzip member
// appended). Every size is checked for overflow before anything is allocated, and an allocation
// that fails is an InputError.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "io/volume_detail.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"

namespace winnow::io {

namespace detail {

// ---- file bytes --------------------------------------------------------------------------------
FileBytes FileBytes::map(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(path, "no such file");
  if (fs::is_directory(path, ec)) fail(path, "is a directory, not a volume file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail(path, std::string("cannot open: ") + std::strerror(err));
  }
  if (st.st_size == 0) {
    ::close(fd);
    fail(path, "empty file");
  }
  FileBytes f;
  f.mapped_size_ = static_cast<std::size_t>(st.st_size);
  void* m = ::mmap(nullptr, f.mapped_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file
  if (m == MAP_FAILED) fail(path, std::string("cannot read: ") + std::strerror(err));
  f.mapping_ = m;
  f.bytes_ = {static_cast<const unsigned char*>(m), f.mapped_size_};
  return f;
}

FileBytes FileBytes::load(const fs::path& path, const ProgressSink& progress) {
  FileBytes f = map(path);
  if (!is_gzip(f.bytes())) return f;
  FileBytes d;
  d.held_ = gunzip(f.bytes(), path, progress);
  d.bytes_ = d.held_;
  d.was_gzip_ = true;
  if (d.held_.empty()) fail(path, "the gzip stream holds no data");
  return d;
}

FileBytes::FileBytes(FileBytes&& o) noexcept { *this = std::move(o); }

FileBytes& FileBytes::operator=(FileBytes&& o) noexcept {
  if (this == &o) return *this;
  if (mapping_) ::munmap(mapping_, mapped_size_);
  mapping_ = std::exchange(o.mapping_, nullptr);
  mapped_size_ = std::exchange(o.mapped_size_, 0);
  const bool held = !o.held_.empty() && o.bytes_.data() == o.held_.data();
  held_ = std::move(o.held_);  // a moved vector keeps its buffer, so a span into it stays good
  bytes_ = held ? std::span<const unsigned char>(held_) : o.bytes_;
  was_gzip_ = o.was_gzip_;
  o.bytes_ = {};
  return *this;
}

FileBytes::~FileBytes() {
  if (mapping_) ::munmap(mapping_, mapped_size_);
}

bool is_gzip(std::span<const unsigned char> b) { return b.size() >= 2 && b[0] == 0x1f && b[1] == 0x8b; }

std::vector<unsigned char> gunzip(std::span<const unsigned char> in, const fs::path& path,
                                  const ProgressSink& progress) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) fail(path, "cannot start gzip decompression");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&zs};
  // The last member's trailer holds its size modulo 2^32: a first guess, grown as needed. Deflate
  // expands at most ~1032 times, so a larger guess is a damaged or cut trailer, and is not trusted;
  // nor is any guess beyond 64 times the input or 64 MiB, whichever is more: a damaged file would
  // otherwise have gigabytes zeroed before its first corrupt block is found (a fuzzed 1.8 MB file
  // took 2 s that way). Real data beyond it costs a few doublings.
  std::uint32_t trailer = 0;
  if (in.size() >= 4) std::memcpy(&trailer, in.data() + in.size() - 4, 4);
  const std::size_t trusted = std::max<std::size_t>(in.size() * 64, std::size_t{1} << 26);
  const std::size_t hint = trailer <= in.size() * 1100 ? std::min<std::size_t>(trailer, trusted) : 0;
  std::vector<unsigned char> out;
  // zlib counts in 32-bit unsigned; with a progress sink, the input goes in 1 MiB at a time so it
  // hears of every MiB consumed.
  const std::size_t max_chunk = progress ? std::size_t{1} << 20 : std::size_t{1} << 30;
  std::size_t in_pos = 0, out_len = 0;
  try {
    out.resize(std::max<std::size_t>({hint, in.size() * 2, 4096}));
    for (;;) {
      if (out_len == out.size()) out.resize(out.size() * 2);
      zs.next_in = const_cast<unsigned char*>(in.data() + in_pos);
      zs.avail_in = static_cast<uInt>(std::min(in.size() - in_pos, max_chunk));
      zs.next_out = out.data() + out_len;
      zs.avail_out = static_cast<uInt>(std::min(out.size() - out_len, max_chunk));
      const uInt in_before = zs.avail_in, out_before = zs.avail_out;
      const int rc = inflate(&zs, Z_NO_FLUSH);
      in_pos += in_before - zs.avail_in;
      out_len += out_before - zs.avail_out;
      if (progress) progress(in_pos, in.size());
      if (rc == Z_STREAM_END) {
        // Concatenated members (as `cat a.gz b.gz` makes) continue the data; anything else after
        // the stream is ignored, as gzip itself does.
        if (in.size() - in_pos >= 2 && is_gzip(in.subspan(in_pos))) {
          inflateReset(&zs);
          continue;
        }
        break;
      }
      if (rc == Z_BUF_ERROR && in_pos == in.size() && zs.avail_out != 0)
        fail(path, "gzip stream truncated: the file ends before its compressed data do (an incomplete copy?)");
      if (rc != Z_OK && rc != Z_BUF_ERROR)
        fail(path, std::string("corrupt gzip data: ") + (zs.msg ? zs.msg : "inflate failed"));
    }
    out.resize(out_len);
    out.shrink_to_fit();
  } catch (const std::bad_alloc&) {
    fail(path, "too large to decompress in this machine's memory (" + std::to_string(out_len) + " bytes so far)");
  }
  return out;
}

// ---- sizes -------------------------------------------------------------------------------------
std::string dims_text(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  return std::to_string(nx) + " x " + std::to_string(ny) + " x " + std::to_string(nz);
}

std::int64_t checked_byte_count(const fs::path& path, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                                VoxelType type) {
  if (nx <= 0 || ny <= 0 || nz <= 0)
    fail(path, "a volume of " + dims_text(nx, ny, nz) + " voxels has a zero-sized dimension");
  std::int64_t n = 0;
  if (__builtin_mul_overflow(nx, ny, &n) || __builtin_mul_overflow(n, nz, &n) ||
      __builtin_mul_overflow(n, std::int64_t{voxel_bytes(type)}, &n) ||
      static_cast<std::uint64_t>(n) > std::numeric_limits<std::size_t>::max())
    fail(path, "a volume of " + dims_text(nx, ny, nz) + " " + voxel_type_name(type) +
                   " voxels is larger than any memory can hold (corrupt header?)");
  return n;
}

void require_bytes(const fs::path& path, const std::string& what, std::int64_t needed, std::int64_t available) {
  if (available < needed)
    fail(path, "truncated: " + what + " need " + std::to_string(needed) + " bytes, the file holds " +
                   std::to_string(std::max<std::int64_t>(available, 0)));
}

void swap_bytes(unsigned char* data, std::size_t count, int width) {
  if (width == 1) return;
  for (std::size_t i = 0; i < count; ++i) std::reverse(data + i * width, data + (i + 1) * width);
}

namespace {

template <class T>
constexpr VoxelType type_of() {
  if constexpr (std::is_same_v<T, std::uint8_t>) return VoxelType::u8;
  else if constexpr (std::is_same_v<T, std::int8_t>) return VoxelType::i8;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return VoxelType::u16;
  else if constexpr (std::is_same_v<T, std::int16_t>) return VoxelType::i16;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return VoxelType::u32;
  else if constexpr (std::is_same_v<T, std::int32_t>) return VoxelType::i32;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return VoxelType::u64;
  else if constexpr (std::is_same_v<T, std::int64_t>) return VoxelType::i64;
  else if constexpr (std::is_same_v<T, float>) return VoxelType::f32;
  else return VoxelType::f64;
}

// describe() and with_type() rely on AnyVolume listing its types in the order of VoxelType.
template <VoxelType E, class T>
constexpr bool listed_at =
    std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(E), AnyVolume>, Volume<T>>;
static_assert(listed_at<VoxelType::u8, std::uint8_t> && listed_at<VoxelType::i8, std::int8_t> &&
              listed_at<VoxelType::u16, std::uint16_t> && listed_at<VoxelType::i16, std::int16_t> &&
              listed_at<VoxelType::u32, std::uint32_t> && listed_at<VoxelType::i32, std::int32_t> &&
              listed_at<VoxelType::u64, std::uint64_t> && listed_at<VoxelType::i64, std::int64_t> &&
              listed_at<VoxelType::f32, float> && listed_at<VoxelType::f64, double>);

// Calls f(T{}) with the C++ type of `type`.
template <class F>
decltype(auto) with_type(VoxelType type, F&& f) {
  switch (type) {
    case VoxelType::u8: return f(std::uint8_t{});
    case VoxelType::i8: return f(std::int8_t{});
    case VoxelType::u16: return f(std::uint16_t{});
    case VoxelType::i16: return f(std::int16_t{});
    case VoxelType::u32: return f(std::uint32_t{});
    case VoxelType::i32: return f(std::int32_t{});
    case VoxelType::u64: return f(std::uint64_t{});
    case VoxelType::i64: return f(std::int64_t{});
    case VoxelType::f32: return f(float{});
    case VoxelType::f64: break;
  }
  return f(double{});
}

template <class T>
Volume<T> allocate(const fs::path& path, std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  checked_byte_count(path, nx, ny, nz, type_of<T>());
  try {
    return Volume<T>(nx, ny, nz);
  } catch (const std::bad_alloc&) {
    fail(path, "not enough memory for a volume of " + dims_text(nx, ny, nz) + " " + voxel_type_name(type_of<T>()) +
                   " voxels");
  }
}

}  // namespace

AnyVolume allocate_volume(const fs::path& path, VoxelType type, std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  return with_type(type, [&](auto t) -> AnyVolume { return allocate<decltype(t)>(path, nx, ny, nz); });
}

unsigned char* voxel_data(AnyVolume& volume) {
  return std::visit([](auto& v) { return reinterpret_cast<unsigned char*>(v.data()); }, volume);
}

AnyVolume volume_from_bytes(const fs::path& path, VoxelType type, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                            std::span<const unsigned char> data, std::endian byte_order, const ProgressSink& progress) {
  AnyVolume v = allocate_volume(path, type, nx, ny, nz);
  const auto count = static_cast<std::size_t>(nx * ny * nz);
  const std::size_t bytes = count * voxel_bytes(type);
  if (data.size() < bytes) fail(path, "too few bytes for the volume");  // callers check first, with a better message
  // A mapped file is read as it is copied (page faults): in 16 MiB pieces when someone listens.
  const std::size_t piece = progress ? std::size_t{1} << 24 : bytes;
  for (std::size_t at = 0; at < bytes; at += piece) {
    const std::size_t n = std::min(piece, bytes - at);
    std::memcpy(voxel_data(v) + at, data.data() + at, n);
    if (progress) progress(at + n, bytes);
  }
  if (byte_order != std::endian::native) swap_bytes(voxel_data(v), count, voxel_bytes(type));
  return v;
}

AnyVolume scaled_volume_from_bytes(const fs::path& path, VoxelType type, std::int64_t nx, std::int64_t ny,
                                   std::int64_t nz, std::span<const unsigned char> data, std::endian byte_order,
                                   double slope, double inter, VoxelType result) {
  return with_type(type, [&](auto t) -> AnyVolume {
    using T = decltype(t);
    auto scale_into = [&](auto r) -> AnyVolume {
      using R = decltype(r);
      Volume<R> v = allocate<R>(path, nx, ny, nz);
      const auto n = static_cast<std::size_t>(v.size());
      if (data.size() < n * sizeof(T)) fail(path, "internal: too few bytes for the volume");
      R* out = v.data();
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
        unsigned char b[sizeof(T)];
        std::memcpy(b, data.data() + i * sizeof(T), sizeof(T));
        if (byte_order != std::endian::native) std::reverse(b, b + sizeof(T));
        T x;
        std::memcpy(&x, b, sizeof(T));
        out[i] = static_cast<R>(static_cast<double>(x) * slope + inter);
      }
      return v;
    };
    return result == VoxelType::f64 ? scale_into(double{}) : scale_into(float{});
  });
}

void write_voxels(Sink& sink, const ErasedView& v, const ProgressSink& progress) {
  const std::size_t row_bytes = static_cast<std::size_t>(v.nx) * voxel_bytes(v.type);
  const std::size_t total = row_bytes * static_cast<std::size_t>(v.ny * v.nz);
  constexpr std::size_t piece = std::size_t{1} << 22;           // how often a listener hears: every 4 MiB
  if (v.row_stride == v.nx && v.slice_stride == v.nx * v.ny) {  // contiguous: one call, or pieces
    const std::size_t step = progress ? piece : total;
    for (std::size_t at = 0; at < total; at += step) {
      const std::size_t n = std::min(step, total - at);
      sink.write(v.data + at, n);
      if (progress) progress(at + n, total);
    }
    return;
  }
  std::size_t written = 0, told = 0;
  for (std::int64_t z = 0; z < v.nz; ++z)
    for (std::int64_t y = 0; y < v.ny; ++y) {
      sink.write(v.row(y, z), row_bytes);
      written += row_bytes;
      if (progress && (written - told >= piece || written == total)) progress(told = written, total);
    }
}

}  // namespace detail

using namespace detail;

const char* voxel_type_name(VoxelType type) {
  static constexpr const char* names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64"};
  return names[static_cast<int>(type)];
}

int voxel_bytes(VoxelType type) {
  static constexpr int bytes[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
  return bytes[static_cast<int>(type)];
}

VolumeInfo describe(const AnyVolume& volume) {
  return std::visit(
      [&](const auto& v) {
        return VolumeInfo{v.nx(), v.ny(), v.nz(), v.sx(), v.sy(), v.sz(), static_cast<VoxelType>(volume.index())};
      },
      volume);
}

namespace {
bool is_nifti(std::span<const unsigned char> b) {
  if (b.size() < 4) return false;
  std::int32_t le = 0;
  std::memcpy(&le, b.data(), 4);
  const std::int32_t be = static_cast<std::int32_t>(__builtin_bswap32(static_cast<std::uint32_t>(le)));
  return le == 348 || be == 348 || le == 540 || be == 540;  // 540: NIfTI-2, refused by read_nifti
}
bool is_tiff(std::span<const unsigned char> m) {
  return m.size() >= 4 && ((m[0] == 'I' && m[1] == 'I' && (m[2] == 42 || m[2] == 43) && m[3] == 0) ||
                           (m[0] == 'M' && m[1] == 'M' && m[2] == 0 && (m[3] == 42 || m[3] == 43)));
}
bool starts_with(std::span<const unsigned char> b, std::string_view s) {
  return b.size() >= s.size() && std::memcmp(b.data(), s.data(), s.size()) == 0;
}
}  // namespace

namespace {
std::string lower_name(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}
bool name_ends_with(const std::string& name, std::string_view tail) {
  return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

std::optional<VolumeFormat> detail::volume_format_of_name(const std::filesystem::path& path) {
  std::string name = lower_name(path);
  if (name_ends_with(name, ".gz")) name.resize(name.size() - 3);
  if (name_ends_with(name, ".nii")) return VolumeFormat::nifti;
  if (name_ends_with(name, ".nrrd") || name_ends_with(name, ".nhdr")) return VolumeFormat::nrrd;
  if (name_ends_with(name, ".npy")) return VolumeFormat::npy;
  return std::nullopt;
}

bool is_volume_file(const std::filesystem::path& path) {
  const FileBytes file = FileBytes::map(path);  // the file must exist and be readable either way
  // By name first, then by bytes: a damaged volume is still read as one, so read_volume can say
  // what is wrong with it. No image format is gzip-compressed: a gzip stream is a volume too.
  if (volume_format_of_name(path)) return true;
  const auto b = file.bytes();
  if (is_gzip(b) || starts_with(b, "NRRD000") || starts_with(b, "\x93NUMPY") || is_nifti(b)) return true;
  return is_tiff(b) && tiff_page_count(path) > 1;
}

namespace {
std::optional<detail::VolumeFormat> sniff_volume(std::span<const unsigned char> b) {
  using detail::VolumeFormat;
  if (starts_with(b, "NRRD000")) return VolumeFormat::nrrd;
  if (starts_with(b, "\x93NUMPY")) return VolumeFormat::npy;
  if (is_nifti(b)) return VolumeFormat::nifti;
  if (is_tiff(b)) return VolumeFormat::tiff_stack;
  return std::nullopt;
}

AnyVolume read_loaded(const std::filesystem::path& path, const FileBytes& file,
                      std::optional<detail::VolumeFormat> format, const ReadContext& context) {
  const auto b = file.bytes();
  if (!format) format = sniff_volume(b);
  if (!format) format = volume_format_of_name(path);  // its reader names what is wrong with the bytes
  if (!format)
    fail(path, std::string("unknown volume format") + (file.was_gzip() ? " inside the gzip stream" : "") +
                   " (expected NIfTI-1, NRRD, .npy or TIFF; raw files need their dimensions given)");
  // A plain file is read as it is copied out of its mapping; a decompressed one was read while it
  // was inflated (and told its progress then).
  ReadContext copy_context{context.header, file.was_gzip() ? ProgressSink{} : context.progress};
  if (context.header) *context.header = SpatialHeader{};
  switch (*format) {
    case detail::VolumeFormat::nrrd: return read_nrrd(path, b, copy_context);
    case detail::VolumeFormat::npy: return read_npy(path, b, copy_context);
    case detail::VolumeFormat::nifti: return read_nifti(path, b, copy_context);
    case detail::VolumeFormat::tiff_stack: break;
  }
  if (file.was_gzip()) fail(path, "a gzip-compressed TIFF is not supported (decompress it first)");
  return read_tiff_stack(path, context);
}

AnyVolume read_volume_format(const std::filesystem::path& path, std::optional<detail::VolumeFormat> format,
                             const ReadContext& context) {
  try {
    return read_loaded(path, FileBytes::load(path, context.progress), format, context);
  } catch (const std::bad_alloc&) {
    fail(path, "too large to read in this machine's memory (or a corrupt header claiming so)");
  }
}
}  // namespace

AnyVolume read_volume(const std::filesystem::path& path) { return read_volume_format(path, std::nullopt, {}); }

AnyVolume read_volume(const std::filesystem::path& path, SpatialHeader* header, const VolumeReadOptions& options) {
  return read_volume_format(path, std::nullopt, ReadContext{header, options.progress});
}

AnyVolume detail::read_volume_as(const std::filesystem::path& path, VolumeFormat format) {
  return read_volume_format(path, format, {});
}

AnyVolume read_raw_volume(const std::filesystem::path& path, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                          VoxelType type, std::endian byte_order) {
  const std::int64_t needed = checked_byte_count(path, nx, ny, nz, type);
  const FileBytes file = FileBytes::map(path);
  const auto size = static_cast<std::int64_t>(file.bytes().size());
  if (size != needed)
    fail(path, "raw volume of " + dims_text(nx, ny, nz) + " " + voxel_type_name(type) + " voxels should be " +
                   std::to_string(needed) + " bytes, the file holds " + std::to_string(size));
  return volume_from_bytes(path, type, nx, ny, nz, file.bytes(), byte_order);
}

namespace {
bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

class GzSink final : public Sink {
 public:
  // `append`: after what the file holds already (a gzip member of its own when compressed).
  GzSink(const fs::path& target, const fs::path& temp, bool compress, bool append) : target_(target) {
    // "T": zlib's transparent mode writes the bytes as they are (a plain .nii or .npy).
    const char* mode = compress ? (append ? "ab6" : "wb6") : (append ? "abT" : "wbT");
    file_ = gzopen(temp.c_str(), mode);
    if (!file_) fail(target_, std::string("cannot write: ") + std::strerror(errno));
  }
  ~GzSink() {
    if (file_) gzclose(file_);
  }
  void write(const void* bytes, std::size_t count) override {
    const auto* p = static_cast<const unsigned char*>(bytes);
    constexpr std::size_t chunk = std::size_t{1} << 30;  // gzwrite counts in unsigned int
    while (count > 0) {
      const auto n = static_cast<unsigned>(std::min(count, chunk));
      if (gzwrite(file_, p, n) != static_cast<int>(n)) fail(target_, "cannot write: " + error());
      p += n;
      count -= n;
    }
  }
  void close() {
    const int rc = gzclose(std::exchange(file_, nullptr));
    if (rc != Z_OK)
      fail(target_, rc == Z_ERRNO ? std::string("cannot write: ") + std::strerror(errno) : "cannot write");
  }

 private:
  std::string error() {
    int code = 0;
    const char* msg = gzerror(file_, &code);
    return code == Z_ERRNO ? std::strerror(errno) : msg;
  }
  fs::path target_;
  gzFile file_ = nullptr;
};
}  // namespace

template <class T>
void write_volume(const std::filesystem::path& path, VolumeView<const T> volume, const VolumeWriteOptions& options) {
  write_volume_as(path, volume, path, options);
}

template <class T>
void write_volume_as(const std::filesystem::path& path, VolumeView<const T> volume,
                     const std::filesystem::path& format_name, const VolumeWriteOptions& options) {
  const std::string name = format_name.filename().string();
  const bool gz = ends_with(name, ".nii.gz");
  const bool nifti = gz || ends_with(name, ".nii"), npy = ends_with(name, ".npy"), nrrd = ends_with(name, ".nrrd");
  const bool tiff = ends_with(name, ".tif") || ends_with(name, ".tiff");
  if (!nifti && !npy && !nrrd && !tiff)
    fail(path, "unknown volume output format (name it .nii, .nii.gz, .nrrd, .npy, .tif or .tiff)");
  if (volume.empty()) fail(path, "cannot write a volume of " + dims_text(volume.nx, volume.ny, volume.nz) + " voxels");
  const ErasedView v{reinterpret_cast<const unsigned char*>(volume.data),
                     volume.nx,
                     volume.ny,
                     volume.nz,
                     volume.row_stride,
                     volume.slice_stride,
                     volume.sx,
                     volume.sy,
                     volume.sz,
                     type_of<T>()};
  AtomicFile file(path);
  if (tiff) {
    write_tiff_stack(path, file.temp_path(), v, options.progress);
    file.commit();
    return;
  }
  if (nrrd) {
    {  // the text header as it is, then the voxels: raw, or one gzip member appended ("ab")
      GzSink header(path, file.temp_path(), false, false);
      const std::string text = nrrd_header(v, options.like, options.nrrd_gzip);
      header.write(text.data(), text.size());
      header.close();
    }
    GzSink voxels(path, file.temp_path(), options.nrrd_gzip, true);
    write_voxels(voxels, v, options.progress);
    voxels.close();
  } else {
    GzSink sink(path, file.temp_path(), gz, false);
    if (nifti) write_nifti(path, sink, v, options.like, options.progress);
    else write_npy(path, sink, v, options.like.npy, options.progress);
    sink.close();
  }
  file.commit();
}

#define WINNOW_WRITE_VOLUME(T)                                                                                      \
  template void write_volume<T>(const std::filesystem::path&, VolumeView<const T>, const VolumeWriteOptions&);      \
  template void write_volume_as<T>(const std::filesystem::path&, VolumeView<const T>, const std::filesystem::path&, \
                                   const VolumeWriteOptions&);
WINNOW_WRITE_VOLUME(std::uint8_t)
WINNOW_WRITE_VOLUME(std::int8_t)
WINNOW_WRITE_VOLUME(std::uint16_t)
WINNOW_WRITE_VOLUME(std::int16_t)
WINNOW_WRITE_VOLUME(std::uint32_t)
WINNOW_WRITE_VOLUME(std::int32_t)
WINNOW_WRITE_VOLUME(std::uint64_t)
WINNOW_WRITE_VOLUME(std::int64_t)
WINNOW_WRITE_VOLUME(float)
WINNOW_WRITE_VOLUME(double)
#undef WINNOW_WRITE_VOLUME

void write_volume(const std::filesystem::path& path, const AnyVolume& volume, const VolumeWriteOptions& options) {
  std::visit([&](const auto& v) { write_volume(path, v.view(), options); }, volume);
}

}  // namespace winnow::io
