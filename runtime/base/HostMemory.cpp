// Reading the host's memory limits from proc, cgroupfs and getrlimit. Every read is bounded and
// every failure quiet: a source whose files are missing or odd is left out, never an error.
#include "runtime/base/HostMemory.h"

#include "runtime/base/Error.h"

#include <sched.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string_view>

namespace dp::rt {
namespace {

// Limits from here up mean "no limit": cgroup v1 writes its largest page count times the page
// size (9223372036854771712 with 4 KiB pages, less with 64 KiB pages), and no host has an EiB.
constexpr uint64_t kNoLimitFrom = uint64_t(1) << 60;

constexpr uint64_t kKiB = 1024;

bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && isSpace(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back()))
    text.remove_suffix(1);
  return text;
}

// A decimal count and nothing else, or nothing when it is empty, has another character or does
// not fit in 64 bits.
std::optional<uint64_t> parseCount(std::string_view text) {
  if (text.empty())
    return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10)
      return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

// A file that holds one count (cgroup's memory.current, memory.usage_in_bytes).
std::optional<uint64_t> readCount(const std::string &path) {
  std::optional<std::string> text = readSmallFile(path);
  if (!text)
    return std::nullopt;
  return parseCount(trim(*text));
}

// The value of the line named `key` in a "key value" file: proc's "MemAvailable:  123 kB" (a
// colon after the key, sizes in kB, returned in bytes) or cgroup's "inactive_file 123" (bytes).
// Nothing when no such line exists or its value is not a plain count.
std::optional<uint64_t> fieldValue(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.size() <= key.size() || line.substr(0, key.size()) != key)
      continue;
    std::string_view rest = line.substr(key.size());
    if (rest.front() == ':')
      rest.remove_prefix(1);
    else if (!isSpace(rest.front()))
      continue; // a longer key that starts with this one
    rest = trim(rest);
    uint64_t scale = 1;
    if (rest.size() > 2 && rest.substr(rest.size() - 2) == "kB") {
      scale = kKiB;
      rest = trim(rest.substr(0, rest.size() - 2));
    }
    std::optional<uint64_t> value = parseCount(rest);
    if (!value || *value > UINT64_MAX / scale)
      return std::nullopt;
    return *value * scale;
  }
  return std::nullopt;
}

// This process's cgroups as /proc/self/cgroup gives them: one "hierarchy-id:controllers:path"
// line per hierarchy, "0::path" for cgroup v2.
struct OwnCgroups {
  std::optional<std::string> v2;       // the path in the v2 hierarchy
  std::optional<std::string> v1Memory; // the path in the v1 hierarchy that has `memory`
};

bool listsController(std::string_view controllers, std::string_view name) {
  while (true) {
    size_t comma = controllers.find(',');
    if (controllers.substr(0, comma) == name)
      return true;
    if (comma == std::string_view::npos)
      return false;
    controllers.remove_prefix(comma + 1);
  }
}

OwnCgroups parseOwnCgroups(std::string_view text) {
  OwnCgroups own;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos)
      continue;
    std::string_view id = line.substr(0, first);
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string_view path = line.substr(second + 1); // a path may itself hold colons
    if (path.empty() || path.front() != '/')
      continue;
    if (id == "0" && controllers.empty())
      own.v2 = std::string(path);
    else if (listsController(controllers, "memory"))
      own.v1Memory = std::string(path);
  }
  return own;
}

// The names along a cgroup path ("/slurm/job_1" gives slurm, job_1), or nothing when the path
// climbs (".." or "."), as it does for a cgroup outside this process's cgroup namespace.
std::optional<std::vector<std::string>> pathNames(std::string_view path) {
  std::vector<std::string> names;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view name = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    if (name.empty())
      continue;
    if (name == "." || name == "..")
      return std::nullopt;
    names.emplace_back(name);
  }
  return names;
}

// What differs between cgroup v1's memory controller and v2's.
struct CgroupFlavor {
  const char *label;         // the start of the source text
  const char *limitFile;     // the hard limit: a count, or "max" (v2) for none
  const char *usageFile;     // the memory charged to the cgroup and its descendants
  const char *inactiveField; // memory.stat's line for reclaimable page cache of the subtree
  const char *hierarchyFile; // v1 only: "0" in a parent stops its limit covering children
};

const CgroupFlavor kV2 = {"cgroup v2 memory.max", "memory.max", "memory.current", "inactive_file",
                          nullptr};
const CgroupFlavor kV1 = {"cgroup v1 memory.limit_in_bytes", "memory.limit_in_bytes",
                          "memory.usage_in_bytes", "total_inactive_file", "memory.use_hierarchy"};

// The limit of one cgroup directory, or nothing when it has none or its files are unreadable.
// `name` is how the source text names the cgroup.
std::optional<MemoryLimit> cgroupLevel(const CgroupFlavor &flavor, const std::string &dir,
                                       const std::string &name) {
  std::optional<std::string> limitText = readSmallFile(dir + "/" + flavor.limitFile);
  if (!limitText)
    return std::nullopt;
  std::optional<uint64_t> limit = parseCount(trim(*limitText));
  if (!limit || *limit >= kNoLimitFrom) // "max", malformed or huge: no limit here
    return std::nullopt;
  std::optional<uint64_t> used = readCount(dir + "/" + flavor.usageFile);
  if (!used)
    return std::nullopt;
  // Inactive page cache counts in the usage but is dropped before the cgroup goes OOM.
  if (std::optional<std::string> stat = readSmallFile(dir + "/memory.stat"))
    if (std::optional<uint64_t> inactive = fieldValue(*stat, flavor.inactiveField))
      *used -= std::min(*inactive, *used);
  MemoryLimit result;
  result.limit = *limit;
  result.available = *limit > *used ? *limit - *used : 0;
  result.source = std::string(flavor.label) + " of " + name + " (" + bytesText(*limit) + ", " +
                  bytesText(*used) + " in use)";
  return result;
}

// The tightest limit on the cgroup at `path` under the hierarchy mounted at `mount`: the
// cgroup's own or an ancestor's, since a batch system limits the job's cgroup and runs the
// process in a step below it. When the path is not visible under the mount (a container shows
// the host's path of its cgroup but mounts that cgroup as the root), the mount root's limit.
std::optional<MemoryLimit> tightestCgroup(const CgroupFlavor &flavor, const std::string &mount,
                                          const std::string &path) {
  std::optional<std::vector<std::string>> names = pathNames(path);
  std::string dir = mount;
  if (names)
    for (const std::string &name : *names)
      dir += "/" + name;
  if (!names || !isDirectory(dir))
    return cgroupLevel(flavor, mount, mount);

  std::optional<MemoryLimit> tightest;
  for (size_t depth = names->size() + 1; depth-- > 0;) {
    std::string levelDir = mount, levelName;
    for (size_t i = 0; i < depth; ++i) {
      levelDir += "/" + (*names)[i];
      levelName += "/" + (*names)[i];
    }
    if (levelName.empty())
      levelName = "/";
    // A v1 parent with use_hierarchy 0 is not charged for its children: its limit, and its
    // ancestors', do not bind them.
    if (flavor.hierarchyFile && depth < names->size()) {
      std::optional<std::string> hierarchy = readSmallFile(levelDir + "/" + flavor.hierarchyFile);
      if (hierarchy && trim(*hierarchy) == "0")
        break;
    }
    std::optional<MemoryLimit> level = cgroupLevel(flavor, levelDir, levelName);
    if (level && (!tightest || level->available < tightest->available))
      tightest = std::move(level);
  }
  return tightest;
}

// The cgroup limits that bind this process: v2's (at the root, or at `unified` on a hybrid host)
// and v1's memory controller's.
void addCgroupLimits(const HostPaths &paths, std::vector<MemoryLimit> &limits) {
  std::optional<std::string> text = readSmallFile(paths.proc + "/self/cgroup");
  if (!text)
    return;
  OwnCgroups own = parseOwnCgroups(*text);
  if (own.v2) {
    std::string mount;
    if (readSmallFile(paths.cgroupRoot + "/cgroup.controllers"))
      mount = paths.cgroupRoot;
    else if (readSmallFile(paths.cgroupRoot + "/unified/cgroup.controllers"))
      mount = paths.cgroupRoot + "/unified";
    if (!mount.empty())
      if (std::optional<MemoryLimit> limit = tightestCgroup(kV2, mount, *own.v2))
        limits.push_back(std::move(*limit));
  }
  if (own.v1Memory)
    if (std::optional<MemoryLimit> limit =
            tightestCgroup(kV1, paths.cgroupRoot + "/memory", *own.v1Memory))
      limits.push_back(std::move(*limit));
}

// `ulimit -v`: the address space this process may still map, its soft RLIMIT_AS less VmSize.
void addAddressSpaceLimit(const HostPaths &paths, std::vector<MemoryLimit> &limits) {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return;
  std::optional<std::string> status = readSmallFile(paths.proc + "/self/status");
  if (!status)
    return;
  std::optional<uint64_t> inUse = fieldValue(*status, "VmSize");
  if (!inUse)
    return;
  uint64_t limit = rl.rlim_cur;
  MemoryLimit result;
  result.limit = limit;
  result.available = limit > *inUse ? limit - *inUse : 0;
  result.source = "RLIMIT_AS (ulimit -v: " + bytesText(limit) + ", " + bytesText(*inUse) +
                  " of address space in use)";
  limits.push_back(std::move(result));
}

// What the kernel estimates can be allocated on the host without swapping: not a cap on this
// process, but more than it cannot get.
void addMemAvailable(const HostPaths &paths, std::vector<MemoryLimit> &limits) {
  std::string path = paths.proc + "/meminfo";
  std::optional<std::string> text = readSmallFile(path);
  if (!text)
    return;
  std::optional<uint64_t> available = fieldValue(*text, "MemAvailable");
  if (!available)
    return;
  MemoryLimit result;
  result.available = *available;
  result.source = "MemAvailable in " + path;
  limits.push_back(std::move(result));
}

// Runs one source's probe; whatever it throws (only std::bad_alloc can) leaves that source out.
template <typename Probe> void probeQuietly(Probe &&probe) {
  try {
    probe();
  } catch (...) {
  }
}

} // namespace

std::optional<std::string> readSmallFile(const std::string &path, size_t maxBytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return std::nullopt;
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string text(maxBytes, '\0');
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::read(fd, &text[done], text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0)
      break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(done);
  if (done == maxBytes) {
    size_t lastNewline = text.find_last_of('\n');
    text.resize(lastNewline == std::string::npos ? 0 : lastNewline + 1);
  }
  return text;
}

std::vector<MemoryLimit> memoryLimits(const HostPaths &paths) {
  std::vector<MemoryLimit> limits;
  probeQuietly([&] { addCgroupLimits(paths, limits); });
  if (paths.useRlimit)
    probeQuietly([&] { addAddressSpaceLimit(paths, limits); });
  probeQuietly([&] { addMemAvailable(paths, limits); });
  std::stable_sort(limits.begin(), limits.end(), [](const MemoryLimit &a, const MemoryLimit &b) {
    return a.available < b.available;
  });
  return limits;
}

void checkMemoryFits(uint64_t needBytes, const std::string &what, const HostPaths &paths) {
  std::vector<MemoryLimit> limits = memoryLimits(paths);
  if (limits.empty() || needBytes <= limits.front().available)
    return;
  const MemoryLimit &tightest = limits.front();
  std::string need = bytesText(needBytes), have = bytesText(tightest.available);
  if (need == have) { // rounded alike: the exact counts tell them apart
    need += " (" + std::to_string(needBytes) + " bytes)";
    have += " (" + std::to_string(tightest.available) + " bytes)";
  }
  throw Error(ErrorKind::Memory, "not enough host memory for " + what + ": it needs " + need +
                                     ", but this process can get only " + have + " more under " +
                                     tightest.source);
}

std::string outOfMemoryMessage(const std::string &during) {
  std::string text = "out of memory " + during;
  try {
    const std::vector<MemoryLimit> limits = memoryLimits();
    if (!limits.empty())
      return text + ": this process can get only " + bytesText(limits.front().available) +
             " more under " + limits.front().source + "; give it more memory";
  } catch (...) {
  }
  return text + "; give the process more memory";
}

std::string bytesText(uint64_t bytes) {
  if (bytes == 1)
    return "1 byte";
  if (bytes < kKiB)
    return std::to_string(bytes) + " bytes";
  // Whole KiB and MiB, rounded to nearest; a count that would round up to 1024 moves up a unit.
  constexpr uint64_t kMiB = kKiB * kKiB, kGiB = kMiB * kKiB;
  if (bytes < kMiB - kKiB / 2)
    return std::to_string((bytes + kKiB / 2) / kKiB) + " KiB";
  if (bytes < kGiB - kMiB / 2)
    return std::to_string((bytes + kMiB / 2) / kMiB) + " MiB";
  static const char *const kUnits[] = {"GiB", "TiB", "PiB", "EiB"};
  long double value = static_cast<long double>(bytes) / kGiB;
  size_t unit = 0;
  while (value >= 1023.995L && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.2Lf %s", value, kUnits[unit]);
  return text;
}

std::vector<int> allowedCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set))
        cpus.push_back(c);
  return cpus;
}

int allowedCores() { return std::max(1, static_cast<int>(allowedCpus().size())); }

} // namespace dp::rt
