// The runtime's error type. Errors carry a category that maps to dprun's exit code, and a
// message that names the file, rank, buffer or kernel at fault.
#pragma once

#include <stdexcept>
#include <string>

namespace dp::rt {

/// What went wrong, and so which exit code dprun returns.
enum class ErrorKind {
  Usage = 2,   // bad command line
  Plan = 3,    // the plan file is corrupt, of another version, or inconsistent
  Data = 4,    // a data file is missing, truncated or malformed
  Runtime = 5, // a kernel, allocation or I/O failure while running
  Launch = 6,  // the launch does not match the plan, ranks disagree, or a peer died or hung
  Memory = 7,  // the plan needs more memory than the device or process may have
  Checkpoint = 8, // a checkpoint cannot be used: of another model, or none that verifies
  /// Stopped by SIGTERM or SIGUSR1 (a scheduler's notice) after writing a checkpoint: the job
  /// can be resubmitted with --resume (EX_TEMPFAIL of sysexits.h, "try again later").
  Preempted = 75,
  Interrupted = 130, // SIGINT (128 + 2), as a shell reports a process it interrupted
  Terminated = 143,  // SIGTERM (128 + 15)
  UserSignal1 = 138, // SIGUSR1 (128 + 10) without a checkpoint to write
};

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, const std::string &message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  int exitCode() const { return static_cast<int>(kind_); }
  /// Whether the message was printed already (before a teardown that may not finish, as
  /// when a launcher ends the job): the top level then only exits with the code.
  bool reported() const { return reported_; }
  Error &setReported() {
    reported_ = true;
    return *this;
  }

private:
  ErrorKind kind_;
  bool reported_ = false;
};

} // namespace dp::rt
