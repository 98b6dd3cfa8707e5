// The loader thread and its ring of batch slots; see Prefetcher.h.
#include "runtime/data/Prefetcher.h"

#include "runtime/base/Error.h"
#include "runtime/base/Trace.h"

namespace dp::rt {

Prefetcher::Prefetcher(int64_t rowBegin, int64_t rowEnd, int64_t sampleElements,
                       std::vector<void *> memory, int64_t targetBytes)
    : rowBegin_(rowBegin), rowEnd_(rowEnd), sampleElements_(sampleElements),
      targetBytes_(targetBytes), memory_(std::move(memory)) {
  if (memory_.empty() || rowBegin < 0 || rowEnd < rowBegin || sampleElements <= 0 ||
      targetBytes <= 0)
    throw Error(ErrorKind::Runtime, "prefetch: bad rows [" + std::to_string(rowBegin) + ", " +
                                        std::to_string(rowEnd) + ") or " +
                                        std::to_string(memory_.size()) + " slots");
}

Prefetcher::~Prefetcher() { stop(); }

size_t Prefetcher::slotBytes(int64_t rows, int64_t sampleElements, int64_t targetBytes) {
  return static_cast<size_t>(rows) *
         (static_cast<size_t>(sampleElements) * sizeof(float) + static_cast<size_t>(targetBytes));
}

void Prefetcher::start(const Batcher &batcher, int64_t first, int64_t last) {
  stop();
  std::lock_guard<std::mutex> lock(mutex_);
  first_ = filled_ = released_ = first;
  last_ = std::max(first, last);
  stopping_ = false;
  failure_ = nullptr;
  running_ = true;
  loader_ = std::thread([this, &batcher] { load(&batcher); });
}

void Prefetcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!running_)
      return;
    stopping_ = true;
  }
  changed_.notify_all();
  if (loader_.joinable())
    loader_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = false;
}

void Prefetcher::load(const Batcher *batcher) {
  trace::nameThread("input loader");
  const int64_t rows = rowEnd_ - rowBegin_;
  int64_t first, last;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    first = first_;
    last = last_;
  }
  try {
    for (int64_t b = first; b < last; ++b) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || b - released_ < slots(); });
        if (stopping_)
          return;
      }
      uint8_t *slot = slotMemory(b);
      {
        trace::Span span(trace::Category::Input, "gather batch", b);
        batcher->fillBatch(b, rowBegin_, rowEnd_, reinterpret_cast<float *>(slot),
                           slot + static_cast<size_t>(rows) * sampleElements_ * sizeof(float));
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        filled_ = b + 1;
      }
      changed_.notify_all();
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = std::current_exception();
    }
    changed_.notify_all();
  }
}

Prefetcher::Batch Prefetcher::acquire(int64_t b) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!running_ || b < released_ || b >= last_)
    throw Error(ErrorKind::Runtime,
                "prefetch: batch " + std::to_string(b) + " is not held (the pass holds [" +
                    std::to_string(released_) + ", " + std::to_string(last_) + ")" +
                    (running_ ? "" : ", and is stopped") + ")");
  if (b >= filled_) {
    trace::Span span(trace::Category::Input, "input wait", b);
    const int64_t begin = trace::now();
    changed_.wait(lock, [&] { return stopping_ || failure_ || b < filled_; });
    waitNanos_.fetch_add(trace::now() - begin, std::memory_order_relaxed);
  }
  if (b >= filled_) {
    if (failure_)
      std::rethrow_exception(failure_);
    throw Error(ErrorKind::Runtime,
                "prefetch: the pass was stopped before batch " + std::to_string(b));
  }
  uint8_t *slot = slotMemory(b);
  const size_t imageBytes =
      static_cast<size_t>(rowEnd_ - rowBegin_) * sampleElements_ * sizeof(float);
  return {reinterpret_cast<const float *>(slot), slot + imageBytes};
}

void Prefetcher::release(int64_t b) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // A batch no step of this process read (a rank whose rows of the padded last evaluation
    // batch are all past the data) is released without an acquire: it may not be gathered
    // yet, and its slot is the loader's until it is.
    if (b == released_ && b < last_ && b >= filled_)
      changed_.wait(lock, [&] { return stopping_ || failure_ || b < filled_; });
    if (b != released_ || b >= filled_)
      throw Error(ErrorKind::Runtime, "prefetch: release of batch " + std::to_string(b) +
                                          " out of order (next to release: " +
                                          std::to_string(released_) + ", gathered up to " +
                                          std::to_string(filled_) + ")");
    ++released_;
  }
  changed_.notify_all();
}

} // namespace dp::rt
