// The NCCL engine's watchdog bookkeeping, as plain data tested on the host: the train steps
// enqueued on each replica, oldest first, with when each was enqueued and the event slot that
// completes with it. The engine tells it what CUDA reports (a step finished) and the time; it
// answers which step, if any, has waited past the collective timeout.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace dp::rt::cuda {

class StepWatch {
public:
  /// A step still running on a replica.
  struct Pending {
    int64_t step = 0;
    double since = 0; // seconds, on the engine's clock
    int slot = 0;     // the event recorded after it, one of `slots` per replica
  };
  /// A step that has run longer than the timeout.
  struct Overdue {
    int replica = 0;
    int64_t step = 0;
    double seconds = 0;
  };

  StepWatch(int replicas, int slots) : pending_(replicas), next_(replicas, 0), slots_(slots) {}

  /// Step `step` was enqueued on `replica` at `now`: the slot of the event to record after
  /// it, or -1 when every slot holds a step still running (that step is not watched; the
  /// older ones before it are).
  int enqueued(int replica, int64_t step, double now) {
    if (static_cast<int>(pending_[replica].size()) >= slots_)
      return -1;
    const int slot = next_[replica];
    next_[replica] = (slot + 1) % slots_;
    pending_[replica].push_back({step, now, slot});
    return slot;
  }
  /// The oldest step still running on `replica`, if any.
  const Pending *oldest(int replica) const {
    return pending_[replica].empty() ? nullptr : &pending_[replica].front();
  }
  /// The oldest step of `replica` finished at `now`. The next one could not run before: its
  /// time counts from now (a step enqueued early behind a slow one is not overdue for it).
  void finished(int replica, double now) {
    if (pending_[replica].empty())
      return;
    finished_ = std::max(finished_, pending_[replica].front().step);
    pending_[replica].pop_front();
    if (!pending_[replica].empty())
      pending_[replica].front().since = std::max(pending_[replica].front().since, now);
  }
  /// The latest step any replica finished (0 before the first).
  int64_t lastFinished() const { return finished_; }
  /// The step that has waited longest past `timeout` seconds at `now` (none when the timeout
  /// is 0: no bound).
  std::optional<Overdue> overdue(double now, double timeout) const {
    std::optional<Overdue> worst;
    if (timeout <= 0)
      return worst;
    for (int r = 0; r < static_cast<int>(pending_.size()); ++r) {
      if (pending_[r].empty())
        continue;
      const double age = now - pending_[r].front().since;
      if (age > timeout && (!worst || age > worst->seconds))
        worst = Overdue{r, pending_[r].front().step, age};
    }
    return worst;
  }

private:
  std::vector<std::deque<Pending>> pending_;
  std::vector<int> next_;
  int slots_;
  int64_t finished_ = 0;
};

} // namespace dp::rt::cuda
