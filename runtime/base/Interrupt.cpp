// SIGINT and SIGTERM; see Interrupt.h.
#include "runtime/base/Interrupt.h"

#include "runtime/base/Error.h"

#include <csignal>
#include <ctime>
#include <mutex>

namespace dp::rt {
namespace {

volatile std::sig_atomic_t pending = 0;
/// When the first signal arrived.
timespec firstAt{};

extern "C" void onInterrupt(int signal) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now); // async-signal-safe
  if (pending == signal && now.tv_sec - firstAt.tv_sec >= 1) {
    // The same signal again, a moment later: the default action, now (the user means it).
    // Within a second it is a launcher's repetition (Open MPI's mpirun sends its SIGTERM
    // more than once) and only noted.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  // Another signal after the first is not a repetition: a launcher passing a terminal's
  // Ctrl-C on as SIGTERM to ranks that saw the SIGINT too, or a scheduler's SIGTERM after its
  // SIGUSR1 notice while the checkpoint is written. The first one stays the reason.
  if (!pending) {
    pending = signal;
    firstAt = now;
  }
}

} // namespace

void installInterruptHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGUSR1, &action, nullptr);
  });
}

int pendingInterrupt() { return pending; }

std::string signalName(int signal) {
  return signal == SIGINT    ? "SIGINT"
         : signal == SIGTERM ? "SIGTERM"
         : signal == SIGUSR1 ? "SIGUSR1"
                             : "signal " + std::to_string(signal);
}

ErrorKind signalErrorKind(int signal) {
  return signal == SIGTERM   ? ErrorKind::Terminated
         : signal == SIGUSR1 ? ErrorKind::UserSignal1
                             : ErrorKind::Interrupted;
}

bool isSignalStop(ErrorKind kind) {
  return kind == ErrorKind::Interrupted || kind == ErrorKind::Terminated ||
         kind == ErrorKind::UserSignal1 || kind == ErrorKind::Preempted;
}

void raiseInterrupt(int signal) {
  if (!pending) {
    clock_gettime(CLOCK_MONOTONIC, &firstAt);
    pending = signal;
  }
}

void throwIfInterrupted(const std::string &where) {
  const int signal = pending;
  if (signal)
    throw Error(signalErrorKind(signal),
                "interrupted by " + signalName(signal) + " " + where);
}

void clearInterrupt() { pending = 0; }

} // namespace dp::rt
