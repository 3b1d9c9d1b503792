// single_pass stable sweep, part a: shared-memory tiles of 32 KiB (round 3).
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_a(std::vector<SweepVariant>& v) {
  v.push_back(make_smem_variant<S<256, 8, 1000, 0, 6>>("smem t256x8v (32K) d1000 mb6"));
  v.push_back(make_smem_variant<S<256, 8, 3000, 0, 6>>("smem t256x8v (32K) d3000 mb6"));
  v.push_back(make_smem_variant<S<256, 8, 2000, 0, 7>>("smem t256x8v (32K) d2000 mb7"));
  v.push_back(make_smem_variant<S<128, 16, 1000, 0, 6>>("smem t128x16v (32K) d1000 mb6"));
  v.push_back(make_smem_variant<S<128, 16, 2000, 0, 6>>("smem t128x16v (32K) d2000 mb6"));
}
