// single_pass stable sweep, part a: the sleep after publishing the aggregate (round 2).
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_a(std::vector<SweepVariant>& v) {
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 500, 0, true>>("t256x16 blkid lb1x32 d500/0 early"));
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 2000, 0, true>>("t256x16 blkid lb1x32 d2000/0 early"));
  v.push_back(make_sweep_variant<P<512, 4, true, 1, 500, 0, true>>("t512x16 blkid lb1x32 d500/0 early"));
  v.push_back(make_sweep_variant<P<512, 4, true, 1, 1000, 0, true>>("t512x16 blkid lb1x32 d1000/0 early"));
  v.push_back(make_sweep_variant<P<512, 4, true, 1, 2000, 0, true>>("t512x16 blkid lb1x32 d2000/0 early"));
  v.push_back(make_sweep_variant<P<256, 8, true, 1, 500, 0, true>>("t256x32 blkid lb1x32 d500/0 early"));
  v.push_back(make_sweep_variant<P<256, 8, true, 1, 1000, 0, true>>("t256x32 blkid lb1x32 d1000/0 early"));
  v.push_back(make_sweep_variant<P<256, 8, true, 1, 2000, 0, true>>("t256x32 blkid lb1x32 d2000/0 early"));
}
