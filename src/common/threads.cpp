#include "common/threads.hpp"

#include <omp.h>

namespace winnow::detail {

// OMP_NUM_THREADS (or omp_set_num_threads) decides; the default is one thread per core.
int cpu_threads() { return omp_get_max_threads(); }

}  // namespace winnow::detail
