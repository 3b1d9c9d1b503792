// Private helpers shared by the image and volume readers.
#pragma once
#include <filesystem>
#include <string>

#include "winnow/error.hpp"

namespace winnow::io::detail {

/// Throws InputError "<path>: <what>" (one line, naming the file).
[[noreturn]] inline void fail(const std::filesystem::path& path, const std::string& what) {
  throw InputError(path.string() + ": " + what);
}

}  // namespace winnow::io::detail
