// single_pass stable sweep, part a: the previous kernel's policy and one change at a time.
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_a(std::vector<SweepVariant>& v) {
  v.push_back(make_sweep_variant<P<256, 4, false, 4, 0, 32, false>>("t256x16 atomic lb4x32 poll32 late"));
  v.push_back(make_sweep_variant<P<256, 4, false, 1, 0, 32, false>>("t256x16 atomic lb1x32 poll32 late"));
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 0, 32, false>>("t256x16 blkid lb1x32 poll32 late"));
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 0, 32, true>>("t256x16 blkid lb1x32 poll32 early"));
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 0, 0, true>>("t256x16 blkid lb1x32 spin early"));
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 450, 350, true>>("t256x16 blkid lb1x32 d450/350 early"));
}
