// Reading inputs: only regular files of bounded size are read; a FIFO is refused without
// waiting for a writer, a device without reading it, a file over the bound without reading
// past it; every message names the path, its role and what it is.
#include "runtime/base/Files.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>

namespace dp::rt {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/dprt-files-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string &name) const { return path + "/" + name; }
};

std::string messageOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(InputFiles, ReadsARegularFileWhole) {
  TempDir dir;
  const std::string path = dir.file("m.mlir");
  std::ofstream(path) << "module {}\n";
  EXPECT_EQ(readInputFile(path, 100, "model", ErrorKind::Usage), "module {}\n");
}

TEST(InputFiles, RefusesAFifoWithoutWaitingForAWriter) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto result = std::async(std::launch::async, [&] {
    return messageOf([&] { readInputFile(fifo, 100, "plan", ErrorKind::Plan); });
  });
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "reading a FIFO blocked";
  EXPECT_EQ(result.get(), fifo + ": is a FIFO, not a plan file (a regular file)");
}

TEST(InputFiles, RefusesDevicesDirectoriesAndMissingFiles) {
  TempDir dir;
  EXPECT_EQ(messageOf([] { readInputFile("/dev/zero", 100, "model", ErrorKind::Usage); }),
            "/dev/zero: is a character device, not a model file (a regular file)");
  EXPECT_EQ(messageOf([&] { readInputFile(dir.path, 100, "plan", ErrorKind::Plan); }),
            dir.path + ": is a directory, not a plan file (a regular file)");
  EXPECT_EQ(messageOf([&] { readInputFile(dir.file("none"), 100, "plan", ErrorKind::Plan); }),
            dir.file("none") + ": file not found");
  EXPECT_EQ(messageOf([&] { checkRegularFile(dir.path, "data", ErrorKind::Data); }),
            dir.path + ": is a directory, not a data file (a regular file)");
}

TEST(InputFiles, RefusesAFileOverTheBoundBeforeReadingIt) {
  TempDir dir;
  const std::string path = dir.file("big");
  std::ofstream(path) << std::string(3 << 20, 'x');
  EXPECT_EQ(messageOf([&] { readInputFile(path, 1 << 20, "plan", ErrorKind::Plan); }),
            path + ": is 3 MiB, larger than a plan file may be (1 MiB)");
}

TEST(InputFiles, TheErrorKindIsTheCallers) {
  try {
    readInputFile("/dev/null/x", 1, "plan", ErrorKind::Plan);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::Plan);
  }
  std::string content, error;
  EXPECT_FALSE(tryReadInputFile("/dev/zero", 10, "model", content, error));
  EXPECT_EQ(error, "/dev/zero: is a character device, not a model file (a regular file)");
}

} // namespace
} // namespace dp::rt
