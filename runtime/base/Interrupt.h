// SIGINT and SIGTERM as the runtime handles them: the first one is recorded and the work in
// progress stops at its next check (a step boundary, a collective's wait) by throwing an
// Error of kind Interrupted or Terminated, so that the finished epochs' metrics are written
// and dprun exits with 130 or 143; a second one ends the process at once, as without dp.
#pragma once

#include <string>

namespace dp::rt {

/// Installs the handlers (idempotent).
void installInterruptHandlers();

/// The signal received since the handlers were installed (SIGINT, SIGTERM), or 0.
int pendingInterrupt();

/// "SIGINT" or "SIGTERM".
std::string signalName(int signal);

/// Throws Error(Interrupted or Terminated) saying "interrupted by SIGINT <where>" when a
/// signal is pending.
void throwIfInterrupted(const std::string &where);

/// Forgets a pending signal (tests).
void clearInterrupt();

} // namespace dp::rt
