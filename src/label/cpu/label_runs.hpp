#pragma once
// Run-based CPU labeling (the `row_stripes` algorithm); see label_runs.cpp.
#include <cstdint>
#include <vector>

#include "label/backends.hpp"

namespace winnow::detail::cpu {
/// Labels with run-based row stripes. Returns false (and does nothing) when the image is too
/// large for its 32-bit run indices; the caller then uses the pixel-scan path.
bool label_runs(const LabelRequest& request, std::vector<ComponentStats>* stats, std::uint64_t& count);
}  // namespace winnow::detail::cpu
