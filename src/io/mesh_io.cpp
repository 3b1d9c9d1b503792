// Mesh files out: binary little-endian PLY, Wavefront OBJ and binary STL (the layouts are
// described at MeshFormat in winnow/mesh_io.hpp). Each writer streams the mesh through a 1 MiB
// buffer into the temporary of an AtomicFile, so a mesh of any size is written without a second
// copy in memory, and nothing is left under the target's name unless the whole file was written.
#include "winnow/mesh_io.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "io/io_detail.hpp"
#include "io/mesh_detail.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"

namespace winnow::io {

namespace detail {

void check_mesh(const Mesh& mesh, const std::string& name) {
  const std::uint64_t n = mesh.vertex_count();
  if (!mesh.normals.empty() && mesh.normals.size() != n)
    throw InputError(name + ": the mesh has " + std::to_string(mesh.normals.size()) + " normals for " +
                     std::to_string(n) + " vertices");
  if (!mesh.values.empty() && mesh.values.size() != n)
    throw InputError(name + ": the mesh has " + std::to_string(mesh.values.size()) + " values for " +
                     std::to_string(n) + " vertices");
  const std::uint64_t triangles = mesh.triangle_count();
  for (std::uint64_t i = 0; i < triangles; ++i)
    for (const std::uint64_t v : mesh.triangle(i))
      if (v >= n)
        throw InputError(name + ": triangle " + std::to_string(i) + " uses vertex " + std::to_string(v) +
                         " of a mesh of " + std::to_string(n) + " vertices");
}

void check_stl_triangle_count(std::uint64_t triangles, const std::filesystem::path& target) {
  if (triangles > std::numeric_limits<std::uint32_t>::max())
    fail(target, "binary STL holds at most 4294967295 triangles, the mesh has " + std::to_string(triangles) +
                     " (write PLY or OBJ)");
}

}  // namespace detail

namespace {

namespace fs = std::filesystem;
using detail::fail;

// Buffered output to a file; errors name the target (the user's name), not the temporary.
class MeshFileOut {
 public:
  MeshFileOut(const fs::path& temp, const fs::path& target) : target_(target), file_(std::fopen(temp.c_str(), "wb")) {
    if (!file_) fail(target_, std::string("cannot write: ") + std::strerror(errno));
    buffer_.reserve(kBufferBytes + 256);
  }
  void text(std::string_view s) {
    buffer_.append(s);
    flush_when_full();
  }
  template <class V>
  void little_endian(V value) {
    char raw[sizeof(V)];
    std::memcpy(raw, &value, sizeof(V));
    if constexpr (std::endian::native == std::endian::big) std::reverse(raw, raw + sizeof(V));
    buffer_.append(raw, sizeof(V));
    flush_when_full();
  }
  // A float as the shortest text that reads back to the same float.
  void decimal(float value) {
    char digits[32];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
    buffer_.append(digits, end);
  }
  void decimal(std::uint64_t value) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
    buffer_.append(digits, end);
  }
  // Writes what is buffered and closes the file; a full disk shows here at the latest.
  void finish() {
    flush();
    std::FILE* f = file_.release();
    if (std::fclose(f) != 0) fail(target_, std::string("cannot write: ") + std::strerror(errno));
  }

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  void flush_when_full() {
    if (buffer_.size() >= kBufferBytes) flush();
  }
  void flush() {
    if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_.get()) != buffer_.size())
      fail(target_, std::string("cannot write: ") + std::strerror(errno));
    buffer_.clear();
  }
  fs::path target_;
  std::unique_ptr<std::FILE, Closer> file_;
  std::string buffer_;
};

// Tells a listener of the elements (vertices, then triangles) written, every 65536 of them.
class ElementCounter {
 public:
  ElementCounter(const ProgressSink& progress, std::uint64_t total) : progress_(progress), total_(total) {}
  void one_more() {
    if (++done_ % 65536 == 0 && progress_) progress_(done_, total_);
  }
  void finish() const {
    if (progress_) progress_(done_, total_);
  }

 private:
  const ProgressSink& progress_;
  std::uint64_t total_, done_ = 0;
};

void write_ply(MeshFileOut& out, const Mesh& mesh, ElementCounter& counter) {
  const bool normals = !mesh.normals.empty();
  const bool values = !mesh.values.empty();
  const bool wide = !mesh.triangles64.empty();  // 64-bit indices travel as double (exact to 2^53)
  std::string header = "ply\nformat binary_little_endian 1.0\ncomment written by winnow\n";
  header += "element vertex " + std::to_string(mesh.vertex_count()) + "\n";
  header += "property float x\nproperty float y\nproperty float z\n";
  if (normals) header += "property float nx\nproperty float ny\nproperty float nz\n";
  if (values) header += "property float value\n";
  header += "element face " + std::to_string(mesh.triangle_count()) + "\n";
  header += wide ? "property list uchar double vertex_indices\n" : "property list uchar uint vertex_indices\n";
  header += "end_header\n";
  out.text(header);
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
    for (const float c : mesh.vertices[i]) out.little_endian(c);
    if (normals)
      for (const float c : mesh.normals[i]) out.little_endian(c);
    if (values) out.little_endian(mesh.values[i]);
    counter.one_more();
  }
  const std::uint64_t triangles = mesh.triangle_count();
  for (std::uint64_t t = 0; t < triangles; ++t) {
    out.little_endian(std::uint8_t{3});
    for (const std::uint64_t v : mesh.triangle(t)) {
      if (wide) out.little_endian(static_cast<double>(v));
      else out.little_endian(static_cast<std::uint32_t>(v));
    }
    counter.one_more();
  }
}

void write_obj(MeshFileOut& out, const Mesh& mesh, ElementCounter& counter) {
  const bool normals = !mesh.normals.empty();
  out.text("# written by winnow: " + std::to_string(mesh.vertex_count()) + " vertices, " +
           std::to_string(mesh.triangle_count()) + " triangles\n");
  auto triple = [&](const char* tag, const std::array<float, 3>& c) {
    out.text(tag);
    for (int k = 0; k < 3; ++k) {
      out.text(" ");
      out.decimal(c[k]);
    }
    out.text("\n");
  };
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
    triple("v", mesh.vertices[i]);
    counter.one_more();
  }
  if (normals)
    for (const auto& n : mesh.normals) triple("vn", n);
  const std::uint64_t triangles = mesh.triangle_count();
  for (std::uint64_t t = 0; t < triangles; ++t) {
    counter.one_more();
    out.text("f");
    for (const std::uint64_t v : mesh.triangle(t)) {
      out.text(" ");
      out.decimal(v + 1);  // OBJ counts from 1
      if (normals) {
        out.text("//");
        out.decimal(v + 1);
      }
    }
    out.text("\n");
  }
}

// write_mesh has checked the triangle count (check_stl_triangle_count) before opening the file:
// the 32-bit count below relies on it.
void write_stl(MeshFileOut& out, const Mesh& mesh, ElementCounter& counter) {
  const std::uint64_t triangles = mesh.triangle_count();
  std::string header = "binary STL written by winnow";
  header.resize(80, ' ');
  out.text(header);
  out.little_endian(static_cast<std::uint32_t>(triangles));
  for (std::uint64_t t = 0; t < triangles; ++t) {
    const auto [ia, ib, ic] = mesh.triangle(t);
    const auto& a = mesh.vertices[ia];
    const auto& b = mesh.vertices[ib];
    const auto& c = mesh.vertices[ic];
    // The normal of the counter-clockwise triangle: (b - a) x (c - a), made unit length.
    const double u[3] = {double(b[0]) - a[0], double(b[1]) - a[1], double(b[2]) - a[2]};
    const double w[3] = {double(c[0]) - a[0], double(c[1]) - a[1], double(c[2]) - a[2]};
    double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (double& x : n) x = length > 0 ? x / length : 0.0;
    for (const double x : n) out.little_endian(static_cast<float>(x));
    for (const auto* corner : {&a, &b, &c})
      for (const float x : *corner) out.little_endian(x);
    out.little_endian(std::uint16_t{0});
    counter.one_more();
  }
}

}  // namespace

MeshFormat mesh_format_of(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".ply") return MeshFormat::ply;
  if (ext == ".obj") return MeshFormat::obj;
  if (ext == ".stl") return MeshFormat::stl;
  fail(path, "meshes are written as PLY (.ply), OBJ (.obj) or STL (.stl); name the file so");
}

void write_mesh(const std::filesystem::path& path, const Mesh& mesh) { write_mesh(path, mesh, mesh_format_of(path)); }

void write_mesh(const std::filesystem::path& path, const Mesh& mesh, MeshFormat format) {
  write_mesh(path, mesh, format, ProgressSink{});
}

void write_mesh(const std::filesystem::path& path, const Mesh& mesh, MeshFormat format, const ProgressSink& progress) {
  detail::check_mesh(mesh, path.string());
  if (format == MeshFormat::stl) detail::check_stl_triangle_count(mesh.triangle_count(), path);
  AtomicFile file(path);
  MeshFileOut out(file.temp_path(), path);
  // STL has no vertex list: its triangles are all there is to count.
  ElementCounter counter(progress, (format == MeshFormat::stl ? 0 : mesh.vertex_count()) + mesh.triangle_count());
  switch (format) {
    case MeshFormat::ply: write_ply(out, mesh, counter); break;
    case MeshFormat::obj: write_obj(out, mesh, counter); break;
    case MeshFormat::stl: write_stl(out, mesh, counter); break;
  }
  out.finish();
  counter.finish();
  file.commit();
}

}  // namespace winnow::io
