#include "commands.hpp"

namespace winnow::cli {
// Placeholder until the label capability lands.
void register_label(CLI::App&) {}
}  // namespace winnow::cli
