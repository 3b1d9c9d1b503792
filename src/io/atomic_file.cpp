// Outputs are written to a temporary name beside the target and renamed into place, so an
// interrupted or failed run never leaves a half-written file under the real name.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <system_error>

#include "winnow/error.hpp"
#include "winnow/io.hpp"

namespace winnow::io {

namespace {
std::atomic<unsigned> g_counter{0};
}

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  check_writable(target_);
  temp_ = target_;
  temp_ += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_counter++);
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void AtomicFile::commit() {
  std::error_code ec;
  std::filesystem::rename(temp_, target_, ec);
  if (ec) throw InputError(target_.string() + ": cannot write: " + ec.message());
  committed_ = true;
}

void check_writable(const std::filesystem::path& path) {
  if (path.empty()) throw InputError("empty output file name");
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw InputError(path.string() + ": output directory '" + dir.string() + "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw InputError(path.string() + ": output directory '" + dir.string() + "' is not writable");
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path.string() + ": is a directory, not an output file name");
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  AtomicFile file(path);
  {
    std::ofstream out(file.temp_path(), std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw InputError(path.string() + ": cannot write: " + std::strerror(errno));
  }
  file.commit();
}

}  // namespace winnow::io
