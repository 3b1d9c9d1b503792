// libFuzzer target: the JSON files the CLI reads (puzzle-score's placement.json and truth.json,
// apps/winnow/puzzle_json.hpp). Every input is read as both formats; it must end in a puzzle
// file or an InputError naming the file, never a crash or undefined behaviour. A file that
// passes must hold what the reader promises: a grid of at least 1x1 and a permutation of it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "fuzz_read.hpp"
#include "puzzle_json.hpp"
#include "winnow/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  winnow::fuzz::MemoryFile file(data, size);
  if (!file.ok()) return 0;
  for (const auto& [format, key] :
       {std::pair{"winnow-puzzle-placement", "tile_at"}, std::pair{"winnow-puzzle-truth", "truth"}}) {
    try {
      const winnow::cli::PuzzleFile p = winnow::cli::read_puzzle_json(file.path(), format, key);
      if (p.rows < 1 || p.cols < 1 || p.values.size() != static_cast<std::size_t>(p.rows) * p.cols) std::abort();
      std::vector<char> seen(p.values.size());
      for (int v : p.values) {
        if (v < 0 || static_cast<std::size_t>(v) >= seen.size() || seen[v]) std::abort();
        seen[v] = 1;
      }
    } catch (const winnow::Error&) {}
  }
  return 0;
}
