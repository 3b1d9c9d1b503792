// Files for Python (winnow.io): volumes (NIfTI-1, NRRD, .npy, TIFF stacks) in and out with their
// spatial header, images in, meshes out (PLY, OBJ, STL) and a mesh's shaded preview, over the
// library's readers and writers (winnow/volume_io.hpp, winnow/io.hpp, winnow/mesh_io.hpp). A
// volume leaves as a NumPy array [z, y, x] that owns the library's voxels (no copy); its header
// as a _winnow.SpatialHeader, which a write takes back (like=). The library's one-line errors
// (InputError, naming the file) become OSError where the file cannot be opened or its folder
// written, ValueError for what the file holds or a name no format has: the words are the CLI's.
#include "winnow/io.hpp"

#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "arrays.hpp"
#include "winnow/error.hpp"
#include "winnow/mesh_io.hpp"
#include "winnow/volume_io.hpp"

namespace winnow::python {
namespace {

namespace fs = std::filesystem;

/// The library's InputError about `path` as Python's: OSError (FileNotFoundError, PermissionError)
/// when the file (reading) or its folder (writing) cannot be reached, ValueError otherwise.
[[noreturn]] void raise_io_error(const InputError& e, const fs::path& path, bool writing) {
  std::error_code ec;
  PyObject* type = PyExc_ValueError;
  if (!writing) {
    if (!fs::exists(path, ec)) type = PyExc_FileNotFoundError;
    else if (fs::is_directory(path, ec)) type = PyExc_IsADirectoryError;
    else if (!std::ifstream(path, std::ios::binary)) type = PyExc_PermissionError;
  } else {
    const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
    if (!fs::is_directory(folder, ec)) type = PyExc_FileNotFoundError;
    else if (fs::is_directory(path, ec)) type = PyExc_IsADirectoryError;
  }
  PyErr_SetString(type, e.what());
  throw nb::python_error();
}

template <class F>
auto guarded(const fs::path& path, bool writing, F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    raise_io_error(e, path, writing);
  }
}

/// A NumPy array [z, y, x] (nz = 1 and `image`: [y, x]) that owns the volume's voxels.
template <class T>
nb::object owning_volume(Volume<T>&& volume) {
  auto* owner = new Volume<T>(std::move(volume));
  nb::capsule release(owner, [](void* p) noexcept { delete static_cast<Volume<T>*>(p); });
  const std::size_t shape[3] = {static_cast<std::size_t>(owner->nz()), static_cast<std::size_t>(owner->ny()),
                                static_cast<std::size_t>(owner->nx())};
  return nb::cast(nb::ndarray<nb::numpy, T>(owner->data(), 3, shape, release));
}

const char* source_name(io::SpatialHeader::Source s) {
  switch (s) {
    case io::SpatialHeader::Source::nifti: return "nifti";
    case io::SpatialHeader::Source::nrrd: return "nrrd";
    default: return "none";
  }
}

/// Reads a volume file: (voxels [z, y, x] in the file's type, spatial header, spacing (x, y, z),
/// format name).
nb::tuple read_volume(const std::string& path) {
  io::SpatialHeader header;
  io::AnyVolume volume = guarded(path, false, [&] {
    nb::gil_scoped_release unlocked;
    return io::read_volume(path, &header);
  });
  const io::VolumeInfo info = io::describe(volume);
  nb::object voxels = std::visit([](auto& v) { return owning_volume(std::move(v)); }, volume);
  return nb::make_tuple(voxels, header, std::array<double, 3>{info.sx, info.sy, info.sz});
}

/// Writes `volume` [z, y, x] (x adjacent, any other strides) with spacing (x, y, z) and the
/// spatial header `like`, in the format the name asks for; a .npy as the caller's array of `rank`
/// 2 or 3 was (C order, whatever the layout of the .npy that `like` came from).
void write_volume(const std::string& path, const Array& volume, const std::array<double, 3>& spacing,
                  const io::SpatialHeader& like, int rank) {
  require_device(volume, false, "array");
  io::VolumeWriteOptions options{.like = like};
  options.like.npy = {rank, false};
  with_numeric_type(volume, true, "array", [&](auto t) {
    using T = decltype(t);
    VolumeView<const T> view = host_volume<T>(volume, "array");
    view.sx = spacing[0], view.sy = spacing[1], view.sz = spacing[2];
    guarded(path, true, [&] {
      nb::gil_scoped_release unlocked;
      io::write_volume(path, view, options);
      return 0;
    });
    return 0;
  });
}

/// Reads an image as 8-bit RGBA [height, width, 4] and the channels the file has (1 grey, 2 grey
/// and alpha, 3 RGB, 4 RGBA).
nb::tuple read_image(const std::string& path) {
  io::ImageInfo info;
  Image<Rgba8> image = guarded(path, false, [&] {
    nb::gil_scoped_release unlocked;
    return io::read_rgba8(path, &info);
  });
  const auto h = static_cast<std::size_t>(image.height()), w = static_cast<std::size_t>(image.width());
  std::vector<std::uint8_t> bytes(h * w * 4);
  if (!bytes.empty()) std::memcpy(bytes.data(), image.data(), bytes.size());
  return nb::make_tuple(to_numpy(std::move(bytes), {h, w, 4}), info.channels, info.format, info.bits);
}

/// The mesh of the arrays (checked by the Python layer: float32 [V, 3] verts, normals [V, 3] or
/// empty, values [V] or empty, uint32 or uint64 [F, 3] faces; C-contiguous).
Mesh mesh_of(const Array& verts, const Array& faces, const std::optional<Array>& normals,
             const std::optional<Array>& values) {
  const std::pair<const Array*, const char*> arrays[] = {{&verts, "verts"},
                                                         {&faces, "faces"},
                                                         {normals ? &*normals : nullptr, "normals"},
                                                         {values ? &*values : nullptr, "values"}};
  for (const auto& [a, name] : arrays) {
    if (!a) continue;
    require_device(*a, false, name);
    if (a->size()) require_c_contiguous(*a, name);
    if (a != &faces && a->dtype() != nb::dtype<float>())
      throw nb::type_error((std::string(name) + ": expected float32").c_str());
  }
  Mesh mesh;
  const std::size_t v = verts.shape(0), f = faces.shape(0);
  mesh.vertices.resize(v);
  if (v) std::memcpy(mesh.vertices.data(), verts.data(), v * 12);
  if (normals) {
    mesh.normals.resize(normals->shape(0));
    if (normals->shape(0)) std::memcpy(mesh.normals.data(), normals->data(), normals->shape(0) * 12);
  }
  if (values) {
    mesh.values.resize(values->shape(0));
    if (values->shape(0)) std::memcpy(mesh.values.data(), values->data(), values->shape(0) * 4);
  }
  if (faces.dtype() == nb::dtype<std::uint32_t>()) {
    mesh.triangles.resize(f);
    if (f) std::memcpy(mesh.triangles.data(), faces.data(), f * 12);
  } else if (faces.dtype() == nb::dtype<std::uint64_t>()) {
    mesh.triangles64.resize(f);
    if (f) std::memcpy(mesh.triangles64.data(), faces.data(), f * 24);
  } else {
    throw nb::type_error("faces: expected uint32 or uint64");
  }
  return mesh;
}

void write_mesh(const std::string& path, const Array& verts, const Array& faces, const std::optional<Array>& normals,
                const std::optional<Array>& values) {
  const Mesh mesh = mesh_of(verts, faces, normals, values);
  guarded(path, true, [&] {
    nb::gil_scoped_release unlocked;
    io::write_mesh(path, mesh);
    return 0;
  });
}

nb::object render_preview(const Array& verts, const Array& faces, const std::optional<Array>& normals,
                          std::int64_t width, std::int64_t height, const std::array<double, 3>& view_from) {
  const Mesh mesh = mesh_of(verts, faces, normals, std::nullopt);
  if (width < 1 || height < 1 || width > 16384 || height > 16384)
    throw nb::value_error("size: expected a width and height of 1 to 16384 pixels");
  io::MeshPreviewOptions options;
  options.view_from = view_from;
  Image<Rgba8> picture;
  {
    nb::gil_scoped_release unlocked;
    picture = io::render_mesh_preview(mesh, width, height, options);
  }
  const auto h = static_cast<std::size_t>(picture.height()), w = static_cast<std::size_t>(picture.width());
  std::vector<std::uint8_t> bytes(h * w * 4);
  if (!bytes.empty()) std::memcpy(bytes.data(), picture.data(), bytes.size());
  return nb::cast(to_numpy(std::move(bytes), {h, w, 4}));
}

}  // namespace

void bind_io(nb::module_& m) {
  nb::class_<io::SpatialHeader>(m, "SpatialHeader",
                                "Where a volume file's voxels lie in space (NIfTI-1 qform/sform or NRRD space fields), "
                                "kept as stored so that a write can carry it back.")
      .def(nb::init<>())
      .def_prop_ro(
          "source", [](const io::SpatialHeader& h) { return std::string(source_name(h.source)); },
          "'nifti', 'nrrd' or 'none'.")
      .def_prop_ro(
          "affine",
          [](const io::SpatialHeader& h) {
            const std::array<double, 16> a = h.affine();
            std::vector<double> values(a.begin(), a.end());
            return nb::cast(to_numpy(std::move(values), {4, 4}));
          },
          "The 4x4 affine from voxel index (x, y, z, 1), the file's order, to world (RAS+) coordinates, as nibabel's "
          "img.affine.")
      .def_prop_ro("qform_code", [](const io::SpatialHeader& h) { return h.nifti.qform_code; })
      .def_prop_ro("sform_code", [](const io::SpatialHeader& h) { return h.nifti.sform_code; })
      .def_prop_ro("space", [](const io::SpatialHeader& h) { return h.nrrd.space; });
  m.def("read_volume", &read_volume, nb::arg("path"),
        "Reads a NIfTI-1, NRRD, .npy or TIFF-stack volume: (voxels [z, y, x] in the file's type, SpatialHeader, "
        "spacing (x, y, z)).");
  m.def("write_volume", &write_volume, nb::arg("path"), nb::arg("array"), nb::arg("spacing"), nb::arg("like"),
        nb::arg("rank"),
        "Writes a volume [z, y, x] with spacing (x, y, z) and a SpatialHeader, in the format its name asks for "
        "(a .npy as an array of `rank` 2 or 3, C order).");
  m.def("read_image", &read_image, nb::arg("path"),
        "Reads a PNG, JPEG, TIFF or FITS image: (RGBA uint8 [h, w, 4], channels, format, bits).");
  m.def("write_mesh", &write_mesh, nb::arg("path"), nb::arg("verts"), nb::arg("faces"), nb::arg("normals").none(),
        nb::arg("values").none(), "Writes a mesh as PLY, OBJ or STL (by its name).");
  m.def("render_preview", &render_preview, nb::arg("verts"), nb::arg("faces"), nb::arg("normals").none(),
        nb::arg("width"), nb::arg("height"), nb::arg("view_from"),
        "A shaded RGBA uint8 [height, width, 4] picture of a mesh.");
}

}  // namespace winnow::python
