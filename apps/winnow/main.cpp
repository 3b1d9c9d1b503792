// winnow: fast data-parallel image primitives on CPU and GPU. One sub-command per capability
// (cli.cpp builds the command line); every error is one line and exit status 2.
// `winnow label VOLUME.zarr ...` is handed as it is to the Python package's chunked labeling
// (`python3 -m winnow label`, winnow.dask), which labels volumes larger than memory chunk by chunk;
// WINNOW_PYTHON names another interpreter.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"

namespace {

bool names_zarr(std::string_view arg) {
  while (arg.size() > 1 && arg.back() == '/') arg.remove_suffix(1);
  return !arg.starts_with("-") && arg.ends_with(".zarr");
}

// `label` with a .zarr input: replaces this process by `python3 -m winnow label ARGS...`; returns
// only when that interpreter cannot be started.
void label_zarr_in_python(int argc, char** argv) {
  if (argc < 3 || std::string_view(argv[1]) != "label") return;
  bool zarr = false;  // a zarr input: an argument naming a .zarr that is not an output's value
  for (int i = 2; i < argc; ++i) {
    const std::string_view before(argv[i - 1]);
    const bool output = before == "--out-labels" || before == "--out-colored" || before == "--stats";
    zarr = zarr || (!output && names_zarr(argv[i]));
  }
  if (!zarr) return;
  const char* python = std::getenv("WINNOW_PYTHON");
  if (python == nullptr || *python == '\0') python = "python3";
  std::vector<char*> args{const_cast<char*>(python), const_cast<char*>("-m"), const_cast<char*>("winnow")};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execvp(python, args.data());
  std::fprintf(stderr,
               "winnow: error: zarr volumes are labelled by the Python package (%s -m winnow label ...), and %s "
               "could not be started: %s\n",
               python, python, std::strerror(errno));
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  label_zarr_in_python(argc, argv);
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
