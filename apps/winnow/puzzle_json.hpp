#pragma once
// The puzzle JSON files the CLI reads back (puzzle-score): truth.json as `scramble --truth`
// writes it, placement.json as `unscramble --placement` writes it (cmd_puzzle.cpp describes both).
// Apart from the commands so the fuzz target fuzz_json reads them through the same code.
#include <filesystem>
#include <vector>

namespace winnow::cli {

/// A puzzle file's grid and its permutation (truth or tile_at).
struct PuzzleFile {
  int rows = 0, cols = 0;
  std::vector<int> values;
};

/// Reads `path` as a puzzle file whose "format" is `format` and whose permutation is under `key`:
/// "rows" and "cols" whole numbers >= 1, `key` a permutation of 0..rows*cols-1. Anything else
/// (not JSON, another format, fractions, a wrong count, a repeated tile) is an InputError naming
/// `path`.
PuzzleFile read_puzzle_json(const std::filesystem::path& path, const char* format, const char* key);

}  // namespace winnow::cli
