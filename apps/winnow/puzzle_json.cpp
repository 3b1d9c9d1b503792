// Reading the puzzle JSON files (puzzle_json.hpp): nlohmann::json parses, then every field is
// checked before use, so a damaged or hand-edited file is one InputError naming it.
#include "puzzle_json.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "winnow/error.hpp"

namespace winnow::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& path) {
  std::ifstream f(path);
  if (!f) throw InputError(path.string() + ": cannot open");
  try {
    return json::parse(f);
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

}  // namespace

PuzzleFile read_puzzle_json(const fs::path& path, const char* format, const char* key) {
  const json j = read_json(path);
  PuzzleFile p;
  try {
    if (!j.is_object() || j.value("format", std::string()) != format)
      throw InputError(path.string() + ": not a " + format + " file");
    // Whole numbers only: the JSON library would truncate 0.5 to 0.
    const bool whole =
        j.at("rows").is_number_integer() && j.at("cols").is_number_integer() && j.at(key).is_array() &&
        std::all_of(j.at(key).begin(), j.at(key).end(), [](const json& v) { return v.is_number_integer(); });
    if (!whole) throw InputError(path.string() + ": 'rows', 'cols' and '" + key + "' must be whole numbers");
    p.rows = j.at("rows").get<int>();
    p.cols = j.at("cols").get<int>();
    p.values = j.at(key).get<std::vector<int>>();
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": malformed " + format + " file (" + std::string(e.what()) + ")");
  }
  if (p.rows < 1 || p.cols < 1) throw InputError(path.string() + ": 'rows' and 'cols' must be at least 1");
  if (static_cast<long>(p.values.size()) != static_cast<long>(p.rows) * p.cols)
    throw InputError(path.string() + ": '" + key + "' must hold rows*cols entries");
  std::vector<char> seen(p.values.size(), 0);
  for (int v : p.values) {
    if (v < 0 || v >= static_cast<int>(p.values.size()) || seen[v])
      throw InputError(path.string() + ": '" + key + "' is not a permutation of 0..rows*cols-1");
    seen[v] = 1;
  }
  return p;
}
}  // namespace winnow::cli
