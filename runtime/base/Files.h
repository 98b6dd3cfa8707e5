// Files as dp reads and writes them: inputs only when they are regular files of a bounded
// size (a FIFO would block, a device or /dev/zero never end, a directory fail obscurely),
// outputs atomically, after checking up front that they can be written.
#pragma once

#include "runtime/base/Error.h"

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace dp::rt {

/// What a file of `mode` is, for messages: "a directory", "a FIFO", "a character device", ...
std::string fileTypeName(mode_t mode);

/// Throws Error(kind) naming `path`, its `role` ("plan", "model", "data file") and what it
/// is, unless it is a regular file; "file not found" when it does not exist.
void checkRegularFile(const std::string &path, const std::string &role, ErrorKind kind);
/// The same for a file already stat'ed, from its `mode`.
void checkRegularMode(const std::string &path, mode_t mode, const std::string &role,
                      ErrorKind kind);

/// The whole of `path` ("-": standard input), opened once and read only if it is a regular
/// file (or standard input) of at most `maxBytes`; otherwise Error(kind) naming the path, its
/// role and why. Never blocks on a FIFO and never reads more than `maxBytes` + 1 bytes.
std::string readInputFile(const std::string &path, uint64_t maxBytes, const std::string &role,
                          ErrorKind kind);

/// readInputFile for code built without exceptions (the compiler's tools): false with the
/// message in `error` instead of a throw.
bool tryReadInputFile(const std::string &path, uint64_t maxBytes, const std::string &role,
                      std::string &content, std::string &error) noexcept;

/// Replaces `path` with `content` atomically: writes a temporary file beside it, flushes it to
/// disk and renames it over `path`, so readers see the old file or the new one, never a part.
/// Throws Error(Runtime) naming the path on failure.
void writeFileAtomically(const std::string &path, const std::string &content);

/// A file written in pieces and then put in place atomically, for outputs too large to build
/// in memory first (checkpoints): the pieces go to a temporary file beside `path`; commit()
/// flushes it to disk, renames it over `path` and flushes the directory. Destroyed without a
/// commit (an error, an interruption), it removes the temporary file and leaves `path` as it was.
class AtomicFileWriter {
public:
  /// Creates the temporary file. Throws Error(Usage) when `path` exists and is not a regular
  /// file, Error(Runtime) naming the path when the temporary file cannot be created.
  explicit AtomicFileWriter(const std::string &path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;

  /// Appends `bytes` bytes. Throws Error(Runtime) on a write error (a full disk).
  void write(const void *data, size_t bytes);
  /// Overwrites `bytes` bytes at `offset` of what was written (a header completed last).
  void writeAt(uint64_t offset, const void *data, size_t bytes);
  /// Bytes appended so far.
  uint64_t size() const { return size_; }
  /// Flushes, renames over the target and flushes its directory. Throws Error(Runtime).
  void commit();
  /// The temporary file's path (tests).
  const std::string &tempPath() const { return temp_; }

private:
  std::string path_, temp_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// A log written as it goes (a JSON-lines log, TensorBoard's event file): each append reaches
/// the file before it returns (write(2), no buffer), so a process killed with -9 leaves every
/// line appended before; a reader may follow the file as it grows. Not atomic by design: a
/// log is read while it is written.
class AppendFile {
public:
  enum class Mode {
    Truncate, // a new log at `path` (a regular file there is replaced)
    Append,   // goes on after what `path` holds (a resumed run's log)
    Create,   // a new file, refused when `path` exists (O_EXCL)
  };
  /// Opens `path`. Throws Error(Usage) naming `role` and the path when it cannot, or when
  /// `path` is not a regular file (a FIFO would block the run).
  AppendFile(const std::string &path, Mode mode, const std::string &role);
  ~AppendFile();
  AppendFile(const AppendFile &) = delete;
  AppendFile &operator=(const AppendFile &) = delete;

  /// Writes all of `bytes`. Throws Error(Runtime) naming the path on a write error.
  void append(const std::string &bytes);
  const std::string &path() const { return path_; }

private:
  std::string path_, role_;
  int fd_ = -1;
};

/// Throws Error(Usage) if a file cannot be created at `path` (its directory is missing or not
/// writable, or it names a FIFO, a device or anything else that is not a regular file), so a
/// bad --metrics path fails before training rather than after.
void checkWritable(const std::string &path);

} // namespace dp::rt
