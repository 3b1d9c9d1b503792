#include "winnow/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace winnow {

Progress::Progress(std::string label, std::uint64_t total, bool quiet)
    : label_(std::move(label)), total_(total == 0 ? 1 : total), enabled_(!quiet && isatty(STDERR_FILENO)) {}

Progress::~Progress() { finish(); }

void Progress::advance(std::uint64_t steps) {
  const std::uint64_t done = done_.fetch_add(steps) + steps;
  if (enabled_) draw(done);
}

void Progress::update(std::uint64_t done, std::uint64_t total) {
  total_.store(total == 0 ? 1 : total);
  done_.store(done);
  if (enabled_) draw(done);
}

void Progress::draw(std::uint64_t done) {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total_.load() && now - last_draw_ < std::chrono::milliseconds(100)) return;  // at most 10 Hz
  last_draw_ = now;
  const int width = 30;
  const std::uint64_t total = total_.load();
  const double frac = done >= total ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(frac * width);
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%%", label_.c_str(), filled, "##############################", width - filled,
               "", static_cast<int>(frac * 100));
  std::fflush(stderr);
}

void Progress::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (enabled_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

}  // namespace winnow
