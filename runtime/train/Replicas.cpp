// ReplicaPool: see Replicas.h.
#include "runtime/train/Replicas.h"

#include <omp.h>
#include <sched.h>

#include <stdexcept>

namespace dp::rt {

ReplicaPool::ReplicaPool(int replicas, std::function<void(const std::string &)> onFailure)
    : replicas_(replicas), onFailure_(std::move(onFailure)) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set))
        cpus_.push_back(c);
  int available = cpus_.empty() ? omp_get_max_threads() : static_cast<int>(cpus_.size());
  cores_ = std::max(1, available / std::max(1, replicas_));
  if (replicas_ > 1) {
    pin(0);
    omp_set_num_threads(cores_);
  }
  for (int r = 1; r < replicas_; ++r)
    threads_.emplace_back([this, r] { worker(r); });
}

ReplicaPool::~ReplicaPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : threads_)
    t.join();
}

void ReplicaPool::pin(int replica) {
  // Pin only when every replica can have cores of its own.
  if (cpus_.size() < static_cast<size_t>(replicas_))
    return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int i = 0; i < cores_; ++i)
    CPU_SET(cpus_[replica * cores_ + i], &set);
  sched_setaffinity(0, sizeof(set), &set);
}

void ReplicaPool::worker(int replica) {
  pin(replica);
  omp_set_num_threads(cores_);
  long seen = 0;
  for (;;) {
    const std::function<void(int)> *task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
      task = task_;
    }
    std::exception_ptr error;
    try {
      (*task)(replica);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (error && !error_) {
      error_ = error;
      if (onFailure_) {
        try {
          std::rethrow_exception(error);
        } catch (const std::exception &e) {
          onFailure_("replica " + std::to_string(replica) + " failed: " + e.what());
        }
      }
    }
    if (--pending_ == 0)
      done_.notify_all();
  }
}

void ReplicaPool::run(const std::function<void(int)> &fn) {
  if (replicas_ == 1) {
    fn(0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &fn;
    pending_ = replicas_ - 1;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  std::exception_ptr mine;
  try {
    fn(0);
  } catch (const std::exception &e) {
    mine = std::current_exception();
    if (onFailure_)
      onFailure_(std::string("replica 0 failed: ") + e.what());
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  if (mine)
    std::rethrow_exception(mine);
  if (error_)
    std::rethrow_exception(error_);
}

} // namespace dp::rt
