// The live progress bar of an epoch on a terminal: steps done of total, running loss and ETA,
// redrawn in place with a carriage return at most ten times a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace dp::rt {

/// The clock of every time the training reports.
using Clock = std::chrono::steady_clock;

/// Seconds from `start` to now.
inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class ProgressBar {
public:
  /// Draws nothing unless `enabled` (the output is a terminal and not quiet).
  ProgressBar(std::ostream &out, bool enabled, std::string label, int64_t total);
  /// Erases the bar, also when an error ends the epoch, so the message starts on a clean line.
  ~ProgressBar() { finish(); }
  ProgressBar(const ProgressBar &) = delete;
  ProgressBar &operator=(const ProgressBar &) = delete;
  /// Records `done` steps and the running mean loss; redraws if 100 ms passed since the last draw.
  void update(int64_t done, double runningLoss);
  /// Erases the bar so the next line starts clean.
  void finish();

private:
  void draw(int64_t done, double runningLoss);

  std::ostream &out_;
  bool enabled_;
  std::string label_;
  int64_t total_;
  std::chrono::steady_clock::time_point start_, lastDraw_;
  bool drawn_ = false;
};

} // namespace dp::rt
