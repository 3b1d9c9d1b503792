// single_pass stable sweep, part b: persistent prefetching kernel; re-polling the nearest window.
#define WINNOW_SWEEP_DEFINE
#include "compact_sweep.cuh"

void add_sweep_b(std::vector<SweepVariant>& v) {
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 1000, 0, true, 0, true>>("t256x16 persist lb1x32 d1000/0"));
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 500, 0, true, 0, true>>("t256x16 persist lb1x32 d500/0"));
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 0, 0, true, 0, true>>("t256x16 persist lb1x32 spin"));
  v.push_back(make_sweep_variant<P<512, 4, true, 1, 1000, 0, true, 0, true>>("t512x16 persist lb1x32 d1000/0"));
  v.push_back(make_sweep_variant<P<256, 8, true, 1, 1000, 0, true, 0, true>>("t256x32 persist lb1x32 d1000/0"));
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 1000, 0, true, 500>>("t256x16 blkid lb1x32 d1000/0 repoll500"));
  v.push_back(make_sweep_variant<P<256, 4, true, 1, 1000, 0, true, 1000>>("t256x16 blkid lb1x32 d1000/0 repoll1000"));
  v.push_back(make_sweep_variant<P<512, 4, true, 1, 1000, 0, true, 500>>("t512x16 blkid lb1x32 d1000/0 repoll500"));
}
