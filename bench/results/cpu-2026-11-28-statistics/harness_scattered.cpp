#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "winnow/label_statistics.hpp"
#include "winnow/volume.hpp"
using namespace winnow;
int main() {
  const int n = 256;
  Volume<std::uint32_t> v(n, n, n);
  std::mt19937_64 g(1);
  // a segmentation-like volume: runs of 1..16 voxels of labels drawn at random from 1..2M (scattered numbering)
  for (std::int64_t i = 0; i < v.size();) {
    std::uint32_t l = g() % 4 == 0 ? 0 : 1 + g() % 2000000;
    for (int k = 1 + g() % 16; k > 0 && i < v.size(); --k) v.data()[i++] = l;
  }
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::vector<double> ts;
    for (int r = 0; r < 9; ++r) {
      auto a = std::chrono::steady_clock::now();
      auto s = label_statistics(std::as_const(v).view());
      auto b = std::chrono::steady_clock::now();
      ts.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    }
    std::sort(ts.begin(), ts.end());
    std::printf("scattered, threads %d: median %.1f ms\n", threads, ts[4]);
  }
}
