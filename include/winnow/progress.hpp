#pragma once
/// @file progress.hpp
/// Progress for long work: a one-line bar on stderr when it is a terminal, silent otherwise or
/// when quiet. Thread-safe `advance`.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace winnow {

class Progress {
 public:
  /// `total` steps; shows nothing when `quiet` or stderr is not a terminal.
  Progress(std::string label, std::uint64_t total, bool quiet = false);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void advance(std::uint64_t steps = 1);
  /// Clears the line (called by the destructor too).
  void finish();
  bool enabled() const { return enabled_; }

 private:
  void draw(std::uint64_t done);
  std::string label_;
  std::uint64_t total_;
  std::atomic<std::uint64_t> done_{0};
  bool enabled_;
  bool finished_ = false;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace winnow
