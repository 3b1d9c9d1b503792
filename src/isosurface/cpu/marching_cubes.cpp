// Marching cubes on the CPU: OpenMP over slabs of z, two passes (count, then emit), the per-cell
// rules of isosurface/cell.hpp. The algorithm, the numbering across slabs and the precision rules
// are described in src/isosurface/isosurface.cpp; this file is their CPU form.
//
// Bit planes. Every question the passes ask about voxels is answered 64 voxels at a time, on
// words of bits along x:
// - Classification: per row, one word of "above" bits per 64 voxels, by the SIMD compare of
//   stream compaction (common/cpu/simd.cpp). The double comparison of the contract
//   becomes an exact comparison in the voxel's own type: for float, value > level iff value > the
//   largest float <= level; for 8/16-bit unsigned voxels, value > level iff value >= floor(level)
//   + 1. Types without such a kernel (int16) compare in double, as the contract says.
// - Ownership: a voxel's +x edge carries a vertex when `above ^ above_of_x+1` (crossed); the +y
//   and +z edges are the same with the next row and the next layer. Three words (+x, +y, +z) per
//   64 voxels are the owner masks of isosurface/cell.hpp, bit-sliced; popcounts count them. Bits
//   past the volume's end are zero, and +x edges leaving the volume are masked off.
// - Cells: a cell is crossed unless its 8 corners agree, i.e. the OR of its corners' above bits
//   and not their AND; the OR and AND of the four rows of a cell row, shifted by one voxel, give
//   the crossed cells of 64 at a time. Only those are visited (in empty space, no per-voxel work
//   at all: the word tests replace Flying Edges' per-row trimming, Schroeder et al. 2015). A
//   crossed cell has exactly its case's triangles.
// - Numbering (pass 2): the owning voxels of a layer are walked bit by bit in raster order; each
//   gets the index of its first vertex and its owner mask, packed in one word, which is all a
//   triangle needs (first + rank_in_voxel). Voxels that own nothing are never written nor read.
//
// Per slab of voxel layers [z0, z1), one thread walks the layers in order, keeping a ring of three
// layers of class bits and two layers of numbering: memory O(nx ny) per thread, never O(volume).
// Layer L's owner words need the classes of L and L+1; cell layer L-1 needs the classes and
// numbering of layers L-1 and L.
//
// Complexity: each pass reads every voxel about 1 + 1 / (layers per slab) times (the layer after
// a slab is classified again), does O(1) word operations per 64 voxels,
// visits crossed cells only, and writes each vertex and triangle once. Work O(n / threads / 64 +
// n / SIMD width + output).
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/cpu/simd.hpp"
#include "common/threads.hpp"
#include "isosurface/backends.hpp"
#include "isosurface/cell.hpp"

namespace winnow::detail::cpu {
namespace {

using namespace iso;

// Bits x0 .. x0 + 63 of a row: bit j is voxel x0 + j.
using Word = std::uint64_t;

// Voxel x + 1's bit at bit x (the next word's first bit comes in at the top).
inline Word next_voxel(Word w, Word following) { return (w >> 1) | (following << 63); }
// Without a popcount instruction in the build's baseline, the compiler would call libgcc for each
// count; the SWAR form stays inline.
inline int bit_count(Word w) {
#if defined(__POPCNT__)
  return std::popcount(w);
#else
  w -= (w >> 1) & 0x5555555555555555ull;
  w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
  w = (w + (w >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return static_cast<int>((w * 0x0101010101010101ull) >> 56);
#endif
}
inline Word bits_below(int b) { return (Word{1} << b) - 1; }  // b in 0..63
inline unsigned bit_at(Word w, int b) { return static_cast<unsigned>(w >> b) & 1u; }

// The above bits of one layer of voxels: row y's words start at y * words_per_row.
using LayerBits = std::vector<Word>;

// The owner masks of 64 voxels, bit-sliced by slot (kEdgeXSlot, kEdgeYSlot, kEdgeZSlot).
struct OwnerWords {
  Word slot[3];
};

// The numbering of one layer (pass 2), nx ny entries set only at the voxels that own vertices (the
// only ones a triangle refers to): first vertex index << 3 | owner mask.
using LayerNumbering = std::vector<std::uint64_t>;
inline std::uint64_t pack_numbering(std::uint64_t first, unsigned mask) { return first << 3 | mask; }

// rank_in_voxel(mask, slot) of isosurface/cell.hpp (the mask's bits below the slot), tabulated.
constexpr std::array<std::array<std::uint8_t, 3>, 8> kRankInVoxel = [] {
  std::array<std::array<std::uint8_t, 3>, 8> ranks{};
  for (unsigned mask = 0; mask < 8; ++mask)
    for (int slot = 0; slot < 3; ++slot)
      ranks[mask][slot] = static_cast<std::uint8_t>(std::popcount(mask & ((1u << slot) - 1u)));
  return ranks;
}();
inline std::uint64_t unpack_index(std::uint64_t packed, int slot) {
  return (packed >> 3) + kRankInVoxel[packed & 7][slot];
}

// The owner mask (isosurface/cell.hpp's owner_mask) of voxel b of the 64.
inline unsigned owner_mask_at(const OwnerWords& owners, int b) {
  return bit_at(owners.slot[0], b) | bit_at(owners.slot[1], b) << 1 | bit_at(owners.slot[2], b) << 2;
}

// Turns rows of voxels of type T into above bits with the contract's double semantics.
template <class T>
class RowClassifier {
 public:
  explicit RowClassifier(double level) : level_(level) {
    if constexpr (std::is_same_v<T, float>) {
      float below_or_at = static_cast<float>(level);  // then the largest float <= level
      if (static_cast<double>(below_or_at) > level) below_or_at = std::nextafter(below_or_at, -INFINITY);
      set(simd::Elem::f32, where(CompareOp::greater, below_or_at));
    } else if constexpr (std::is_same_v<T, double>) {
      set(simd::Elem::f64, where(CompareOp::greater, level));
    } else if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t>) {
      constexpr double kMax = static_cast<double>(std::numeric_limits<T>::max());
      const double least_above = std::floor(level) + 1;  // the smallest integer > level
      const simd::Elem elem = std::is_same_v<T, std::uint8_t> ? simd::Elem::u8 : simd::Elem::u16;
      if (!(least_above > 0)) set(elem, where(CompareOp::greater_equal, T{0}));                 // all above
      else if (least_above > kMax) set(elem, where(CompareOp::greater, static_cast<T>(kMax)));  // none
      else set(elem, where(CompareOp::greater_equal, static_cast<T>(least_above)));
    }
  }

  // The rows of a layer (ny rows of nx voxels, `row(y)` their starts; `words` per row). When the
  // rows follow each other in memory the layer is one run for the SIMD kernel, whose bit stream
  // is then cut into rows: a call per row would spend more on its tail (a row rarely ends on 64
  // voxels) than on the row.
  template <class RowStart>
  void classify_layer(RowStart row, std::int64_t nx, std::int64_t ny, bool dense, std::int64_t words, Word* above) {
    if (!dense || !has_kernel_) {
      for (std::int64_t y = 0; y < ny; ++y) classify(row(y), nx, above + y * words);
      return;
    }
    const std::int64_t n = nx * ny;
    const auto stream_words = static_cast<std::size_t>((n + 63) / 64);
    stream_above_.assign(stream_words + 2, 0);  // the cut below may read past the stream: zeros
    classify(row(0), n, stream_above_.data());
    const Word last_word_mask = nx % 64 == 0 ? ~Word{0} : bits_below(static_cast<int>(nx % 64));
    for (std::int64_t y = 0; y < ny; ++y) {
      const std::int64_t first_bit = y * nx, from = first_bit >> 6;
      const int shift = static_cast<int>(first_bit & 63);
      for (std::int64_t w = 0; w < words; ++w) {
        const Word low = stream_above_[static_cast<std::size_t>(from + w)] >> shift;
        const Word cut = shift == 0 ? low : low | stream_above_[static_cast<std::size_t>(from + w + 1)] << (64 - shift);
        above[y * words + w] = cut & (w + 1 == words ? last_word_mask : ~Word{0});
      }
    }
  }

  // Writes ceil(n / 64) words (bits past n zero).
  void classify(const T* row, std::int64_t n, Word* above) const {
    if (has_kernel_) {
      simd::match_bits(elem_, row, static_cast<std::size_t>(n), above_pred_, above);
      return;
    }
    std::fill(above, above + (n + 63) / 64, Word{0});
    for (std::int64_t x = 0; x < n; ++x)
      above[x >> 6] |= Word{iso::above(static_cast<double>(row[x]), level_)} << (x & 63);
  }

 private:
  void set(simd::Elem elem, Predicate above) { has_kernel_ = true, elem_ = elem, above_pred_ = above; }

  double level_;
  bool has_kernel_ = false;
  simd::Elem elem_{};
  Predicate above_pred_;
  std::vector<Word> stream_above_;  // a whole layer's bits
};

template <class T>
class SlabExtractor {
 public:
  SlabExtractor(VolumeView<const T> volume, double level, const IsosurfaceOptions& options)
      : volume_(volume),
        level_(level),
        options_(options),
        grid_{volume.nx, volume.ny,         volume.nz,         volume.sx,        volume.sy,
              volume.sz, options.origin[0], options.origin[1], options.origin[2]},
        classifier_(level),
        words_((volume.nx + 63) / 64) {
    const auto plane = static_cast<std::size_t>(words_ * volume.ny);
    for (auto& layer : classes_) layer.resize(plane);
    for (int edge = 0; edge < 12; ++edge) {
      const VertexHome home = vertex_home(kCaseTable, edge);
      edge_home_[static_cast<std::size_t>(edge)] = {home.dz, home.slot, home.dy * volume.nx + home.dx};
    }
    // Per word: the voxels whose +x edge stays inside the volume (they also start the cells of a row).
    edge_x_.assign(static_cast<std::size_t>(words_), ~Word{0});
    for (std::int64_t w = 0; w < words_; ++w) {
      const std::int64_t inside = volume.nx - 1 - 64 * w;  // voxels x < nx - 1 in this word
      if (inside < 64) edge_x_[w] = inside <= 0 ? 0 : bits_below(static_cast<int>(inside));
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
    if (numbering_[0].empty())
      for (auto& n : numbering_) n.resize(static_cast<std::size_t>(volume_.nx * volume_.ny));
    mesh_ = &mesh;
    walk<true, Index>(z0, z1, offsets, triangles);
  }

 private:
  double value(std::int64_t x, std::int64_t y, std::int64_t z) const { return static_cast<double>(volume_(x, y, z)); }

  // classify, number_layer and cell_layer run once per layer; they are kept out of line so that
  // profiles show the three steps apart.
  __attribute__((noinline)) void classify(std::int64_t z) {
    LayerBits& layer = classes_[z % 3];
    classifier_.classify_layer([&](std::int64_t y) { return volume_.row(y, z); }, volume_.nx, volume_.ny,
                               volume_.row_stride == volume_.nx, words_, layer.data());
  }

  // Owner words of word w of row y of layer z.
  OwnerWords owner_words(std::int64_t z, std::int64_t y, std::int64_t w) const {
    const std::int64_t ny = volume_.ny, nz = volume_.nz, at = y * words_ + w;
    const LayerBits& here = classes_[z % 3];
    const Word a = here[at];
    const Word a_xp = next_voxel(a, w + 1 < words_ ? here[at + 1] : 0);
    OwnerWords out;
    out.slot[kEdgeXSlot] = (a ^ a_xp) & edge_x_[w];
    out.slot[kEdgeYSlot] = y + 1 < ny ? a ^ here[at + words_] : 0;
    out.slot[kEdgeZSlot] = z + 1 < nz ? a ^ classes_[(z + 1) % 3][at] : 0;
    return out;
  }

  // Numbers (Emit) or counts the vertices of voxel layer z; writes those of an own layer (Emit).
  template <bool Emit>
  __attribute__((noinline)) std::uint64_t number_layer(std::int64_t z, std::uint64_t next_index, bool own_layer) {
    LayerNumbering* numbering = Emit ? &numbering_[z % 2] : nullptr;
    for (std::int64_t y = 0; y < volume_.ny; ++y)
      for (std::int64_t w = 0; w < words_; ++w) {
        const OwnerWords owners = owner_words(z, y, w);
        const Word owning = owners.slot[0] | owners.slot[1] | owners.slot[2];
        if (owning == 0) continue;
        if constexpr (Emit) {
          for (Word left = owning; left != 0; left &= left - 1) {
            const int b = std::countr_zero(left);
            const std::int64_t x = 64 * w + b;
            const unsigned mask = owner_mask_at(owners, b);
            (*numbering)[y * volume_.nx + x] = pack_numbering(next_index, mask);
            if (own_layer) write_vertices(x, y, z, mask, next_index);
            next_index += static_cast<std::uint64_t>(popcount3(mask));
          }
        } else {
          next_index += static_cast<std::uint64_t>(bit_count(owners.slot[0]) + bit_count(owners.slot[1]) +
                                                   bit_count(owners.slot[2]));
        }
      }
    return next_index;
  }

  void write_vertices(std::int64_t x, std::int64_t y, std::int64_t z, unsigned mask, std::uint64_t index) {
    const auto voxel = [this](std::int64_t vx, std::int64_t vy, std::int64_t vz) { return value(vx, vy, vz); };
    for (int slot = 0; slot < 3; ++slot) {
      if (!(mask & (1u << slot))) continue;
      float position[3], normal[3] = {}, vertex_value;  // normal: written only when asked for
      vertex_attributes(voxel, grid_, level_, x, y, z, slot, options_.normals, options_.flip, position, vertex_value,
                        normal);
      mesh_->vertices[index] = {position[0], position[1], position[2]};
      if (options_.normals) mesh_->normals[index] = {normal[0], normal[1], normal[2]};
      if (options_.values) mesh_->values[index] = vertex_value;
      if (options_.vertex_keys)
        mesh_->vertex_keys[index] = static_cast<std::uint64_t>((z * volume_.ny + y) * volume_.nx + x) * 3 + slot;
      ++index;
    }
  }

  // Counts (or writes, from triangle index `next`) the triangles of cell layer z.
  template <bool Emit, class Index>
  __attribute__((noinline)) std::uint64_t cell_layer(std::int64_t z, std::uint64_t next,
                                                     std::array<Index, 3>* triangles) {
    const std::int64_t ny = volume_.ny;
    const LayerBits& l0 = classes_[z % 3];
    const LayerBits& l1 = classes_[(z + 1) % 3];
    const LayerNumbering* numbering[2] = {&numbering_[z % 2], &numbering_[(z + 1) % 2]};
    const std::uint64_t* rows[2] = {};
    for (std::int64_t y = 0; y + 1 < ny; ++y) {
      if constexpr (Emit)
        rows[0] = numbering[0]->data() + y * volume_.nx, rows[1] = numbering[1]->data() + y * volume_.nx;
      // The four rows of voxels of cell row y: above[dz][dy].
      const Word* above[2][2] = {{l0.data() + y * words_, l0.data() + (y + 1) * words_},
                                 {l1.data() + y * words_, l1.data() + (y + 1) * words_}};
      const auto word_or = [&](std::int64_t w) {
        return w < words_ ? (above[0][0][w] | above[0][1][w] | above[1][0][w] | above[1][1][w]) : Word{0};
      };
      const auto word_and = [&](std::int64_t w) {
        return w < words_ ? (above[0][0][w] & above[0][1][w] & above[1][0][w] & above[1][1][w]) : Word{0};
      };
      for (std::int64_t w = 0; w < words_; ++w) {
        const Word any_above = word_or(w), all_above = word_and(w);
        const Word crossed_cells = ((any_above | next_voxel(any_above, word_or(w + 1))) &
                                    ~(all_above & next_voxel(all_above, word_and(w + 1)))) &
                                   edge_x_[w];
        if (crossed_cells == 0) continue;
        const bool has_next_word = w + 1 < words_;
        Word a[2][2], a_xp[2][2];
        for (int dz = 0; dz < 2; ++dz)
          for (int dy = 0; dy < 2; ++dy) {
            a[dz][dy] = above[dz][dy][w];
            a_xp[dz][dy] = next_voxel(a[dz][dy], has_next_word ? above[dz][dy][w + 1] : 0);
          }
        // Corners in the order of isosurface/cases.hpp: (x,y,z) (x+1,y,z) (x+1,y+1,z) (x,y+1,z), then z+1.
        const Word corner_above[8] = {a[0][0], a_xp[0][0], a_xp[0][1], a[0][1],
                                      a[1][0], a_xp[1][0], a_xp[1][1], a[1][1]};
        for (Word left = crossed_cells; left != 0; left &= left - 1) {
          const int b = std::countr_zero(left);
          unsigned c = 0;
          for (int i = 0; i < 8; ++i) c |= bit_at(corner_above[i], b) << i;
          const int n = kCaseTable.triangle_count[c];
          if constexpr (Emit) {
            const std::int64_t x = 64 * w + b;
            // The global index of the vertex on `edge` of this cell.
            const auto vertex_index = [&](int edge) {
              const EdgeHome& home = edge_home_[edge];
              return static_cast<Index>(unpack_index(rows[home.layer][x + home.offset], home.slot));
            };
            for (int t = 0; t < n; ++t) {
              int edge[3];
              cell_triangle(kCaseTable, c, t, options_.flip, edge);
              triangles[next + static_cast<std::uint64_t>(t)] = {vertex_index(edge[0]), vertex_index(edge[1]),
                                                                 vertex_index(edge[2])};
            }
          }
          next += static_cast<std::uint64_t>(n);
        }
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
  RowClassifier<T> classifier_;  // holds a layer's bit stream: one per thread
  std::int64_t words_;           // words per row
  std::vector<Word> edge_x_;
  LayerBits classes_[3];
  LayerNumbering numbering_[2];
  // Where each edge's vertex lives (isosurface/cell.hpp's vertex_home): the numbering layer (dz),
  // the offset from the cell's origin within it, and the slot.
  struct EdgeHome {
    int layer, slot;
    std::int64_t offset;
  };
  std::array<EdgeHome, 12> edge_home_{};
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

// Makes the threads of a parallel region wait for each other by sleeping (a futex, through
// std::atomic::wait) rather than by spinning. OpenMP's barriers spin first (GOMP_SPINCOUNT), and
// on a machine whose cores are shared a spinning thread takes the core from the thread it waits
// for: the region's two phases would then take much longer with two threads than with one.
class SleepingBarrier {
 public:
  // Each thread of the team calls this with the team's size before it first arrives.
  void set_team_size(int threads) { threads_.store(threads, std::memory_order_relaxed); }
  // The last thread to arrive runs `last`, then all go on.
  template <class Last>
  void arrive_and_wait(Last&& last) {
    const int generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_.load(std::memory_order_relaxed)) {
      last();
      arrived_.store(0, std::memory_order_relaxed);
      generation_.store(generation + 1, std::memory_order_release);
      generation_.notify_all();
      return;
    }
    while (generation_.load(std::memory_order_acquire) == generation) generation_.wait(generation);
  }

 private:
  std::atomic<int> threads_{0}, arrived_{0}, generation_{0};
};

}  // namespace

template <class T>
void isosurface(VolumeView<const T> volume, double level, const IsosurfaceOptions& options, Mesh& mesh) {
  mesh.vertices.clear(), mesh.triangles.clear(), mesh.triangles64.clear(), mesh.normals.clear(), mesh.values.clear();
  mesh.vertex_keys.clear();
  if (volume.nx < 2 || volume.ny < 2 || volume.nz < 2) return;  // no cells: no surface
  const int threads = cpu_threads();
  const std::vector<std::int64_t> starts =
      slab_starts(volume.nx, volume.ny, volume.nz, options.max_slab_voxels, threads);
  const auto slabs = static_cast<std::int64_t>(starts.size()) - 1;
  using Counts = typename SlabExtractor<T>::Counts;
  std::vector<Counts> offsets(static_cast<std::size_t>(slabs) + 1);
  bool wide = false;
  std::exception_ptr failure;  // an allocation that failed, rethrown outside the region
  // One region: count the slabs (taken one at a time), then the last thread to finish sums them
  // and sizes the mesh (zeroing it: the longest serial step) while the others sleep, then emit.
  std::atomic<std::int64_t> next_to_count{0}, next_to_emit{0};
  std::atomic<std::uint64_t> layers_done{0};  // of 2 nz: both passes
  const auto report = [&](std::int64_t layers) {
    const std::uint64_t done =
        layers_done.fetch_add(static_cast<std::uint64_t>(layers)) + static_cast<std::uint64_t>(layers);
    if (options.progress) options.progress(done, 2 * static_cast<std::uint64_t>(volume.nz));
  };
  SleepingBarrier barrier;
#pragma omp parallel num_threads(threads)
  {
    barrier.set_team_size(omp_get_num_threads());
    SlabExtractor<T> extractor(volume, level, options);
    for (std::int64_t s; (s = next_to_count.fetch_add(1, std::memory_order_relaxed)) < slabs;) {
      offsets[s + 1] = extractor.count(starts[s], starts[s + 1]);
      report(starts[s + 1] - starts[s]);
    }
    barrier.arrive_and_wait([&] {
      for (std::int64_t s = 0; s < slabs; ++s) {  // exclusive prefix over slabs
        offsets[s + 1].vertices += offsets[s].vertices;
        offsets[s + 1].triangles += offsets[s].triangles;
      }
      const Counts total = offsets[slabs];
      try {
        mesh.vertices.resize(total.vertices);
        if (options.normals) mesh.normals.resize(total.vertices);
        if (options.values) mesh.values.resize(total.vertices);
        if (options.vertex_keys) mesh.vertex_keys.resize(total.vertices);
        wide = total.vertices > 0xFFFFFFFFull;
        if (wide) mesh.triangles64.resize(total.triangles);
        else mesh.triangles.resize(total.triangles);
      } catch (...) {
        failure = std::current_exception();
      }
    });
    if (!failure)
      for (std::int64_t s; (s = next_to_emit.fetch_add(1, std::memory_order_relaxed)) < slabs;) {
        if (wide) extractor.emit(starts[s], starts[s + 1], offsets[s], mesh, mesh.triangles64.data());
        else extractor.emit(starts[s], starts[s + 1], offsets[s], mesh, mesh.triangles.data());
        report(starts[s + 1] - starts[s]);
      }
  }
  if (failure) std::rethrow_exception(failure);
}

#define WINNOW_INSTANTIATE(T) template void isosurface<T>(VolumeView<const T>, double, const IsosurfaceOptions&, Mesh&);
WINNOW_ISOSURFACE_TYPES(WINNOW_INSTANTIATE)
#undef WINNOW_INSTANTIATE

}  // namespace winnow::detail::cpu
