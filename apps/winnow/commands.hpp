#pragma once
// Sub-commands of the winnow CLI: each cmd_<verb>.cpp registers its own options and callback.
#include <CLI/CLI.hpp>

#include <array>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "winnow/backend.hpp"

namespace winnow::cli {

/// Options every command shares.
struct CommonOptions {
  std::string backend;  ///< empty: --backend not given
  bool quiet = false;
  /// The backend asked for: --backend (an explicit "auto" overrides WINNOW_BACKEND), else
  /// WINNOW_BACKEND, else auto. Asking for cuda where there is none throws BackendError.
  Backend requested() const;
};
void add_common_options(CLI::App* cmd, CommonOptions& common);

/// Refuses an empty file name given explicitly (`--out-packed ""`), which would otherwise read
/// as "no output asked for".
extern const CLI::Validator kFileName;
/// A whole number 0 or more, for count options (--min-area, --largest-k, --tile, --seed): CLI11
/// would read "-1" into an unsigned option as 2^64 - 1. The error names the option.
extern const CLI::Validator kCount;

/// Refuses, before anything is read or written, an output that is one of the inputs or another
/// output (the same file after resolving links, or the same file by another name where both
/// exist): InputError naming the output. Empty paths are outputs not asked for.
void refuse_overwriting(const std::vector<std::string>& inputs, const std::vector<const std::string*>& outputs);

/// Prints "winnow: warning: <what>" on stderr, whatever --quiet says: a result that is written
/// but empty (no triangle, no voxel, no component) must not pass for a success.
void warn(const std::string& what);

/// The shortest decimal text that reads back to `value` ("80", "0.1", "127.5").
std::string number_text(double value);

/// One output file of a command: its path (empty: not asked for) and how to write it.
struct Output {
  const std::string& path;
  std::function<void(const std::string&)> write;
};
/// Writes every asked-for output under a temporary name beside its target, then renames them all
/// into place. When a write fails, removes the temporaries and throws InputError naming the
/// target: the targets stay as they were.
void write_outputs(const std::vector<Output>& outputs);
/// A luminance threshold from its text: a finite number in 0..255, else InputError naming `input`
/// (checked here rather than by the parser, so the message names the file).
double parse_threshold(const std::string& text, const std::string& input);
/// Throws InputError when `path` has an extension not in `extensions` (".png", ...): a PNG
/// written under x.jpg would mislead. Empty paths and names without an extension pass.
void check_output_name(const std::string& path, std::initializer_list<const char*> extensions, const char* format);

/// "SX,SY,SZ" of isosurface's --spacing: three positive finite numbers, else InputError.
std::array<double, 3> parse_spacing(const std::string& text);

/// Sets up `app` as the winnow command line: one sub-command required, --version, every command.
void register_commands(CLI::App& app);
void register_devices(CLI::App& app);
void register_compact(CLI::App& app);
void register_label(CLI::App& app);
void register_puzzle(CLI::App& app);  // scramble, unscramble, puzzle-score
void register_voxels(CLI::App& app);
void register_isosurface(CLI::App& app);

}  // namespace winnow::cli
