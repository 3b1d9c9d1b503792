// single_pass stable sweep, part c: block sizes, CUB's look-back at 32 items, atomic tile ids.
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_c(std::vector<SweepVariant>& v) {
  v.push_back(make_sweep_variant<P<256, 8, true, 0, 0, 0, true>>("t256x32 blkid cub early"));
  v.push_back(make_sweep_variant<P<512, 4, true, 1, 0, 32, true>>("t512x16 blkid lb1x32 poll32 early"));
  v.push_back(make_sweep_variant<P<512, 4, true, 1, 450, 350, true>>("t512x16 blkid lb1x32 d450/350 early"));
  v.push_back(make_sweep_variant<P<512, 8, true, 1, 0, 32, true>>("t512x32 blkid lb1x32 poll32 early"));
  v.push_back(make_sweep_variant<P<256, 8, false, 1, 0, 32, true>>("t256x32 atomic lb1x32 poll32 early"));
  v.push_back(make_sweep_variant<P<256, 8, true, 4, 450, 350, true>>("t256x32 blkid lb4x32 d450/350 early"));
  v.push_back(make_sweep_variant<P<128, 8, true, 1, 450, 350, true>>("t128x32 blkid lb1x32 d450/350 early"));
  v.push_back(make_sweep_variant<P<256, 8, true, 1, 0, 0, true>>("t256x32 blkid lb1x32 spin early"));
}
