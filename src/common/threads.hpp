#pragma once
// The CPU backend's thread count (OpenMP's, after OMP_NUM_THREADS), for the front ends' choices:
// detail::cpu_threads(), declared in winnow/backend.hpp (the public compact template uses it too).
#include "winnow/backend.hpp"
