#include "commands.hpp"

namespace winnow::cli {
// Placeholder until the compact capability lands.
void register_compact(CLI::App&) {}
}  // namespace winnow::cli
