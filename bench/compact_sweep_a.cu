// single_pass sweep, part a: shared-memory tiles, stable, on a workspace (round 4: small inputs).
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_a(std::vector<SweepVariant>& v) {
  v.push_back(make_smem_variant<S<256, 4, 1000>>("ws stable t256x4v (16K) d1000 (library, small)"));
  v.push_back(make_smem_variant<S<256, 4, 500, 0, 8>>("ws stable t256x4v (16K) d500 mb8"));
  v.push_back(make_smem_variant<S<256, 4, 250, 0, 8>>("ws stable t256x4v (16K) d250 mb8"));
  v.push_back(make_smem_variant<S<256, 2, 500, 0, 8>>("ws stable t256x2v (8K) d500 mb8"));
  v.push_back(make_smem_variant<S<128, 4, 500, 0, 16>>("ws stable t128x4v (8K) d500 mb16"));
  v.push_back(make_smem_variant<S<512, 2, 500>>("ws stable t512x2v (16K) d500"));
  v.push_back(make_smem_variant<S<256, 8, 2000, 0, 6>>("ws stable t256x8v (32K) d2000 mb6 (library, large)"));
}
