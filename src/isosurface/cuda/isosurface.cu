// Marching cubes on a CUDA device: the same welded, oriented mesh as the CPU backend, bit for bit.
//
// What is computed is fixed by winnow/isosurface.hpp and the per-voxel rules of
// isosurface/cell.hpp (shared with the CPU backend): vertex k belongs to the k-th owned slot in
// raster order of the owning voxels, triangle k to the k-th surviving triangle in raster order of
// the cells. Both numberings are prefix sums of small per-voxel counts (0..3 vertices, 0..5
// triangles), i.e. stream expansions, and this file does them the way the HistoPyramid capability
// does (src/histopyramid/cuda/histopyramid.cu): by output range, with the counts never stored.
//
//   classify  a warp per 128-voxel piece of a row (4 voxels per lane), marching 32 layers of z:
//             rows become "above" bits kept in shared memory for the rows around;
//             most lanes see uniform bits and store zeros, the others take their cases and
//             crossings from the bits; one byte per voxel: owner mask and triangle count;
//   sums      per tile of 256 voxels (a piece of a row; tiles follow raster order), 8 bytes per
//             lane, a warp per 4 tiles, the sums of the vertex and triangle counts (16 bytes per tile);
//   top       an exclusive scan of the tile sums (cub::DeviceScan), whose end holds the totals;
//             a one-thread kernel copies them out (device, and host-mapped memory) and decides
//             whether the outputs have room;
//   keys      two passes over the bytes (a warp per tile, 8 voxels per lane, a warp scan): the
//             first leaves per voxel its first vertex's number (4 bytes per voxel: how a triangle
//             finds the vertex of an edge owned by another voxel) and writes each vertex's key
//             (voxel, slot) into its output slot; the second writes each triangle's key (cell,
//             rank) into its slot; tiles with nothing to number leave at once; a tile's keys are
//             written by the warp together, output t by lane t % 32 (consecutive stores);
//   dense     one thread per output reads its key and computes the output in place: positions,
//             normals and values (double arithmetic, gradients), and triangles (the cell's table
//             entry, three vertex numbers). A surface touches a voxel or two per warp, so doing
//             this work in the voxel passes would run warps with one lane in 32 busy: measured
//             on the H200, the vertex pass alone took 0.48 ms of a 0.82 ms call (256^3 sphere).
// The volume is read about once by the classification and again only around the surface; the
// bytes are read three times; every output is written twice (key, value). Measured on the H200
// (256^3 sphere, ncu): with one thread per voxel reading its 11 neighbours the classification took
// 290 us and each key pass 90 us of a 0.38 ms call.
//
// Why not a descent of a stored pyramid per output key (HP5): a triangle needs the numbers of up
// to three vertices owned by other voxels, which a key descent cannot give without a second
// structure; the per-voxel vertex numbers give them in one load, and by-output-range traversal
// reads nothing per key. Cost: O(n) work and the 5 bytes per voxel of temporary storage.
//
// Slabs (the host API): a volume larger than the device takes, or options.max_slab_voxels, is cut
// into slabs of z. A slab [z0, z1) owns the vertices of its voxel layers and the cells whose
// origin lies in them; it also numbers the vertices of layer z1 (the next slab's first layer,
// "extra" here) without writing them, so its last cell layer can index them: vertex order is
// raster order, so those numbers are exactly the ones the next slab gives them. Each slab's
// device buffer also holds one layer below and two above (owner masks and gradients read them).
// Slabs are extracted one after the other, each copied out before the next: the mesh never has
// to fit on the device. Without slabs the host API counts, reads the totals, allocates, extracts.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/cuda/check.cuh"
#include "common/cuda/staging.cuh"
#include "isosurface/backends.hpp"
#include "isosurface/cell.hpp"
#include "winnow/cuda/isosurface.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cuda {
namespace {

namespace iso = winnow::detail::iso;

constexpr int kThreads = 256;  // voxels per tile

/// The voxels of a device buffer holding layers [z_first, z_first + layers) of the volume.
template <class T>
struct DeviceField {
  const T* data;
  std::int64_t row_stride, slice_stride, z_first;
  __device__ __forceinline__ double operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return static_cast<double>(data[(z - z_first) * slice_stride + y * row_stride + x]);
  }
};

/// One slab: own layers [z0, z1), plus the extra layer z1 when z1 < nz. Voxel index space
/// v = ((z - z0) ny + y) nx + x runs over the own layers and then the extra one.
struct Slab {
  iso::Grid grid;
  std::int64_t z0 = 0, z1 = 0;
  std::uint64_t own_voxels = 0, extra_voxels = 0;
  unsigned own_tiles = 0, tiles = 0, chunks = 1;  // chunks: tiles per row
  double level = 0;
  bool flip = false, normals = false, values = false;
};

struct Sums {
  unsigned long long vertices, triangles;
};
struct AddSums {
  __device__ __forceinline__ Sums operator()(const Sums& a, const Sums& b) const {
    return {a.vertices + b.vertices, a.triangles + b.triangles};
  }
};

/// A voxel of the slab: v = ((z - z0) ny + y) nx + x over the own layers, then the extra one.
/// Tiles are 256-voxel pieces of rows (row r, own layers' rows first, cut into `chunks` tiles), so
/// they follow raster order.
struct Locus {
  bool valid;
  std::uint64_t v;  ///< ((z - z0) ny + y) nx + x: own layers, then the extra layer
  std::int64_t x, y, z;
};

/// Whether a voxel is above, compared in the voxel's own type: exactly iso::above(double(v), level),
/// without converting every voxel to double. Floats compare against the largest float <= level
/// (v > it exactly when double(v) > level); 8- and 16-bit integers against floor(level) as an int.
template <class T>
struct Classifier {
  using Key = std::conditional_t<std::is_same_v<T, double>, double, std::conditional_t<std::is_same_v<T, float>, float, int>>;
  Key threshold;
  __device__ __forceinline__ bool above(T v) const { return static_cast<Key>(v) > threshold; }
};

template <class T>
Classifier<T> make_classifier(double level) {
  Classifier<T> c{};
  if constexpr (std::is_same_v<T, double>) {
    c.threshold = level;
  } else if constexpr (std::is_same_v<T, float>) {
    constexpr double kMax = std::numeric_limits<float>::max();
    float f;
    if (level == std::numeric_limits<double>::infinity()) f = std::numeric_limits<float>::infinity();
    else if (level >= kMax) f = std::numeric_limits<float>::max();
    else if (level < -kMax) f = -std::numeric_limits<float>::infinity();
    else {
      f = static_cast<float>(level);
      if (static_cast<double>(f) > level) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
    }
    c.threshold = f;
  } else {  // 8- and 16-bit integers: any threshold beyond +-2^20 acts like one at +-2^20
    const double t = std::floor(std::clamp(level, -1048576.0, 1048576.0));
    c.threshold = static_cast<int>(t);
  }
  return c;
}

/// The global-memory copy of the case table: cells index it by their own case, which
/// __constant__ memory would serialise across a warp; L1 serves divergent loads.
__device__ iso::CaseTable g_table = iso::kCaseTable;

/// The case of the cell at l, a cell of the volume (its +x, +y, +z neighbours exist: every
/// triangle's cell is one).
template <class T>
__device__ __forceinline__ unsigned cell_case_at(const DeviceField<T>& f, const Classifier<T>& classify, const Locus& l) {
  const T* p = f.data + (l.z - f.z_first) * f.slice_stride + l.y * f.row_stride + l.x;
  const std::int64_t rs = f.row_stride, ss = f.slice_stride;
  const T v[8] = {p[0], p[1], p[rs + 1], p[rs], p[ss], p[ss + 1], p[ss + rs + 1], p[ss + rs]};
  unsigned c = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) c |= static_cast<unsigned>(classify.above(v[i])) << i;
  return c;
}

// ---- kernels ---------------------------------------------------------------------------------

// ---- classification: 4 voxels per lane, rows of bits in shared memory, marching z --------------------

// A block is 8 warps; warp w owns the 128-voxel piece x0 .. x0 + 127 of row y0 + w, 4 voxels per
// lane, and marches kLayersPerBlock layers of z. Per layer each row of the block, and the halo
// row y0 + 8, is loaded once and becomes, per lane, 5 bits of "above" for x .. x + 4 (its 4
// voxels and the next one, from the next lane by a shuffle; lane 31 reads the voxel beyond the
// piece), 0 beyond the volume. Three planes of these rotate in shared memory (z and z + 1 read
// while z + 2 is written: one barrier per layer). A voxel's vertices are the crossings of its +x,
// +y and +z edges and its cell spans +x, +y and +z, so a lane needs the rows y and y + 1 of the
// layers z and z + 1 alone. It then decides its 4 voxels with bit operations:
//   uniform   the rows at z, z + 1 and y, y + 1 all below or all above: no edge crossed, no
//             cell cut, the 4 bytes are 0 (most lanes);
//   bits      otherwise: each voxel's cell case is 8 bits picked from 4 words, its crossings
//             the differences of neighbouring bits, its triangle count the table's.
// Measured on the H200 (ncu, 512^3 gyroid): a thread per voxel with planes of byte classes took
// ~210 warp instructions per 32 voxels, integer-bound; one voxel per lane with ballots, ~197.
constexpr int kRowsPerBlock = 8;               // warps per block, one row each
constexpr int kPlaneRows = kRowsPerBlock + 1;  // with the halo row y0 + 8
constexpr int kLayersPerBlock = 32;            // the layers a block marches through
constexpr int kVoxelsPerLane = 4;
constexpr int kPieceX = 32 * kVoxelsPerLane;   // voxels of a row per warp

/// A lane's 4 voxels as one aligned load.
template <class T>
struct alignas(kVoxelsPerLane * sizeof(T)) FourVoxels {
  T v[kVoxelsPerLane];
};

/// A lane's bits of one row: bit k (k = 0..4) for voxel x + k above (bit 4: the next lane's first
/// voxel), 0 beyond the volume; `row` points at the row (only read when `row_inside`), x is the
/// lane's first voxel; `vector`: rows are aligned for one FourVoxels load per lane. All lanes of
/// the warp call it (a shuffle).
template <class T>
__device__ __forceinline__ unsigned lane_row_bits(const T* row, bool row_inside, std::int64_t x, std::int64_t nx,
                                                  bool vector, const Classifier<T>& classify, int lane) {
  unsigned above = 0;
  if (row_inside) {
    T v[kVoxelsPerLane];
    const bool whole = x + kVoxelsPerLane <= nx;
    if (vector && whole) {
      const FourVoxels<T> four = *reinterpret_cast<const FourVoxels<T>*>(row + x);
#pragma unroll
      for (int j = 0; j < kVoxelsPerLane; ++j) v[j] = four.v[j];
    } else {
#pragma unroll
      for (int j = 0; j < kVoxelsPerLane; ++j) v[j] = x + j < nx ? row[x + j] : T{};
    }
    const unsigned inside = whole ? 0xfu : x >= nx ? 0u : (1u << (nx - x)) - 1u;
#pragma unroll
    for (int j = 0; j < kVoxelsPerLane; ++j) above |= static_cast<unsigned>(classify.above(v[j])) << j;
    above &= inside;
  }
  unsigned right_above = __shfl_down_sync(0xffffffffu, above, 1) & 1u;
  if (lane == 31) {  // the voxel just past the warp's piece
    const std::int64_t hx = x + kVoxelsPerLane;
    right_above = row_inside && hx < nx ? static_cast<unsigned>(classify.above(row[hx])) : 0u;
  }
  return above | right_above << kVoxelsPerLane;
}

/// Spreads the 4 low bits of n to bit 0 of each byte (bit j to bit 8 j).
__device__ __forceinline__ unsigned spread_to_bytes(unsigned n) { return (n & 0xfu) * 0x00204081u & 0x01010101u; }

/// Triangle counts by a cell's corners taken in x pairs: index bits (0, 1) = corners 0, 1 (the
/// voxel and its +x neighbour), (2, 3) = corners 3, 2 (row y + 1), (4, 5) = corners 4, 5 (layer
/// z + 1), (6, 7) = corners 7, 6: the order in which a lane's row bits give them.
struct PairCounts {
  std::uint8_t count[256];
};
constexpr PairCounts make_pair_counts() {
  PairCounts p{};
  for (unsigned i = 0; i < 256; ++i) {
    const unsigned cell_case = (i & 0x33u) | ((i >> 1) & 0x44u) | ((i << 1) & 0x88u);  // swap bits 2-3 and 6-7
    p.count[i] = iso::kCaseTable.triangle_count[cell_case];
  }
  return p;
}
__device__ PairCounts g_pair_counts = make_pair_counts();

/// info[v] (owner mask | triangle count << 4) of every voxel of the slab's layers [z0, z1] (the
/// extra layer included); the scheme is described above.
template <class T>
__global__ void __launch_bounds__(32 * kRowsPerBlock, 4) classify_kernel(DeviceField<T> f, Classifier<T> classify,
                                                                      Slab s, std::int64_t layers,
                                                                      std::uint8_t* info) {
  __shared__ std::uint8_t planes[3][kPlaneRows][32];
  const int lane = threadIdx.x, warp = threadIdx.y;
  const std::int64_t nx = s.grid.nx, ny = s.grid.ny, nz = s.grid.nz;
  const std::uint64_t x_blocks = static_cast<std::uint64_t>((nx + kPieceX - 1) / kPieceX);
  const std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x % x_blocks) * kPieceX;
  const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.x / x_blocks) * kRowsPerBlock;
  const std::int64_t x = x0 + kVoxelsPerLane * lane, y = y0 + warp;
  // The rows this warp loads: its own, and for warp 0 the halo row y0 + 8.
  const std::int64_t halo_y = y0 + kRowsPerBlock;
  const bool own_row = y < ny, halo_row_inside = halo_y < ny;
  const T* own_base = f.data + y * f.row_stride;
  const T* halo_base = f.data + halo_y * f.row_stride;
  // One aligned load per lane when every row starts on a 4-voxel boundary.
  const bool vector = reinterpret_cast<std::uintptr_t>(f.data) % sizeof(FourVoxels<T>) == 0 && f.row_stride % 4 == 0 &&
                      f.slice_stride % 4 == 0;
  const auto load_plane = [&](std::int64_t z, std::int64_t layer, int slot) {  // layer: z's offset
    const bool z_inside = z < nz;
    planes[slot][warp][lane] =
        static_cast<std::uint8_t>(lane_row_bits(own_base + layer, z_inside && own_row, x, nx, vector, classify, lane));
    if (warp == 0)
      planes[slot][kRowsPerBlock][lane] = static_cast<std::uint8_t>(
          lane_row_bits(halo_base + layer, z_inside && halo_row_inside, x, nx, vector, classify, lane));
  };
  const bool y_edge = y + 1 < ny;
  const bool aligned = nx % 4 == 0 && reinterpret_cast<std::uintptr_t>(info) % 4 == 0;  // 4 bytes as one word
  const std::uint64_t layer_voxels = static_cast<std::uint64_t>(nx) * static_cast<std::uint64_t>(ny);
  const std::uint64_t column = static_cast<std::uint64_t>(y) * static_cast<std::uint64_t>(nx) + static_cast<std::uint64_t>(x);
  // Voxels x .. x + 3 whose +x edge (and cell) stays inside the volume.
  const unsigned x_edges = x + kVoxelsPerLane < nx ? 0xfu : x + 1 >= nx ? 0u : (1u << (nx - 1 - x)) - 1u;
  // Chunks of layers: blockIdx.y, then every gridDim.y-th (the grid's y is at most 65535).
  for (std::int64_t chunk = blockIdx.y; chunk * kLayersPerBlock < layers; chunk += gridDim.y) {
    const std::int64_t zbegin = s.z0 + chunk * kLayersPerBlock;
    const std::int64_t zend = std::min<std::int64_t>(zbegin + kLayersPerBlock, s.z0 + layers);
    __syncthreads();  // the previous chunk's last reads are done
    std::int64_t layer = (zbegin - f.z_first) * f.slice_stride;  // of layer z
    load_plane(zbegin, layer, 0);
    std::uint64_t v = static_cast<std::uint64_t>(zbegin - s.z0) * layer_voxels + column;
    int slot = 0;  // planes[slot] holds layer z
    for (std::int64_t z = zbegin; z < zend; ++z, v += layer_voxels) {
      const int above = slot == 2 ? 0 : slot + 1;
      // Three slots: z + 1 goes where z - 2 was, which no warp reads any more (a slower warp is at
      // most one layer behind, reading z - 1 and z).
      load_plane(z + 1, layer += f.slice_stride, above);
      __syncthreads();
      const unsigned here = planes[slot][warp][lane], y_plus = planes[slot][warp + 1][lane];
      const unsigned z_plus = planes[above][warp][lane], zy_plus = planes[above][warp + 1][lane];
      slot = above;
      if (!own_row) continue;
      const bool z_edge = z + 1 < nz;
      unsigned bytes = 0;  // voxel j's info in byte j
      // Bits 0..4: the lane's voxels and the next one along x.
      const unsigned any = here | y_plus | z_plus | zy_plus, all = here & y_plus & z_plus & zy_plus;
      if (any != 0 && all != 0x1fu) {
        const unsigned x_cross = (here ^ (here >> 1)) & x_edges;
        const unsigned y_cross = y_edge ? (here ^ y_plus) & 0xfu : 0u, z_cross = z_edge ? (here ^ z_plus) & 0xfu : 0u;
        bytes = spread_to_bytes(x_cross) | spread_to_bytes(y_cross) << 1 | spread_to_bytes(z_cross) << 2;
        if (z < s.z1 && y_edge && z_edge) {
#pragma unroll
          for (int j = 0; j < kVoxelsPerLane; ++j) {
            const unsigned pairs = ((here >> j) & 3u) | ((y_plus >> j) & 3u) << 2 | ((z_plus >> j) & 3u) << 4 |
                                   ((zy_plus >> j) & 3u) << 6;
            if ((x_edges >> j) & 1u) bytes |= static_cast<unsigned>(g_pair_counts.count[pairs]) << (8 * j + 4);
          }
        }
      }
      if (aligned && x + kVoxelsPerLane <= nx) {
        *reinterpret_cast<std::uint32_t*>(info + v) = bytes;
      } else {
#pragma unroll
        for (int j = 0; j < kVoxelsPerLane; ++j)
          if (x + j < nx) info[v + j] = static_cast<std::uint8_t>(bytes >> (8 * j));
      }
    }
  }
}

// ---- tiles: 256-voxel pieces of rows, one warp each, 8 voxels per lane ------------------------------

// The tile sums take 4 consecutive tiles per warp and issue their loads together (one tile per
// warp left each warp a chain of dependent loads with nothing to overlap: ncu, 512^3 gyroid, 79
// -> 54 us). The key passes keep one tile per warp: their time goes to the per-lane writes of
// the keys, and fewer warps made them slower (213 -> 288 us).
constexpr int kSumTilesPerWarp = 4, kKeyTilesPerWarp = 1;
/// Blocks of kThreads for `tiles` tiles at kTilesPerWarp tiles per warp.
template <int kTilesPerWarp>
unsigned blocks_for(unsigned tiles) {
  constexpr unsigned kPerBlock = kThreads / 32 * kTilesPerWarp;
  return (tiles + kPerBlock - 1) / kPerBlock;
}
template <int kTilesPerWarp>
__device__ __forceinline__ unsigned first_tile_of_warp() {
  return (blockIdx.x * (kThreads / 32) + threadIdx.x / 32) * kTilesPerWarp;
}

/// The bytes of tile `tile` that lane `lane` owns: info[first .. first + count).
struct LaneBytes {
  std::uint64_t first;  ///< voxel index v of the lane's first voxel
  int count;            ///< 0..8
  std::int64_t x, y, z; ///< the first voxel's coordinates
};
__device__ __forceinline__ LaneBytes lane_bytes(const Slab& s, unsigned tile, int lane) {
  const unsigned row = tile / s.chunks, chunk = tile - row * s.chunks;
  const unsigned layer = row / static_cast<unsigned>(s.grid.ny);
  LaneBytes b;
  b.x = static_cast<std::int64_t>(chunk) * kThreads + lane * 8;
  b.y = row - layer * static_cast<unsigned>(s.grid.ny);
  b.z = s.z0 + layer;
  const std::int64_t left = s.grid.nx - b.x;  // voxels of the row from the lane's first on
  b.count = left <= 0 ? 0 : left >= 8 ? 8 : static_cast<int>(left);
  b.first = static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(s.grid.nx) + static_cast<std::uint64_t>(b.x);
  return b;
}
/// The lane's 8 bytes, byte i in bits 8 i .. 8 i + 7 (0 past the row's end): one 8-byte load when
/// aligned (rows of a multiple of 8 voxels, temporary storage 8-byte aligned), else byte by byte.
__device__ __forceinline__ unsigned long long load_bytes(const std::uint8_t* info, const LaneBytes& b) {
  if (b.count == 8 && reinterpret_cast<std::uintptr_t>(info + b.first) % 8 == 0)
    return *reinterpret_cast<const unsigned long long*>(info + b.first);
  unsigned long long w = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i)
    if (i < b.count) w |= static_cast<unsigned long long>(info[b.first + i]) << (8 * i);
  return w;
}
__device__ __forceinline__ unsigned byte_of(unsigned long long w, int i) { return static_cast<unsigned>(w >> (8 * i)) & 0xffu; }
/// Vertices (owner mask bits) and triangles (high nibbles) of 8 info bytes.
__device__ __forceinline__ unsigned vertices_of(unsigned long long w) { return __popcll(w & 0x0707070707070707ull); }
__device__ __forceinline__ unsigned triangles_of(unsigned long long w) {
  const unsigned long long t = (w >> 4) & 0x0f0f0f0f0f0f0f0full;
  return __dp4a(static_cast<unsigned>(t), 0x01010101u, __dp4a(static_cast<unsigned>(t >> 32), 0x01010101u, 0u));
}

/// sums[t] = (vertices, triangles) of tile t from the bytes; sums[tiles] = 0 so the exclusive scan
/// ends on the totals.
__global__ void __launch_bounds__(kThreads) tile_sums_kernel(Slab s, const std::uint8_t* info, Sums* sums) {
  const unsigned first = first_tile_of_warp<kSumTilesPerWarp>();
  const int lane = threadIdx.x % 32;
  if (blockIdx.x == 0 && threadIdx.x == 0) sums[s.tiles] = Sums{0, 0};
  if (first >= s.tiles) return;  // whole warps
  unsigned long long bytes[kSumTilesPerWarp];
#pragma unroll
  for (int r = 0; r < kSumTilesPerWarp; ++r)
    bytes[r] = first + r < s.tiles ? load_bytes(info, lane_bytes(s, first + r, lane)) : 0ull;
#pragma unroll
  for (int r = 0; r < kSumTilesPerWarp; ++r) {
    const unsigned vertices = __reduce_add_sync(0xffffffffu, vertices_of(bytes[r]));
    const unsigned triangles = __reduce_add_sync(0xffffffffu, triangles_of(bytes[r]));
    if (lane == 0 && first + r < s.tiles) sums[first + r] = Sums{vertices, triangles};
  }
}

/// Exclusive prefix of `value` over the warp's lanes.
__device__ __forceinline__ unsigned warp_exclusive_sum(unsigned value, int lane) {
  unsigned inclusive = value;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const unsigned other = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += other;
  }
  return inclusive - value;
}

/// The slab's own totals (the offsets at the first extra tile) out; fits = both within capacity.
__global__ void totals_kernel(const Sums* offsets, unsigned own_tiles, std::uint64_t vertex_capacity,
                              std::uint64_t triangle_capacity, std::uint64_t* d_totals, std::uint64_t* h_totals,
                              int* fits) {
  const Sums own = offsets[own_tiles];
  d_totals[0] = own.vertices;
  d_totals[1] = own.triangles;
  if (h_totals != nullptr) {
    reinterpret_cast<volatile std::uint64_t*>(h_totals)[0] = own.vertices;
    reinterpret_cast<volatile std::uint64_t*>(h_totals)[1] = own.triangles;
  }
  *fits = own.vertices <= vertex_capacity && own.triangles <= triangle_capacity &&
          own.vertices <= std::numeric_limits<std::uint32_t>::max();
}

__global__ void zero_totals_kernel(std::uint64_t* d_totals, std::uint64_t* h_totals) {
  d_totals[0] = d_totals[1] = 0;
  if (h_totals != nullptr) reinterpret_cast<volatile std::uint64_t*>(h_totals)[0] = 0, reinterpret_cast<volatile std::uint64_t*>(h_totals)[1] = 0;
}

// The vertex and triangle passes are two kernels each. A pass over the voxels (one thread per
// voxel, most of them idle: a surface touches a few voxels per warp) only scans and writes each
// output's key -- its voxel or cell and its rank -- into the output slot itself; a dense pass (one
// thread per output) then reads the key and computes the output in place. The expensive work
// (interpolation and gradients in double, the cell's triangles) so runs on full warps.

/// Vertex key in a vertex's 12 bytes: x | slot << 30, y, z.
__device__ __forceinline__ void put_vertex_key(float* at, std::int64_t x, std::int64_t y, std::int64_t z, int slot) {
  reinterpret_cast<uint3*>(at)[0] = make_uint3(static_cast<unsigned>(x) | static_cast<unsigned>(slot) << 30,
                                              static_cast<unsigned>(y), static_cast<unsigned>(z));
}
/// Triangle key in a triangle's first 12 bytes: x, y, z << 3 | rank in its cell.
__device__ __forceinline__ void put_triangle_key(void* at, std::int64_t x, std::int64_t y, std::int64_t z, int rank) {
  unsigned* p = static_cast<unsigned*>(at);
  p[0] = static_cast<unsigned>(x), p[1] = static_cast<unsigned>(y), p[2] = static_cast<unsigned>(z) << 3 | rank;
}

/// The lane (0..31) whose range of a warp-wide count holds output t of the tile: the first lane
/// whose inclusive prefix exceeds t (lanes with nothing have no range). All lanes call it.
__device__ __forceinline__ int owner_lane(unsigned inclusive, unsigned t) {
  int lane = 0;
#pragma unroll
  for (int step = 16; step >= 1; step /= 2)
    if (__shfl_sync(0xffffffffu, inclusive, lane + step - 1) <= t) lane += step;
  return lane;
}
__device__ __forceinline__ unsigned long long shfl_u64(unsigned long long v, int from) {
  const unsigned lo = __shfl_sync(0xffffffffu, static_cast<unsigned>(v), from);
  const unsigned hi = __shfl_sync(0xffffffffu, static_cast<unsigned>(v >> 32), from);
  return static_cast<unsigned long long>(hi) << 32 | lo;
}

/// Where output t of a tile lies: the lane whose voxels hold it, the voxel (0..7) among that lane's
/// and t's rank among the voxel's outputs; `count(byte)` is a voxel's number of outputs. All lanes
/// call it (shuffles); for t past the tile's total the result is meaningless and skipped.
struct TileOutput {
  int lane, voxel;
  unsigned rank;
  unsigned long long bytes;  ///< the owner lane's 8 bytes
};
template <class Count>
__device__ __forceinline__ TileOutput locate_output(unsigned long long bytes, unsigned exclusive, unsigned inclusive,
                                                    unsigned t, Count count) {
  TileOutput o;
  o.lane = owner_lane(inclusive, t);
  o.bytes = shfl_u64(bytes, o.lane);
  unsigned local = t - __shfl_sync(0xffffffffu, exclusive, o.lane);
  o.voxel = 0, o.rank = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const unsigned c = count(byte_of(o.bytes, i));
    if (local < c) {
      o.voxel = i, o.rank = local;
      local = 0xffffffffu;  // found: no later voxel matches
    } else {
      local -= c;
    }
  }
  return o;
}

// The key passes write each tile's outputs warp-cooperatively: output t of the tile goes to lane
// t % 32, which finds its voxel (the owner lane by a search over the lanes' prefix sums, then the
// voxel among that lane's 8 bytes), so a warp's stores are consecutive keys. With each lane
// writing its own voxels' keys the stores were scattered 12-byte pieces, and the passes took
// ~230 us each at 512^3 (ncu, gyroid).

/// Numbers the vertices: for every voxel that owns one (extra layer too), its first vertex's
/// slab-local number; for the own layers, each vertex's key in its output slot. A warp per tile.
__global__ void __launch_bounds__(kThreads) vertex_keys_kernel(Slab s, const std::uint8_t* info, const Sums* offsets,
                                                               const int* fits, std::uint32_t* first_vertex,
                                                               float* d_vertices) {
  const unsigned tile = first_tile_of_warp<kKeyTilesPerWarp>();
  const int lane = threadIdx.x % 32;
  // Past the end, nothing to number in the tile (most tiles, away from the surface), or no room:
  // the whole warp leaves.
  if (tile >= s.tiles || *fits == 0) return;
  const Sums begin = offsets[tile], end = offsets[tile + 1];
  if (end.vertices == begin.vertices) return;
  const LaneBytes b = lane_bytes(s, tile, lane);
  const unsigned long long bytes = load_bytes(info, b);
  const unsigned mine = vertices_of(bytes), exclusive = warp_exclusive_sum(mine, lane), inclusive = exclusive + mine;
  // First vertex numbers, each lane its own voxels, only those that own vertices. (Tried, both
  // slower at 512^3: voxel j of the tile by lane j % 32, consecutive stores but 8 rounds of
  // shuffles, 221 -> 279 us; every voxel's entry as two 16-byte stores per lane, 221 -> 252 us.)
  std::uint64_t k = begin.vertices + exclusive;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const unsigned mask = byte_of(bytes, i) & 7u;
    if (mask == 0) continue;
    first_vertex[b.first + i] = static_cast<std::uint32_t>(k);
    k += __popc(mask);
  }
  const std::int64_t tile_x = b.x - lane * 8;
  if (b.z >= s.z1) return;  // the extra layer: numbered here, written by the next slab (uniform: one row)
  const unsigned total = static_cast<unsigned>(end.vertices - begin.vertices);
  for (unsigned base = 0; base < total; base += 32) {
    const unsigned t = base + lane;
    const TileOutput o = locate_output(bytes, exclusive, inclusive, t, [](unsigned v) { return __popc(v & 7u); });
    if (t >= total) continue;
    unsigned mask = byte_of(o.bytes, o.voxel) & 7u;  // the voxel's vertices: drop the lower ones
    for (unsigned r = 0; r < o.rank; ++r) mask &= mask - 1;
    put_vertex_key(d_vertices + 3 * (begin.vertices + t), tile_x + o.lane * 8 + o.voxel, b.y, b.z, __ffs(mask) - 1);
  }
}

/// Dense: vertex k's position, normal and value from its key.
template <class T>
__global__ void __launch_bounds__(kThreads) vertex_kernel(DeviceField<T> f, Slab s, const Sums* offsets,
                                                          const int* fits, winnow::cuda::DeviceMesh out) {
  if (*fits == 0) return;
  const std::uint64_t count = offsets[s.own_tiles].vertices;
  for (std::uint64_t k = blockIdx.x * std::uint64_t{kThreads} + threadIdx.x; k < count;
       k += std::uint64_t{gridDim.x} * kThreads) {
    const uint3 key = reinterpret_cast<const uint3*>(out.d_vertices + 3 * k)[0];
    float position[3], value, normal[3];
    iso::vertex_attributes(f, s.grid, s.level, key.x & 0x3fffffffu, key.y, key.z, static_cast<int>(key.x >> 30),
                           s.normals, s.flip, position, value, normal);
    out.d_vertices[3 * k] = position[0], out.d_vertices[3 * k + 1] = position[1], out.d_vertices[3 * k + 2] = position[2];
    if (s.normals) out.d_normals[3 * k] = normal[0], out.d_normals[3 * k + 1] = normal[1], out.d_normals[3 * k + 2] = normal[2];
    if (s.values) out.d_values[k] = value;
  }
}

/// Numbers the own cells' triangles: each triangle's key (its cell, its rank) in its output slot.
/// A warp per tile, writing the tile's keys cooperatively (see vertex_keys_kernel).
__global__ void __launch_bounds__(kThreads) triangle_keys_kernel(Slab s, const std::uint8_t* info, const Sums* offsets,
                                                                 const int* fits, winnow::cuda::DeviceMesh out) {
  const unsigned tile = first_tile_of_warp<kKeyTilesPerWarp>();
  const int lane = threadIdx.x % 32;
  if (tile >= s.own_tiles || *fits == 0) return;
  const Sums begin = offsets[tile], end = offsets[tile + 1];
  if (end.triangles == begin.triangles) return;
  const LaneBytes b = lane_bytes(s, tile, lane);
  const unsigned long long bytes = load_bytes(info, b);
  const unsigned mine = triangles_of(bytes), exclusive = warp_exclusive_sum(mine, lane), inclusive = exclusive + mine;
  const std::int64_t tile_x = b.x - lane * 8;
  const unsigned total = static_cast<unsigned>(end.triangles - begin.triangles);
  for (unsigned base = 0; base < total; base += 32) {
    const unsigned t = base + lane;
    const TileOutput o = locate_output(bytes, exclusive, inclusive, t, [](unsigned v) { return v >> 4; });
    if (t >= total) continue;
    const std::uint64_t k = begin.triangles + t;
    void* at = out.d_triangles64 != nullptr ? static_cast<void*>(out.d_triangles64 + 3 * k)
                                            : static_cast<void*>(out.d_triangles + 3 * k);
    put_triangle_key(at, tile_x + o.lane * 8 + o.voxel, b.y, b.z, static_cast<int>(o.rank));
  }
}

/// Dense: triangle k's vertex numbers (index_base + the slab-local ones) from its key.
template <class T>
__global__ void __launch_bounds__(kThreads) triangle_kernel(DeviceField<T> f, Classifier<T> classify, Slab s,
                                                            const std::uint8_t* info, const Sums* offsets,
                                                            const int* fits, const std::uint32_t* first_vertex,
                                                            std::uint64_t index_base, winnow::cuda::DeviceMesh out) {
  if (*fits == 0) return;
  const std::uint64_t count = offsets[s.own_tiles].triangles;
  const std::uint64_t nx = static_cast<std::uint64_t>(s.grid.nx), nxy = nx * static_cast<std::uint64_t>(s.grid.ny);
  const bool wide = out.d_triangles64 != nullptr;
  for (std::uint64_t k = blockIdx.x * std::uint64_t{kThreads} + threadIdx.x; k < count;
       k += std::uint64_t{gridDim.x} * kThreads) {
    const unsigned* key = wide ? reinterpret_cast<const unsigned*>(out.d_triangles64 + 3 * k) : out.d_triangles + 3 * k;
    Locus l;
    l.x = key[0], l.y = key[1], l.z = key[2] >> 3;
    const int rank = static_cast<int>(key[2] & 7u);
    l.valid = true;
    l.v = (static_cast<std::uint64_t>(l.z - s.z0) * static_cast<std::uint64_t>(s.grid.ny) + static_cast<std::uint64_t>(l.y)) * nx +
          static_cast<std::uint64_t>(l.x);
    int edge[3];
    iso::cell_triangle(g_table, cell_case_at(f, classify, l), rank, s.flip, edge);
    std::uint64_t index[3];
#pragma unroll
    for (int j = 0; j < 3; ++j) {
      const iso::VertexHome h = iso::vertex_home(g_table, edge[j]);
      const std::uint64_t owner = l.v + static_cast<std::uint64_t>(h.dz) * nxy + static_cast<std::uint64_t>(h.dy) * nx +
                                  static_cast<std::uint64_t>(h.dx);
      index[j] = index_base + first_vertex[owner] + static_cast<std::uint64_t>(iso::rank_in_voxel(info[owner] & 7u, h.slot));
    }
    if (wide) {
      out.d_triangles64[3 * k] = index[0], out.d_triangles64[3 * k + 1] = index[1], out.d_triangles64[3 * k + 2] = index[2];
    } else {
      out.d_triangles[3 * k] = static_cast<std::uint32_t>(index[0]);
      out.d_triangles[3 * k + 1] = static_cast<std::uint32_t>(index[1]);
      out.d_triangles[3 * k + 2] = static_cast<std::uint32_t>(index[2]);
    }
  }
}

// ---- one slab --------------------------------------------------------------------------------

Slab make_slab(const iso::Grid& grid, std::int64_t z0, std::int64_t z1, double level, const IsosurfaceOptions& o) {
  Slab s;
  s.grid = grid;
  s.z0 = z0, s.z1 = z1;
  const std::uint64_t layer = static_cast<std::uint64_t>(grid.nx) * static_cast<std::uint64_t>(grid.ny);
  s.own_voxels = layer * static_cast<std::uint64_t>(z1 - z0);
  s.extra_voxels = z1 < grid.nz ? layer : 0;
  s.chunks = static_cast<unsigned>((grid.nx + kThreads - 1) / kThreads);
  const std::uint64_t own_rows = static_cast<std::uint64_t>(grid.ny) * static_cast<std::uint64_t>(z1 - z0);
  const std::uint64_t rows = own_rows + (s.extra_voxels != 0 ? static_cast<std::uint64_t>(grid.ny) : 0);
  const std::uint64_t own_tiles = own_rows * s.chunks, tiles = rows * s.chunks;
  if (tiles >= static_cast<std::uint64_t>(std::numeric_limits<int>::max()) || grid.nx >= (std::int64_t{1} << 31))
    throw InputError("isosurface: a slab of " + std::to_string(s.own_voxels) + " voxels is too large for one grid");
  if (grid.nx >= (std::int64_t{1} << 30) || grid.ny >= (std::int64_t{1} << 32) || grid.nz >= (std::int64_t{1} << 29))
    throw InputError("isosurface: the CUDA backend takes at most 2^30 x 2^32 x 2^29 voxels");
  s.own_tiles = static_cast<unsigned>(own_tiles), s.tiles = static_cast<unsigned>(tiles);
  s.level = level;
  s.flip = o.flip, s.normals = o.normals, s.values = o.values;
  return s;
}

/// Bump layout of a slab's temporary storage, 256-byte aligned parts (from a base the device API
/// aligns: `bytes` holds the slack).
struct Layout {
  std::size_t at_sums = 0, at_offsets = 0, at_scan = 0, at_fits = 0, at_first = 0, at_masks = 0, bytes = 0;
  std::size_t scan_bytes = 0;
};
Layout layout_for(const Slab& s) {
  auto round = [](std::size_t b) { return (b + 255) & ~std::size_t{255}; };
  Layout l;
  const std::size_t entries = static_cast<std::size_t>(s.tiles) + 1;
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, l.scan_bytes, static_cast<const Sums*>(nullptr),
                                                   static_cast<Sums*>(nullptr), AddSums{}, Sums{0, 0},
                                                   static_cast<int>(entries)));
  const std::uint64_t voxels = s.own_voxels + s.extra_voxels;
  l.at_sums = 0;
  l.at_offsets = l.at_sums + round(entries * sizeof(Sums));
  l.at_scan = l.at_offsets + round(entries * sizeof(Sums));
  l.at_fits = l.at_scan + round(std::max<std::size_t>(l.scan_bytes, 1));
  l.at_first = l.at_fits + 256;
  l.at_masks = l.at_first + round(voxels * sizeof(std::uint32_t));
  l.bytes = l.at_masks + round(voxels) + 255;  // + room to align a caller's storage to 256 bytes
  return l;
}

/// The current device's multiprocessors (asked once per device).
int multiprocessors() {
  static thread_local int device = -1, count = 0;
  int now = 0;
  WINNOW_CUDA_CHECK(cudaGetDevice(&now));
  if (now != device) {
    WINNOW_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, now));
    device = now;
  }
  return count;
}

/// Counts (and, where the totals fit `out`, extracts) one slab whose voxels are in `f`. With
/// `counted`, `temp` already holds this slab's count (classification, tile offsets) and only the
/// totals and the extraction run: the extraction kernels read it and write none of it.
template <class T>
void run_slab(const DeviceField<T>& f, const Classifier<T>& classify, const Slab& s, char* temp, const Layout& l, const winnow::cuda::DeviceMesh& out,
              std::uint64_t index_base, std::uint64_t* d_totals, std::uint64_t* h_totals, cudaStream_t stream,
              bool extract, bool counted = false) {
  auto* sums = reinterpret_cast<Sums*>(temp + l.at_sums);
  auto* offsets = reinterpret_cast<Sums*>(temp + l.at_offsets);
  auto* fits = reinterpret_cast<int*>(temp + l.at_fits);
  auto* first = reinterpret_cast<std::uint32_t*>(temp + l.at_first);
  auto* info = reinterpret_cast<std::uint8_t*>(temp + l.at_masks);
  if (!counted) {  // with `counted`, the classification and the tile offsets are in temp already
    if (s.tiles != 0) {
      const std::int64_t layers = s.z1 - s.z0 + (s.extra_voxels != 0 ? 1 : 0);
      const dim3 columns(32, kRowsPerBlock);
      const std::uint64_t column_blocks = static_cast<std::uint64_t>((s.grid.nx + kPieceX - 1) / kPieceX) *
                                          static_cast<std::uint64_t>((s.grid.ny + kRowsPerBlock - 1) / kRowsPerBlock);
      if (column_blocks >= static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
        throw InputError("isosurface: a slice of " + std::to_string(s.grid.nx) + " x " + std::to_string(s.grid.ny) +
                         " voxels is too large for one grid");
      const dim3 blocks(static_cast<unsigned>(column_blocks),
                        static_cast<unsigned>(std::min<std::int64_t>(65535, (layers + kLayersPerBlock - 1) / kLayersPerBlock)));
      classify_kernel<T><<<blocks, columns, 0, stream>>>(f, classify, s, layers, info);
      WINNOW_CUDA_CHECK_LAUNCH();
      tile_sums_kernel<<<blocks_for<kSumTilesPerWarp>(s.tiles), kThreads, 0, stream>>>(s, info, sums);
      WINNOW_CUDA_CHECK_LAUNCH();
    } else {
      WINNOW_CUDA_CHECK(cudaMemsetAsync(sums, 0, sizeof(Sums), stream));
    }
    std::size_t scan_bytes = l.scan_bytes;
    WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(temp + l.at_scan, scan_bytes, sums, offsets, AddSums{},
                                                     Sums{0, 0}, static_cast<int>(s.tiles + 1), stream));
  }
  totals_kernel<<<1, 1, 0, stream>>>(offsets, s.own_tiles, extract ? out.vertex_capacity : 0,
                                     extract ? out.triangle_capacity : 0, d_totals, h_totals, fits);
  WINNOW_CUDA_CHECK_LAUNCH();
  if (!extract || s.tiles == 0) return;
  vertex_keys_kernel<<<blocks_for<kKeyTilesPerWarp>(s.tiles), kThreads, 0, stream>>>(s, info, offsets, fits, first,
                                                                                   out.d_vertices);
  WINNOW_CUDA_CHECK_LAUNCH();
  if (s.own_tiles == 0) return;
  triangle_keys_kernel<<<blocks_for<kKeyTilesPerWarp>(s.own_tiles), kThreads, 0, stream>>>(s, info, offsets, fits,
                                                                                         out);
  WINNOW_CUDA_CHECK_LAUNCH();
  // The dense passes: enough blocks to fill the device, each looping over the outputs.
  const unsigned dense_blocks = std::min<unsigned>(s.own_tiles, static_cast<unsigned>(multiprocessors()) * 8);
  vertex_kernel<T><<<dense_blocks, kThreads, 0, stream>>>(f, s, offsets, fits, out);
  WINNOW_CUDA_CHECK_LAUNCH();
  triangle_kernel<T><<<dense_blocks, kThreads, 0, stream>>>(f, classify, s, info, offsets, fits, first, index_base, out);
  WINNOW_CUDA_CHECK_LAUNCH();
}

iso::Grid grid_of(std::int64_t nx, std::int64_t ny, std::int64_t nz, double sx, double sy, double sz) {
  return iso::Grid{nx, ny, nz, sx, sy, sz};
}

// ---- host API --------------------------------------------------------------------------------

/// Voxels per slab: the option, else what a quarter of the free device memory holds at the
/// slab's cost per voxel (the volume's bytes, 5 bytes of temporary storage, and room for a dense
/// mesh), capped so one slab's vertex numbers stay 32-bit.
std::int64_t slab_voxels_for(const IsosurfaceOptions& o, std::size_t voxel_bytes) {
  std::int64_t cap = std::int64_t{1} << 30;
  if (o.max_slab_voxels > 0) cap = std::min(cap, o.max_slab_voxels);
  std::size_t free_bytes = 0, total_bytes = 0;
  WINNOW_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t per_voxel = voxel_bytes + 5 + 24;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(cap, static_cast<std::int64_t>(free_bytes / 4 / per_voxel)));
}

template <class T>
void copy_layers(T* d_dst, VolumeView<const T> v, std::int64_t z_begin, std::int64_t z_end, cudaStream_t stream) {
  const std::size_t row_bytes = static_cast<std::size_t>(v.nx) * sizeof(T);
  if (v.slice_stride == v.row_stride * v.ny) {  // the layers are one run of rows
    copy_to_device(d_dst, row_bytes, v.data + z_begin * v.slice_stride, static_cast<std::size_t>(v.row_stride) * sizeof(T),
                   row_bytes, static_cast<std::size_t>((z_end - z_begin) * v.ny), stream);
    return;
  }
  for (std::int64_t z = z_begin; z < z_end; ++z)
    copy_to_device(d_dst + (z - z_begin) * v.nx * v.ny, row_bytes, v.data + z * v.slice_stride,
                   static_cast<std::size_t>(v.row_stride) * sizeof(T), row_bytes, static_cast<std::size_t>(v.ny), stream);
}

template <class U>
void append_from_device(std::vector<U>& to, std::size_t at, const void* d_from, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  copy_to_host(to.data() + at, count * sizeof(U), d_from, count * sizeof(U), count * sizeof(U), 1, stream);
}

}  // namespace

template <class T>
void isosurface(VolumeView<const T> volume, double level, const IsosurfaceOptions& options, Mesh& mesh) {
  cudaStream_t stream = cudaStreamPerThread;
  const iso::Grid grid = grid_of(volume.nx, volume.ny, volume.nz, volume.sx, volume.sy, volume.sz);
  const std::int64_t layer = volume.nx * volume.ny;
  const std::int64_t slab_layers =
      std::max<std::int64_t>(1, slab_voxels_for(options, sizeof(T)) / std::max<std::int64_t>(layer, 1));
  const bool one_pass = slab_layers >= volume.nz;
  // Device buffers for the largest slab: its layers plus one below and two above.
  const std::int64_t buffer_layers = std::min<std::int64_t>(volume.nz, slab_layers + 3);
  DeviceBuffer<T> d_volume(static_cast<std::size_t>(buffer_layers * layer), stream);
  DeviceBuffer<std::uint64_t> d_totals(2, stream);
  std::uint64_t h_totals[2] = {0, 0};  // 16 bytes copied back per slab (no pinned allocation per call)

  // One-pass meshes know their vertex total before the triangles are written, so their indices
  // are 32-bit whenever they can be; slabbed ones write 64-bit indices and narrow at the end.
  const Classifier<T> classify = make_classifier<T>(level);
  std::vector<std::array<std::uint64_t, 3>> wide;
  std::uint64_t vertex_base = 0, triangle_base = 0;
  for (std::int64_t z0 = 0; z0 < volume.nz; z0 += slab_layers) {
    const std::int64_t z1 = std::min(volume.nz, z0 + slab_layers);
    const std::int64_t zb0 = std::max<std::int64_t>(0, z0 - 1), zb1 = std::min(volume.nz, z1 + 2);
    copy_layers(d_volume.get(), volume, zb0, zb1, stream);
    const DeviceField<T> f{d_volume.get(), volume.nx, layer, zb0};
    const Slab s = make_slab(grid, z0, z1, level, options);
    const Layout l = layout_for(s);
    DeviceBuffer<char> d_temp(l.bytes, stream);
    run_slab(f, classify, s, d_temp.get(), l, winnow::cuda::DeviceMesh{}, 0, d_totals.get(), nullptr, stream, false);
    WINNOW_CUDA_CHECK(cudaMemcpyAsync(h_totals, d_totals.get(), sizeof h_totals, cudaMemcpyDeviceToHost, stream));
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::uint64_t vertices = h_totals[0], triangles = h_totals[1];
    if (vertices > std::numeric_limits<std::uint32_t>::max())
      throw Error("isosurface: more than 2^32 - 1 vertices in one slab; set max_slab_voxels lower");
    const bool narrow = one_pass && vertices <= std::numeric_limits<std::uint32_t>::max();
    DeviceBuffer<float> d_vertices(3 * vertices, stream), d_normals(options.normals ? 3 * vertices : 0, stream),
        d_values(options.values ? vertices : 0, stream);
    DeviceBuffer<std::uint32_t> d_triangles(narrow ? 3 * triangles : 0, stream);
    DeviceBuffer<std::uint64_t> d_triangles64(narrow ? 0 : 3 * triangles, stream);
    winnow::cuda::DeviceMesh out;
    out.d_vertices = d_vertices.get(), out.d_normals = d_normals.get(), out.d_values = d_values.get();
    out.d_triangles = d_triangles.get(), out.d_triangles64 = narrow ? nullptr : d_triangles64.get();
    out.vertex_capacity = vertices, out.triangle_capacity = triangles;
    run_slab(f, classify, s, d_temp.get(), l, out, vertex_base, d_totals.get(), nullptr, stream, true);
    mesh.vertices.resize(vertex_base + vertices);
    append_from_device(mesh.vertices, vertex_base, d_vertices.get(), vertices, stream);
    if (options.normals) {
      mesh.normals.resize(vertex_base + vertices);
      append_from_device(mesh.normals, vertex_base, d_normals.get(), vertices, stream);
    }
    if (options.values) {
      mesh.values.resize(vertex_base + vertices);
      append_from_device(mesh.values, vertex_base, d_values.get(), vertices, stream);
    }
    if (narrow) {
      mesh.triangles.resize(triangles);
      append_from_device(mesh.triangles, 0, d_triangles.get(), triangles, stream);
    } else {
      wide.resize(triangle_base + triangles);
      append_from_device(wide, triangle_base, d_triangles64.get(), triangles, stream);
    }
    vertex_base += vertices, triangle_base += triangles;
    if (options.progress) options.progress(2 * static_cast<std::uint64_t>(z1), 2 * static_cast<std::uint64_t>(volume.nz));
  }
  if (!one_pass) {
    if (vertex_base > std::numeric_limits<std::uint32_t>::max()) {
      mesh.triangles64 = std::move(wide);
    } else {
      mesh.triangles.resize(wide.size());
      for (std::size_t i = 0; i < wide.size(); ++i)
        mesh.triangles[i] = {static_cast<std::uint32_t>(wide[i][0]), static_cast<std::uint32_t>(wide[i][1]),
                             static_cast<std::uint32_t>(wide[i][2])};
    }
  }
}

template void isosurface<std::uint8_t>(VolumeView<const std::uint8_t>, double, const IsosurfaceOptions&, Mesh&);
template void isosurface<std::uint16_t>(VolumeView<const std::uint16_t>, double, const IsosurfaceOptions&, Mesh&);
template void isosurface<std::int16_t>(VolumeView<const std::int16_t>, double, const IsosurfaceOptions&, Mesh&);
template void isosurface<float>(VolumeView<const float>, double, const IsosurfaceOptions&, Mesh&);
template void isosurface<double>(VolumeView<const double>, double, const IsosurfaceOptions&, Mesh&);

}  // namespace winnow::detail::cuda

namespace winnow::cuda {

namespace {
/// isosurface() and isosurface_extract(): the latter (`counted`) finds the count in d_temp.
template <class T>
void run_isosurface(void* d_temp, std::size_t& temp_bytes, VolumeView<const T> volume, double level,
                    const IsosurfaceOptions& options, const DeviceMesh& out, std::uint64_t* d_totals,
                    cudaStream_t stream, std::uint64_t* h_totals, bool counted) {
  namespace d = winnow::detail::cuda;
  if (volume.empty()) throw InputError("isosurface: the volume is empty");
  if (level != level) throw InputError("isosurface: the level is NaN");
  if (volume.row_stride < volume.nx || volume.slice_stride < volume.row_stride * volume.ny)
    throw InputError("isosurface: the volume's strides do not hold its rows and slices");
  if (volume.nx < 2 || volume.ny < 2 || volume.nz < 2) {  // no cells: no surface (as on the CPU)
    if (d_temp == nullptr) {
      temp_bytes = 1;
      return;
    }
    if (d_totals == nullptr) throw InputError("isosurface: d_totals is null");
    d::zero_totals_kernel<<<1, 1, 0, stream>>>(d_totals, h_totals);
    WINNOW_CUDA_CHECK_LAUNCH();
    return;
  }
  const d::Slab s = d::make_slab(d::grid_of(volume.nx, volume.ny, volume.nz, volume.sx, volume.sy, volume.sz), 0,
                                 volume.nz, level, options);
  const d::Layout l = d::layout_for(s);
  if (d_temp == nullptr) {
    temp_bytes = l.bytes;
    return;
  }
  if (temp_bytes < l.bytes)
    throw InputError("isosurface: temporary storage of " + std::to_string(temp_bytes) + " bytes, " +
                     std::to_string(l.bytes) + " needed");
  if (d_totals == nullptr) throw InputError("isosurface: d_totals is null");
  const bool extract = out.vertex_capacity != 0 || out.triangle_capacity != 0;
  if (extract && (out.d_vertices == nullptr || (options.normals && out.d_normals == nullptr) ||
                  (options.values && out.d_values == nullptr) ||
                  (out.d_triangles == nullptr && out.d_triangles64 == nullptr)))
    throw InputError("isosurface: an output the options ask for is null");
  const d::DeviceField<T> f{volume.data, volume.row_stride, volume.slice_stride, 0};
  // The parts are laid out from a 256-byte boundary (wide loads and stores, CUB's scan).
  char* const base = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(d_temp) + 255) & ~std::uintptr_t{255});
  d::run_slab(f, d::make_classifier<T>(level), s, base, l, out, 0, d_totals, h_totals, stream, extract, counted);
}
}  // namespace

template <class T>
void isosurface(void* d_temp, std::size_t& temp_bytes, VolumeView<const T> volume, double level,
                const IsosurfaceOptions& options, const DeviceMesh& out, std::uint64_t* d_totals, cudaStream_t stream,
                std::uint64_t* h_totals) {
  run_isosurface(d_temp, temp_bytes, volume, level, options, out, d_totals, stream, h_totals, false);
}

template <class T>
void isosurface_extract(void* d_temp, std::size_t temp_bytes, VolumeView<const T> volume, double level,
                        const IsosurfaceOptions& options, const DeviceMesh& out, std::uint64_t* d_totals,
                        cudaStream_t stream, std::uint64_t* h_totals) {
  if (d_temp == nullptr) throw InputError("isosurface_extract: d_temp is null (it holds the count)");
  run_isosurface(d_temp, temp_bytes, volume, level, options, out, d_totals, stream, h_totals, true);
}

template void isosurface<std::uint8_t>(void*, std::size_t&, VolumeView<const std::uint8_t>, double,
                                       const IsosurfaceOptions&, const DeviceMesh&, std::uint64_t*, cudaStream_t,
                                       std::uint64_t*);
template void isosurface<std::uint16_t>(void*, std::size_t&, VolumeView<const std::uint16_t>, double,
                                        const IsosurfaceOptions&, const DeviceMesh&, std::uint64_t*, cudaStream_t,
                                        std::uint64_t*);
template void isosurface<std::int16_t>(void*, std::size_t&, VolumeView<const std::int16_t>, double,
                                       const IsosurfaceOptions&, const DeviceMesh&, std::uint64_t*, cudaStream_t,
                                       std::uint64_t*);
template void isosurface<float>(void*, std::size_t&, VolumeView<const float>, double, const IsosurfaceOptions&,
                                const DeviceMesh&, std::uint64_t*, cudaStream_t, std::uint64_t*);
template void isosurface<double>(void*, std::size_t&, VolumeView<const double>, double, const IsosurfaceOptions&,
                                 const DeviceMesh&, std::uint64_t*, cudaStream_t, std::uint64_t*);

#define WINNOW_ISOSURFACE_EXTRACT(T)                                                                            \
  template void isosurface_extract<T>(void*, std::size_t, VolumeView<const T>, double, const IsosurfaceOptions&, \
                                      const DeviceMesh&, std::uint64_t*, cudaStream_t, std::uint64_t*);
WINNOW_ISOSURFACE_EXTRACT(std::uint8_t)
WINNOW_ISOSURFACE_EXTRACT(std::uint16_t)
WINNOW_ISOSURFACE_EXTRACT(std::int16_t)
WINNOW_ISOSURFACE_EXTRACT(float)
WINNOW_ISOSURFACE_EXTRACT(double)
#undef WINNOW_ISOSURFACE_EXTRACT

}  // namespace winnow::cuda
