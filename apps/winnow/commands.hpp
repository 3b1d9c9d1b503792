#pragma once
// Sub-commands of the winnow CLI: each cmd_<verb>.cpp registers its own options and callback.
#include <CLI/CLI.hpp>
#include <string>

#include "winnow/backend.hpp"

namespace winnow::cli {

/// Options every command shares.
struct CommonOptions {
  std::string backend = "auto";
  bool quiet = false;
  /// The backend asked for: --backend, else WINNOW_BACKEND, else auto (resolved by the library).
  Backend requested() const;
};
void add_common_options(CLI::App* cmd, CommonOptions& common);

void register_devices(CLI::App& app);
void register_compact(CLI::App& app);
void register_label(CLI::App& app);
void register_puzzle(CLI::App& app);  // scramble, unscramble, puzzle-score

}  // namespace winnow::cli
