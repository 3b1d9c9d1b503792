// CPU volume labeling benchmark: winnow::label of a volume (labels only, and labels + statistics)
// with OMP_NUM_THREADS threads (default: all cores), median of the repetitions. The cases are
// those of bench/label_cpu_peers.py (which times the peers, cc3d and scipy, from Python):
//   random<N>_d<d>  N^3, each voxel foreground with probability d (binary: 0/1; multi-label:
//                   values 1..3 drawn per foreground voxel);
//   mni<N>          the bundled MNI152 grey-matter map tiled and cropped to N^3 (binary: > 128;
//                   multi-label: v / 64);  mni<N>_u8: multi-label, the raw values;
//   motor<N>        the bundled fMRI t-map tiled and cropped (binary: |t| > 2; multi-label: 1 for
//                   t > 2, 2 for t < -2).
// "labels ms" and "stats ms" are the library's milliseconds (the label volume's allocation
// outside); "call ms" is the whole call of labels only, the allocation of the label volume
// included, as a Python caller sees it; "cpu ms" the process's CPU time in that call (all threads:
// with one thread, the call's time less any time the machine's load took the core away).
//
//   bench_label_volume_cpu [--size N] [--reps R] [--densities 0.1,0.3,0.5,0.9] [--case TEXT]
//                          [--conn C] [--kind binary|multi] [--no-stats] [--dump DIR]
//
// --case keeps the cases whose name contains TEXT, --conn one connectivity, --kind one kind (for
// profiling one case; --no-stats leaves the statistics calls out). --dump DIR writes each binary case's mask as
// DIR/<case>.npy.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "winnow/label.hpp"
#include "winnow/volume_io.hpp"

using namespace winnow;

namespace {

struct Case {
  std::string name;
  bool multi;
  Volume<std::uint8_t> voxels;
};

/// src repeated along every axis and cropped to n^3, each voxel through f.
template <class T, class F>
Volume<std::uint8_t> tiled(const Volume<T>& src, std::int64_t n, F&& f) {
  Volume<std::uint8_t> v(n, n, n);
  for (std::int64_t z = 0; z < n; ++z)
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x) v(x, y, z) = f(src(x % src.nx(), y % src.ny(), z % src.nz()));
  return v;
}

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t size = 256;
  int reps = 7;
  std::string dump, only_case, only_kind, densities = "0.1,0.3,0.5,0.9";
  int only_conn = 0;
  bool with_stats = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--size" && i + 1 < argc) size = std::stoll(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--densities" && i + 1 < argc) densities = argv[++i];
    else if (a == "--dump" && i + 1 < argc) dump = argv[++i];
    else if (a == "--case" && i + 1 < argc) only_case = argv[++i];
    else if (a == "--conn" && i + 1 < argc) only_conn = std::stoi(argv[++i]);
    else if (a == "--kind" && i + 1 < argc) only_kind = argv[++i];
    else if (a == "--no-stats") with_stats = false;
    else {
      std::fprintf(stderr,
                   "usage: bench_label_volume_cpu [--size N] [--reps R] [--densities LIST] [--case TEXT] [--conn C] "
                   "[--kind binary|multi] [--no-stats] [--dump DIR]\n");
      return 2;
    }
  }
  const auto wanted = [&](const std::string& name) { return name.find(only_case) != std::string::npos; };
  std::vector<Case> cases;
  std::istringstream dl(densities);
  for (std::string ds; std::getline(dl, ds, ',');) {
    const double d = std::stod(ds);
    char name[64];
    std::snprintf(name, sizeof name, "random%lld_d%g", static_cast<long long>(size), d);
    if (!wanted(name)) continue;
    Volume<std::uint8_t> bin(size, size, size), multi(size, size, size);
    std::mt19937_64 rng(static_cast<std::uint64_t>(d * 1000) + 1);
    const auto level = static_cast<std::uint64_t>(d * 18446744073709551615.0);
    for (std::size_t i = 0; i < bin.voxels().size(); ++i) {
      const std::uint64_t r = rng();
      bin.voxels()[i] = r < level;
      multi.voxels()[i] = r < level ? static_cast<std::uint8_t>(1 + (r & 0xffff) % 3) : 0;
    }
    cases.push_back({name, false, std::move(bin)});
    cases.push_back({name, true, std::move(multi)});
  }
  const std::string n = std::to_string(size);
  if (wanted("mni" + n) || wanted("mni" + n + "_u8")) {
    const auto gm =
        std::get<Volume<std::uint8_t>>(io::read_volume(std::string(WINNOW_DATA_DIR) + "/volumes/mni152_gm.nii.gz"));
    if (wanted("mni" + n)) {
      cases.push_back({"mni" + n, false, tiled(gm, size, [](std::uint8_t v) { return v > 128; })});
      cases.push_back({"mni" + n, true, tiled(gm, size, [](std::uint8_t v) { return v / 64; })});
    }
    if (wanted("mni" + n + "_u8"))
      cases.push_back({"mni" + n + "_u8", true, tiled(gm, size, [](std::uint8_t v) { return v; })});
  }
  if (wanted("motor" + n)) {
    const auto t =
        std::get<Volume<float>>(io::read_volume(std::string(WINNOW_DATA_DIR) + "/volumes/motor_activation.nii.gz"));
    cases.push_back({"motor" + n, false, tiled(t, size, [](float v) { return std::abs(v) > 2; })});
    cases.push_back({"motor" + n, true, tiled(t, size, [](float v) { return v > 2 ? 1 : v < -2 ? 2 : 0; })});
  }
  if (!dump.empty()) {
    std::filesystem::create_directories(dump);
    for (const auto& c : cases)
      if (!c.multi) io::write_volume(dump + "/" + c.name + ".npy", c.voxels.view());
  }
  std::printf("%-18s %-6s %4s %12s %10s %10s %10s %10s %10s\n", "case", "kind", "conn", "voxels", "labels ms",
              "call ms", "stats ms", "count", "cpu ms");
  for (const auto& c : cases)
    for (int conn : {6, 18, 26}) {
      const char* kind = c.multi ? "multi" : "binary";
      if ((only_conn != 0 && conn != only_conn) || (!only_kind.empty() && only_kind != kind)) continue;
      std::vector<double> labels, call, stats, cpu;
      std::uint64_t count = 0;
      for (int r = 0; r < reps; ++r) {
        LabelOptions opt{.connectivity = conn, .multilabel = c.multi, .want_stats = false, .backend = Backend::cpu};
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_ms();
        {
          const VolumeLabeling res = label(c.voxels.view(), opt);
          call.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
          cpu.push_back(cpu_ms() - c0);
          labels.push_back(res.milliseconds);
          count = res.count;
        }
        opt.want_stats = true;
        stats.push_back(with_stats ? label(c.voxels.view(), opt).milliseconds : 0.0);
      }
      std::printf("%-18s %-6s %4d %12lld %10.2f %10.2f %10.2f %10llu %10.2f\n", c.name.c_str(), kind, conn,
                  static_cast<long long>(c.voxels.size()), median(labels), median(call), median(stats),
                  static_cast<unsigned long long>(count), median(cpu));
      std::fflush(stdout);
    }
  return 0;
}
