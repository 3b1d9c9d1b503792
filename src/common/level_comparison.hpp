#pragma once
// "Above a level" and "below a level" in a voxel's own type: the one rule that voxel compaction
// (voxels/voxels.cpp) and the volume thresholds (label/threshold.cpp) share, so `winnow voxels
// --level T` and `winnow label VOLUME --threshold T` select the same voxels.
//
// - Integer voxels: above keeps v > floor(level), below keeps v < ceil(level) (the same voxels as
//   comparing the exact values); a level beyond the type's range keeps all or none.
// - Floating-point voxels: (double)v > level (or <), exactly: for f32 the level becomes the
//   nearest float on the safe side (the largest float <= level for above, the smallest float >=
//   level for below), which selects the same voxels. NaN voxels compare false either way.
#include <cmath>
#include <limits>
#include <type_traits>

#include "winnow/compact.hpp"

namespace winnow::detail {

/// `voxel <op> threshold` in the voxel's own type.
template <class T>
struct LevelComparison {
  CompareOp op;
  T threshold;
  /// The comparison on one voxel (op is greater, greater_equal, less or less_equal).
  bool operator()(T v) const {
    switch (op) {
      case CompareOp::greater: return v > threshold;
      case CompareOp::greater_equal: return v >= threshold;
      case CompareOp::less: return v < threshold;
      default: return v <= threshold;
    }
  }
};

/// The comparison that keeps the voxels above `level` (`above`) or below it; `level` not NaN.
template <class T>
LevelComparison<T> level_comparison(double level, bool above) {
  if constexpr (std::is_floating_point_v<T>) {
    // Nearest T, then one step to the safe side where rounding crossed the level: for f32,
    // v > t is then (double)v > level for every float v (for f64 t is the level itself).
    constexpr T largest = std::numeric_limits<T>::max(), inf = std::numeric_limits<T>::infinity();
    T t;
    if (level > largest) {  // beyond the finite Ts (a cast would be undefined)
      t = above && !std::isinf(level) ? largest : inf;
    } else if (level < -largest) {
      t = !above && !std::isinf(level) ? -largest : -inf;
    } else {
      t = static_cast<T>(level);
    }
    if (above && static_cast<double>(t) > level) t = std::nextafter(t, -inf);
    if (!above && static_cast<double>(t) < level) t = std::nextafter(t, inf);
    return {above ? CompareOp::greater : CompareOp::less, t};
  } else {
    using Limits = std::numeric_limits<T>;
    // The range as doubles, both exact: the minimum (0 or -2^(b-1)) and one past the maximum (2^digits).
    const double lowest = static_cast<double>(Limits::min());
    const double past_max = std::ldexp(1.0, Limits::digits);
    if (above) {  // v > level  <=>  v > floor(level)
      const double f = std::floor(level);
      if (f >= past_max) return {CompareOp::greater, Limits::max()};     // none
      if (f < lowest) return {CompareOp::greater_equal, Limits::min()};  // all
      return {CompareOp::greater, static_cast<T>(f)};
    }
    const double c = std::ceil(level);                                 // v < level  <=>  v < ceil(level)
    if (c <= lowest) return {CompareOp::less, Limits::min()};          // none
    if (c >= past_max) return {CompareOp::less_equal, Limits::max()};  // all
    return {CompareOp::less, static_cast<T>(c)};
  }
}

}  // namespace winnow::detail
