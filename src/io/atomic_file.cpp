// Outputs are written to a temporary name beside the target and renamed into place, so an
// interrupted or failed run never leaves a half-written file under the real name.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <system_error>

#include "winnow/error.hpp"
#include "winnow/io.hpp"

namespace winnow::io {

namespace {
std::atomic<unsigned> g_counter{0};

// The temporaries that exist now, in fixed slots a signal handler can read (no allocation).
struct TempSlot {
  enum : int { free_slot, claimed, listed };  // listed: `path` is complete
  std::atomic<int> state{free_slot};
  char path[4096] = {};
};
std::array<TempSlot, 32> g_temps;
std::mutex g_temps_mutex;  // claim and release (threads); the signal handler only reads listed slots

void remove_listed_and_reraise(int sig) {
  for (TempSlot& t : g_temps)
    if (t.state.load() == TempSlot::listed) ::unlink(t.path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
}  // namespace

std::filesystem::path temporary_beside(const std::filesystem::path& target) {
  const std::filesystem::path dir = target.parent_path();
  std::filesystem::path temp;
  // Created exclusively: another process with the same pid (another container sharing the
  // directory) or a leftover of a killed run never shares the name. Where the directory refuses
  // the file, the name is returned anyway and the writer reports the error.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    temp = dir / (".winnow-" + std::to_string(::getpid()) + "-" + std::to_string(g_counter++) + ".tmp");
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      break;
    }
    if (errno != EEXIST) break;
  }
  const std::string s = temp.string();
  if (s.size() < sizeof(TempSlot::path)) {
    const std::lock_guard<std::mutex> lock(g_temps_mutex);
    for (TempSlot& t : g_temps) {
      if (t.state.load() != TempSlot::free_slot) continue;
      t.state.store(TempSlot::claimed);  // the handler skips the slot while its path is written
      std::memcpy(t.path, s.c_str(), s.size() + 1);
      t.state.store(TempSlot::listed);
      break;
    }  // with every slot taken the name is still good, only not removed on a signal
  }
  return temp;
}

void release_temporary(const std::filesystem::path& temp) {
  const std::string s = temp.string();
  const std::lock_guard<std::mutex> lock(g_temps_mutex);
  for (TempSlot& t : g_temps)
    if (t.state.load() == TempSlot::listed && s == t.path) {
      t.state.store(TempSlot::free_slot);
      return;
    }
}

void remove_temporaries_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup: stay ignored
    struct sigaction act {};
    act.sa_handler = remove_listed_and_reraise;
    sigemptyset(&act.sa_mask);
    ::sigaction(sig, &act, nullptr);
  }
}

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  check_writable(target_);
  temp_ = temporary_beside(target_);
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
  release_temporary(temp_);
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
  // Checked here so a set of outputs fails before any is renamed into place.
  const long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max > 0 && path.filename().string().size() > static_cast<std::size_t>(name_max))
    throw InputError(path.string() + ": file name longer than the " + std::to_string(name_max) +
                     " characters the directory allows");
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
