#pragma once
// --sweep-stable mode of bench_compact_gpu: single_pass stable policies (kern::LookbackPolicy),
// int32 values, launched directly through the library's launcher (cuda/compact_lookback.cuh).
// The variants are instantiated in compact_sweep_{a,b,c}.cu (three units compile in parallel).
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "winnow/compact.hpp"

struct SweepVariant {
  std::string name;
  std::size_t (*temp_bytes)(std::uint64_t n);
  void (*launch)(const std::int32_t* in, std::uint64_t n, std::int32_t* out, std::uint64_t* d_count,
                 const winnow::Predicate& pred, void* temp, cudaStream_t s);
};

void add_sweep_a(std::vector<SweepVariant>& v);
void add_sweep_c(std::vector<SweepVariant>& v);

#ifdef WINNOW_SWEEP_DEFINE
#include "cuda/compact_lookback.cuh"

template <class Pol>
SweepVariant make_sweep_variant(const char* name) {
  using Src = winnow::detail::cuda::kern::PredSource<std::int32_t>;
  using Sink = winnow::detail::cuda::kern::ValueSink<std::uint32_t>;
  using L = winnow::detail::cuda::StableLookback<Pol, Src, Sink>;
  SweepVariant v;
  v.name = name;
  v.temp_bytes = [](std::uint64_t n) { return L::temp_bytes(n); };
  v.launch = [](const std::int32_t* in, std::uint64_t n, std::int32_t* out, std::uint64_t* d_count,
                const winnow::Predicate& pred, void* temp, cudaStream_t s) {
    const Src src{in, pred, reinterpret_cast<std::uintptr_t>(in) % 16 == 0};
    const Sink sink{reinterpret_cast<std::uint32_t*>(out)};
    L::launch(src, sink, n, d_count, temp, s);
  };
  return v;
}
template <int T, int V, bool B, int LB, int D0, int DP, bool ES>
using P = winnow::detail::cuda::kern::LookbackPolicy<T, V, B, LB, D0, DP, ES>;
#endif
