// NumPy .npy volumes (format versions 1.0, 2.0 and 3.0, numpy.lib.format): the magic
// "\x93NUMPY", two version bytes, the header length (2 bytes little-endian in 1.0, 4 in 2.0 and
// 3.0), then a Python dict literal such as {'descr': '<f4', 'fortran_order': False,
// 'shape': (46, 63, 53), } and the array's bytes.
//
// The axis that varies fastest in memory is x: a C-order array of shape (Z, Y, X) and a
// Fortran-order array of shape (X, Y, Z) both give nx = X, ny = Y, nz = Z with the bytes as they
// are; a 2-D array is a volume with nz = 1. descr is a byte order ('<', '>', '|', '=') and a type
// u1 i1 u2 i2 u4 i4 u8 i8 f4 f8, or b1 (a boolean mask, np.save's bytes 0 and 1) read as u1;
// big-endian data is byte-swapped. Structured and other dtypes are refused with their descr
// named. The dict is parsed by a small tokenizer (strings, True / False, tuples of integers), not
// evaluated.
//
// Writing: version 1.0 (2.0 when the header would not fit), C order, shape (nz, ny, nx), the
// host's byte order, the header padded with spaces to a multiple of 64 bytes as numpy does. A
// volume written like a .npy that was read (SpatialHeader::Npy) keeps its rank and order: labels
// of a Fortran-order (X, Y, Z) array come out as a Fortran-order (X, Y, Z) array, those of a 2-D
// image as 2-D -- the same bytes, so that labels[i] belongs to the input's voxel [i].
#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "io/volume_detail.hpp"

namespace winnow::io::detail {
namespace {

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

// The header dict, token by token; any other syntax is an error naming what was found.
class DictParser {
 public:
  DictParser(const fs::path& path, std::string_view text) : path_(path), s_(text) {}

  NpyHeader parse() {
    NpyHeader h;
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = string();
      expect(':');
      if (key == "descr") {
        if (peek('[')) bad("a structured dtype is not supported");
        h.descr = string();
        has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        has_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        has_shape = true;
      } else {
        bad("unexpected key '" + key + "'");
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    if (!has_descr || !has_order || !has_shape) bad("'descr', 'fortran_order' and 'shape' are all required");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) { fail(path_, "bad npy header: " + what); }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) bad(std::string("expected '") + c + "' at byte " + std::to_string(pos_));
    ++pos_;
  }
  std::string string() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      bad("expected a quoted string at byte " + std::to_string(pos_));
    const char quote = s_[pos_++];
    const std::size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (s_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    bad("fortran_order is neither True nor False");
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> out;
    expect('(');
    while (!peek(')')) {
      skip_space();
      std::int64_t v = 0;
      bool digits = false;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[pos_] - '0', &v))
          bad("a dimension in 'shape' is too large");
        digits = true;
        ++pos_;
      }
      if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long
      if (!digits) bad("'shape' holds something other than non-negative integers");
      out.push_back(v);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return out;
  }

  const fs::path& path_;
  std::string_view s_;
  std::size_t pos_ = 0;
};

// The npy type code of each VoxelType, in its order.
constexpr const char* kTypeCodes[] = {"u1", "i1", "u2", "i2", "u4", "i4", "u8", "i8", "f4", "f8"};

// The voxel type of a descr: a byte-order character, then kind and size ("<f4", "|u1"; "=": the
// host's order); none for any other.
std::optional<VoxelType> type_of_descr(std::string_view descr) {
  if (descr.size() != 3 || std::string_view("<>|=").find(descr[0]) == std::string_view::npos) return std::nullopt;
  const std::string_view k = descr.substr(1);
  if (k == "b1") return VoxelType::u8;  // a bool is one byte, 0 or 1
  for (int i = 0; i < 10; ++i)
    if (k == kTypeCodes[i]) return static_cast<VoxelType>(i);
  return std::nullopt;
}

}  // namespace

AnyVolume read_npy(const fs::path& path, std::span<const unsigned char> file, const ReadContext& context) {
  if (file.size() < 6 || std::memcmp(file.data(), "\x93NUMPY", 6) != 0)
    fail(path, "not a .npy file: bad header (no \"\\x93NUMPY\" magic)");
  if (file.size() < 10) fail(path, "bad npy header: the file ends within the preamble");
  const int major = file[6], minor = file[7];
  std::size_t header_len = 0, preamble = 0;
  if (major == 1) {
    header_len = static_cast<std::size_t>(file[8]) | static_cast<std::size_t>(file[9]) << 8;
    preamble = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) fail(path, "bad npy header: the file ends within the preamble");
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | file[8 + i];
    preamble = 12;
  } else {
    fail(path, "unsupported npy format version " + std::to_string(major) + "." + std::to_string(minor));
  }
  if (header_len > file.size() - preamble)
    fail(path, "bad npy header: " + std::to_string(header_len) + " header bytes announced, the file holds " +
                   std::to_string(file.size() - preamble));
  const std::string_view text(reinterpret_cast<const char*>(file.data() + preamble), header_len);
  const NpyHeader h = DictParser(path, text).parse();

  const auto type = type_of_descr(h.descr);
  if (!type) fail(path, "unsupported npy dtype '" + h.descr + "' (b1 u1 i1 u2 i2 u4 i4 u8 i8 f4 f8 are read)");
  const std::endian order = h.descr[0] == '>'   ? std::endian::big
                            : h.descr[0] == '<' ? std::endian::little
                                                : std::endian::native;

  std::string shape_text = "(";
  for (std::size_t i = 0; i < h.shape.size(); ++i) shape_text += (i ? ", " : "") + std::to_string(h.shape[i]);
  shape_text += h.shape.size() == 1 ? ",)" : ")";
  if (h.shape.size() < 2 || h.shape.size() > 3)
    fail(path, "an npy array of shape " + shape_text + " (2-D or 3-D expected)");
  // x is the axis that varies fastest in memory: the last in C order, the first in Fortran order.
  std::vector<std::int64_t> xyz(h.shape.rbegin(), h.shape.rend());
  if (h.fortran_order) xyz = h.shape;
  if (xyz.size() == 2) xyz.push_back(1);
  const std::int64_t bytes = checked_byte_count(path, xyz[0], xyz[1], xyz[2], *type);
  const std::size_t offset = preamble + header_len;
  require_bytes(path, "the npy array of shape " + shape_text + " and dtype '" + h.descr + "'", bytes,
                static_cast<std::int64_t>(file.size() - offset));
  if (context.header) context.header->npy = {static_cast<int>(h.shape.size()), h.fortran_order};
  return volume_from_bytes(path, *type, xyz[0], xyz[1], xyz[2], file.subspan(offset), order, context.progress);
}

void write_npy(const fs::path&, Sink& sink, const ErasedView& v, const SpatialHeader::Npy& layout,
               const ProgressSink& progress) {
  const char order = voxel_bytes(v.type) == 1 ? '|' : std::endian::native == std::endian::little ? '<' : '>';
  // The axes from the fastest in memory (x) to the slowest; C order lists them the other way.
  std::vector<std::int64_t> axes = {v.nx, v.ny};
  if (layout.rank != 2 || v.nz != 1) axes.push_back(v.nz);
  if (!layout.fortran_order) std::reverse(axes.begin(), axes.end());
  std::string shape;
  for (std::size_t i = 0; i < axes.size(); ++i) shape += (i ? ", " : "") + std::to_string(axes[i]);
  std::string dict = std::string("{'descr': '") + order + kTypeCodes[static_cast<int>(v.type)] +
                     "', 'fortran_order': " + (layout.fortran_order ? "True" : "False") + ", 'shape': (" + shape +
                     "), }";
  // Version 1.0 unless the header needs more than its 2-byte length allows.
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const std::size_t preamble = v2 ? 12 : 10;
  dict.append((64 - (preamble + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string head = "\x93NUMPY";
  head += static_cast<char>(v2 ? 2 : 1);
  head += '\0';
  const std::size_t len = dict.size();
  for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) head += static_cast<char>((len >> (8 * i)) & 0xff);
  head += dict;
  sink.write(head.data(), head.size());
  write_voxels(sink, v, progress);
}

}  // namespace winnow::io::detail
