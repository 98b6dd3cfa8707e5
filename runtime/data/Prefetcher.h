// Input prefetch: a loader thread gathers the batches of an epoch (shuffled order, this
// process's rows, bytes scaled to floats) ahead of the steps that read them, into a ring of
// slots, so that a step's compute does not wait for its input. Memory is bounded by the ring:
// `slots` batches of this process's rows, whatever the data set's size.
#pragma once

#include "runtime/data/Batcher.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace dp::rt {

class Prefetcher {
public:
  /// Gathers rows [rowBegin, rowEnd) of each global batch of `sampleElements` values and
  /// `targetBytes` bytes of targets (an i32 label, or a regression's floats) per sample into
  /// `slots` ring slots (at least 1). `memory[i]` is slot i's memory, owned by the caller and
  /// at least slotBytes() long (pinned host memory, where a device copies from it).
  Prefetcher(int64_t rowBegin, int64_t rowEnd, int64_t sampleElements, std::vector<void *> memory,
             int64_t targetBytes = sizeof(int32_t));
  /// Stops and joins the loader thread.
  ~Prefetcher();
  Prefetcher(const Prefetcher &) = delete;
  Prefetcher &operator=(const Prefetcher &) = delete;

  /// Bytes one slot needs: the rows' images (f32), then their targets.
  static size_t slotBytes(int64_t rows, int64_t sampleElements,
                          int64_t targetBytes = sizeof(int32_t));
  int slots() const { return static_cast<int>(memory_.size()); }

  /// Starts gathering batches [first, last) of `batcher`'s current epoch, in order, one
  /// batch ahead of the oldest unreleased one per slot. Stops a pass still under way first.
  /// `batcher` must not change (setEpoch) until stop() or the next start().
  void start(const Batcher &batcher, int64_t first, int64_t last);

  /// A gathered batch: its rows' images and targets (targetBytes per row), in slot memory
  /// that stays valid until the batch is released.
  struct Batch {
    const float *images = nullptr;
    const uint8_t *targets = nullptr;
  };
  /// Waits until batch `b` of the current pass is gathered, and returns it; the seconds
  /// waited count in waitSeconds(). Any thread may call it, several threads for the same
  /// batch. Throws Error(Runtime) when `b` is not in the pass or no longer held, when the pass
  /// was stopped, or with the loader's error.
  Batch acquire(int64_t b);
  /// Batch `b`, the oldest unreleased one, is no longer read: its slot may be refilled. A
  /// batch never acquired is waited for first (the loader may still be gathering it).
  void release(int64_t b);

  /// Ends the pass: the loader thread stops and is joined; waiting acquire() calls throw.
  void stop();

  /// Seconds callers spent waiting in acquire() since construction, summed over callers.
  double waitSeconds() const { return waitNanos_.load(std::memory_order_relaxed) * 1e-9; }

private:
  void load(const Batcher *batcher);
  uint8_t *slotMemory(int64_t b) const {
    return static_cast<uint8_t *>(memory_[static_cast<size_t>(b % slots())]);
  }

  int64_t rowBegin_, rowEnd_, sampleElements_, targetBytes_;
  std::vector<void *> memory_;
  std::mutex mutex_;
  std::condition_variable changed_;
  /// The pass: batches [first_, last_); [first_, filled_) are gathered, [first_, released_)
  /// released. The loader fills batch filled_ once filled_ - released_ < slots().
  int64_t first_ = 0, last_ = 0, filled_ = 0, released_ = 0;
  bool stopping_ = false, running_ = false;
  std::exception_ptr failure_;
  std::thread loader_;
  std::atomic<int64_t> waitNanos_{0};
};

} // namespace dp::rt
