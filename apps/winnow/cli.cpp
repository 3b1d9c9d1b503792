// The CLI as a library (commands.hpp): the options every command shares, the helpers the commands
// use, and register_commands, which builds the whole command line. main.cpp runs it; the fuzz
// target fuzz_cli_args parses with it.
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <system_error>

#include "commands.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"

namespace winnow::cli {

Backend CommonOptions::requested() const {
  if (backend.empty()) return Backend::automatic;  // the library reads WINNOW_BACKEND
  const Backend b = parse_backend(backend);
  if (b != Backend::automatic) return b;
  // An explicit auto: the environment does not apply, but the library's automatic choice (which
  // can weigh the job, as labeling does) still does.
  unsetenv("WINNOW_BACKEND");
  return Backend::automatic;
}

void add_common_options(CLI::App* cmd, CommonOptions& common) {
  cmd->add_option("--backend", common.backend, "auto | cpu | cuda (default: WINNOW_BACKEND, else auto)")
      ->check(CLI::IsMember({"auto", "automatic", "cpu", "cuda", "gpu"}));
  cmd->add_flag("-q,--quiet", common.quiet, "no progress or summary output");
}

const CLI::Validator kFileName(
    [](const std::string& name) { return name.empty() ? std::string("empty file name") : std::string(); }, "FILE");

const CLI::Validator kCount(
    [](const std::string& text) {
      const bool whole = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
      return whole ? std::string() : "'" + text + "' is not a whole number 0 or more";
    },
    "COUNT");

void refuse_overwriting(const std::vector<std::string>& inputs, const std::vector<const std::string*>& outputs) {
  namespace fs = std::filesystem;
  auto same_file = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);  // links, other names
    const fs::path ca = fs::weakly_canonical(a, ec);
    if (ec) return false;
    const fs::path cb = fs::weakly_canonical(b, ec);
    return !ec && ca == cb;
  };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string& out = *outputs[i];
    if (out.empty()) continue;
    for (const std::string& in : inputs)
      if (!in.empty() && same_file(out, in))
        throw InputError(out + ": is the input file " + in +
                         "; winnow does not write over its input (name another output)");
    for (std::size_t j = 0; j < i; ++j)
      if (!outputs[j]->empty() && same_file(out, *outputs[j]))
        throw InputError(out + ": named for two outputs (" + *outputs[j] + " is the other); name them apart");
  }
}

void warn(const std::string& what) {
  std::fflush(stdout);  // the summary line, when there is one, before the warning on a shared terminal
  std::fprintf(stderr, "winnow: warning: %s\n", what.c_str());
}

std::string number_text(double value) {
  char digits[32];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  return std::string(digits, end);
}

void write_outputs(const std::vector<Output>& outputs) {
  // Each output is written in full under a temporary name beside its target; only when all are,
  // are they renamed into place. A failure removes the temporaries and leaves the targets as
  // they were (files of an earlier run included).
  std::vector<std::pair<std::filesystem::path, const std::string*>> staged;
  auto drop_staged = [&] {
    std::error_code ec;
    for (const auto& s : staged) {
      std::filesystem::remove(s.first, ec);
      io::release_temporary(s.first);
    }
  };
  for (const Output& o : outputs) {
    if (o.path.empty()) continue;
    try {
      io::check_writable(o.path);
      staged.emplace_back(io::temporary_beside(o.path), &o.path);
      o.write(staged.back().first.string());
    } catch (const std::exception& e) {
      drop_staged();
      // The writer named the temporary: the user knows the file by its own name.
      std::string message = e.what();
      if (!staged.empty() && staged.back().second == &o.path)
        for (std::size_t at; (at = message.find(staged.back().first.string())) != std::string::npos;)
          message.replace(at, staged.back().first.string().size(), o.path);
      throw InputError(message);
    }
  }
  for (std::size_t i = 0; i < staged.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(staged[i].first, *staged[i].second, ec);
    if (ec) {
      const std::string target = *staged[i].second;
      staged.erase(staged.begin(), staged.begin() + static_cast<std::ptrdiff_t>(i));  // those are in place
      drop_staged();
      throw InputError(target + ": cannot write: " + ec.message());
    }
    io::release_temporary(staged[i].first);
  }
}

double parse_threshold(const std::string& text, const std::string& input) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double t = std::strtod(begin, &end);
  // Plain decimals only ("40", "40.5"): strtod would also take " 40", "0x28" and "4e1".
  const bool decimal = text.find_first_not_of("0123456789.") == std::string::npos &&
                       text.find_first_of("0123456789") != std::string::npos;
  const bool whole = decimal && end == begin + text.size() && errno == 0;
  if (!whole || !(t >= 0.0 && t <= 255.0))
    throw InputError(input + ": threshold '" + text + "' is not a number in 0..255");
  return t;
}

void check_output_name(const std::string& path, std::initializer_list<const char*> extensions, const char* format) {
  if (path.empty()) return;
  std::string ext = std::filesystem::path(path).extension().string();
  if (ext.empty()) return;  // no extension: the user's choice
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* e : extensions)
    if (ext == e) return;
  throw InputError(path + ": this output is written as " + format + "; name it " + *extensions.begin() +
                   " (or give no extension)");
}

void register_commands(CLI::App& app) {
  app.require_subcommand(1);
  app.set_version_flag("--version", "winnow 0.1.0");
  register_devices(app);
  register_compact(app);
  register_label(app);
  register_puzzle(app);
  register_voxels(app);
  register_isosurface(app);
}

}  // namespace winnow::cli
