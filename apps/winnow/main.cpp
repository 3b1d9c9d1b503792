// winnow: fast data-parallel image primitives on CPU and GPU. One sub-command per capability.
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "winnow/error.hpp"

namespace winnow::cli {

Backend CommonOptions::requested() const { return parse_backend(backend); }

void add_common_options(CLI::App* cmd, CommonOptions& common) {
  cmd->add_option("--backend", common.backend, "auto | cpu | cuda (default: WINNOW_BACKEND, else auto)")
      ->check(CLI::IsMember({"auto", "automatic", "cpu", "cuda"}));
  cmd->add_flag("-q,--quiet", common.quiet, "no progress or summary output");
}

}  // namespace winnow::cli

int main(int argc, char** argv) {
  CLI::App app{"winnow: fast data-parallel image primitives (compaction, labeling, puzzles) on CPU and GPU"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "winnow 0.1.0");
  winnow::cli::register_devices(app);
  winnow::cli::register_compact(app);
  winnow::cli::register_label(app);
  winnow::cli::register_puzzle(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const winnow::Error& e) {
    std::fprintf(stderr, "winnow: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "winnow: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
