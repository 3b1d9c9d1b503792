#include "winnow/error.hpp"

#include <thread>

#include "winnow/compact.hpp"

namespace winnow::detail {

void throw_callable_needs_cpu() {
  throw BackendError(
      "a C++ callable predicate runs on the cpu backend only; use a winnow::Predicate or the "
      "CUDA device API for the cuda backend");
}

}  // namespace winnow::detail
