// GPU benchmark of isosurface extraction, peers in the same run.
//
// Volumes (float32, generated on the device): a sphere (distance from the centre, level 0.35 n)
// and a gyroid (sin x cos y + sin y cos z + sin z cos x, 2 periods per side, level 0: the size
// of the issue's scikit-image figure, 4.94 M triangles at 512^3) at 256^3 and 512^3 (and 1024^3 with --large), and the
// bundled MRI grey-matter map (197 x 233 x 189, level 0.5).
//
// Methods, each producing its mesh in device memory:
//  * winnow::cuda::isosurface: welded mesh + normals (outputs sized beforehand from a first call);
//  * "scan pipeline, unwelded" — the way NVIDIA's marchingCubes sample works: a classify kernel
//    writes per cell its vertex count (3 per triangle) and occupancy as uint32, CUB ExclusiveSum of
//    both, a compaction of the occupied cells' indices, and a generate kernel that writes three
//    corners (position + normal) per triangle (the active count stays on the device, where the
//    sample reads it on the host). Same case table and interpolation as ours.
//  * "scan pipeline, welded": per voxel its owned-vertex count and per cell its triangle count as
//    uint32, CUB ExclusiveSum of both, a vertex kernel and a triangle kernel that find the vertex
//    numbers in the scanned array: our mesh, through materialised scans.
//
// CUDA events, 3 warm-ups, median of 15. Floor: read the volume once + write the welded mesh
// (12 bytes per vertex position, 12 per normal, 12 per triangle) at the measured D2D copy
// bandwidth. Columns: time, ratio = peer / ours, triangles/s, fraction of the floor.
//   bench_isosurface_gpu [--quick | --large] [--only NAME] [--ours-only]
// --only runs the volumes whose name holds NAME ("gyroid 512"); --ours-only leaves the peers out
// (for a profiler's run).
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "gpu_timing.cuh"
#include "isosurface/cell.hpp"
#include "winnow/cuda/isosurface.hpp"
#include "winnow/isosurface.hpp"
#include "winnow/volume_io.hpp"

namespace {

namespace iso = winnow::detail::iso;
__constant__ iso::CaseTable b_table = iso::kCaseTable;

template <class T>
T* dalloc(std::size_t n) {
  void* p = nullptr;
  CK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
  return static_cast<T*>(p);
}

__global__ void fill_field(float* v, int n, int kind) {
  const std::uint64_t total = std::uint64_t(n) * n * n;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const int x = int(i % n), y = int((i / n) % n), z = int(i / (std::uint64_t(n) * n));
    if (kind == 0) {
      const float c = 0.5f * (n - 1);
      v[i] = sqrtf((x - c) * (x - c) + (y - c) * (y - c) + (z - c) * (z - c));
    } else {
      const float k = 2.0f * 3.14159265f * 2.0f / n;  // 2 periods per side: ~4.9 M triangles at 512^3
      const float a = x * k, b = y * k, d = z * k;
      v[i] = sinf(a) * cosf(b) + sinf(b) * cosf(d) + sinf(d) * cosf(a);
    }
  }
}

struct Field {
  const float* d;
  std::int64_t nx, ny;
  __device__ double operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return static_cast<double>(d[(z * ny + y) * nx + x]);
  }
};

__device__ void corners_of(const Field& f, const iso::Grid& g, std::int64_t x, std::int64_t y, std::int64_t z,
                           double level, std::uint8_t (&corner)[8]) {
  for (int c = 0; c < 8; ++c)
    corner[c] = iso::classify(f(x + b_table.corner[c][0], y + b_table.corner[c][1], z + b_table.corner[c][2]), level);
}

__device__ bool decode(std::uint64_t i, const iso::Grid& g, std::int64_t& x, std::int64_t& y, std::int64_t& z) {
  x = std::int64_t(i % g.nx), y = std::int64_t((i / g.nx) % g.ny), z = std::int64_t(i / (g.nx * g.ny));
  return x + 1 < g.nx && y + 1 < g.ny && z + 1 < g.nz;
}

// ---- unwelded scan pipeline (NVIDIA sample style) -----------------------------------------------
__global__ void classify_cells(Field f, iso::Grid g, double level, std::uint32_t* verts, std::uint32_t* occupied) {
  const std::uint64_t n = std::uint64_t(g.nx) * g.ny * g.nz;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::int64_t x, y, z;
    std::uint32_t count = 0;
    if (decode(i, g, x, y, z)) {
      std::uint8_t corner[8];
      corners_of(f, g, x, y, z, level, corner);
      count = b_table.triangle_count[iso::cell_case(corner)];
    }
    verts[i] = 3 * count;
    occupied[i] = count != 0;
  }
}
__global__ void compact_cells(const std::uint32_t* occupied, const std::uint32_t* scanned, std::uint64_t n,
                              std::uint32_t* active) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    if (occupied[i]) active[scanned[i]] = static_cast<std::uint32_t>(i);
}
__global__ void active_count(const std::uint32_t* occupied, const std::uint32_t* scanned, std::uint64_t n,
                             std::uint32_t* count) {
  *count = scanned[n - 1] + occupied[n - 1];
}
__global__ void generate_triangles(Field f, iso::Grid g, double level, const std::uint32_t* active,
                                   const std::uint32_t* active_count, const std::uint32_t* vert_offsets, float* pos,
                                   float* nor) {
  const std::uint32_t m = *active_count;
  for (std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < m; k += gridDim.x * blockDim.x) {
    const std::uint32_t i = active[k];
    std::int64_t x, y, z;
    decode(i, g, x, y, z);
    std::uint8_t corner[8];
    corners_of(f, g, x, y, z, level, corner);
    const unsigned c = iso::cell_case(corner);
    std::uint32_t out = vert_offsets[i];
    for (int t = 0; t < b_table.triangle_count[c]; ++t)
      for (int j = 0; j < 3; ++j, ++out) {
        const int e = b_table.triangle[c][t][j];
        const int a = b_table.edge_corner[e][0];
        float p[3], value, nn[3];
        iso::vertex_attributes(f, g, level, x + b_table.corner[a][0], y + b_table.corner[a][1],
                               z + b_table.corner[a][2], b_table.edge_axis[e], true, false, p, value, nn);
        for (int q = 0; q < 3; ++q) pos[3 * out + q] = p[q], nor[3 * out + q] = nn[q];
      }
  }
}

// ---- welded scan pipeline -----------------------------------------------------------------------
__device__ std::uint8_t cls(const Field& f, const iso::Grid& g, std::int64_t x, std::int64_t y, std::int64_t z,
                            double level) {
  if (x < 0 || y < 0 || z < 0 || x >= g.nx || y >= g.ny || z >= g.nz) return iso::kOutside;
  return iso::classify(f(x, y, z), level);
}
__device__ unsigned mask_at(const Field& f, const iso::Grid& g, std::int64_t x, std::int64_t y, std::int64_t z,
                            double level) {
  return iso::owner_mask(cls(f, g, x, y, z, level), cls(f, g, x + 1, y, z, level), cls(f, g, x, y + 1, z, level),
                         cls(f, g, x, y, z + 1, level));
}
__global__ void classify_welded(Field f, iso::Grid g, double level, std::uint32_t* vcount, std::uint32_t* tcount) {
  const std::uint64_t n = std::uint64_t(g.nx) * g.ny * g.nz;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::int64_t x, y, z;
    const bool cell = decode(i, g, x, y, z);
    vcount[i] = iso::popcount3(mask_at(f, g, x, y, z, level));
    std::uint32_t t = 0;
    if (cell) {
      std::uint8_t corner[8];
      corners_of(f, g, x, y, z, level, corner);
      t = b_table.triangle_count[iso::cell_case(corner)];
    }
    tcount[i] = t;
  }
}
__global__ void welded_vertices(Field f, iso::Grid g, double level, const std::uint32_t* voff, float* pos, float* nor) {
  const std::uint64_t n = std::uint64_t(g.nx) * g.ny * g.nz;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::int64_t x, y, z;
    decode(i, g, x, y, z);
    const unsigned mask = mask_at(f, g, x, y, z, level);
    std::uint32_t k = voff[i];
    for (int slot = 0; slot < 3; ++slot)
      if (mask & (1u << slot)) {
        float p[3], value, nn[3];
        iso::vertex_attributes(f, g, level, x, y, z, slot, true, false, p, value, nn);
        for (int q = 0; q < 3; ++q) pos[3 * k + q] = p[q], nor[3 * k + q] = nn[q];
        ++k;
      }
  }
}
__global__ void welded_triangles(Field f, iso::Grid g, double level, const std::uint32_t* voff,
                                 const std::uint32_t* toff, std::uint32_t* tri) {
  const std::uint64_t n = std::uint64_t(g.nx) * g.ny * g.nz;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::int64_t x, y, z;
    if (!decode(i, g, x, y, z)) continue;
    std::uint8_t corner[8];
    corners_of(f, g, x, y, z, level, corner);
    const unsigned c = iso::cell_case(corner);
    std::uint32_t k = toff[i];
    for (int t = 0; t < b_table.triangle_count[c]; ++t, ++k)
      for (int j = 0; j < 3; ++j) {
        int edge[3];
        iso::cell_triangle(b_table, c, t, false, edge);
        const iso::VertexHome h = iso::vertex_home(b_table, edge[j]);
        const std::int64_t ox = x + h.dx, oy = y + h.dy, oz = z + h.dz;
        const std::uint64_t owner = (std::uint64_t(oz) * g.ny + oy) * g.nx + ox;
        tri[3 * k + j] = voff[owner] + iso::rank_in_voxel(mask_at(f, g, ox, oy, oz, level), h.slot);
      }
  }
}

double copy_bps(std::size_t bytes, cudaStream_t s) {
  char *a = dalloc<char>(bytes), *b = dalloc<char>(bytes);
  const double ms = median_ms([&](int) { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)); }, s);
  CK(cudaFree(a));
  CK(cudaFree(b));
  return 2.0 * bytes / (ms * 1e-3);
}

struct Row {
  std::string volume, method;
  double ms, ratio, tris_per_s, floor_frac;
};
std::vector<Row> g_rows;
bool g_failed = false;

void print(const Row& r) {
  std::printf("%-22s %-34s %9.3f ms  ratio %6.2fx  %8.1f Mtri/s  floor frac %5.2f\n", r.volume.c_str(),
              r.method.c_str(), r.ms, r.ratio, r.tris_per_s * 1e-6, r.floor_frac);
  std::fflush(stdout);
  g_rows.push_back(r);
}

bool g_ours_only = false;  // --ours-only

void bench_volume(const std::string& name, const float* d_vol, std::int64_t nx, std::int64_t ny, std::int64_t nz,
                  double level, cudaStream_t s, double bw) {
  const std::uint64_t n = std::uint64_t(nx) * ny * nz;
  const iso::Grid g{nx, ny, nz, 1, 1, 1};
  const Field f{d_vol, nx, ny};
  winnow::VolumeView<const float> view(d_vol, nx, ny, nz);
  winnow::IsosurfaceOptions o;
  o.normals = true;
  // ours: size once, then time the sized call
  std::size_t temp_bytes = 0;
  winnow::cuda::DeviceMesh none;
  std::uint64_t* d_totals = dalloc<std::uint64_t>(2);
  winnow::cuda::isosurface<float>(nullptr, temp_bytes, view, level, o, none, d_totals, s);
  char* temp = dalloc<char>(temp_bytes);
  winnow::cuda::isosurface<float>(temp, temp_bytes, view, level, o, none, d_totals, s);
  std::uint64_t totals[2];
  CK(cudaMemcpyAsync(totals, d_totals, sizeof totals, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  const std::uint64_t V = totals[0], T = totals[1];
  winnow::cuda::DeviceMesh out;
  out.d_vertices = dalloc<float>(3 * V), out.d_normals = dalloc<float>(3 * V),
  out.d_triangles = dalloc<std::uint32_t>(3 * T);
  out.vertex_capacity = V, out.triangle_capacity = T;
  const double ours = median_ms(
      [&](int) { winnow::cuda::isosurface<float>(temp, temp_bytes, view, level, o, out, d_totals, s); }, s, 15);
  const double floor_s = (4.0 * n + 24.0 * V + 12.0 * T) / bw;
  const std::string vol = name + " (" + std::to_string(T) + " tri)";
  print({vol, "winnow::cuda::isosurface (welded+normals)", ours, 1.0, T / (ours * 1e-3), floor_s / (ours * 1e-3)});
  if (g_ours_only) {
    for (void* p : {static_cast<void*>(temp), static_cast<void*>(d_totals), static_cast<void*>(out.d_vertices),
                    static_cast<void*>(out.d_normals), static_cast<void*>(out.d_triangles)})
      CK(cudaFree(p));
    return;
  }

  // scan pipeline, welded
  {
    auto* vcount = dalloc<std::uint32_t>(n);
    auto* tcount = dalloc<std::uint32_t>(n);
    auto* voff = dalloc<std::uint32_t>(n);
    auto* toff = dalloc<std::uint32_t>(n);
    std::size_t sb = 0;
    CK(cub::DeviceScan::ExclusiveSum(nullptr, sb, vcount, voff, static_cast<std::int64_t>(n), s));
    char* st = dalloc<char>(sb);
    auto* pos = dalloc<float>(3 * V);
    auto* nor = dalloc<float>(3 * V);
    auto* tri = dalloc<std::uint32_t>(3 * T);
    const int grid = 132 * 16;
    const double ms = median_ms(
        [&](int) {
          classify_welded<<<grid, 256, 0, s>>>(f, g, level, vcount, tcount);
          CK(cub::DeviceScan::ExclusiveSum(st, sb, vcount, voff, static_cast<std::int64_t>(n), s));
          CK(cub::DeviceScan::ExclusiveSum(st, sb, tcount, toff, static_cast<std::int64_t>(n), s));
          welded_vertices<<<grid, 256, 0, s>>>(f, g, level, voff, pos, nor);
          welded_triangles<<<grid, 256, 0, s>>>(f, g, level, voff, toff, tri);
        },
        s, 15);
    CK(cudaGetLastError());
    // the welded peer must build our mesh exactly
    std::vector<std::uint32_t> a(3 * T), b(3 * T);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(a.data(), tri, 12 * T, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), out.d_triangles, 12 * T, cudaMemcpyDeviceToHost));
    if (a != b) {
      std::fprintf(stderr, "MISMATCH %s: the welded scan pipeline's triangles differ from winnow's\n", name.c_str());
      g_failed = true;
    }
    print({vol, "scan pipeline, welded (CUB scans)", ms, ms / ours, T / (ms * 1e-3), floor_s / (ms * 1e-3)});
    for (void* p :
         {(void*)vcount, (void*)tcount, (void*)voff, (void*)toff, (void*)st, (void*)pos, (void*)nor, (void*)tri})
      CK(cudaFree(p));
  }
  // scan pipeline, unwelded (NVIDIA sample style)
  {
    auto* verts = dalloc<std::uint32_t>(n);
    auto* occ = dalloc<std::uint32_t>(n);
    auto* voff = dalloc<std::uint32_t>(n);
    auto* ooff = dalloc<std::uint32_t>(n);
    auto* active = dalloc<std::uint32_t>(n);
    std::size_t sb = 0;
    CK(cub::DeviceScan::ExclusiveSum(nullptr, sb, verts, voff, static_cast<std::int64_t>(n), s));
    char* st = dalloc<char>(sb);
    std::uint64_t raw_tris = 0;
    {  // the unwelded mesh keeps degenerate triangles: size from its own count
      classify_cells<<<132 * 16, 256, 0, s>>>(f, g, level, verts, occ);
      CK(cub::DeviceScan::ExclusiveSum(st, sb, verts, voff, static_cast<std::int64_t>(n), s));
      std::uint32_t last_off = 0, last = 0;
      CK(cudaMemcpyAsync(&last_off, voff + n - 1, 4, cudaMemcpyDeviceToHost, s));  // s does not block with the
      CK(cudaMemcpyAsync(&last, verts + n - 1, 4, cudaMemcpyDeviceToHost, s));     // legacy stream: copy in it
      CK(cudaStreamSynchronize(s));
      raw_tris = (std::uint64_t(last_off) + last) / 3;
    }
    auto* pos = dalloc<float>(9 * raw_tris);
    auto* nor = dalloc<float>(9 * raw_tris);
    const int grid = 132 * 16;
    auto* d_active_count = dalloc<std::uint32_t>(1);
    const double ms = median_ms(
        [&](int) {
          classify_cells<<<grid, 256, 0, s>>>(f, g, level, verts, occ);
          CK(cub::DeviceScan::ExclusiveSum(st, sb, occ, ooff, static_cast<std::int64_t>(n), s));
          CK(cub::DeviceScan::ExclusiveSum(st, sb, verts, voff, static_cast<std::int64_t>(n), s));
          compact_cells<<<grid, 256, 0, s>>>(occ, ooff, n, active);
          active_count<<<1, 1, 0, s>>>(occ, ooff, n, d_active_count);
          generate_triangles<<<grid, 256, 0, s>>>(f, g, level, active, d_active_count, voff, pos, nor);
        },
        s, 15);
    CK(cudaGetLastError());
    print({vol, "scan pipeline, unwelded (sample)", ms, ms / ours, raw_tris / (ms * 1e-3), floor_s / (ms * 1e-3)});
    CK(cudaFree(d_active_count));
    for (void* p :
         {(void*)verts, (void*)occ, (void*)voff, (void*)ooff, (void*)active, (void*)st, (void*)pos, (void*)nor})
      CK(cudaFree(p));
  }
  for (void* p : {(void*)d_totals, (void*)temp, (void*)out.d_vertices, (void*)out.d_normals, (void*)out.d_triangles})
    CK(cudaFree(p));
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, large = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--large")) large = true;
    else if (!std::strcmp(argv[i], "--ours-only")) g_ours_only = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--quick | --large] [--only NAME] [--ours-only]\n", argv[0]);
      return 2;
    }
  }
  const auto wanted = [&](const std::string& name) { return only.empty() || name.find(only) != std::string::npos; };
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const double bw = copy_bps(std::size_t{1} << 29, s);
  std::printf("D2D copy bandwidth: %.0f GB/s\n", bw * 1e-9);
  std::vector<int> sides = {256};
  if (!quick) sides.push_back(512);
  if (large) sides.push_back(1024);
  for (int side : sides)
    for (int kind : {0, 1}) {
      const std::uint64_t n = std::uint64_t(side) * side * side;
      if (!wanted(std::string(kind ? "gyroid " : "sphere ") + std::to_string(side) + "^3")) continue;
      float* v = dalloc<float>(n);
      fill_field<<<1024, 256, 0, s>>>(v, side, kind);
      CK(cudaGetLastError());
      const std::string name = std::string(kind ? "gyroid " : "sphere ") + std::to_string(side) + "^3";
      bench_volume(name, v, side, side, side, kind ? 0.0 : 0.35 * side, s, bw);
      CK(cudaFree(v));
    }
  if (wanted("MRI 197x233x189")) {
    const auto any = winnow::io::read_volume(WINNOW_DATA_DIR "/volumes/mni152_gm.nii.gz");
    std::visit(
        [&](const auto& vol) {
          std::vector<float> h(static_cast<std::size_t>(vol.size()));
          for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(vol.data()[i]);
          float* v = dalloc<float>(h.size());
          CK(cudaMemcpy(v, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
          bench_volume("MRI 197x233x189", v, vol.nx(), vol.ny(), vol.nz(), 0.5, s, bw);
          CK(cudaFree(v));
        },
        any);
  }
  std::printf(
      "\n## summary\n\n| volume | method | ms | ours faster by | Mtriangles/s | fraction of floor "
      "|\n|---|---|---:|---:|---:|---:|\n");
  for (const Row& r : g_rows)
    std::printf("| %s | %s | %.3f | %.2fx | %.1f | %.2f |\n", r.volume.c_str(), r.method.c_str(), r.ms, r.ratio,
                r.tris_per_s * 1e-6, r.floor_frac);
  CK(cudaStreamDestroy(s));
  if (g_failed) return 1;
  return 0;
}
