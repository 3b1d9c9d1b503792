#pragma once
// --sweep-stable mode of bench_compact_gpu: single_pass policies, int32 values, launched
// directly through the library's launchers (src/compact/cuda/compact_lookback.cuh): register tiles
// (kern::LookbackPolicy, StableLookback, stable), shared-memory tiles (kern::SmemPolicy,
// SmemCompaction, stable or unordered) and rings of bulk-copied tiles (kern::RingPolicy,
// RingCompaction, unordered), the last two each on its own workspace as CompactWorkspace calls run.
// The variants are instantiated in compact_sweep_{a,c}.cu (compiled in parallel).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "winnow/compact.hpp"

struct SweepVariant {
  std::string name;
  bool stable = true;  // else checked as a multiset (count and checksums)
  std::size_t (*temp_bytes)(std::uint64_t n);
  void (*launch)(const std::int32_t* in, std::uint64_t n, std::int32_t* out, std::uint64_t* d_count,
                 const winnow::Predicate& pred, void* temp, cudaStream_t s);
};

void add_sweep_a(std::vector<SweepVariant>& v);
void add_sweep_c(std::vector<SweepVariant>& v);

#ifdef WINNOW_SWEEP_DEFINE
#include "compact/cuda/compact_lookback.cuh"

using SweepSrc = winnow::detail::cuda::kern::PredSource<std::int32_t>;
// A sink type of its own: the library instantiates its kernels for ValueSink<uint32_t> in another
// translation unit, and a kernel set up there once (RingCompaction's shared-memory attribute) is
// not the same kernel handle here.
struct SweepSink : winnow::detail::cuda::kern::ValueSink<std::uint32_t> {};

/// L: a launcher with temp_bytes(n) and launch(src, sink, n, d_count, temp, stream[, workspace]).
template <class L, bool Workspace>
SweepVariant make_launcher_variant(const char* name, bool stable) {
  using Src = SweepSrc;
  using Sink = SweepSink;
  SweepVariant v;
  v.name = name;
  v.stable = stable;
  v.temp_bytes = [](std::uint64_t n) { return L::temp_bytes(n); };
  v.launch = [](const std::int32_t* in, std::uint64_t n, std::int32_t* out, std::uint64_t* d_count,
                const winnow::Predicate& pred, void* temp, cudaStream_t s) {
    const Src src{in, pred, reinterpret_cast<std::uintptr_t>(in) % 16 == 0};
    Sink sink;
    sink.out = reinterpret_cast<std::uint32_t*>(out);
    if constexpr (Workspace) {
      static winnow::detail::cuda::WorkspaceState ws;  // one per variant, for the whole run
      ws.reserve(L::tiles(n), 256, s);
      L::launch(src, sink, n, d_count, temp, s, &ws);
    } else {
      L::launch(src, sink, n, d_count, temp, s);
    }
  };
  return v;
}
template <class Pol>
SweepVariant make_sweep_variant(const char* name) {
  return make_launcher_variant<winnow::detail::cuda::StableLookback<Pol, SweepSrc, SweepSink>, false>(name, true);
}
template <class Pol>
SweepVariant make_smem_variant(const char* name) {
  return make_launcher_variant<winnow::detail::cuda::SmemCompaction<Pol, SweepSrc, SweepSink>, true>(name, Pol::stable);
}
template <class Pol>
SweepVariant make_ring_variant(const char* name) {
  return make_launcher_variant<winnow::detail::cuda::RingCompaction<Pol, SweepSrc, SweepSink>, true>(name, false);
}
template <int T, int V, int St, int MB = 1>
using R = winnow::detail::cuda::kern::RingPolicy<T, V, St, MB>;
template <int T, int V, int D0, int DP = 0, int MB = 1>
using S = winnow::detail::cuda::kern::SmemPolicy<T, V, true, D0, DP, MB>;
template <int T, int V, int MB = 1>
using A = winnow::detail::cuda::kern::SmemPolicy<T, V, false, 0, 0, MB>;
template <int T, int V, bool B, int LB, int D0, int DP, bool ES>
using P = winnow::detail::cuda::kern::LookbackPolicy<T, V, B, LB, D0, DP, ES>;
#endif
