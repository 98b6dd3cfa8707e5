// SIGINT and SIGTERM; see Interrupt.h.
#include "runtime/base/Interrupt.h"

#include "runtime/base/Error.h"

#include <csignal>
#include <mutex>

namespace dp::rt {
namespace {

volatile std::sig_atomic_t pending = 0;

extern "C" void onInterrupt(int signal) {
  if (pending) {
    // A second signal: the default action, now (the user means it).
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  pending = signal;
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
  });
}

int pendingInterrupt() { return pending; }

std::string signalName(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal " + std::to_string(signal);
}

void throwIfInterrupted(const std::string &where) {
  const int signal = pending;
  if (signal)
    throw Error(signal == SIGTERM ? ErrorKind::Terminated : ErrorKind::Interrupted,
                "interrupted by " + signalName(signal) + " " + where);
}

void clearInterrupt() { pending = 0; }

} // namespace dp::rt
