// CPU volume labeling benchmark: winnow::label of a volume (labels + statistics, and labels only)
// on random 256^3 masks at densities 0.1 / 0.5 / 0.9 and the bundled MNI grey-matter map
// thresholded at 128, for 6- and 26-connectivity, with OMP_NUM_THREADS threads (default: all
// cores). Median of the repetitions; the label volume's allocation is outside the timed call, as
// in the library's own milliseconds.
//
//   bench_label_volume_cpu [--size N] [--reps R] [--dump DIR] [--case TEXT] [--conn C]
//
// --case keeps the cases whose name contains TEXT, --conn one connectivity (for profiling one case).
// --dump DIR writes each case's mask as DIR/<case>.npy, so bench/label_volume_cpu_peers.py times cc3d
// on exactly the same voxels.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "winnow/label.hpp"
#include "winnow/volume_io.hpp"

using namespace winnow;

namespace {

struct Case {
  std::string name;
  Volume<std::uint8_t> mask;
};

Volume<std::uint8_t> random_mask(std::int64_t n, double density, std::uint64_t seed) {
  Volume<std::uint8_t> v(n, n, n);
  std::mt19937_64 rng(seed);
  const auto level = static_cast<std::uint64_t>(density * 18446744073709551615.0);
  for (auto& x : v.voxels()) x = rng() < level ? 1 : 0;
  return v;
}

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t size = 256;
  int reps = 7;
  std::string dump, only_case;
  int only_conn = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--size" && i + 1 < argc) size = std::stoll(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--dump" && i + 1 < argc) dump = argv[++i];
    else if (a == "--case" && i + 1 < argc) only_case = argv[++i];
    else if (a == "--conn" && i + 1 < argc) only_conn = std::stoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_label_volume_cpu [--size N] [--reps R] [--dump DIR] [--case TEXT] [--conn C]\n");
      return 2;
    }
  }
  std::vector<Case> cases;
  for (double d : {0.1, 0.5, 0.9}) {
    char name[64];
    std::snprintf(name, sizeof name, "random%lld_d%.1f", static_cast<long long>(size), d);
    cases.push_back({name, random_mask(size, d, static_cast<std::uint64_t>(d * 1000) + 1)});
  }
  {
    const auto mni = std::get<Volume<std::uint8_t>>(io::read_volume(std::string(WINNOW_DATA_DIR) + "/volumes/mni152_gm.nii.gz"));
    Volume<std::uint8_t> m(mni.nx(), mni.ny(), mni.nz());
    for (std::size_t i = 0; i < m.voxels().size(); ++i) m.voxels()[i] = mni.voxels()[i] > 128;
    cases.push_back({"mni152_gm_gt128", std::move(m)});
  }
  if (!dump.empty()) {
    std::filesystem::create_directories(dump);
    for (const auto& c : cases) io::write_volume(dump + "/" + c.name + ".npy", c.mask.view());
  }
  std::printf("%-18s %4s %12s %12s %12s %10s\n", "case", "conn", "voxels", "stats ms", "labels ms", "count");
  for (const auto& c : cases)
    for (int conn : {6, 26}) {
      if (c.name.find(only_case) == std::string::npos || (only_conn != 0 && conn != only_conn)) continue;
      double ms[2];
      std::uint64_t count = 0;
      for (int stats = 1; stats >= 0; --stats) {
        LabelOptions opt{.connectivity = conn, .want_stats = stats == 1, .backend = Backend::cpu};
        std::vector<double> t;
        for (int r = 0; r < reps; ++r) {
          const VolumeLabeling res = label(c.mask.view(), opt);
          t.push_back(res.milliseconds);
          count = res.count;
        }
        ms[stats] = median(t);
      }
      std::printf("%-18s %4d %12lld %12.2f %12.2f %10llu\n", c.name.c_str(), conn,
                  static_cast<long long>(c.mask.size()), ms[1], ms[0], static_cast<unsigned long long>(count));
      std::fflush(stdout);
    }
  return 0;
}
