// single_pass stable sweep, part c: shared-memory tiles of 16 KiB, and the register kernel the
// library used before them (round 3).
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_c(std::vector<SweepVariant>& v) {
  v.push_back(make_smem_variant<S<256, 4, 500>>("smem t256x4v (16K) d500"));
  v.push_back(make_smem_variant<S<256, 4, 1000, 0, 8>>("smem t256x4v (16K) d1000 mb8"));
  v.push_back(make_smem_variant<S<128, 8, 2000, 0, 12>>("smem t128x8v (16K) d2000 mb12"));
  v.push_back(make_smem_variant<S<512, 2, 1000>>("smem t512x2v (16K) d1000"));
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 1000, 0, true>>("reg t256x16 d1000 (previous library)"));
}
