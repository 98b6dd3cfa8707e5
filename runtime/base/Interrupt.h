// SIGINT, SIGTERM and SIGUSR1 as the runtime handles them: the first one is recorded and the
// work in progress stops at its next step boundary, where every rank of the job agrees on the
// stop (and a checkpoint is written when the run keeps them), by throwing an Error of kind
// Interrupted, Terminated or UserSignal1 (Preempted once a checkpoint holds the state), so that
// the finished epochs' metrics are written and dprun exits with 130, 143, 138 (or 75); the same
// signal a second time ends the process at once, as without dp (another one is only noted: a
// launcher passes a terminal's Ctrl-C on as SIGTERM to ranks that saw it themselves).
#pragma once

#include "runtime/base/Error.h"

#include <string>

namespace dp::rt {

/// Installs the handlers (idempotent).
void installInterruptHandlers();

/// The signal received since the handlers were installed (SIGINT, SIGTERM, SIGUSR1), or 0.
int pendingInterrupt();

/// "SIGINT", "SIGTERM" or "SIGUSR1".
std::string signalName(int signal);

/// The error kind of a stop by `signal`: Interrupted, Terminated or UserSignal1.
ErrorKind signalErrorKind(int signal);

/// True for the kinds of a stop by a signal (Interrupted, Terminated, UserSignal1, Preempted).
bool isSignalStop(ErrorKind kind);

/// Records `signal` as if it had arrived (tests; the step-boundary agreement when another
/// rank received one).
void raiseInterrupt(int signal);

/// Throws Error(Interrupted or Terminated) saying "interrupted by SIGINT <where>" when a
/// signal is pending.
void throwIfInterrupted(const std::string &where);

/// Forgets a pending signal (tests).
void clearInterrupt();

} // namespace dp::rt
