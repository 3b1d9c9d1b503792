// winnow: fast data-parallel image primitives on CPU and GPU. One sub-command per capability
// (cli.cpp builds the command line); every error is one line and exit status 2.
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "winnow: fast data-parallel image primitives (compaction, labeling, puzzles, voxels, isosurfaces) on CPU and "
      "GPU"};
  winnow::io::remove_temporaries_on_signals();
  winnow::cli::register_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {  // one line, as every other error
    std::fprintf(stderr, "winnow: error: %s (see --help)\n", e.what());
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
