// How much memory this process can still get on the host, and which limit binds: the cgroup a
// batch system or container put it in (v2 or v1), `ulimit -v`, and what the kernel says is free.
// The runtime checks a plan against these before allocating, so that a job started with
// `sbatch --mem=4G` is refused with a message naming the limit instead of being OOM-killed
// (exit 137, no word), and a job under `ulimit -v` is refused instead of failing in malloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dp::rt {

/// One limit on the memory this process may still allocate.
struct MemoryLimit {
  uint64_t available = 0; // bytes this process can still get under this limit
  uint64_t limit = 0;     // the limit itself (bytes), 0 when it is not a cap (MemAvailable)
  std::string source;     // what set it, for messages: "cgroup v2 memory.max of
                          // /slurm/uid_0/job_12 (4.00 GiB, 1.20 GiB in use)", "cgroup v1
                          // memory.limit_in_bytes of /...", "RLIMIT_AS (ulimit -v: 4.00 GiB,
                          // 310 MiB of address space in use)", "MemAvailable in /proc/meminfo"
};

/// Where to read the host's facts; tests point these at fake trees. `proc` is where proc is
/// mounted (self/cgroup, self/status and meminfo are read under it); `cgroupRoot` holds either
/// the cgroup v2 mount itself (pure v2) or the v1 controllers' mounts and, on hybrid hosts, the
/// v2 mount at `unified`; `useRlimit` says whether this process's RLIMIT_AS counts.
struct HostPaths {
  std::string proc = "/proc";
  std::string cgroupRoot = "/sys/fs/cgroup";
  bool useRlimit = true;
};

/// Every limit that applies (unlimited ones left out), tightest first: at most one per cgroup
/// version (the tightest of the process's cgroup and its ancestors), RLIMIT_AS, and
/// MemAvailable. Memory in use under a cgroup leaves out the inactive page cache, which the
/// kernel reclaims before it kills anything. A file that is missing, unreadable or malformed
/// leaves its source out: this never throws, since a probe must not stop a run on a host with an
/// odd /proc. Reads at most a few KiB of each file.
std::vector<MemoryLimit> memoryLimits(const HostPaths &paths = {});

/// Throws Error(ErrorKind::Memory) when `needBytes` exceeds the tightest limit, naming both
/// numbers and the source; `what` says what needs it, e.g. "the plan's 2 device arenas
/// (2 x 7.00 GiB)". Passes when no limit is known. Reads the limits afresh on every call.
void checkMemoryFits(uint64_t needBytes, const std::string &what, const HostPaths &paths = {});

/// The message of a failed allocation after the checks: "out of memory <while>: this process
/// can get only 12 MiB more under RLIMIT_AS (ulimit -v: ...); give it more memory" (without a
/// limit: "... the host has no more").
std::string outOfMemoryMessage(const std::string &during);

/// The first `maxBytes` of a regular file, or nothing if it cannot be opened or read: what a
/// probe of /proc or /sys reads. Opened non-blocking and checked to be a regular file, so that a
/// FIFO or device in a strange tree cannot hang the probe. When the file is longer than the
/// bound, the text is cut after its last whole line, so that a half line is never taken for a
/// whole one. The default bound is far above what the memory probes read (/proc/self/status
/// and memory.stat are 1-2 KiB): a longer file is not what they expect.
std::optional<std::string> readSmallFile(const std::string &path, size_t maxBytes = 8192);

/// A size for people to read, in binary units: "4.00 GiB", "310 MiB", "512 KiB", "12 bytes".
/// KiB and MiB are whole numbers, GiB and above have two decimals.
std::string bytesText(uint64_t bytes);

/// The cores this process may run on (its CPU affinity mask, as a launcher's binding or
/// SLURM's cgroup leaves it), by number; empty when the mask cannot be read.
std::vector<int> allowedCpus();
/// How many: at least 1.
int allowedCores();

} // namespace dp::rt
