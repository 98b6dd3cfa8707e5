// Writing a file atomically, for the compiler's libraries and tools (the plan, the IR dumps,
// dp-opt's output): a temporary file beside the target, written, flushed, renamed over it and the
// directory flushed, so that a reader (or a crash, a kill, a full disk) sees the old file or the
// new one, never a part. Errors come back as text: the compiler is built without exceptions.
#pragma once

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace dp {

namespace detail {

inline std::string errnoText(const std::string &what) { return what + ": " + std::strerror(errno); }

/// Writes all of `bytes` to `fd`; false on error (errno set).
inline bool writeAll(int fd, llvm::StringRef bytes) {
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      errno = ENOSPC; // write(2) made no progress: report it as a full device
    if (n <= 0)
      return false;
    p += n, left -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace detail

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename, fsync of the
/// directory); returns an error message, empty on success. A link is written through; only a
/// regular file is replaced.
inline std::string writeFileAtomically(const std::string &path, llvm::StringRef bytes) {
  // A link is written through: the file it names is replaced, the link stays.
  std::string target = path;
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real))
    target = real.str().str();
  // Only a regular file is replaced: renaming over a device or a FIFO would destroy it.
  mode_t mode = 0644;
  struct stat st;
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return "it is a directory";
    if (!S_ISREG(st.st_mode))
      return "it is not a regular file";
    mode = st.st_mode & 07777;
  }
  llvm::SmallString<256> dir(target);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  std::string tmp = target + ".tmp." + std::to_string(::getpid());
  // An interrupt (SIGINT, SIGTERM) removes the temporary file; the target is untouched. Said
  // before the file exists: a signal between its creation and this would leave it behind (and
  // the first call is what installs the handlers).
  llvm::sys::RemoveFileOnSignal(tmp);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const std::string error = detail::errnoText("cannot create '" + tmp + "'");
    llvm::sys::DontRemoveFileOnSignal(tmp);
    return error;
  }
  auto fail = [&](const std::string &message) {
    ::close(fd);
    ::unlink(tmp.c_str());
    llvm::sys::DontRemoveFileOnSignal(tmp);
    return message;
  };
  if (::fchmod(fd, mode) != 0)
    return fail(detail::errnoText("cannot set the mode of '" + tmp + "'"));
  if (!detail::writeAll(fd, bytes))
    return fail(detail::errnoText("cannot write '" + tmp + "'"));
  if (::fsync(fd) != 0)
    return fail(detail::errnoText("cannot flush '" + tmp + "'"));
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    llvm::sys::DontRemoveFileOnSignal(tmp);
    return detail::errnoText("cannot close '" + tmp + "'");
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    std::string error = detail::errnoText("cannot rename '" + tmp + "'");
    ::unlink(tmp.c_str());
    llvm::sys::DontRemoveFileOnSignal(tmp);
    return error;
  }
  llvm::sys::DontRemoveFileOnSignal(tmp);
  // The rename is durable once the directory is flushed.
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
  return {};
}

} // namespace dp
