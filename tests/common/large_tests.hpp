#pragma once
// Tests of very large inputs (tens of GB of memory, minutes) run only when asked for:
// WINNOW_LARGE_TESTS=1 (scripts/gpu-check.sh's `large` step sets it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

/// Put first in a test body that needs WINNOW_LARGE_TESTS=1; `needs` is a string literal saying
/// what the test takes (shown in the skip message).
#define WINNOW_REQUIRE_LARGE_TESTS_OR_SKIP(needs)                                                                  \
  do {                                                                                                             \
    const char* large_tests_ = std::getenv("WINNOW_LARGE_TESTS");                                                  \
    if (!large_tests_ || std::string(large_tests_) != "1") GTEST_SKIP() << "set WINNOW_LARGE_TESTS=1 (" needs ")"; \
  } while (0)
