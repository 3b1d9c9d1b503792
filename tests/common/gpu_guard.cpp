#include "common/gpu_guard.hpp"

#include <cstdlib>
#include <cstring>

#include "winnow/backend.hpp"

namespace winnow::test {
bool gpu_ready() { return cuda_available(); }
bool gpu_required() {
  const char* v = std::getenv("WINNOW_REQUIRE_GPU");
  return v && std::strcmp(v, "0") != 0 && *v;
}
}  // namespace winnow::test
