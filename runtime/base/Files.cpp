// Writing files the way every file dp writes is written: atomically, so that a reader (or a
// crash) sees the old file or the new one and never a part of either.
#include "runtime/base/Files.h"

#include "runtime/base/Error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dp::rt {
namespace {

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

[[noreturn]] void ioFail(const std::string &path, const std::string &what, int error) {
  throw Error(ErrorKind::Runtime, path + ": " + what + ": " + std::strerror(error));
}

} // namespace

void checkWritable(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    throw Error(ErrorKind::Usage, path + ": is a directory, not a file to write metrics to");
  std::string dir = directoryOf(path);
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw Error(ErrorKind::Usage, path + ": directory " + dir + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(ErrorKind::Usage, path + ": directory " + dir + " is not writable");
}

void writeFileAtomically(const std::string &path, const std::string &content) {
  // Beside the target, so that rename stays within one file system and is atomic.
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    ioFail(temp, "cannot create", errno);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      ioFail(temp, "write failed", error);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    ioFail(temp, "write failed", error);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    ioFail(path, "cannot replace", error);
  }
}

} // namespace dp::rt
