// Keeps the even numbers of 0..999 with winnow and checks the result.
#include <cstdio>
#include <numeric>
#include <vector>
#include <winnow/compact.hpp>

int main() {
  std::vector<std::int32_t> in(1000);
  std::iota(in.begin(), in.end(), 0);
  std::vector<std::int32_t> out(in.size());
  // A C++ lambda runs on the CPU; a winnow::Predicate runs on every backend.
  const auto kept = winnow::compact(std::span<const std::int32_t>(in), std::span<std::int32_t>(out),
                                    [](std::int32_t x) { return x % 2 == 0; });
  const auto big = winnow::compact(std::span<const std::int32_t>(in),
                                   winnow::where(winnow::CompareOp::greater_equal, std::int32_t{990}));
  const bool ok = kept == 500 && out[499] == 998 && big.size() == 10 && big.front() == 990;
  std::printf("kept %zu even numbers and %zu numbers >= 990: %s\n", kept, big.size(), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
