// Marching cubes on the CPU: OpenMP over slabs of z, two passes (count, then emit), the per-cell
// rules of isosurface/cell.hpp. The algorithm, the numbering across slabs and the precision rules
// are described in src/isosurface/isosurface.cpp; this file is their CPU form.
//
// Per slab of voxel layers [z0, z1), one thread walks the layers in order, keeping a ring of three
// layers of voxel classes (below / on the level / above) and two layers of vertex numbering (the
// first vertex index of each voxel and the mask of the vertices it owns): memory O(nx ny) per
// thread, never O(volume). Layer L's owner masks need classes of L-1..L+1; cell layer L-1 needs
// classes and numbering of layers L-1 and L.
//
// Skipping empty space (the trick of Flying Edges, Schroeder et al. 2015): while classifying a row
// we note where its above-state first and last changes along x. For a set of rows that agree in
// their state at x = 0 and at x = nx - 1, voxels left of the first change of any of them (and
// right of the last) are uniform, so only the x-range between (widened by one voxel) can hold a
// crossing; rows that never change and agree are skipped whole. Owner masks use the range of the
// voxel's row and its four neighbour rows, cells the range of their four corner rows.
//
// Complexity: each pass reads every voxel about 1 + 2 / (layers per slab) times (the layer before
// a slab and the layer after it are classified again), evaluates masks and cells in the active
// ranges only, and writes each vertex and triangle once. Work O(n / threads + output).
#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/threads.hpp"
#include "isosurface/backends.hpp"
#include "isosurface/cell.hpp"

namespace winnow::detail::cpu {
namespace {

using namespace iso;

// The classes of one layer of voxels and, per row, where its above-state changes along x.
struct LayerClasses {
  std::vector<std::uint8_t> cls;         // nx ny
  std::vector<std::int64_t> first_change;  // smallest x >= 1 with above(x) != above(x - 1); nx when none
  std::vector<std::int64_t> last_change;   // largest such x; 0 when none
};

// Where the vertices of one layer of voxels are numbered (valid inside the rows' active ranges).
struct LayerNumbering {
  std::vector<std::uint64_t> first;  // index of the voxel's first vertex
  std::vector<std::uint8_t> mask;    // owner_mask of the voxel
};

struct Range {
  std::int64_t lo, hi;  // inclusive; empty when lo > hi
};

// A row of a layer: its classes start at cls + y nx.
struct RowRef {
  const LayerClasses* layer;
  std::int64_t y;
};

// The x-range of voxels that can own a vertex or touch a crossed edge, for a set of rows.
Range active_range(const RowRef* rows, int count, std::int64_t nx) {
  const auto state = [nx](const RowRef& r, std::int64_t x) { return r.layer->cls[r.y * nx + x] == kAbove; };
  bool left_agree = true, right_agree = true;
  std::int64_t first = nx, last = 0;
  for (int i = 0; i < count; ++i) {
    left_agree &= state(rows[i], 0) == state(rows[0], 0);
    right_agree &= state(rows[i], nx - 1) == state(rows[0], nx - 1);
    first = std::min(first, rows[i].layer->first_change[rows[i].y]);
    last = std::max(last, rows[i].layer->last_change[rows[i].y]);
  }
  return {left_agree ? std::max<std::int64_t>(0, first - 1) : 0, right_agree ? std::min(nx - 1, last) : nx - 1};
}

template <class T>
class SlabExtractor {
 public:
  SlabExtractor(VolumeView<const T> volume, double level, const IsosurfaceOptions& options)
      : volume_(volume), level_(level), options_(options),
        grid_{volume.nx, volume.ny, volume.nz, volume.sx, volume.sy, volume.sz} {
    const auto plane = static_cast<std::size_t>(volume.nx * volume.ny);
    for (auto& c : classes_) {
      c.cls.resize(plane);
      c.first_change.resize(static_cast<std::size_t>(volume.ny));
      c.last_change.resize(static_cast<std::size_t>(volume.ny));
    }
  }

  struct Counts {
    std::uint64_t vertices = 0, triangles = 0;
  };

  // Pass 1: the vertices owned by layers [z0, z1) and the triangles of cell layers [z0, z1).
  Counts count(std::int64_t z0, std::int64_t z1) {
    Counts counts;
    walk<false, std::uint32_t>(z0, z1, counts, nullptr);
    return counts;
  }

  // Pass 2: writes them, numbered from `offsets` (the slab's first vertex and triangle).
  template <class Index>
  void emit(std::int64_t z0, std::int64_t z1, Counts offsets, Mesh& mesh, std::array<Index, 3>* triangles) {
    if (numbering_[0].first.empty())
      for (auto& n : numbering_) {
        n.first.resize(classes_[0].cls.size());
        n.mask.resize(classes_[0].cls.size());
      }
    mesh_ = &mesh;
    walk<true, Index>(z0, z1, offsets, triangles);
  }

 private:
  double value(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return static_cast<double>(volume_(x, y, z));
  }

  void classify(std::int64_t z) {
    LayerClasses& layer = classes_[z % 3];
    const std::int64_t nx = volume_.nx;
    for (std::int64_t y = 0; y < volume_.ny; ++y) {
      const T* in = volume_.row(y, z);
      std::uint8_t* out = layer.cls.data() + y * nx;
      std::int64_t first = nx, last = 0;
      out[0] = classify_voxel(in[0]);
      for (std::int64_t x = 1; x < nx; ++x) {
        out[x] = classify_voxel(in[x]);
        if ((out[x] == kAbove) != (out[x - 1] == kAbove)) {
          if (first == nx) first = x;
          last = x;
        }
      }
      layer.first_change[y] = first;
      layer.last_change[y] = last;
    }
  }
  std::uint8_t classify_voxel(T v) const { return iso::classify(static_cast<double>(v), level_); }

  // Numbers (Emit) or counts the vertices of voxel layer z; writes those of an own layer (Emit).
  template <bool Emit>
  std::uint64_t number_layer(std::int64_t z, std::uint64_t next_index, bool own_layer) {
    const std::int64_t nx = volume_.nx, ny = volume_.ny, nz = volume_.nz;
    const LayerClasses& here = classes_[z % 3];
    const LayerClasses* below = z > 0 ? &classes_[(z - 1) % 3] : nullptr;
    const LayerClasses* above_layer = z + 1 < nz ? &classes_[(z + 1) % 3] : nullptr;
    LayerNumbering* numbering = Emit ? &numbering_[z % 2] : nullptr;
    for (std::int64_t y = 0; y < ny; ++y) {
      RowRef rows[5];
      int count = 0;
      rows[count++] = {&here, y};
      if (y > 0) rows[count++] = {&here, y - 1};
      if (y + 1 < ny) rows[count++] = {&here, y + 1};
      if (below) rows[count++] = {below, y};
      if (above_layer) rows[count++] = {above_layer, y};
      const Range range = active_range(rows, count, nx);
      const std::uint8_t* c = here.cls.data() + y * nx;
      const std::uint8_t* cym = y > 0 ? c - nx : nullptr;
      const std::uint8_t* cyp = y + 1 < ny ? c + nx : nullptr;
      const std::uint8_t* czm = below ? below->cls.data() + y * nx : nullptr;
      const std::uint8_t* czp = above_layer ? above_layer->cls.data() + y * nx : nullptr;
      for (std::int64_t x = range.lo; x <= range.hi; ++x) {
        const unsigned mask =
            owner_mask(c[x], x > 0 ? c[x - 1] : kOutside, x + 1 < nx ? c[x + 1] : kOutside, cym ? cym[x] : kOutside,
                       cyp ? cyp[x] : kOutside, czm ? czm[x] : kOutside, czp ? czp[x] : kOutside);
        if constexpr (Emit) {
          numbering->first[y * nx + x] = next_index;
          numbering->mask[y * nx + x] = static_cast<std::uint8_t>(mask);
          if (own_layer && mask != 0) write_vertices(x, y, z, mask, next_index);
        }
        next_index += static_cast<std::uint64_t>(popcount4(mask));
      }
    }
    return next_index;
  }

  void write_vertices(std::int64_t x, std::int64_t y, std::int64_t z, unsigned mask, std::uint64_t index) {
    const auto voxel = [this](std::int64_t vx, std::int64_t vy, std::int64_t vz) { return value(vx, vy, vz); };
    for (int slot = 0; slot < 4; ++slot) {
      if (!(mask & (1u << slot))) continue;
      float position[3], normal[3], vertex_value;
      vertex_attributes(voxel, grid_, level_, x, y, z, slot, options_.normals, options_.flip, position, vertex_value,
                        normal);
      mesh_->vertices[index] = {position[0], position[1], position[2]};
      if (options_.normals) mesh_->normals[index] = {normal[0], normal[1], normal[2]};
      if (options_.values) mesh_->values[index] = vertex_value;
      ++index;
    }
  }

  // Counts (or writes, from triangle index `next`) the triangles of cell layer z.
  template <bool Emit, class Index>
  std::uint64_t cell_layer(std::int64_t z, std::uint64_t next, std::array<Index, 3>* triangles) {
    const std::int64_t nx = volume_.nx, ny = volume_.ny;
    const LayerClasses& l0 = classes_[z % 3];
    const LayerClasses& l1 = classes_[(z + 1) % 3];
    const LayerNumbering* numbering[2] = {&numbering_[z % 2], &numbering_[(z + 1) % 2]};
    for (std::int64_t y = 0; y + 1 < ny; ++y) {
      const RowRef rows[4] = {{&l0, y}, {&l0, y + 1}, {&l1, y}, {&l1, y + 1}};
      const Range range = active_range(rows, 4, nx);
      const std::uint8_t* r00 = l0.cls.data() + y * nx;
      const std::uint8_t* r01 = r00 + nx;
      const std::uint8_t* r10 = l1.cls.data() + y * nx;
      const std::uint8_t* r11 = r10 + nx;
      for (std::int64_t x = range.lo; x <= std::min(range.hi, nx - 2); ++x) {
        const std::uint8_t corner[8] = {r00[x], r00[x + 1], r01[x + 1], r01[x], r10[x], r10[x + 1], r11[x + 1], r11[x]};
        const unsigned c = cell_case(corner);
        if (c == 0 || c == 255) continue;
        std::uint8_t local[kMaxTriangles][3];
        const int n = cell_triangles(kCaseTable, corner, options_.allow_degenerate, options_.flip, local);
        if constexpr (Emit) {
          for (int t = 0; t < n; ++t) {
            std::array<Index, 3>& out = triangles[next + static_cast<std::uint64_t>(t)];
            for (int k = 0; k < 3; ++k) {
              const VertexHome home = vertex_home(kCaseTable, local[t][k]);
              const std::int64_t at = (y + home.dy) * nx + x + home.dx;
              const LayerNumbering& layer = *numbering[home.dz];
              out[k] = static_cast<Index>(layer.first[at] +
                                          static_cast<std::uint64_t>(rank_in_voxel(layer.mask[at], home.slot)));
            }
          }
        }
        next += static_cast<std::uint64_t>(n);
      }
    }
    return next;
  }

  // The slab's walk: layer L's classes are ready one step ahead of its masks, and cell layer L - 1
  // follows them. The layer z1 after the slab is numbered (Emit) but its vertices are the next
  // slab's to write.
  template <bool Emit, class Index>
  void walk(std::int64_t z0, std::int64_t z1, Counts& counts, std::array<Index, 3>* triangles) {
    const std::int64_t nz = volume_.nz;
    if (z0 > 0) classify(z0 - 1);
    classify(z0);
    std::uint64_t vertex = Emit ? counts.vertices : 0, triangle = Emit ? counts.triangles : 0;
    const std::int64_t last = std::min(z1, nz - 1);
    for (std::int64_t layer = z0; layer <= last; ++layer) {
      if (layer + 1 < nz) classify(layer + 1);
      if (Emit || layer < z1) vertex = number_layer<Emit>(layer, vertex, layer < z1);
      if (layer > z0) triangle = cell_layer<Emit, Index>(layer - 1, triangle, triangles);
    }
    if (!Emit) counts = {vertex, triangle};
  }

  VolumeView<const T> volume_;
  double level_;
  IsosurfaceOptions options_;
  Grid grid_;
  LayerClasses classes_[3];
  LayerNumbering numbering_[2];
  Mesh* mesh_ = nullptr;
};

// Slabs of whole layers: a few per thread for balance, at most max_slab_voxels voxels each.
std::vector<std::int64_t> slab_starts(std::int64_t nx, std::int64_t ny, std::int64_t nz, std::int64_t max_voxels,
                                      int threads) {
  std::int64_t layers = std::max<std::int64_t>(16, (nz + 4 * threads - 1) / (4 * threads));
  if (max_voxels > 0) layers = std::min(layers, std::max<std::int64_t>(1, max_voxels / (nx * ny)));
  std::vector<std::int64_t> starts;
  for (std::int64_t z = 0; z < nz; z += layers) starts.push_back(z);
  starts.push_back(nz);
  return starts;
}

}  // namespace

template <class T>
void isosurface(VolumeView<const T> volume, double level, const IsosurfaceOptions& options, Mesh& mesh) {
  mesh.vertices.clear(), mesh.triangles.clear(), mesh.triangles64.clear(), mesh.normals.clear(), mesh.values.clear();
  if (volume.nx < 2 || volume.ny < 2 || volume.nz < 2) return;  // no cells: no surface
  const int threads = cpu_threads();
  const std::vector<std::int64_t> starts = slab_starts(volume.nx, volume.ny, volume.nz, options.max_slab_voxels, threads);
  const auto slabs = static_cast<std::int64_t>(starts.size()) - 1;
  using Counts = typename SlabExtractor<T>::Counts;
  std::vector<Counts> offsets(static_cast<std::size_t>(slabs) + 1);
#pragma omp parallel num_threads(threads)
  {
    SlabExtractor<T> extractor(volume, level, options);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t s = 0; s < slabs; ++s) offsets[s + 1] = extractor.count(starts[s], starts[s + 1]);
  }
  for (std::int64_t s = 0; s < slabs; ++s) {  // exclusive prefix over slabs
    offsets[s + 1].vertices += offsets[s].vertices;
    offsets[s + 1].triangles += offsets[s].triangles;
  }
  const Counts total = offsets[slabs];
  mesh.vertices.resize(total.vertices);
  if (options.normals) mesh.normals.resize(total.vertices);
  if (options.values) mesh.values.resize(total.vertices);
  const bool wide = total.vertices > 0xFFFFFFFFull;
  if (wide) mesh.triangles64.resize(total.triangles);
  else mesh.triangles.resize(total.triangles);
#pragma omp parallel num_threads(threads)
  {
    SlabExtractor<T> extractor(volume, level, options);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t s = 0; s < slabs; ++s) {
      if (wide) extractor.emit(starts[s], starts[s + 1], offsets[s], mesh, mesh.triangles64.data());
      else extractor.emit(starts[s], starts[s + 1], offsets[s], mesh, mesh.triangles.data());
    }
  }
}

#define WINNOW_INSTANTIATE(T) \
  template void isosurface<T>(VolumeView<const T>, double, const IsosurfaceOptions&, Mesh&);
WINNOW_INSTANTIATE(std::uint8_t)
WINNOW_INSTANTIATE(std::uint16_t)
WINNOW_INSTANTIATE(std::int16_t)
WINNOW_INSTANTIATE(float)
WINNOW_INSTANTIATE(double)
#undef WINNOW_INSTANTIATE

}  // namespace winnow::detail::cpu
