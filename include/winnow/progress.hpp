#pragma once
/// @file progress.hpp
/// Progress for long work: a one-line bar on stderr when it is a terminal, silent otherwise or
/// when quiet. Thread-safe `advance` and `update`.
///
/// Library calls that can take seconds (reading a large volume, meshing or labeling on the CPU)
/// take a `ProgressSink` in their options: a function they call with the work done so far and the
/// whole, in units of their own choosing, from any of their threads, at most every few
/// milliseconds of work. `Progress::sink()` gives one that draws the bar.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace winnow {

/// Called by a long library call with (done, total); must be safe to call from several threads.
using ProgressSink = std::function<void(std::uint64_t done, std::uint64_t total)>;

class Progress {
 public:
  /// `total` steps; shows nothing when `quiet` or stderr is not a terminal.
  Progress(std::string label, std::uint64_t total, bool quiet = false);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void advance(std::uint64_t steps = 1);
  /// Sets the work done and the whole (the whole may change from call to call).
  void update(std::uint64_t done, std::uint64_t total);
  /// A sink for library options that calls update(); valid while this Progress lives.
  ProgressSink sink() {
    return [this](std::uint64_t done, std::uint64_t total) { update(done, total); };
  }
  /// Clears the line (called by the destructor too).
  void finish();
  bool enabled() const { return enabled_; }

 private:
  void draw(std::uint64_t done);
  std::string label_;
  std::atomic<std::uint64_t> total_;
  std::atomic<std::uint64_t> done_{0};
  bool enabled_;
  bool finished_ = false;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace winnow
