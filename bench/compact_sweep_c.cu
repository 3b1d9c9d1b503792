// single_pass sweep, part c: unordered, on a workspace: one-tile blocks (round 4) against rings of
// bulk-copied tiles in persistent blocks (round 6).
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_c(std::vector<SweepVariant>& v) {
  v.push_back(make_smem_variant<A<128, 8, 10>>("ws any t128x8v (16K) mb10 (one-tile, large: library before)"));
  v.push_back(make_smem_variant<A<128, 4, 16>>("ws any t128x4v (8K) mb16 (one-tile, library small)"));
  v.push_back(make_ring_variant<R<256, 4, 3, 3>>("ws ring t256x4v (16K) x3 mb3 (library, large)"));
  v.push_back(make_ring_variant<R<256, 4, 4, 2>>("ws ring t256x4v (16K) x4 mb2"));
  v.push_back(make_ring_variant<R<128, 4, 4, 5>>("ws ring t128x4v (8K) x4 mb5"));
  v.push_back(make_ring_variant<R<128, 4, 3, 6>>("ws ring t128x4v (8K) x3 mb6"));
  v.push_back(make_ring_variant<R<256, 2, 4, 4>>("ws ring t256x2v (8K) x4 mb4"));
  v.push_back(make_ring_variant<R<128, 8, 3, 3>>("ws ring t128x8v (16K) x3 mb3"));
}
