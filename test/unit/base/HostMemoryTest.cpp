// Tests of the host memory probe: every cgroup layout the probe must understand (pure v2, hybrid,
// v1, a container's cgroup not visible under its mount), files that are missing or malformed,
// the refusal message, and the real host: MemAvailable, a forked child under ulimit -v, and a
// forked child in a v1 memory cgroup of its own when the test runs as root.
#include "runtime/base/HostMemory.h"

#include "runtime/base/Error.h"
#include "test/unit/ErrorMatchers.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

namespace dp::rt {
namespace {

constexpr uint64_t KiB = 1024, MiB = KiB * KiB, GiB = MiB * KiB;

// What cgroup v1 writes for "no limit" with 4 KiB and with 64 KiB pages.
constexpr uint64_t kV1NoLimit4K = 9223372036854771712ull;
constexpr uint64_t kV1NoLimit64K = 9223372036854710272ull;

std::string str(uint64_t value) { return std::to_string(value) + "\n"; }

TEST(BytesText, PicksTheUnitAndRounds) {
  EXPECT_EQ(bytesText(0), "0 bytes");
  EXPECT_EQ(bytesText(1), "1 byte");
  EXPECT_EQ(bytesText(12), "12 bytes");
  EXPECT_EQ(bytesText(1023), "1023 bytes");
  EXPECT_EQ(bytesText(KiB), "1 KiB");
  EXPECT_EQ(bytesText(512 * KiB), "512 KiB");
  EXPECT_EQ(bytesText(512 * KiB + 511), "512 KiB");
  EXPECT_EQ(bytesText(512 * KiB + 512), "513 KiB");
  EXPECT_EQ(bytesText(MiB - 1), "1 MiB"); // would round to 1024 KiB
  EXPECT_EQ(bytesText(310 * MiB), "310 MiB");
  EXPECT_EQ(bytesText(310 * MiB + 400 * KiB), "310 MiB");
  EXPECT_EQ(bytesText(310 * MiB + 600 * KiB), "311 MiB");
  EXPECT_EQ(bytesText(GiB - 1), "1.00 GiB"); // would round to 1024 MiB
  EXPECT_EQ(bytesText(4 * GiB), "4.00 GiB");
  EXPECT_EQ(bytesText(GiB * 6 / 5), "1.20 GiB");
  EXPECT_EQ(bytesText(1024 * GiB - 1), "1.00 TiB");
  EXPECT_EQ(bytesText(1536 * GiB), "1.50 TiB");
  EXPECT_EQ(bytesText(uint64_t(1) << 63), "8.00 EiB");
  EXPECT_EQ(bytesText(UINT64_MAX), "16.00 EiB");
}

// The limits as a forked child sends them back: one "available limit source" line each.
std::string encode(const std::vector<MemoryLimit> &limits) {
  std::string text;
  for (const MemoryLimit &l : limits)
    text += std::to_string(l.available) + " " + std::to_string(l.limit) + " " + l.source + "\n";
  return text;
}
std::vector<MemoryLimit> decode(const std::string &text) {
  std::vector<MemoryLimit> limits;
  std::istringstream in(text);
  MemoryLimit l;
  while (in >> l.available >> l.limit && std::getline(in >> std::ws, l.source))
    limits.push_back(l);
  return limits;
}

// Runs `body` in a forked child and returns what it returned, so that a test may change the
// child's limits (setrlimit, its cgroup) and not its own. `beforeStart` runs in the parent while
// the child waits, with the child's pid. Nothing when the child crashed or threw.
std::optional<std::string> runInChild(const std::function<std::string()> &body,
                                      const std::function<void(pid_t)> &beforeStart = {}) {
  int go[2], result[2];
  if (::pipe(go) != 0 || ::pipe(result) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return std::nullopt;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return std::nullopt;
  }
  if (pid == 0) {
    ::close(go[1]);
    ::close(result[0]);
    char byte;
    if (::read(go[0], &byte, 1) != 1)
      ::_exit(2);
    int code = 0;
    std::string text;
    try {
      text = body();
    } catch (...) {
      code = 3;
    }
    for (size_t done = 0; done < text.size();) {
      ssize_t n = ::write(result[1], text.data() + done, text.size() - done);
      if (n <= 0)
        ::_exit(4);
      done += static_cast<size_t>(n);
    }
    ::_exit(code);
  }
  ::close(go[0]);
  ::close(result[1]);
  if (beforeStart)
    beforeStart(pid);
  char byte = 'g';
  EXPECT_EQ(::write(go[1], &byte, 1), 1);
  ::close(go[1]);
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(result[0], buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      text.append(buffer, static_cast<size_t>(n));
  ::close(result[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << "the child failed, status " << status;
    return std::nullopt;
  }
  return text;
}

// A fake host in a temporary directory: <root>/proc for proc, <root>/cgroup for the cgroup root.
// RLIMIT_AS is left out, since it is the test process's own and cannot be faked.
class FakeHost : public ::testing::Test {
protected:
  void SetUp() override {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/dp_hostmem_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << pattern << ": " << std::strerror(errno);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    if (!root_.empty())
      std::filesystem::remove_all(root_, ignored);
  }

  // Writes `content` to `relative` under the fake root, creating its directories.
  void write(const std::string &relative, const std::string &content) {
    std::filesystem::path path = std::filesystem::path(root_) / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    ASSERT_TRUE(out.good()) << path;
  }
  // A cgroup level's limit and usage files under the fake cgroup root.
  void v2Level(const std::string &dir, const std::string &max, uint64_t current) {
    write("cgroup/" + dir + "/memory.max", max + "\n");
    write("cgroup/" + dir + "/memory.current", str(current));
  }
  void v1Level(const std::string &dir, uint64_t limit, uint64_t usage) {
    write("cgroup/memory/" + dir + "/memory.limit_in_bytes", str(limit));
    write("cgroup/memory/" + dir + "/memory.usage_in_bytes", str(usage));
  }
  void memAvailable(uint64_t bytes) {
    write("proc/meminfo", "MemTotal:       65536000 kB\nMemFree:        1000 kB\nMemAvailable:   " +
                              std::to_string(bytes / KiB) + " kB\nBuffers:          2000 kB\n");
  }
  HostPaths paths() const { return HostPaths{root_ + "/proc", root_ + "/cgroup", false}; }
  std::string memAvailableSource() const { return "MemAvailable in " + root_ + "/proc/meminfo"; }

  std::string root_;
};

TEST_F(FakeHost, V2TightestAncestorBinds) {
  write("proc/self/cgroup", "0::/slurm/uid_0/job_12/step_0\n");
  memAvailable(32 * GiB);
  write("cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  v2Level("slurm", "max", 20 * GiB);
  v2Level("slurm/uid_0", str(4 * GiB), 3 * GiB);        // grandparent: 1 GiB left
  v2Level("slurm/uid_0/job_12", str(8 * GiB), 1 * GiB); // parent: 7 GiB left
  v2Level("slurm/uid_0/job_12/step_0", "max", 1 * GiB); // the process's own: none

  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 2u);
  EXPECT_EQ(limits[0].limit, 4 * GiB);
  EXPECT_EQ(limits[0].available, 1 * GiB);
  EXPECT_EQ(limits[0].source, "cgroup v2 memory.max of /slurm/uid_0 (4.00 GiB, 3.00 GiB in use)");
  EXPECT_EQ(limits[1].limit, 0u);
  EXPECT_EQ(limits[1].available, 32 * GiB);
  EXPECT_EQ(limits[1].source, memAvailableSource());

  // Without the grandparent's limit, the parent's binds.
  v2Level("slurm/uid_0", "max", 3 * GiB);
  limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 2u);
  EXPECT_EQ(limits[0].limit, 8 * GiB);
  EXPECT_EQ(limits[0].available, 7 * GiB);
  EXPECT_EQ(limits[0].source,
            "cgroup v2 memory.max of /slurm/uid_0/job_12 (8.00 GiB, 1.00 GiB in use)");

  // The tightest is the one with least left, not the smallest limit.
  v2Level("slurm/uid_0/job_12/step_0", str(6 * GiB), 1 * GiB); // 5 GiB left
  v2Level("slurm", str(10 * GiB), 9 * GiB);                    // 1 GiB left
  limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 2u);
  EXPECT_EQ(limits[0].available, 1 * GiB);
  EXPECT_EQ(limits[0].limit, 10 * GiB);
  EXPECT_EQ(limits[0].source, "cgroup v2 memory.max of /slurm (10.00 GiB, 9.00 GiB in use)");
}

TEST_F(FakeHost, V2MaxEverywhereMeansOnlyMemAvailable) {
  write("proc/self/cgroup", "0::/user.slice/session-1.scope\n");
  memAvailable(12 * GiB);
  write("cgroup/cgroup.controllers", "memory\n");
  v2Level("user.slice", "max", 2 * GiB);
  v2Level("user.slice/session-1.scope", "max", 1 * GiB);
  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].source, memAvailableSource());
  EXPECT_EQ(limits[0].available, 12 * GiB);
  EXPECT_EQ(limits[0].limit, 0u);
}

TEST_F(FakeHost, V2InactivePageCacheIsNotInUse) {
  write("proc/self/cgroup", "0::/job\n");
  write("cgroup/cgroup.controllers", "memory\n");
  v2Level("job", str(4 * GiB), 3 * GiB);
  write("cgroup/job/memory.stat",
        "anon 1073741824\nfile 2147483648\nactive_file 1073741824\ninactive_file " + str(GiB / 2) +
            "total_inactive_file 999\n");
  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].available, 4 * GiB - (3 * GiB - GiB / 2));
  EXPECT_EQ(limits[0].source, "cgroup v2 memory.max of /job (4.00 GiB, 2.50 GiB in use)");

  // Never less than nothing in use, should memory.stat be read after memory.current shrank.
  write("cgroup/job/memory.stat", "inactive_file " + str(5 * GiB));
  limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].available, 4 * GiB);
  EXPECT_EQ(limits[0].source, "cgroup v2 memory.max of /job (4.00 GiB, 0 bytes in use)");

  // Over the limit (usage can pass it briefly): nothing left, not a wrapped-around huge count.
  write("cgroup/job/memory.stat", "inactive_file 0\n");
  v2Level("job", str(1 * GiB), 2 * GiB);
  limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].available, 0u);
}

// This host's layout: v1 controllers under the cgroup root, cgroup2 at <root>/unified.
TEST_F(FakeHost, HybridFindsV2AtUnified) {
  write("proc/self/cgroup", "9:name=systemd:/user.slice/job\n8:pids:/\n4:memory:/user.slice/job\n"
                            "1:cpu:/\n0::/user.slice/job\n");
  memAvailable(20 * GiB);
  write("cgroup/unified/cgroup.controllers", "");
  write("cgroup/unified/user.slice/job/memory.max", str(2 * GiB));
  write("cgroup/unified/user.slice/job/memory.current", str(512 * MiB));
  v1Level("", kV1NoLimit4K, 5 * GiB);
  v1Level("user.slice/job", kV1NoLimit4K, 512 * MiB);
  // A v2 file in the tmpfs above the mounts is no cgroup's and must not count.
  write("cgroup/user.slice/job/memory.max", str(1 * GiB));
  write("cgroup/user.slice/job/memory.current", "0\n");

  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 2u);
  EXPECT_EQ(limits[0].limit, 2 * GiB);
  EXPECT_EQ(limits[0].available, 2 * GiB - 512 * MiB);
  EXPECT_EQ(limits[0].source, "cgroup v2 memory.max of /user.slice/job (2.00 GiB, 512 MiB in use)");
  EXPECT_EQ(limits[1].source, memAvailableSource());
}

TEST_F(FakeHost, HybridWithTheLimitOnV1) {
  write("proc/self/cgroup", "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n");
  memAvailable(20 * GiB);
  write("cgroup/unified/cgroup.controllers", "");
  v1Level("", kV1NoLimit4K, 5 * GiB);
  v1Level("process_api", 1 * GiB, 300 * MiB);
  v1Level("process_api/abc", kV1NoLimit4K, 100 * MiB);
  write("cgroup/memory/process_api/memory.stat",
        "cache 1\ninactive_file 999999999\ntotal_inactive_file " + str(100 * MiB));

  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 2u);
  EXPECT_EQ(limits[0].limit, 1 * GiB);
  EXPECT_EQ(limits[0].available, 1 * GiB - 200 * MiB);
  EXPECT_EQ(limits[0].source,
            "cgroup v1 memory.limit_in_bytes of /process_api (1.00 GiB, 200 MiB in use)");
}

TEST_F(FakeHost, V1HugeValuesMeanNoLimit) {
  write("proc/self/cgroup", "4:memory:/a/b\n");
  memAvailable(3 * GiB);
  v1Level("", kV1NoLimit4K, 5 * GiB);
  v1Level("a", kV1NoLimit64K, 1 * GiB);
  v1Level("a/b", kV1NoLimit4K, 1 * GiB);
  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].source, memAvailableSource());
}

TEST_F(FakeHost, V1ControllerListedWithOthers) {
  write("proc/self/cgroup", "5:cpu,cpuacct:/x\n3:blkio,memory,pids:/job\n2:memoryx:/wrong\n");
  v1Level("job", 768 * MiB, 256 * MiB);
  v1Level("wrong", 1 * MiB, 0);
  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].available, 512 * MiB);
  EXPECT_EQ(limits[0].source, "cgroup v1 memory.limit_in_bytes of /job (768 MiB, 256 MiB in use)");
}

TEST_F(FakeHost, V1UseHierarchyZeroStopsTheWalk) {
  write("proc/self/cgroup", "4:memory:/outer/inner\n");
  v1Level("", 1 * GiB, 500 * MiB);
  v1Level("outer", 2 * GiB, 1948 * MiB);
  v1Level("outer/inner", 4 * GiB, 1 * GiB);
  write("cgroup/memory/outer/memory.use_hierarchy", "0\n");
  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].source,
            "cgroup v1 memory.limit_in_bytes of /outer/inner (4.00 GiB, 1.00 GiB in use)");

  write("cgroup/memory/outer/memory.use_hierarchy", "1\n");
  limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].available, 100 * MiB);
  EXPECT_EQ(limits[0].source,
            "cgroup v1 memory.limit_in_bytes of /outer (2.00 GiB, 1.90 GiB in use)");
}

// In a container without a cgroup namespace, /proc/self/cgroup names the host's path, while the
// mount's root is the container's own cgroup.
TEST_F(FakeHost, V1PathNotVisibleFallsBackToTheMountRoot) {
  v1Level("", 512 * MiB, 100 * MiB);
  const std::string expected =
      "cgroup v1 memory.limit_in_bytes of " + root_ + "/cgroup/memory (512 MiB, 100 MiB in use)";
  for (const char *own : {"4:memory:/docker/0123abcd\n", "4:memory:/../../elsewhere\n"}) {
    SCOPED_TRACE(own);
    write("proc/self/cgroup", own);
    std::vector<MemoryLimit> limits = memoryLimits(paths());
    ASSERT_EQ(limits.size(), 1u);
    EXPECT_EQ(limits[0].available, 412 * MiB);
    EXPECT_EQ(limits[0].limit, 512 * MiB);
    EXPECT_EQ(limits[0].source, expected);
  }
  // The same for v2.
  std::filesystem::remove_all(root_ + "/cgroup");
  write("cgroup/cgroup.controllers", "memory\n");
  v2Level(".", str(3 * GiB), 1 * GiB);
  write("proc/self/cgroup", "0::/kubepods/pod1/abc\n");
  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].available, 2 * GiB);
  EXPECT_EQ(limits[0].source,
            "cgroup v2 memory.max of " + root_ + "/cgroup (3.00 GiB, 1.00 GiB in use)");
}

TEST_F(FakeHost, MissingFilesLeaveSourcesOut) {
  EXPECT_TRUE(memoryLimits(paths()).empty()); // nothing at all

  memAvailable(8 * GiB); // meminfo only
  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].source, memAvailableSource());

  // Cgroups named, but no cgroup tree, or a limit without its usage.
  write("proc/self/cgroup", "4:memory:/job\n0::/job\n");
  EXPECT_EQ(memoryLimits(paths()).size(), 1u);
  write("cgroup/cgroup.controllers", "memory\n");
  write("cgroup/job/memory.max", str(1 * GiB));
  write("cgroup/memory/job/memory.limit_in_bytes", str(1 * GiB));
  EXPECT_EQ(memoryLimits(paths()).size(), 1u);
  // The usage present: both count.
  write("cgroup/job/memory.current", str(0));
  write("cgroup/memory/job/memory.usage_in_bytes", str(0));
  EXPECT_EQ(memoryLimits(paths()).size(), 3u);
}

TEST_F(FakeHost, MalformedFilesLeaveSourcesOut) {
  write("cgroup/cgroup.controllers", "memory\n");
  v2Level("job", str(1 * GiB), 0);
  // /proc/self/cgroup lines that name no usable cgroup.
  for (const char *own : {"garbage\n", "::\n", "0::job\n", "0::\n", "1:memory\n", ""}) {
    SCOPED_TRACE(own);
    write("proc/self/cgroup", own);
    EXPECT_TRUE(memoryLimits(paths()).empty());
  }
  write("proc/self/cgroup", "0::/job\n");
  ASSERT_EQ(memoryLimits(paths()).size(), 1u); // the control: well-formed, found

  // Limits and usages that are not counts.
  for (const char *limit :
       {"lots\n", "", "-1\n", "1 GiB\n", "1e9\n", "99999999999999999999999\n"}) {
    SCOPED_TRACE(limit);
    v2Level("job", limit, 0);
    EXPECT_TRUE(memoryLimits(paths()).empty());
  }
  for (const char *current : {"", "12abc\n", "0x10\n"}) {
    SCOPED_TRACE(current);
    write("cgroup/job/memory.max", str(1 * GiB));
    write("cgroup/job/memory.current", current);
    EXPECT_TRUE(memoryLimits(paths()).empty());
  }
  // A malformed memory.stat is as if there were none.
  write("cgroup/job/memory.current", str(256 * MiB));
  write("cgroup/job/memory.stat", "inactive_file lots\n");
  std::vector<MemoryLimit> limits = memoryLimits(paths());
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].available, 768 * MiB);

  // meminfo lines that are not MemAvailable in kB.
  std::filesystem::remove_all(root_ + "/cgroup");
  for (const char *meminfo :
       {"MemAvailable: abc kB\n", "MemAvailable: 5 MB\n", "MemAvailableX: 5 kB\n",
        "MemAvailable: 18446744073709551615 kB\n", "MemAvailable:\n", "MemFree: 5 kB\n"}) {
    SCOPED_TRACE(meminfo);
    write("proc/meminfo", meminfo);
    EXPECT_TRUE(memoryLimits(paths()).empty());
  }
}

TEST_F(FakeHost, FilesThatAreNotRegularAreSkipped) {
  write("proc/self/cgroup", "0::/job\n");
  write("cgroup/cgroup.controllers", "memory\n");
  write("cgroup/job/memory.current", "0\n");
  // A directory where memory.max should be.
  std::filesystem::create_directories(root_ + "/cgroup/job/memory.max");
  EXPECT_TRUE(memoryLimits(paths()).empty());
  // A FIFO with no writer: reading it would block forever.
  std::filesystem::remove_all(root_ + "/cgroup/job/memory.max");
  ASSERT_EQ(::mkfifo((root_ + "/cgroup/job/memory.max").c_str(), 0600), 0) << std::strerror(errno);
  ASSERT_EQ(::mkfifo((root_ + "/proc/meminfo").c_str(), 0600), 0) << std::strerror(errno);
  // In a child with an alarm, so that a probe that blocks fails the test instead of hanging it.
  const HostPaths fake = paths();
  std::optional<std::string> out = runInChild([&] {
    ::alarm(10);
    return encode(memoryLimits(fake));
  });
  ASSERT_TRUE(out) << "the probe blocked on a FIFO";
  EXPECT_EQ(*out, "");
}

// Reads are bounded: what lies past the first few KiB of a file is not read.
TEST_F(FakeHost, ReadsOnlyTheStartOfAFile) {
  write("cgroup/cgroup.controllers", "memory\n");
  v2Level("job", str(1 * GiB), 0);
  std::string padding;
  for (int i = 0; i < 4096; ++i)
    padding += std::to_string(100 + i) + ":pids:/padding\n";
  write("proc/self/cgroup", padding + "0::/job\n");
  EXPECT_TRUE(memoryLimits(paths()).empty());
  write("proc/self/cgroup", "0::/job\n" + padding);
  EXPECT_EQ(memoryLimits(paths()).size(), 1u);
  // A line cut by the bound is not taken for a whole one: "0::/job" cut from "0::/jobs".
  std::string cut = padding.substr(0, 8192 - 8);
  cut.resize(cut.find_last_of('\n') + 1);
  cut.append(8192 - 8 - cut.size(), '#');
  write("proc/self/cgroup", cut + "\n0::/jobs\n"); // byte 8192 is the 'b' of "/jobs"
  EXPECT_TRUE(memoryLimits(paths()).empty());
}

// The refusal names what needs the memory, both counts and the limit that binds.
TEST_F(FakeHost, CheckMemoryFitsNamesBothNumbersAndTheSource) {
  write("proc/self/cgroup", "0::/slurm/uid_0/job_12/step_0\n");
  memAvailable(60 * GiB);
  write("cgroup/cgroup.controllers", "memory\n");
  v2Level("slurm/uid_0/job_12", str(4 * GiB), GiB * 6 / 5);
  write("cgroup/slurm/uid_0/job_12/step_0/memory.max", "max\n");

  const std::string what = "the plan's 2 device arenas (2 x 7.00 GiB)";
  try {
    checkMemoryFits(14 * GiB, what, paths());
    ADD_FAILURE() << "checkMemoryFits did not throw";
  } catch (const Error &e) {
    const std::string message = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::Memory);
    EXPECT_EQ(e.exitCode(), 7);
    EXPECT_EQ(message,
              "not enough host memory for the plan's 2 device arenas (2 x 7.00 GiB): it needs "
              "14.00 GiB, but this process can get only 2.80 GiB more under cgroup v2 memory.max "
              "of /slurm/uid_0/job_12 (4.00 GiB, 1.20 GiB in use)");
  }
  EXPECT_DP_ERROR(checkMemoryFits(3 * GiB, "the arenas", paths()), ErrorKind::Memory,
                  "/slurm/uid_0/job_12 (4.00 GiB, 1.20 GiB in use)");

  // Exactly what is left fits; a byte more does not, and the counts then tell them apart.
  const uint64_t left = 4 * GiB - GiB * 6 / 5;
  EXPECT_NO_THROW(checkMemoryFits(left, what, paths()));
  EXPECT_NO_THROW(checkMemoryFits(0, what, paths()));
  EXPECT_DP_ERROR(checkMemoryFits(left + 1, what, paths()), ErrorKind::Memory,
                  "it needs 2.80 GiB (" + std::to_string(left + 1) +
                      " bytes), but this process can get only 2.80 GiB (" + std::to_string(left) +
                      " bytes) more");

  // With MemAvailable the only limit, it is the one named.
  std::filesystem::remove_all(root_ + "/cgroup");
  EXPECT_NO_THROW(checkMemoryFits(60 * GiB, what, paths()));
  EXPECT_DP_ERROR(checkMemoryFits(61 * GiB, what, paths()), ErrorKind::Memory,
                  "it needs 61.00 GiB, but this process can get only 60.00 GiB more under " +
                      memAvailableSource());
}

TEST_F(FakeHost, CheckMemoryFitsPassesWithNoLimitKnown) {
  EXPECT_NO_THROW(checkMemoryFits(UINT64_MAX, "everything", paths()));
  write("proc/self/cgroup", "0::/job\n");
  write("proc/meminfo", "MemAvailable: unknown\n");
  EXPECT_NO_THROW(checkMemoryFits(UINT64_MAX, "everything", paths()));
}

// The real host: this process, and forked children whose limits a test may change.

// This process's address space in use, from /proc/self/status.
uint64_t ownVmSize() {
  std::ifstream in("/proc/self/status");
  std::string key;
  uint64_t kb = 0;
  while (in >> key) {
    if (key == "VmSize:" && in >> kb)
      return kb * KiB;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

TEST(RealHost, HasAtLeastMemAvailable) {
  std::vector<MemoryLimit> limits = memoryLimits();
  std::cout << "memoryLimits() on this host:\n";
  for (const MemoryLimit &l : limits)
    std::cout << "  available " << bytesText(l.available) << " (" << l.available << "), limit "
              << l.limit << ": " << l.source << "\n";
  const MemoryLimit *memAvailable = nullptr;
  for (const MemoryLimit &l : limits)
    if (l.source == "MemAvailable in /proc/meminfo")
      memAvailable = &l;
  ASSERT_NE(memAvailable, nullptr);
  EXPECT_EQ(memAvailable->limit, 0u);
  EXPECT_GT(memAvailable->available, 0u);
  EXPECT_LT(memAvailable->available, uint64_t(1) << 50);
  for (size_t i = 1; i < limits.size(); ++i)
    EXPECT_LE(limits[i - 1].available, limits[i].available) << "not tightest first";
  // Nothing this small binds a test host; a check of 1 MiB passes.
  EXPECT_NO_THROW(checkMemoryFits(1 * MiB, "a small test"));
}

TEST(RealHost, UlimitVBindsAForkedChild) {
  std::optional<std::string> out = runInChild([] {
    uint64_t vmSize = ownVmSize();
    if (vmSize == 0)
      return std::string("no VmSize\n");
    struct rlimit rl;
    ::getrlimit(RLIMIT_AS, &rl);
    rl.rlim_cur = vmSize + 64 * MiB;
    if (::setrlimit(RLIMIT_AS, &rl) != 0)
      return "setrlimit: " + std::string(std::strerror(errno)) + "\n";
    HostPaths withoutRlimit;
    withoutRlimit.useRlimit = false;
    return std::to_string(vmSize + 64 * MiB) + "\n" + encode(memoryLimits()) + "--\n" +
           encode(memoryLimits(withoutRlimit));
  });
  ASSERT_TRUE(out);
  size_t newline = out->find('\n'), separator = out->find("--\n");
  ASSERT_NE(separator, std::string::npos) << *out;
  const uint64_t limit = std::stoull(out->substr(0, newline));
  std::vector<MemoryLimit> with = decode(out->substr(newline + 1, separator - newline - 1));
  std::vector<MemoryLimit> without = decode(out->substr(separator + 3));
  ASSERT_FALSE(with.empty()) << *out;
  EXPECT_EQ(with[0].limit, limit);
  EXPECT_GT(with[0].available, 0u);
  EXPECT_LE(with[0].available, 64 * MiB);
  EXPECT_EQ(with[0].source.rfind("RLIMIT_AS (ulimit -v: " + bytesText(limit) + ", ", 0), 0u)
      << with[0].source;
  EXPECT_NE(with[0].source.find(" of address space in use)"), std::string::npos);
  EXPECT_EQ(with.size(), without.size() + 1);
  for (const MemoryLimit &l : without)
    EXPECT_EQ(l.source.find("RLIMIT_AS"), std::string::npos);
}

// Removes a cgroup directory once the test is done with it, waiting a little for its last task
// to be gone.
struct CgroupRemover {
  std::string dir;
  ~CgroupRemover() {
    for (int attempt = 0; attempt < 50 && ::rmdir(dir.c_str()) != 0 && errno == EBUSY; ++attempt)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
};

bool writeText(const std::string &path, const std::string &text, std::string *error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!ok)
    *error = path + ": " + std::strerror(errno);
  if (fd >= 0)
    ::close(fd);
  return ok;
}

TEST(RealHost, V1CgroupLimitBindsAForkedChild) {
  const std::string mount = "/sys/fs/cgroup/memory";
  if (::geteuid() != 0)
    GTEST_SKIP() << "creating a cgroup needs root";
  struct statfs fs;
  if (::statfs(mount.c_str(), &fs) != 0 || fs.f_type != CGROUP_SUPER_MAGIC ||
      ::access((mount + "/memory.limit_in_bytes").c_str(), F_OK) != 0)
    GTEST_SKIP() << mount << " is not a cgroup v1 memory controller (pure cgroup v2 host?)";
  if (::access(mount.c_str(), W_OK) != 0)
    GTEST_SKIP() << mount << " is not writable (a container's read-only cgroup mount?)";

  // Beside this process, in its own memory cgroup, where that is visible.
  std::string parent;
  std::ifstream own("/proc/self/cgroup");
  for (std::string line; std::getline(own, line);) {
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (second != std::string::npos && line.substr(first + 1, second - first - 1) == "memory")
      parent = line.substr(second + 1);
  }
  struct stat info;
  if (parent == "/" || ::stat((mount + parent).c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    parent.clear();
  const std::string name = parent + "/dp_hostmem_test_" + std::to_string(::getpid());
  const std::string dir = mount + name;
  if (::mkdir(dir.c_str(), 0755) != 0)
    GTEST_SKIP() << "cannot create " << dir << ": " << std::strerror(errno);
  CgroupRemover remover{dir};
  std::string error;
  if (!writeText(dir + "/memory.limit_in_bytes", "256M", &error))
    GTEST_SKIP() << "cannot set the limit: " << error;

  bool moved = false;
  std::optional<std::string> out = runInChild(
      [] { return encode(memoryLimits()); },
      [&](pid_t pid) { moved = writeText(dir + "/cgroup.procs", std::to_string(pid), &error); });
  ASSERT_TRUE(moved) << "cannot move the child into " << dir << ": " << error;
  ASSERT_TRUE(out);
  std::vector<MemoryLimit> limits = decode(*out);
  const MemoryLimit *cgroup = nullptr;
  for (const MemoryLimit &l : limits)
    if (l.source.rfind("cgroup v1 memory.limit_in_bytes of " + name + " (256 MiB, ", 0) == 0)
      cgroup = &l;
  ASSERT_NE(cgroup, nullptr) << "the child's limits:\n" << *out;
  std::cout << "the child's tightest: " << limits.front().source << "\n";
  EXPECT_EQ(cgroup->limit, 256 * MiB);
  EXPECT_LE(cgroup->available, 256 * MiB);
  EXPECT_GT(cgroup->available, 192 * MiB);
  // Unless the host itself is short of memory, the child's cgroup is what binds it.
  bool roomElsewhere = true;
  for (const MemoryLimit &l : limits)
    if (&l != cgroup && l.available <= 256 * MiB)
      roomElsewhere = false;
  if (roomElsewhere) {
    EXPECT_EQ(limits.front().source, cgroup->source);
  }
}

} // namespace
} // namespace dp::rt
