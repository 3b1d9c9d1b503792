#pragma once
// The compaction tests' own reading of a predicate: plain comparisons and the luminance formula
// written out here, so that expected results never come from winnow::matches (which the kernels
// and the CPU backend call themselves, and whose mistakes they would then share).
#include <gtest/gtest.h>

#include <cstdint>

#include "winnow/compact.hpp"

namespace winnow::test {

/// a <op> b with the built-in operators (IEEE semantics for floats: NaN compares unequal).
template <class K>
bool compare_ref(CompareOp op, K a, K b) {
  switch (op) {
    case CompareOp::greater: return a > b;
    case CompareOp::greater_equal: return a >= b;
    case CompareOp::less: return a < b;
    case CompareOp::less_equal: return a <= b;
    case CompareOp::equal: return a == b;
    case CompareOp::not_equal: return a != b;
  }
  ADD_FAILURE() << "unknown op";
  return false;
}

/// Luminance of an 8-bit pixel in exact thousandths: 299 R + 587 G + 114 B.
inline std::uint32_t luma_milli_ref(const Rgba8& p) { return 299u * p.r + 587u * p.g + 114u * p.b; }

/// Float luminance rounded after every product and sum, as documented for RgbaF32 (volatile: no
/// fused multiply-add).
inline float float_luma_ref(const RgbaF32& p) {
  volatile float r = 0.299f * p.r, g = 0.587f * p.g, b = 0.114f * p.b;
  volatile float rg = r + g;
  return rg + b;
}

}  // namespace winnow::test
