// CPU stream compaction benchmark (Google Benchmark): int32, n = 2^21, 2^24, 2^26 (2^28 with
// --huge), 1 / 50 / 99 % kept; winnow group_scan (and histopyramid at 2^21) against std::copy_if
// and two copies of the same bytes, all in the same run:
//   memcpy_threads  memcpy on as many OpenMP threads as winnow uses (each copies one contiguous
//                   slice): the machine's copy bandwidth, the fair ceiling for the compaction;
//   memcpy_1thread  one std::memcpy on the calling thread (what one core can copy).
//
// Bytes: compaction counts n*4 read + k*4 written; a copy counts n*4 read + n*4 written. The
// table printed last gives each compaction's bytes/s as a fraction of both copies' at the same n.
//
//   ./bench_compact_cpu [--huge] [google-benchmark flags]
// e.g. --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true (medians are used:
// the development machine is shared, so single runs are noisy).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>

// Google Benchmark renamed Run::error_occurred to Run::skipped (1.8); accept both.
template <class Run>
static bool run_failed(const Run& r) {
  if constexpr (requires { r.error_occurred; }) {
    return r.error_occurred;
  } else {
    return static_cast<bool>(r.skipped);
  }
}
#include <vector>

#include "winnow/compact.hpp"

namespace {

constexpr std::int32_t kThreshold = 1 << 30;

struct Input {
  std::vector<std::int32_t> in;
  std::vector<std::int32_t> out;
  std::size_t kept = 0;
};

// One input per (n, percent kept), built once and shared by every contestant.
Input& input(std::size_t n, int percent) {
  static std::map<std::pair<std::size_t, int>, std::unique_ptr<Input>> cache;
  auto& slot = cache[{n, percent}];
  if (!slot) {
    slot = std::make_unique<Input>();
    slot->in.resize(n);
    slot->out.assign(n, 0);  // touched: no page faults inside the timing
    std::mt19937_64 rng(n * 131 + percent);
    const std::uint64_t cut = static_cast<std::uint64_t>(percent) * (std::uint64_t{1} << 32) / 100;
    for (auto& x : slot->in) {
      const std::uint64_t r = rng();
      const bool keep = (r & 0xFFFFFFFFu) < cut;
      const auto v = static_cast<std::int32_t>((r >> 32) & 0x3FFFFFFF);  // 0 .. 2^30-1
      x = keep ? kThreshold + 1 + (v & 0x3FFFFFFE) : v;
    }
    slot->kept = static_cast<std::size_t>(
        std::count_if(slot->in.begin(), slot->in.end(), [](std::int32_t x) { return x > kThreshold; }));
  }
  return *slot;
}

void set_bytes(benchmark::State& state, std::size_t n, std::size_t kept) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>((n + kept) * 4));
  state.counters["kept"] = static_cast<double>(kept);
}

template <winnow::CompactAlgorithm Algorithm>
void BM_winnow(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Input& d = input(n, static_cast<int>(state.range(1)));
  const auto pred = winnow::where(winnow::CompareOp::greater, kThreshold);
  const winnow::CompactOptions opt{winnow::Order::stable, Algorithm, winnow::Backend::cpu};
  std::size_t k = 0;
  for (auto _ : state) {
    k = winnow::compact<std::int32_t>(d.in, d.out, pred, opt);
    benchmark::DoNotOptimize(d.out.data());
    benchmark::ClobberMemory();
  }
  if (k != d.kept) state.SkipWithError("wrong count");
  set_bytes(state, n, d.kept);
}
void BM_winnow_group_scan(benchmark::State& state) { BM_winnow<winnow::CompactAlgorithm::group_scan>(state); }
void BM_winnow_histopyramid(benchmark::State& state) { BM_winnow<winnow::CompactAlgorithm::histopyramid>(state); }

void BM_std_copy_if(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Input& d = input(n, static_cast<int>(state.range(1)));
  std::size_t k = 0;
  for (auto _ : state) {
    auto end = std::copy_if(d.in.begin(), d.in.end(), d.out.begin(), [](std::int32_t x) { return x > kThreshold; });
    k = static_cast<std::size_t>(end - d.out.begin());
    benchmark::DoNotOptimize(d.out.data());
    benchmark::ClobberMemory();
  }
  if (k != d.kept) state.SkipWithError("wrong count");
  set_bytes(state, n, d.kept);
}

void BM_memcpy_1thread(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Input& d = input(n, 50);
  for (auto _ : state) {
    std::memcpy(d.out.data(), d.in.data(), n * 4);
    benchmark::DoNotOptimize(d.out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(2 * n * 4));
}

// The same copy on winnow's thread count: one contiguous slice per thread, slice starts on
// 64-byte multiples so no two threads write one cache line.
void BM_memcpy_threads(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Input& d = input(n, 50);
  const int threads = winnow::detail::cpu_threads();
  constexpr std::size_t line = 64 / sizeof(std::int32_t);
  const std::size_t slice = ((n + threads - 1) / threads + line - 1) / line * line;
  for (auto _ : state) {
#pragma omp parallel num_threads(threads)
    {
      const std::size_t lo = std::min(n, static_cast<std::size_t>(omp_get_thread_num()) * slice);
      const std::size_t hi = std::min(n, lo + slice);
      std::memcpy(d.out.data() + lo, d.in.data() + lo, (hi - lo) * 4);
    }
    benchmark::DoNotOptimize(d.out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(2 * n * 4));
  state.counters["threads"] = threads;
}

// Records bytes/s per benchmark name for the ratio table.
class Collector : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> bytes_per_second;
  std::set<std::string> medians;
  void ReportRuns(const std::vector<Run>& runs) override {
    // With --benchmark_repetitions the median aggregate wins over single repetitions.
    for (const auto& r : runs) {
      if (run_failed(r)) continue;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.run_type != Run::RT_Iteration && !median) continue;
      const auto it = r.counters.find("bytes_per_second");
      if (it == r.counters.end()) continue;
      const std::string key = r.run_name.str();
      if (median || !medians.count(key)) bytes_per_second[key] = it->second.value;
      if (median) medians.insert(key);
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  bool huge = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--huge") == 0) huge = true;
    else args.push_back(argv[i]);
  }
  std::vector<std::int64_t> sizes{std::int64_t{1} << 21, std::int64_t{1} << 24, std::int64_t{1} << 26};
  if (huge) sizes.push_back(std::int64_t{1} << 28);
  const int percents[] = {1, 50, 99};
  for (auto n : sizes) {
    benchmark::RegisterBenchmark("memcpy_threads", BM_memcpy_threads)
        ->Args({n})
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("memcpy_1thread", BM_memcpy_1thread)
        ->Args({n})
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    for (int p : percents) {
      benchmark::RegisterBenchmark("winnow_group_scan", BM_winnow_group_scan)
          ->Args({n, p})
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark("std_copy_if", BM_std_copy_if)
          ->Args({n, p})
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
      if (n == (std::int64_t{1} << 21))
        benchmark::RegisterBenchmark("winnow_histopyramid", BM_winnow_histopyramid)
            ->Args({n, p})
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
    }
  }
  int ac = static_cast<int>(args.size());
  benchmark::Initialize(&ac, args.data());
  Collector reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  const int threads = winnow::detail::cpu_threads();
  std::printf(
      "\nthreads %d; bytes/s as a fraction of copy bandwidth (compaction: n*4 read + k*4 written; copy: 2*n*4)\n"
      "  of copy:    memcpy on %d threads (memcpy_threads), the machine's copy bandwidth\n"
      "  of memcpy1: memcpy on one thread (memcpy_1thread)\n",
      threads, threads);
  std::printf("%-12s %-8s %-22s %12s %10s %10s\n", "n", "kept", "contestant", "GB/s", "of copy", "of memcpy1");
  for (auto n : sizes) {
    const std::string ns = std::to_string(n);
    const double copy = reporter.bytes_per_second["memcpy_threads/" + ns + "/real_time"];
    const double copy1 = reporter.bytes_per_second["memcpy_1thread/" + ns + "/real_time"];
    auto row = [&](const std::string& kept, const char* name, double bps) {
      std::printf("%-12s %-8s %-22s %12.2f %10.2f %10.2f\n", ns.c_str(), kept.c_str(), name, bps / 1e9,
                  copy > 0 ? bps / copy : 0.0, copy1 > 0 ? bps / copy1 : 0.0);
    };
    row("-", "memcpy_threads", copy);
    row("-", "memcpy_1thread", copy1);
    for (int p : percents) {
      for (const char* c : {"winnow_group_scan", "std_copy_if", "winnow_histopyramid"}) {
        const std::string key = std::string(c) + "/" + ns + "/" + std::to_string(p) + "/real_time";
        const auto it = reporter.bytes_per_second.find(key);
        if (it != reporter.bytes_per_second.end()) row(std::to_string(p) + "%", c, it->second);
      }
    }
  }
  benchmark::Shutdown();
  return 0;
}
