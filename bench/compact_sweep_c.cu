// single_pass stable sweep, part c: fewer, larger tiles for small inputs (short look-back chains).
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_c(std::vector<SweepVariant>& v) {
  v.push_back(make_sweep_variant<P<1024, 4, true, 1, 450, 350, true>>("t1024x16 blkid lb1x32 d450/350 early"));
  v.push_back(make_sweep_variant<P<1024, 4, true, 1, 1000, 0, true>>("t1024x16 blkid lb1x32 d1000/0 early"));
  v.push_back(make_sweep_variant<P<1024, 4, true, 1, 0, 32, true>>("t1024x16 blkid lb1x32 poll32 early"));
  v.push_back(make_sweep_variant<P<1024, 8, true, 1, 450, 350, true>>("t1024x32 blkid lb1x32 d450/350 early"));
  v.push_back(make_sweep_variant<P<512, 8, true, 1, 450, 350, true>>("t512x32 blkid lb1x32 d450/350 early"));
  v.push_back(make_sweep_variant<P<512, 8, true, 1, 1000, 0, true>>("t512x32 blkid lb1x32 d1000/0 early"));
}
