#include "commands.hpp"

namespace winnow::cli {
// Placeholder until the puzzle capability lands.
void register_puzzle(CLI::App&) {}
}  // namespace winnow::cli
