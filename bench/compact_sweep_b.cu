// single_pass stable sweep, part b: delays, look-back width, CUB's look-back, 32 items per thread.
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_b(std::vector<SweepVariant>& v) {
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 1000, 0, true>>("t256x16 blkid lb1x32 d1000/0 early"));
  v.push_back(make_sweep_variant<P<256, 4, true, 4, 0, 32, true>>("t256x16 blkid lb4x32 poll32 early"));
  v.push_back(make_sweep_variant<P<256, 4, true, 0, 0, 0, true>>("t256x16 blkid cub early"));
  v.push_back(make_sweep_variant<P<256, 8, true, 1, 0, 32, true>>("t256x32 blkid lb1x32 poll32 early"));
  v.push_back(make_sweep_variant<P<256, 8, true, 4, 0, 32, true>>("t256x32 blkid lb4x32 poll32 early"));
  v.push_back(make_sweep_variant<P<256, 8, true, 1, 450, 350, true>>("t256x32 blkid lb1x32 d450/350 early"));
}
