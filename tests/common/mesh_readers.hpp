#pragma once
// Small mesh readers for the tests, written from the formats' descriptions (PLY: Turk 1994;
// Wavefront OBJ; binary STL: 3D Systems 1989), independent of winnow's writers. They read what
// the tests need (binary little-endian PLY with float vertex properties and one face list, OBJ
// v / vn / f lines, binary STL) and fail the test on anything else.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace winnow::test {

/// A mesh as read back: vertex properties by name, faces as 64-bit indices (0-based).
struct ReadMesh {
  std::vector<std::string> vertex_properties;  // PLY: "x", "y", "z", "nx", ...; OBJ: none
  std::vector<std::array<float, 3>> vertices, normals;
  std::vector<float> values;
  std::vector<std::array<std::uint64_t, 3>> faces;
  std::string face_index_type;  // PLY: the list's index type ("uint", "double")
  std::string header;           // PLY: the text up to end_header
};

inline std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

template <class V>
V little_endian_at(const std::string& bytes, std::size_t at) {
  V value{};
  EXPECT_LE(at + sizeof(V), bytes.size()) << "read past the end";
  if (at + sizeof(V) > bytes.size()) return value;
  std::memcpy(&value, bytes.data() + at, sizeof(V));  // this test runs on little-endian machines
  return value;
}

/// Binary little-endian PLY: float vertex properties (x y z [nx ny nz] [value]) and faces of
/// three indices in a `list uchar uint|double`.
inline ReadMesh read_ply(const std::filesystem::path& path) {
  ReadMesh mesh;
  const std::string bytes = file_bytes(path);
  const std::size_t end = bytes.find("end_header\n");
  EXPECT_NE(end, std::string::npos) << path;
  if (end == std::string::npos) return mesh;
  mesh.header = bytes.substr(0, end);
  std::istringstream header(mesh.header);
  std::string line, element;
  std::uint64_t vertex_count = 0, face_count = 0;
  EXPECT_TRUE(std::getline(header, line) && line == "ply");
  EXPECT_TRUE(std::getline(header, line) && line == "format binary_little_endian 1.0") << line;
  while (std::getline(header, line)) {
    std::istringstream words(line);
    std::string word;
    words >> word;
    if (word == "element") {
      std::uint64_t n = 0;
      words >> element >> n;
      (element == "vertex" ? vertex_count : face_count) = n;
    } else if (word == "property" && element == "vertex") {
      std::string type, name;
      words >> type >> name;
      EXPECT_EQ(type, "float") << name;
      mesh.vertex_properties.push_back(name);
    } else if (word == "property" && element == "face") {
      std::string list, count_type, index_type, name;
      words >> list >> count_type >> index_type >> name;
      EXPECT_EQ(list, "list");
      EXPECT_EQ(count_type, "uchar");
      EXPECT_EQ(name, "vertex_indices");
      mesh.face_index_type = index_type;
    }
  }
  const auto& props = mesh.vertex_properties;
  auto has = [&](const char* name) { return std::find(props.begin(), props.end(), name) != props.end(); };
  std::size_t at = end + std::strlen("end_header\n");
  for (std::uint64_t v = 0; v < vertex_count; ++v) {
    std::vector<float> p(props.size());
    for (float& x : p) x = little_endian_at<float>(bytes, at), at += 4;
    auto value = [&](const char* name) { return p[std::find(props.begin(), props.end(), name) - props.begin()]; };
    mesh.vertices.push_back({value("x"), value("y"), value("z")});
    if (has("nx")) mesh.normals.push_back({value("nx"), value("ny"), value("nz")});
    if (has("value")) mesh.values.push_back(value("value"));
  }
  for (std::uint64_t f = 0; f < face_count; ++f) {
    EXPECT_EQ(little_endian_at<std::uint8_t>(bytes, at), 3) << "face " << f;
    at += 1;
    std::array<std::uint64_t, 3> face{};
    for (auto& i : face) {
      if (mesh.face_index_type == "double") {
        i = static_cast<std::uint64_t>(little_endian_at<double>(bytes, at)), at += 8;
      } else {
        i = little_endian_at<std::uint32_t>(bytes, at), at += 4;
      }
    }
    mesh.faces.push_back(face);
  }
  EXPECT_EQ(at, bytes.size()) << path << ": bytes after the faces";
  return mesh;
}

/// OBJ: `v x y z`, `vn x y z`, `f a b c` or `f a//n b//n c//n` (1-based; the normal index must
/// equal the vertex index, as winnow writes them). Comments (#) are skipped.
inline ReadMesh read_obj(const std::filesystem::path& path) {
  ReadMesh mesh;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string tag;
    if (!(words >> tag) || tag[0] == '#') continue;
    if (tag == "v" || tag == "vn") {
      std::array<std::string, 3> text;
      words >> text[0] >> text[1] >> text[2];
      std::array<float, 3> p{};
      for (int k = 0; k < 3; ++k) p[k] = std::strtof(text[k].c_str(), nullptr);
      (tag == "v" ? mesh.vertices : mesh.normals).push_back(p);
    } else if (tag == "f") {
      std::array<std::uint64_t, 3> face{};
      for (auto& i : face) {
        std::string corner;
        words >> corner;
        const std::size_t slashes = corner.find("//");
        i = std::stoull(corner.substr(0, slashes)) - 1;
        if (slashes != std::string::npos) EXPECT_EQ(std::stoull(corner.substr(slashes + 2)) - 1, i) << line;
      }
      std::string extra;
      EXPECT_FALSE(words >> extra) << "a face with more than three corners: " << line;
      mesh.faces.push_back(face);
    } else {
      ADD_FAILURE() << path << ": unexpected line " << line;
    }
  }
  return mesh;
}

/// One binary STL facet.
struct StlFacet {
  std::array<float, 3> normal;
  std::array<std::array<float, 3>, 3> corners;
  std::uint16_t attribute;
};

inline std::vector<StlFacet> read_stl(const std::filesystem::path& path) {
  const std::string bytes = file_bytes(path);
  std::vector<StlFacet> facets;
  EXPECT_GE(bytes.size(), 84u) << path;
  if (bytes.size() < 84) return facets;
  const auto count = little_endian_at<std::uint32_t>(bytes, 80);
  EXPECT_EQ(bytes.size(), 84 + 50 * std::size_t{count}) << path;
  std::size_t at = 84;
  for (std::uint32_t t = 0; t < count && at + 50 <= bytes.size(); ++t) {
    StlFacet f{};
    for (float& x : f.normal) x = little_endian_at<float>(bytes, at), at += 4;
    for (auto& corner : f.corners)
      for (float& x : corner) x = little_endian_at<float>(bytes, at), at += 4;
    f.attribute = little_endian_at<std::uint16_t>(bytes, at), at += 2;
    facets.push_back(f);
  }
  return facets;
}

}  // namespace winnow::test
