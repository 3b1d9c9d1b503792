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

/// Ends a test that cannot run without the GPU: skipped, or failed under WINNOW_REQUIRE_GPU=1.
/// `why` is a string literal saying what is missing.
#define WINNOW_GPU_MISSING(why)                                                    \
  do {                                                                             \
    if (::winnow::test::gpu_required()) FAIL() << "WINNOW_REQUIRE_GPU=1 but " why; \
    GTEST_SKIP() << why;                                                           \
  } while (0)

/// Put first in a test body that needs the GPU.
#define WINNOW_REQUIRE_CUDA_OR_SKIP()                                               \
  do {                                                                              \
    if (!::winnow::test::gpu_ready()) WINNOW_GPU_MISSING("no CUDA device answers"); \
  } while (0)
