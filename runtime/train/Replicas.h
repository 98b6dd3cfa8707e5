// The replicas of one process as threads: replica 0 runs on the calling thread, the others on
// workers that live as long as the pool, each pinned to its own share of the process's cores
// with OpenMP limited to that share.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dp::rt {

class ReplicaPool {
public:
  /// `onFailure` is called (from the failing thread) with the message of the first exception
  /// a replica throws, so that replicas blocked in collectives can be released.
  explicit ReplicaPool(int replicas, std::function<void(const std::string &)> onFailure = {});
  ~ReplicaPool();
  ReplicaPool(const ReplicaPool &) = delete;
  ReplicaPool &operator=(const ReplicaPool &) = delete;

  int size() const { return replicas_; }
  /// Cores each replica may use (at least 1).
  int coresPerReplica() const { return cores_; }

  /// Runs `fn(r)` for every replica r concurrently and returns when all are done; rethrows
  /// the first exception any of them threw.
  void run(const std::function<void(int)> &fn);

private:
  void worker(int replica);
  void pin(int replica);

  int replicas_, cores_ = 1;
  std::vector<int> cpus_;
  std::function<void(const std::string &)> onFailure_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)> *task_ = nullptr;
  long generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

} // namespace dp::rt
