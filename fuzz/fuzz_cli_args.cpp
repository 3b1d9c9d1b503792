// libFuzzer target: the command line. The input, split at NUL bytes, is argv after the program
// name; it is parsed by the CLI's own command line (apps/winnow: register_commands), and stopped
// once parsed: the root's parse-complete callback, which CLI11 runs after every option is
// converted and checked and before any command's action, throws. Nothing is read, written or
// run: parsing only. (The actions cannot simply be replaced: each holds its command's options.)
// Then each argument
// goes through the text parsers the actions use on their options (--threshold, --level, --dims,
// --dtype, --spacing, --grid, --backend). Any input must end in a parse or a one-line error
// (CLI::Error, winnow::Error), never a crash or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "commands.hpp"
#include "volume_input.hpp"
#include "winnow/backend.hpp"
#include "winnow/error.hpp"
#include "winnow/puzzle.hpp"

namespace {

struct Parsed {};

template <class F>
void parse_or_refuse(F&& parse) {
  try {
    (void)parse();
  } catch (const winnow::Error&) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"winnow"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(std::move(current));
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  if (!current.empty()) args.push_back(std::move(current));
  if (args.size() > 64) return 0;  // longer lines explore nothing new

  CLI::App app;
  winnow::cli::register_commands(app);
  app.parse_complete_callback([] { throw Parsed{}; });
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const Parsed&) {
  } catch (const CLI::Error&) {  // a refused line, --help and --version alike
  } catch (const winnow::Error&) {}

  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    parse_or_refuse([&] { return winnow::cli::parse_threshold(a, "image.png"); });
    parse_or_refuse([&] { return winnow::cli::parse_level(a); });
    parse_or_refuse([&] { return winnow::cli::parse_dims(a); });
    parse_or_refuse([&] { return winnow::cli::parse_dtype(a); });
    parse_or_refuse([&] { return winnow::cli::parse_spacing(a); });
    parse_or_refuse([&] { return winnow::puzzle::parse_grid(a); });
    parse_or_refuse([&] { return winnow::parse_backend(a); });
  }
  return 0;
}
