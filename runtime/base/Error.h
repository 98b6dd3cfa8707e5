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
  Interrupted = 130, // SIGINT (128 + 2), as a shell reports a process it interrupted
  Terminated = 143,  // SIGTERM (128 + 15)
};

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, const std::string &message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  int exitCode() const { return static_cast<int>(kind_); }

private:
  ErrorKind kind_;
};

} // namespace dp::rt
