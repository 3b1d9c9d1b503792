#pragma once
/// @file histopyramid.hpp
/// Stream expansion through a HistoPyramid: every input element i asks for counts[i] outputs
/// (0..255); the outputs are numbered 0 .. total-1 in input order, and output key k is told which
/// element it belongs to and its rank among that element's outputs:
///
///     counts   = {2, 0, 1, 3}
///     elements = {0, 0, 2, 3, 3, 3}
///     ranks    = {0, 1, 0, 0, 1, 2}
///
/// Stream compaction is the case counts <= 1 (the elements are then the indices kept), marching
/// cubes the case of up to 5 triangles per cell, particle emission any other. The result is the
/// one an exclusive prefix sum of the counts gives (element i owns keys offset[i] ..
/// offset[i] + counts[i] - 1), on every backend.
///
/// Host API (this header): spans in host memory, any backend (a CUDA run copies in and out).
/// Device API for CUDA users (device pointers, a stream, no host synchronisation):
/// `winnow/cuda/histopyramid.hpp`.
#include <cstddef>
#include <cstdint>
#include <span>

#include "winnow/backend.hpp"

namespace winnow {

struct ExpandOptions {
  Backend backend = Backend::automatic;
};

/// Expands `counts`: writes elements[k] (and ranks[k], when `ranks` is not empty) for every output
/// key k < min(total, elements.size()) and returns the total, sum(counts). `ranks` is either empty
/// (not written) or as long as `elements`; otherwise, and for 32-bit elements of an input longer
/// than 2^32, throws InputError. Outputs past min(total, elements.size()) are left as they were.
std::uint64_t expand(std::span<const std::uint8_t> counts, std::span<std::uint64_t> elements,
                     std::span<std::uint8_t> ranks, const ExpandOptions& options = {});
std::uint64_t expand(std::span<const std::uint8_t> counts, std::span<std::uint32_t> elements,
                     std::span<std::uint8_t> ranks, const ExpandOptions& options = {});

}  // namespace winnow
