// Writing files the way every file dp writes is written: atomically, so that a reader (or a
// crash) sees the old file or the new one and never a part of either.
#include "runtime/base/Files.h"

#include "runtime/base/Error.h"
#include "runtime/base/Heartbeat.h"

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

std::string bytesOf(uint64_t n) {
  if (n >= (uint64_t(1) << 30))
    return std::to_string(n >> 30) + " GiB";
  if (n >= (uint64_t(1) << 20))
    return std::to_string(n >> 20) + " MiB";
  return std::to_string(n) + " bytes";
}

/// The error of a file that cannot be opened (or stat'ed): missing, or why not.
[[noreturn]] void cannotOpen(const std::string &path, ErrorKind kind) {
  throw Error(kind, path + ": " +
                        (errno == ENOENT ? std::string("file not found")
                                         : std::string("cannot open: ") + std::strerror(errno)));
}

} // namespace

std::string fileTypeName(mode_t mode) {
  if (S_ISREG(mode))
    return "a regular file";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

void checkRegularMode(const std::string &path, mode_t mode, const std::string &role,
                      ErrorKind kind) {
  if (!S_ISREG(mode))
    throw Error(kind, path + ": is " + fileTypeName(mode) + ", not a " + role +
                          " file (a regular file)");
}

void checkRegularFile(const std::string &path, const std::string &role, ErrorKind kind) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    cannotOpen(path, kind);
  checkRegularMode(path, info.st_mode, role, kind);
}

std::string readInputFile(const std::string &path, uint64_t maxBytes, const std::string &role,
                          ErrorKind kind) {
  const bool standardInput = path == "-";
  // Opened without waiting for a writer (a FIFO), then checked on the open descriptor.
  const int fd = standardInput ? 0 : ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    cannotOpen(path, kind);
  struct Closer {
    int fd;
    bool own;
    ~Closer() {
      if (own)
        ::close(fd);
    }
  } closer{fd, !standardInput};
  struct stat info;
  if (::fstat(fd, &info) != 0)
    throw Error(kind, path + ": cannot stat: " + std::strerror(errno));
  if (!standardInput) {
    checkRegularMode(path, info.st_mode, role, kind);
    if (static_cast<uint64_t>(info.st_size) > maxBytes)
      throw Error(kind, path + ": is " + bytesOf(uint64_t(info.st_size)) + ", larger than a " +
                            role + " file may be (" + bytesOf(maxBytes) + ")");
    // Regular files read normally from here on.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  std::string content;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      throw Error(kind, path + ": read error: " + std::strerror(errno));
    }
    if (got == 0)
      break;
    content.append(buffer, static_cast<size_t>(got));
    if (content.size() > maxBytes)
      throw Error(kind, path + ": more than " + bytesOf(maxBytes) + ", larger than a " + role +
                            " file may be");
  }
  return content;
}

bool tryReadInputFile(const std::string &path, uint64_t maxBytes, const std::string &role,
                      std::string &content, std::string &error) noexcept {
  try {
    content = readInputFile(path, maxBytes, role, ErrorKind::Usage);
    return true;
  } catch (const std::exception &e) {
    error = e.what();
  } catch (...) {
    error = path + ": cannot read";
  }
  return false;
}

void checkWritable(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode))
      throw Error(ErrorKind::Usage, path + ": is a directory, not a file to write");
    // Written atomically (a new file renamed over it), which a FIFO or a device is not: said
    // now, not after the training whose results it was to hold.
    if (!S_ISREG(info.st_mode))
      throw Error(ErrorKind::Usage, path + ": is " + fileTypeName(info.st_mode) +
                                        ", not a regular file that may be replaced");
  } else if (errno != ENOENT) {
    throw Error(ErrorKind::Usage, path + ": cannot use it: " + std::strerror(errno));
  }
  std::string dir = directoryOf(path);
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw Error(ErrorKind::Usage, path + ": directory " + dir + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(ErrorKind::Usage, path + ": directory " + dir + " is not writable");
}

AtomicFileWriter::AtomicFileWriter(const std::string &path) : path_(path) {
  // Only a regular file is replaced: renaming over a FIFO or a device would destroy it.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error(ErrorKind::Usage, path + ": is " + fileTypeName(st.st_mode) +
                                      ", not a regular file that may be replaced");
  // Beside the target, so that rename stays within one file system and is atomic.
  temp_ = path + ".tmp." + std::to_string(::getpid());
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0)
    ioFail(temp_, "cannot create", errno);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_.c_str());
  }
}

void AtomicFileWriter::writeAt(uint64_t offset, const void *data, size_t bytes) {
  if (fd_ < 0)
    throw Error(ErrorKind::Runtime, temp_ + ": written after commit");
  const auto *from = static_cast<const char *>(data);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::pwrite(fd_, from + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      ioFail(temp_, "write failed", errno);
    done += static_cast<size_t>(n);
    heartbeat::beat();
  }
}

void AtomicFileWriter::write(const void *data, size_t bytes) {
  writeAt(size_, data, bytes);
  size_ += bytes;
}

void AtomicFileWriter::commit() {
  const int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int error = errno;
    ::unlink(temp_.c_str());
    ioFail(temp_, "write failed", error);
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    int error = errno;
    ::unlink(temp_.c_str());
    ioFail(path_, "cannot replace", error);
  }
  // The rename is durable once the directory is flushed.
  int dirFd = ::open(directoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
}

void writeFileAtomically(const std::string &path, const std::string &content) {
  AtomicFileWriter file(path);
  file.write(content.data(), content.size());
  file.commit();
}

AppendFile::AppendFile(const std::string &path, Mode mode, const std::string &role)
    : path_(path), role_(role) {
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK;
  if (mode == Mode::Truncate)
    flags |= O_TRUNC;
  else if (mode == Mode::Create)
    flags |= O_EXCL;
  // Not a FIFO or a device: checked before it is opened, and on the descriptor (O_NONBLOCK:
  // opening a FIFO without a reader does not wait), before anything is written.
  struct stat before;
  if (::stat(path.c_str(), &before) == 0 && !S_ISREG(before.st_mode))
    throw Error(ErrorKind::Usage,
                role + " " + path + " is " + fileTypeName(before.st_mode) + ", not a regular file");
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0)
    throw Error(ErrorKind::Usage, role + " " + path + ": cannot open it: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string type = ::fstat(fd_, &st) == 0 ? fileTypeName(st.st_mode) : "unknown";
    ::close(fd_);
    fd_ = -1;
    throw Error(ErrorKind::Usage, role + " " + path + " is " + type + ", not a regular file");
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
}

AppendFile::~AppendFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

void AppendFile::append(const std::string &bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      throw Error(ErrorKind::Runtime,
                  role_ + ": writing " + path_ + " failed: " + std::strerror(errno));
    done += size_t(n);
  }
}

} // namespace dp::rt
