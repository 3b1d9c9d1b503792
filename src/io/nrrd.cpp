// NRRD volumes (http://teem.sourceforge.net/nrrd/format.html): a text header of "field: value"
// lines after the magic "NRRD000<n>", comments starting with '#', "key:=value" pairs ignored,
// ended by an empty line. The data follows in the same file (.nrrd) or sits in the file named by
// "data file:" (.nhdr; a relative name is relative to the header's directory).
//
// Read: type (every spelling of the ten voxel types; "block" refused), dimension 2 (nz = 1) or
// 3, sizes, endian, encoding raw or gzip (text, hex, bz2 refused), spacings or space directions
// (a vector's length is the spacing; "none" or NaN read as 1), line skip and byte skip (-1: the
// data are the last bytes of a raw file; for gzip, byte skip counts decompressed bytes as the
// format says). Field names are matched without case and spaces ("byteskip" = "byte skip").
// Multi-file data ("data file: LIST" or a printf pattern) is refused. The space fields ("space" or
// "space dimension", "space directions", "space origin", "space units") and "spacings" are kept in
// a SpatialHeader as written (vectors as doubles; a 2-D volume's third direction is the unit
// normal of the other two).
//
// Written (nrrd_header): NRRD0004, attached data, the canonical type name, dimension 3, the host's
// byte order, raw or gzip encoding, "kinds: domain domain domain", and the space fields of
// nrrd_fields_for (spatial_header.cpp), numbers in the shortest form that reads back exactly.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>

#include "io/volume_detail.hpp"

namespace winnow::io::detail {
namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}
std::string normalised(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\t') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<VoxelType> nrrd_type(const std::string& spelled) {
  // The spellings the format allows, with spaces removed.
  static const std::map<std::string, VoxelType> types{{"uchar", VoxelType::u8},
                                                      {"unsignedchar", VoxelType::u8},
                                                      {"uint8", VoxelType::u8},
                                                      {"uint8_t", VoxelType::u8},
                                                      {"signedchar", VoxelType::i8},
                                                      {"int8", VoxelType::i8},
                                                      {"int8_t", VoxelType::i8},
                                                      {"short", VoxelType::i16},
                                                      {"shortint", VoxelType::i16},
                                                      {"signedshort", VoxelType::i16},
                                                      {"signedshortint", VoxelType::i16},
                                                      {"int16", VoxelType::i16},
                                                      {"int16_t", VoxelType::i16},
                                                      {"ushort", VoxelType::u16},
                                                      {"unsignedshort", VoxelType::u16},
                                                      {"unsignedshortint", VoxelType::u16},
                                                      {"uint16", VoxelType::u16},
                                                      {"uint16_t", VoxelType::u16},
                                                      {"int", VoxelType::i32},
                                                      {"signedint", VoxelType::i32},
                                                      {"int32", VoxelType::i32},
                                                      {"int32_t", VoxelType::i32},
                                                      {"uint", VoxelType::u32},
                                                      {"unsignedint", VoxelType::u32},
                                                      {"uint32", VoxelType::u32},
                                                      {"uint32_t", VoxelType::u32},
                                                      {"longlong", VoxelType::i64},
                                                      {"longlongint", VoxelType::i64},
                                                      {"signedlonglong", VoxelType::i64},
                                                      {"signedlonglongint", VoxelType::i64},
                                                      {"int64", VoxelType::i64},
                                                      {"int64_t", VoxelType::i64},
                                                      {"ulonglong", VoxelType::u64},
                                                      {"unsignedlonglong", VoxelType::u64},
                                                      {"unsignedlonglongint", VoxelType::u64},
                                                      {"uint64", VoxelType::u64},
                                                      {"uint64_t", VoxelType::u64},
                                                      {"float", VoxelType::f32},
                                                      {"double", VoxelType::f64}};
  const auto it = types.find(normalised(spelled));
  if (it == types.end()) return std::nullopt;
  return it->second;
}

std::int64_t parse_integer(const fs::path& path, const std::string& field, const std::string& text) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || trim(text.substr(used)).size() != 0)
    fail(path, "bad NRRD header: " + field + " '" + text + "' is not an integer");
  return v;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A spacing from "spacings" (a number, or nan) or a "space directions" vector "(a,b,c)" or "none".
double spacing_of(const fs::path& path, const std::string& word, bool vector) {
  if (word == "none" || word == "nan" || word == "NaN") return 1.0;
  double sum = 0;
  std::string body = word;
  if (vector) {
    if (body.size() < 2 || body.front() != '(' || body.back() != ')')
      fail(path, "bad NRRD header: space direction '" + word + "' is not a vector (a,b,c)");
    body = body.substr(1, body.size() - 2);
    std::replace(body.begin(), body.end(), ',', ' ');
  }
  std::istringstream in(body);
  int count = 0;
  for (std::string c; in >> c; ++count) {
    char* end = nullptr;
    const double x = std::strtod(c.c_str(), &end);
    if (end == c.c_str() || *end) fail(path, "bad NRRD header: '" + word + "' is not a number or vector");
    sum += x * x;
  }
  if (count == 0) fail(path, "bad NRRD header: empty spacing '" + word + "'");
  const double s = std::sqrt(sum);
  return std::isfinite(s) && s > 0 ? s : 1.0;
}

// The items of a vector-list field ("space directions", "space origin"): "(a,b,c)" vectors (spaces
// allowed inside) or words such as "none", in order.
std::vector<std::string> vector_items(const fs::path& path, const std::string& field, const std::string& text) {
  std::vector<std::string> items;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\t') {
      ++i;
      continue;
    }
    std::size_t end;
    if (text[i] == '(') {
      end = text.find(')', i);
      if (end == std::string::npos) fail(path, "bad NRRD header: " + field + " '" + text + "' has an unclosed vector");
      ++end;
    } else {
      end = text.find_first_of(" \t(", i);
      if (end == std::string::npos) end = text.size();
    }
    items.push_back(text.substr(i, end - i));
    i = end;
  }
  return items;
}

// The components of a vector "(a,b,c)".
std::vector<double> vector_of(const fs::path& path, const std::string& field, const std::string& item) {
  if (item.size() < 2 || item.front() != '(' || item.back() != ')')
    fail(path, "bad NRRD header: " + field + " item '" + item + "' is not a vector (a,b,c)");
  std::string body = item.substr(1, item.size() - 2);
  std::replace(body.begin(), body.end(), ',', ' ');
  std::vector<double> out;
  std::istringstream in(body);
  for (std::string c; in >> c;) {
    char* end = nullptr;
    const double x = std::strtod(c.c_str(), &end);
    if (end == c.c_str() || *end)
      fail(path, "bad NRRD header: " + field + " item '" + item + "' is not a vector of numbers");
    out.push_back(x);
  }
  if (out.empty()) fail(path, "bad NRRD header: empty vector in " + field);
  return out;
}

std::array<double, 3> first_three(const std::vector<double>& v) {
  std::array<double, 3> out{};
  for (std::size_t i = 0; i < std::min<std::size_t>(3, v.size()); ++i) out[i] = v[i];
  return out;
}

// The shortest text that reads back to the same double.
std::string number_text(double x) {
  char digits[32];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, x);
  return std::string(digits, end);
}

std::string vector_text(const std::array<double, 3>& v) {
  std::string text(1, '(');
  for (int i = 0; i < 3; ++i) (text += number_text(v[i])) += i < 2 ? ',' : ')';
  return text;
}

}  // namespace

AnyVolume read_nrrd(const fs::path& path, std::span<const unsigned char> file, const ReadContext& context) {
  if (file.size() < 8 || std::memcmp(file.data(), "NRRD000", 7) != 0)
    fail(path, "not a NRRD file: bad header (no \"NRRD000\" magic line)");
  const std::string_view text(reinterpret_cast<const char*>(file.data()), file.size());
  // Header lines up to the first empty line (or the end, in a detached header).
  std::map<std::string, std::string> fields;
  std::size_t pos = text.find('\n');
  if (pos == std::string_view::npos) fail(path, "bad NRRD header: no line after the magic");
  ++pos;
  bool ended = false;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string line = trim(text.substr(pos, eol - pos));
    pos = std::min(eol + 1, text.size());
    if (line.empty()) {
      ended = true;
      break;
    }
    if (line[0] == '#') continue;
    const auto colon = line.find(": ");
    if (line.find(":=") != std::string::npos && (colon == std::string::npos || line.find(":=") < colon)) continue;
    if (colon == std::string::npos) fail(path, "bad NRRD header: line '" + line + "' is not 'field: value'");
    const std::string name = normalised(line.substr(0, colon));
    fields[name] = trim(line.substr(colon + 2));
    if (name == "datafile" && fields[name].rfind("LIST", 0) == 0) break;  // file names follow, one a line
  }
  auto field = [&](const char* name) -> const std::string* {
    const auto it = fields.find(name);
    return it == fields.end() ? nullptr : &it->second;
  };
  auto required = [&](const char* name, const char* spelled) -> const std::string& {
    const std::string* v = field(name);
    if (!v) fail(path, std::string("bad NRRD header: no '") + spelled + "' field");
    return *v;
  };

  const std::string& type_text = required("type", "type");
  const auto type = nrrd_type(type_text);
  if (!type) fail(path, "unsupported NRRD type '" + type_text + "'");
  const std::int64_t dimension = parse_integer(path, "dimension", required("dimension", "dimension"));
  const auto sizes = words(required("sizes", "sizes"));
  if (dimension != 2 && dimension != 3)
    fail(path, "a " + std::to_string(dimension) + "-D NRRD of sizes '" + required("sizes", "sizes") +
                   "' (2-D or 3-D expected)");
  if (static_cast<std::int64_t>(sizes.size()) != dimension)
    fail(path, "bad NRRD header: 'sizes' has " + std::to_string(sizes.size()) + " values for dimension " +
                   std::to_string(dimension));
  const std::int64_t nx = parse_integer(path, "sizes", sizes[0]), ny = parse_integer(path, "sizes", sizes[1]),
                     nz = dimension == 3 ? parse_integer(path, "sizes", sizes[2]) : 1;
  const std::int64_t bytes = checked_byte_count(path, nx, ny, nz, *type);

  std::endian order = std::endian::native;
  if (const std::string* e = field("endian")) {
    if (*e == "little") order = std::endian::little;
    else if (*e == "big") order = std::endian::big;
    else fail(path, "bad NRRD header: endian '" + *e + "'");
  } else if (voxel_bytes(*type) > 1) {
    fail(path, "bad NRRD header: no 'endian' field for " + std::string(voxel_type_name(*type)) + " data");
  }
  const std::string encoding = normalised(required("encoding", "encoding"));
  const bool gz = encoding == "gzip" || encoding == "gz";
  if (!gz && encoding != "raw") fail(path, "unsupported NRRD encoding '" + encoding + "' (raw and gzip are read)");

  double spacing[3] = {1, 1, 1};
  SpatialHeader::Nrrd space;
  if (const std::string* s = field("spacings")) {
    const auto w = words(*s);
    if (static_cast<std::int64_t>(w.size()) != dimension)
      fail(path, "bad NRRD header: 'spacings' does not match dimension");
    for (std::int64_t i = 0; i < dimension; ++i) spacing[i] = space.spacings[i] = spacing_of(path, w[i], false);
  } else if (const std::string* d = field("spacedirections")) {
    const auto w = vector_items(path, "space directions", *d);
    if (static_cast<std::int64_t>(w.size()) != dimension)
      fail(path, "bad NRRD header: 'space directions' does not match dimension");
    space.has_directions = true;
    for (std::int64_t i = 0; i < dimension; ++i) {
      spacing[i] = spacing_of(path, w[i], w[i] != "none");
      if (w[i] == "none") space.has_directions = false;  // a non-spatial axis: no orientation to keep
      else space.directions[i] = first_three(vector_of(path, "space directions", w[i]));
    }
    if (!space.has_directions) space.directions = {};
    for (std::int64_t i = 0; i < dimension; ++i) space.spacings[i] = spacing[i];
    if (space.has_directions && dimension == 2) {  // the slice's normal, of unit length
      const auto& a = space.directions[0];
      const auto& b = space.directions[1];
      std::array<double, 3> n = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
      const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (double& c : n) c = length > 0 ? c / length : 0.0;
      if (!(length > 0)) n = {0, 0, 1};
      space.directions[2] = n;
    }
  }
  if (const std::string* s = field("space")) space.space = *s;
  if (const std::string* s = field("spacedimension"))
    space.space_dimension = static_cast<int>(parse_integer(path, "space dimension", *s));
  if (const std::string* s = field("spaceorigin")) {
    const auto items = vector_items(path, "space origin", *s);
    if (items.size() == 1 && items[0] != "none") {
      space.origin = first_three(vector_of(path, "space origin", items[0]));
      space.has_origin = true;
    }
  }
  if (const std::string* s = field("spaceunits")) space.space_units = *s;
  const std::int64_t line_skip = field("lineskip") ? parse_integer(path, "line skip", *field("lineskip")) : 0;
  const std::int64_t byte_skip = field("byteskip") ? parse_integer(path, "byte skip", *field("byteskip")) : 0;
  if (line_skip < 0) fail(path, "bad NRRD header: negative line skip");
  if (byte_skip < -1) fail(path, "bad NRRD header: byte skip " + std::to_string(byte_skip) + " (-1 or more expected)");
  if (byte_skip == -1 && gz) fail(path, "bad NRRD header: byte skip -1 is only allowed with raw encoding");

  // The data: after the header, or in the detached file.
  FileBytes detached;
  fs::path data_path = path;
  std::span<const unsigned char> data;
  const std::string* data_file = field("datafile");
  if (data_file) {
    const auto w = words(*data_file);
    if (w.empty()) fail(path, "bad NRRD header: empty 'data file'");
    if (w[0] == "LIST" || (w.size() >= 4 && w[0].find('%') != std::string::npos))
      fail(path, "NRRD data split over several files is not supported");
    data_path = fs::path(*data_file).is_absolute() ? fs::path(*data_file) : path.parent_path() / *data_file;
    detached = FileBytes::map(data_path);
    data = detached.bytes();
  } else {
    if (!ended) fail(path, "truncated NRRD: no empty line ends the header, and no 'data file' is named");
    data = file.subspan(pos);
  }
  const std::string what = "the header's " + dims_text(nx, ny, nz) + " " + voxel_type_name(*type) + " voxels";
  for (std::int64_t i = 0; i < line_skip; ++i) {
    const auto* nl = static_cast<const unsigned char*>(std::memchr(data.data(), '\n', data.size()));
    if (!nl) fail(data_path, "truncated NRRD data: fewer than the " + std::to_string(line_skip) + " lines to skip");
    data = data.subspan(static_cast<std::size_t>(nl - data.data()) + 1);
  }
  std::vector<unsigned char> inflated;
  if (gz) {
    inflated = gunzip(data, data_path, context.progress);
    data = inflated;
  }
  if (byte_skip == -1) {
    require_bytes(data_path, what, bytes, static_cast<std::int64_t>(data.size()));
    data = data.subspan(data.size() - static_cast<std::size_t>(bytes));
  } else {
    require_bytes(data_path, what + " after a byte skip of " + std::to_string(byte_skip), bytes,
                  static_cast<std::int64_t>(data.size()) - byte_skip);
    data = data.subspan(static_cast<std::size_t>(byte_skip));
  }
  AnyVolume v = volume_from_bytes(path, *type, nx, ny, nz, data, order, gz ? ProgressSink{} : context.progress);
  std::visit([&](auto& vol) { vol.set_spacing(spacing[0], spacing[1], spacing[2]); }, v);
  if (context.header) {
    *context.header = SpatialHeader{};
    context.header->source = SpatialHeader::Source::nrrd;
    context.header->nrrd = std::move(space);
  }
  return v;
}

std::string nrrd_header(const ErasedView& v, const SpatialHeader& like, bool gzip) {
  static constexpr const char* type_names[] = {"uint8", "int8",   "uint16", "int16", "uint32",
                                               "int32", "uint64", "int64",  "float", "double"};
  const SpatialHeader::Nrrd n = nrrd_fields_for(like, v);
  std::string h = "NRRD0004\n# written by winnow\n";
  h += std::string("type: ") + type_names[static_cast<int>(v.type)] + "\n";
  h += "dimension: 3\n";
  // A space without directions says nothing a reader could use: the space fields go together.
  if (n.has_directions && !n.space.empty()) h += "space: " + n.space + "\n";
  else if (n.has_directions) h += "space dimension: 3\n";
  h += "sizes: " + std::to_string(v.nx) + " " + std::to_string(v.ny) + " " + std::to_string(v.nz) + "\n";
  if (n.has_directions) {
    h += "space directions: " + vector_text(n.directions[0]) + " " + vector_text(n.directions[1]) + " " +
         vector_text(n.directions[2]) + "\n";
  } else {
    h += "spacings: " + number_text(n.spacings[0]) + " " + number_text(n.spacings[1]) + " " +
         number_text(n.spacings[2]) + "\n";
  }
  if (!n.space_units.empty()) h += "space units: " + n.space_units + "\n";
  h += "kinds: domain domain domain\n";
  if (voxel_bytes(v.type) > 1)
    h += std::string("endian: ") + (std::endian::native == std::endian::little ? "little" : "big") + "\n";
  h += std::string("encoding: ") + (gzip ? "gzip" : "raw") + "\n";
  if (n.has_origin) h += "space origin: " + vector_text(n.origin) + "\n";
  h += "\n";
  return h;
}

}  // namespace winnow::io::detail
