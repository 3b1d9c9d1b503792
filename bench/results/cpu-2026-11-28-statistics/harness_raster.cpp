#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "winnow/label.hpp"
#include "winnow/label_statistics.hpp"
#include "winnow/volume.hpp"
using namespace winnow;
int main(int argc, char** argv) {
  const int n = 256;
  Volume<std::uint8_t> mask(n, n, n);
  std::mt19937_64 g(0);
  for (std::int64_t i = 0; i < mask.size(); ++i) mask.data()[i] = (g() % 1000) < 100;
  LabelOptions o;
  o.connectivity = 6;
  auto res = label(std::as_const(mask).view(), o);
  const Volume<std::uint32_t>& lab = res.labels;
  std::printf("components %llu\n", (unsigned long long)res.count);
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::vector<double> ts;
    for (int r = 0; r < 9; ++r) {
      auto a = std::chrono::steady_clock::now();
      auto s = label_statistics(std::as_const(lab).view());
      auto b = std::chrono::steady_clock::now();
      ts.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    }
    std::sort(ts.begin(), ts.end());
    std::printf("threads %d: median %.1f ms min %.1f\n", threads, ts[4], ts[0]);
  }
}
