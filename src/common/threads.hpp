#pragma once
// The CPU backend's thread count (OpenMP's, after OMP_NUM_THREADS), for the front ends' choices.
namespace winnow::detail {
int cpu_threads();
}  // namespace winnow::detail
