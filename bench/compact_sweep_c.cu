// single_pass sweep, part c: shared-memory tiles, unordered, on a workspace (round 4: small inputs).
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_c(std::vector<SweepVariant>& v) {
  v.push_back(make_smem_variant<A<128, 8, 10>>("ws any t128x8v (16K) mb10 (library)"));
  v.push_back(make_smem_variant<A<256, 4, 8>>("ws any t256x4v (16K) mb8"));
  v.push_back(make_smem_variant<A<256, 2, 8>>("ws any t256x2v (8K) mb8"));
  v.push_back(make_smem_variant<A<128, 4, 16>>("ws any t128x4v (8K) mb16"));
  v.push_back(make_smem_variant<A<512, 2, 4>>("ws any t512x2v (16K) mb4"));
  v.push_back(make_smem_variant<A<256, 8, 6>>("ws any t256x8v (32K) mb6"));
}
