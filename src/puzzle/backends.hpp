#pragma once
// The contract between the puzzle front end (puzzle.cpp) and the backends (cpu/, cuda/).
#include <vector>

#include "winnow/puzzle.hpp"

namespace winnow::detail::puzzle {

/// The strips (see puzzle_measures.hpp) of every tile side: tiles * 4 * 2 * K * 3 floats.
std::vector<float> make_strips(const winnow::puzzle::Tiles& tiles);

namespace cpu {
winnow::puzzle::Compatibility compatibility(const winnow::puzzle::Tiles& tiles, winnow::puzzle::Measure measure);
std::vector<int> exhaustive(const winnow::puzzle::Compatibility& compat, int rows, int cols);
std::vector<int> greedy(const winnow::puzzle::Compatibility& compat, int rows, int cols);
}  // namespace cpu

namespace cuda {
/// Strips up, dissimilarities on the device, matrices down; synchronises.
winnow::puzzle::Compatibility compatibility(const winnow::puzzle::Tiles& tiles, winnow::puzzle::Measure measure);
/// One thread per permutation (decoded from its index), block reduction, one 64-bit atomicMin
/// of (orderable cost, index) per block; synchronises.
std::vector<int> exhaustive(const winnow::puzzle::Compatibility& compat, int rows, int cols);
}  // namespace cuda

}  // namespace winnow::detail::puzzle
