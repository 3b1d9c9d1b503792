// CPU labeling benchmark: winnow (each CPU algorithm) against OpenCV connectedComponents with the
// same number of threads (OMP_NUM_THREADS, default: all cores), same masks as the GPU benchmark.
//
//   bench_label_cpu [--size N] [--reps R] [--case SUBSTR] [--conn 4|8] [--alg NAME] [--no-stats]
//
// row_stripes keeps its run array between calls (src/cpu/label_runs.cpp: one cached array, up
// to 128 MiB), so repeated calls on one image size, as timed here, find it paged in. The "cold"
// rows time a call that has to allocate and page in a fresh one, as the first call on a new image
// size does (or a one-image program such as `winnow label`): before each such call, untimed, a
// 64x64 image is labelled. The cache remembers the size of the last request, so after that small
// call the next large one takes a new array (the cache has no public way to be emptied; should
// it change, "cold" and warm rows would read the same). Then malloc_trim returns the heap's free
// pages to the system, so the new array is paged in afresh, as in a new process, rather than
// served from memory an earlier call (OpenCV's, say) had touched. The cold rows run in a pass of
// their own, with OpenCV after a malloc_trim too ("opencv cold"), their reference for "vs OpenCV".
// The "faults" column, minor page faults per call (median), shows how much fresh memory a row
// paged in.
#include <malloc.h>
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "fmix32.hpp"
#include "winnow/io.hpp"
#include "winnow/label.hpp"

#ifdef WINNOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

using namespace winnow;

namespace {
/// Minor page faults of this process so far (all threads).
long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t size = 4096;
  int reps = 7, only_conn = 0;
  std::string only_case, only_alg;
  bool with_stats = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--size") && i + 1 < argc) size = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc) only_case = argv[++i];
    else if (!std::strcmp(argv[i], "--conn") && i + 1 < argc) only_conn = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--alg") && i + 1 < argc) only_alg = argv[++i];
    else if (!std::strcmp(argv[i], "--no-stats")) with_stats = false;
  }
  const int threads = omp_get_max_threads();
#ifdef WINNOW_HAVE_OPENCV
  cv::setNumThreads(threads);
#endif
  std::printf("CPU labeling, %d threads, median of %d (variants interleaved per repetition)\n", threads, reps);
  std::printf("%-22s %4s %-28s %10s %10s\n", "case", "conn", "variant", "ms", "vs OpenCV");
  struct Case {
    std::string name;
    Image<std::uint8_t> mask;
  };
  std::vector<Case> cases;
  for (double d : {0.1, 0.5, 0.9}) {
    Image<std::uint8_t> m(size, size);
    const auto cut = static_cast<std::uint32_t>(d * 4294967296.0);
    for (std::int64_t i = 0; i < m.size(); ++i)
      m.data()[i] = fmix32(static_cast<std::uint32_t>(i) ^ (12345u * 0x9E3779B9u)) < cut;
    cases.push_back({"random_" + std::to_string(size) + "_d" + std::to_string(d).substr(0, 3), std::move(m)});
  }
  for (const char* f : {"coins.png", "text.png", "hubble_deep_field.jpg"}) {
    const auto rgba = io::read_rgba8(std::filesystem::path(WINNOW_DATA_DIR) / f);
    Image<std::uint8_t> grey(rgba.width(), rgba.height()), m(rgba.width(), rgba.height());
    for (std::int64_t i = 0; i < grey.size(); ++i)
      grey.data()[i] = static_cast<std::uint8_t>(luminance_milli(rgba.data()[i]) / 1000);
    const int t = otsu_threshold(grey.view());
    for (std::int64_t i = 0; i < grey.size(); ++i) m.data()[i] = grey.data()[i] > t;
    cases.push_back({std::string(f).substr(0, std::string(f).find('.')), std::move(m)});
  }
  // The small image of the "cold" rows: random, half foreground.
  Image<std::uint8_t> small(64, 64);
  Image<std::uint32_t> small_out(64, 64);
  for (std::int64_t i = 0; i < small.size(); ++i)
    small.data()[i] = fmix32(static_cast<std::uint32_t>(i) * 0x9E3779B9u) >> 31;
  // Every repetition runs each variant once, in turn, so load from other processes hits all of
  // them alike; "vs OpenCV" is the median of the per-repetition ratios (OpenCV ms / ours ms).
  for (const auto& c : cases) {
    if (!only_case.empty() && c.name.find(only_case) == std::string::npos) continue;
    Image<std::uint32_t> out(c.mask.width(), c.mask.height());
    for (int conn : {8, 4}) {
      if (only_conn && conn != only_conn) continue;
      struct Variant {
        std::string name;
        bool stats;
        bool cold;
        std::function<std::uint32_t()> run;
        std::function<void()> before;  // untimed, before every timed call
        std::vector<double> ms = {};
        std::vector<double> faults = {};  // minor page faults per timed call
        std::uint32_t n = 0;
      };
      std::vector<Variant> vs;
      const auto nothing = [] {};
      // Labels the small image (the run-array cache then records a small request), then trims.
      const auto forget_run_array = [&small, &small_out, conn] {
        LabelOptions o;
        o.backend = Backend::cpu;
        o.connectivity = conn;
        o.algorithm = LabelAlgorithm::row_stripes;
        o.want_stats = false;
        label_into(small.view(), small_out.view(), o);
        malloc_trim(0);
      };
#ifdef WINNOW_HAVE_OPENCV
      cv::Mat src(static_cast<int>(c.mask.height()), static_cast<int>(c.mask.width()), CV_8U,
                  const_cast<std::uint8_t*>(c.mask.data()));
      cv::Mat labels, stats, centroids;
      const auto trim = [] { malloc_trim(0); };
      const auto cc = [&] {
        return static_cast<std::uint32_t>(cv::connectedComponents(src, labels, conn, CV_32S) - 1);
      };
      const auto cc_stats = [&] {
        return static_cast<std::uint32_t>(
            cv::connectedComponentsWithStats(src, labels, stats, centroids, conn, CV_32S) - 1);
      };
      for (bool cold : {false, true}) {
        vs.push_back({cold ? "opencv cold" : "opencv", false, cold, cc, cold ? std::function<void()>(trim) : nothing});
        if (with_stats)
          vs.push_back({cold ? "opencv+stats cold" : "opencv+stats", true, cold, cc_stats,
                        cold ? std::function<void()>(trim) : nothing});
      }
#endif
      for (LabelAlgorithm a : {LabelAlgorithm::row_stripes, LabelAlgorithm::tile_merge})
        for (bool st : {false, true}) {
          if ((!only_alg.empty() && only_alg != to_string(a)) || (st && !with_stats)) continue;
          LabelOptions o;
          o.backend = Backend::cpu;
          o.connectivity = conn;
          o.algorithm = a;
          o.want_stats = st;
          const std::string name = std::string(to_string(a)) + (st ? "+stats" : "");
          auto run = [&c, &out, o] { return label_into(c.mask.view(), out.view(), o).count; };
          vs.push_back({name, st, false, run, nothing});
          if (a == LabelAlgorithm::row_stripes) vs.push_back({name + " cold", st, true, run, forget_run_array});
        }
      // Warm rows first, then cold rows (each in its own interleaved pass: the trimming of the
      // cold pass would make the warm rows page in memory too).
      for (bool cold : {false, true}) {
        for (auto& v : vs)  // warm-up
          if (v.cold == cold) {
            v.before();
            v.n = v.run();
          }
        for (int r = 0; r < reps; ++r)
          for (auto& v : vs) {
            if (v.cold != cold) continue;
            v.before();
            const long f0 = minor_faults();
            const auto t0 = std::chrono::steady_clock::now();
            v.run();
            v.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            v.faults.push_back(static_cast<double>(minor_faults() - f0));
          }
      }
      auto median = [](std::vector<double> x) {
        std::sort(x.begin(), x.end());
        return x.empty() ? 0.0 : x[x.size() / 2];
      };
      for (bool cold : {false, true})
        for (auto& v : vs) {
          if (v.cold != cold) continue;
          const Variant* ref = nullptr;  // OpenCV in the same pass, with or without statistics alike
          for (const auto& u : vs)
            if (u.name.rfind("opencv", 0) == 0 && u.stats == v.stats && u.cold == v.cold) ref = &u;
          std::vector<double> ratio;
          if (ref)
            for (int r = 0; r < reps; ++r)
              ratio.push_back(ref->ms[static_cast<std::size_t>(r)] / v.ms[static_cast<std::size_t>(r)]);
          std::printf("%-22s %4d %-28s %10.3f %10.2f  (N=%u, faults %.0f)\n", c.name.c_str(), conn, v.name.c_str(),
                      median(v.ms), median(ratio), v.n, median(v.faults));
        }
      std::fflush(stdout);
    }
  }
  return 0;
}
