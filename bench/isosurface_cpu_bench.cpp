// CPU isosurface benchmark: winnow::isosurface on the CPU backend (OMP_NUM_THREADS threads) on
// float32 fields sampled here (a sphere and a gyroid, N^3) and, when given, a volume file (the
// bundled MRI). Prints the median of R calls, vertices, triangles and triangles per second; the
// peers (scikit-image, VTK Flying Edges) run on the same fields in bench/isosurface_peers.py.
//
//   bench_isosurface_cpu [--size N] [--reps R] [--normals] [VOLUME LEVEL]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "winnow/isosurface.hpp"
#include "winnow/volume_io.hpp"

using namespace winnow;

namespace {

template <class T>
void run(const char* name, VolumeView<const T> volume, double level, int reps, bool normals) {
  IsosurfaceOptions options{.normals = normals, .backend = Backend::cpu};
  std::vector<double> ms;
  Mesh mesh;
  for (int r = 0; r < reps + 1; ++r) {  // one warm-up call
    const auto t0 = std::chrono::steady_clock::now();
    mesh = isosurface(volume, level, options);
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  std::printf("%-28s %4lldx%4lldx%4lld level %-8g %10llu verts %10llu tris %9.2f ms %7.1f Mtri/s  (%d threads)\n", name,
              (long long)volume.nx, (long long)volume.ny, (long long)volume.nz, level,
              (unsigned long long)mesh.vertex_count(), (unsigned long long)mesh.triangle_count(), median,
              mesh.triangle_count() / median / 1e3, omp_get_max_threads());
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = 256;
  int reps = 5;
  bool normals = false;
  std::vector<std::string> rest;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--size") && i + 1 < argc) n = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--normals")) normals = true;
    else rest.push_back(argv[i]);
  }
  // The same fields as bench/isosurface_peers.py: sphere of radius 0.4 N at the centre, level 0;
  // gyroid with period N / 8 voxels, level 0.
  Volume<float> sphere(n, n, n), gyroid(n, n, n);
  const double c = (n - 1) / 2.0, k = 2 * 3.14159265358979323846 / (n / 8.0);
  for (std::int64_t z = 0; z < n; ++z)
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x) {
        sphere(x, y, z) =
            static_cast<float>(0.4 * n - std::sqrt((x - c) * (x - c) + (y - c) * (y - c) + (z - c) * (z - c)));
        gyroid(x, y, z) = static_cast<float>(std::sin(k * x) * std::cos(k * y) + std::sin(k * y) * std::cos(k * z) +
                                             std::sin(k * z) * std::cos(k * x));
      }
  run("sphere f32", VolumeView<const float>(sphere.view()), 0.0, reps, normals);
  run("gyroid f32", VolumeView<const float>(gyroid.view()), 0.0, reps, normals);
  if (rest.size() == 2) {
    const io::AnyVolume any = io::read_volume(rest[0]);
    const double level = std::atof(rest[1].c_str());
    std::visit(
        [&](const auto& v) {
          using T = std::remove_cvref_t<decltype(v.voxels()[0])>;
          if constexpr (std::is_same_v<T, float>) run("file f32", v.view(), level, reps, normals);
          else {
            Volume<float> f(v.nx(), v.ny(), v.nz());
            for (std::size_t i = 0; i < f.voxels().size(); ++i) f.voxels()[i] = static_cast<float>(v.voxels()[i]);
            f.set_spacing(v.sx(), v.sy(), v.sz());
            run("file (as f32)", VolumeView<const float>(f.view()), level, reps, normals);
          }
        },
        any);
  }
}
