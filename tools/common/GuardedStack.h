// A large, guarded stack for code that recurses once per token of its input: MLIR's parser
// recurses once per unary minus or per term of an affine expression, so text without a single
// bracket (100,000 minus signs) can run past any stack, and the bracket pre-scan cannot see it.
// runOnGuardedStack() runs the tool on a thread with a known stack whose low end is a guard
// region; a fault there (the stack ran out) writes a message and exits the process with an
// error, instead of a SIGSEGV. Any other fault is left to the default action (or to a
// sanitizer's handler) as before.
#pragma once

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

namespace dp {

namespace guarded_stack_detail {

inline std::atomic<uintptr_t> guardLow{0}, guardHigh{0};
inline const char *overflowMessage = "";
inline int overflowExit = 1;
inline struct sigaction previousSegv, previousBus;

inline void onFault(int signal, siginfo_t *info, void *) {
  const auto at = reinterpret_cast<uintptr_t>(info->si_addr);
  const uintptr_t low = guardLow.load(), high = guardHigh.load();
  if (low != 0 && at >= low && at < high) {
    const size_t n = std::strlen(overflowMessage);
    ssize_t ignored = ::write(STDERR_FILENO, overflowMessage, n);
    (void)ignored;
    ::_exit(overflowExit);
  }
  // Not ours: the previous handler, or the default action, takes it when the faulting
  // instruction runs again.
  sigaction(signal, signal == SIGSEGV ? &previousSegv : &previousBus, nullptr);
}

struct Call {
  const std::function<int()> *body;
  int result = 1;
  size_t altBytes = 0;
};

inline void *threadMain(void *arg) {
  Call &call = *static_cast<Call *>(arg);
  // The fault handler needs a stack of its own: the thread's is exhausted when it runs.
  void *alt = ::mmap(nullptr, call.altBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  stack_t altStack{};
  if (alt != MAP_FAILED) {
    altStack.ss_sp = alt;
    altStack.ss_size = call.altBytes;
    sigaltstack(&altStack, nullptr);
  }
  call.result = (*call.body)();
  if (alt != MAP_FAILED) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    ::munmap(alt, call.altBytes);
  }
  return nullptr;
}

} // namespace guarded_stack_detail

/// The stack runOnGuardedStack() asks for first (address space only: pages are committed as
/// the recursion reaches them), and the guard below it.
inline constexpr size_t kGuardedStackBytes = size_t(256) << 20;
inline constexpr size_t kStackGuardBytes = size_t(1) << 20;

/// Runs `body` on a thread with a stack of `bytes` (less where the address space is limited:
/// halved down to 32 MiB, then the caller's own thread) and returns its result. If the body runs
/// past the stack, `message` is written to stderr and the process exits with `exitCode`.
inline int runOnGuardedStack(const std::function<int()> &body, const char *message,
                             int exitCode = 1, size_t bytes = kGuardedStackBytes) {
  namespace d = guarded_stack_detail;
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  for (; bytes >= (size_t(32) << 20); bytes /= 2) {
    const size_t total = bytes + kStackGuardBytes;
    void *base = ::mmap(nullptr, total, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (base == MAP_FAILED)
      continue;
    // The stack grows down: its guard is the lowest part of the mapping.
    if (::mprotect(base, kStackGuardBytes, PROT_NONE) != 0) {
      ::munmap(base, total);
      continue;
    }
    d::Call call{&body, 1, std::max<size_t>(size_t(SIGSTKSZ) * 4, 16 * page)};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, base, total);
    d::overflowMessage = message;
    d::overflowExit = exitCode;
    d::guardLow = reinterpret_cast<uintptr_t>(base);
    d::guardHigh = reinterpret_cast<uintptr_t>(base) + kStackGuardBytes;
    struct sigaction action {};
    action.sa_sigaction = d::onFault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &d::previousSegv);
    sigaction(SIGBUS, &action, &d::previousBus);
    pthread_t thread;
    const bool started = pthread_create(&thread, &attr, d::threadMain, &call) == 0;
    pthread_attr_destroy(&attr);
    if (started)
      pthread_join(thread, nullptr);
    sigaction(SIGSEGV, &d::previousSegv, nullptr);
    sigaction(SIGBUS, &d::previousBus, nullptr);
    d::guardLow = 0;
    d::guardHigh = 0;
    ::munmap(base, total);
    if (started)
      return call.result;
  }
  return body();
}

} // namespace dp
