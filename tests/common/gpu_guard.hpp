#pragma once
// GPU tests skip (reported as skipped) when no CUDA device answers; WINNOW_REQUIRE_GPU=1 turns
// that skip into a failure, for runs on a GPU machine.
#include <gtest/gtest.h>

namespace winnow::test {
/// True when CUDA is usable. False when not and skipping is allowed.
/// Fails the current test when CUDA is missing and WINNOW_REQUIRE_GPU=1.
bool gpu_ready();
bool gpu_required();
}  // namespace winnow::test

/// Put first in a test body that needs the GPU.
#define WINNOW_REQUIRE_CUDA_OR_SKIP()                                                              \
  do {                                                                                            \
    if (!::winnow::test::gpu_ready()) {                                                           \
      if (::winnow::test::gpu_required()) FAIL() << "WINNOW_REQUIRE_GPU=1 but no CUDA device answers"; \
      GTEST_SKIP() << "no CUDA device";                                                           \
    }                                                                                             \
  } while (0)
