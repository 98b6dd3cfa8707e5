// The test hooks; see TestEvents.h.
#include "runtime/base/TestEvents.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <mutex>
#include <unistd.h>

namespace dp::rt::testEvents {
namespace {

struct State {
  /// Whether an events file is open: each step asks, and without tests the answer is a load.
  std::atomic<bool> active{false};
  std::mutex mutex;
  std::string dir;
  int fd = -1;
  int rank = -1;
  int stopRank = -1;
  int64_t stopStep = -1;
  bool read = false;
};

State &state() {
  static State s;
  return s;
}

void writeAll(int fd, const std::string &line) {
  const char *at = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, at, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return; // a test's aid: never a reason for the run to fail
    at += n;
    left -= size_t(n);
  }
}

} // namespace

void init(int jobRank) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.read) {
    s.read = true;
    if (const char *dir = std::getenv("DPRUN_TEST_EVENTS"); dir && *dir)
      s.dir = dir;
    if (const char *stop = std::getenv("DPRUN_TEST_STOP"); stop && *stop) {
      char *end = nullptr;
      const long rank = std::strtol(stop, &end, 10);
      if (end && *end == ':') {
        const long long step = std::strtoll(end + 1, &end, 10);
        if (end && *end == '\0' && rank >= 0 && step > 0) {
          s.stopRank = int(rank);
          s.stopStep = step;
        }
      }
    }
  }
  if (s.dir.empty() || s.rank == jobRank)
    return;
  s.rank = jobRank;
  if (s.fd >= 0)
    ::close(s.fd);
  const std::string path = s.dir + "/rank" + std::to_string(jobRank) + ".events";
  s.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (s.fd >= 0)
    writeAll(s.fd, "start pid=" + std::to_string(::getpid()) + "\n");
  s.active = s.fd >= 0;
}

void note(const std::string &text) {
  State &s = state();
  if (!s.active.load(std::memory_order_relaxed))
    return;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.fd >= 0)
    writeAll(s.fd, text + "\n");
}

void beforeStep(int64_t n) {
  State &s = state();
  if (!s.active.load(std::memory_order_relaxed))
    return;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.fd < 0 || s.rank != s.stopRank || n != s.stopStep)
      return;
    // Once per folder: a resumed or requeued run that passes step n again runs on.
    const std::string once = s.dir + "/rank" + std::to_string(s.rank) + ".stopped";
    const int marker = ::open(once.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (marker < 0)
      return;
    ::close(marker);
    writeAll(s.fd, "stopped " + std::to_string(n) + " pid=" + std::to_string(::getpid()) + "\n");
  }
  ::kill(::getpid(), SIGSTOP);
}

uint64_t gatherRoundBytes(uint64_t normal) {
  const char *text = std::getenv("DPRUN_TEST_GATHER_ROUND_BYTES");
  if (!text || !*text)
    return normal;
  char *end = nullptr;
  const unsigned long long n = std::strtoull(text, &end, 10);
  return end && *end == '\0' && n > 0 && n < normal ? uint64_t(n) : normal;
}

} // namespace dp::rt::testEvents
