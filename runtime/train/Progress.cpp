// The terminal progress bar; see Progress.h.
#include "runtime/train/Progress.h"

#include <cmath>
#include <cstdio>

namespace dp::rt {
namespace {

constexpr int kBarWidth = 24;
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

std::string durationText(double seconds) {
  char text[32];
  if (seconds < 60)
    std::snprintf(text, sizeof(text), "%.0f s", seconds);
  else if (seconds < 3600)
    std::snprintf(text, sizeof(text), "%dm%02ds", int(seconds) / 60, int(seconds) % 60);
  else
    std::snprintf(text, sizeof(text), "%dh%02dm", int(seconds) / 3600, int(seconds) / 60 % 60);
  return text;
}

} // namespace

ProgressBar::ProgressBar(std::ostream &out, bool enabled, std::string label, int64_t total)
    : out_(out), enabled_(enabled && total > 0), label_(std::move(label)), total_(total),
      start_(std::chrono::steady_clock::now()), lastDraw_(start_) {}

void ProgressBar::update(int64_t done, double runningLoss) {
  if (!enabled_)
    return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - lastDraw_ < kRedrawInterval && done < total_)
    return;
  lastDraw_ = now;
  draw(done, runningLoss);
}

void ProgressBar::draw(int64_t done, double runningLoss) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  int filled = static_cast<int>(kBarWidth * done / total_);
  std::string bar(filled, '=');
  if (filled < kBarWidth)
    bar += '>' + std::string(kBarWidth - filled - 1, ' ');
  char text[160];
  std::snprintf(text, sizeof(text), "\r%s [%s] %lld/%lld  loss %.4f", label_.c_str(), bar.c_str(),
                static_cast<long long>(done), static_cast<long long>(total_), runningLoss);
  out_ << text;
  if (done > 0 && done < total_)
    out_ << "  ETA " << durationText(elapsed / done * (total_ - done));
  out_ << "\033[K" << std::flush; // clear what a longer previous draw left
  drawn_ = true;
}

void ProgressBar::finish() {
  if (drawn_)
    out_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

} // namespace dp::rt
