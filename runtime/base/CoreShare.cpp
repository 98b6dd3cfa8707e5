// See CoreShare.h.
#include "runtime/base/CoreShare.h"

#include "runtime/base/Error.h"
#include "runtime/base/HostMemory.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace dp::rt {
namespace {

double processCpuSeconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
    return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

} // namespace

std::optional<CpuTicks> parseCpuTicks(const std::string &procStat, const std::vector<int> &cpus) {
  CpuTicks ticks;
  std::vector<bool> seen(cpus.size(), false);
  std::istringstream lines(procStat);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9')
      continue;
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    if (!(fields >> cpu))
      return std::nullopt;
    auto at = std::find(cpus.begin(), cpus.end(), cpu);
    if (at == cpus.end())
      continue;
    // user nice system idle iowait irq softirq steal: the first 4 are in every kernel's file.
    uint64_t value[8] = {};
    int count = 0;
    while (count < 8 && fields >> value[count])
      ++count;
    if (count < 4)
      return std::nullopt;
    const uint64_t idle = value[3] + value[4];
    uint64_t all = 0;
    for (int i = 0; i < count; ++i)
      all += value[i];
    ticks.busy += all - idle;
    ticks.total += all;
    seen[static_cast<size_t>(at - cpus.begin())] = true;
  }
  if (std::find(seen.begin(), seen.end(), false) != seen.end())
    return std::nullopt;
  return ticks;
}

std::optional<double> othersBusyCores(const std::vector<int> &cpus, double seconds,
                                      const std::string &procStat) {
  const long hz = sysconf(_SC_CLK_TCK);
  if (cpus.empty() || hz <= 0 || !(seconds > 0))
    return std::nullopt;
  auto sample = [&]() -> std::optional<CpuTicks> {
    // The CPU lines come first, then the long interrupt counts: 64 KiB holds ~1,000 CPUs.
    std::optional<std::string> text = readSmallFile(procStat, 64 * 1024);
    return text ? parseCpuTicks(*text, cpus) : std::nullopt;
  };
  const auto start = std::chrono::steady_clock::now();
  const double ownStart = processCpuSeconds();
  std::optional<CpuTicks> before = sample();
  if (!before)
    return std::nullopt;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  std::optional<CpuTicks> after = sample();
  const double own = processCpuSeconds() - ownStart;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!after || after->busy < before->busy || wall <= 0)
    return std::nullopt;
  const double busy = static_cast<double>(after->busy - before->busy) / static_cast<double>(hz);
  return std::max(0.0, (busy - own) / wall);
}

std::optional<std::vector<int>> parseCpuList(const std::string &text) {
  std::vector<int> cpus;
  std::istringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back())))
      part.pop_back();
    if (part.empty())
      continue;
    const size_t dash = part.find('-');
    try {
      size_t used = 0;
      const int first = std::stoi(part.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? part.size() : dash) || first < 0)
        return std::nullopt;
      int last = first;
      if (dash != std::string::npos) {
        last = std::stoi(part.substr(dash + 1), &used);
        if (used != part.size() - dash - 1 || last < first || last - first > 1 << 16)
          return std::nullopt;
      }
      for (int c = first; c <= last; ++c)
        cpus.push_back(c);
    } catch (const std::exception &) {
      return std::nullopt;
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

int slurmTasksOnNode(const std::string &tasksPerNode, int nodeId) {
  if (nodeId < 0)
    return 0;
  std::istringstream parts(tasksPerNode);
  std::string part;
  int node = 0;
  while (std::getline(parts, part, ',')) {
    int tasks = 0, times = 1;
    char open = 0, x = 0, close = 0;
    std::istringstream entry(part);
    if (!(entry >> tasks) || tasks < 0)
      return 0;
    if (entry >> open) {
      if (open != '(' || !(entry >> x >> times >> close) || x != 'x' || close != ')' || times < 1)
        return 0;
    }
    if (nodeId < node + times)
      return tasks;
    node += times;
  }
  return 0;
}

int localRanks() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char *value = std::getenv(name)) {
      const int n = std::atoi(value);
      if (n >= 1)
        return n;
    }
  const char *tasks = std::getenv("SLURM_STEP_TASKS_PER_NODE");
  const char *node = std::getenv("SLURM_NODEID");
  if (tasks && node)
    if (const int n = slurmTasksOnNode(tasks, std::atoi(node)); n >= 1)
      return n;
  return 1;
}

int nodeCores() {
  // The cpuset of this process's cgroup: v2 ("0::/path", cpuset.cpus.effective) or v1
  // ("N:cpuset:/path" under /sys/fs/cgroup/cpuset, cpuset.effective_cpus).
  if (std::optional<std::string> cgroup = readSmallFile("/proc/self/cgroup")) {
    std::istringstream lines(*cgroup);
    std::string line;
    while (std::getline(lines, line)) {
      std::string file;
      const size_t v1 = line.find(":cpuset:");
      if (line.rfind("0::", 0) == 0)
        file = "/sys/fs/cgroup" + line.substr(3) + "/cpuset.cpus.effective";
      else if (v1 != std::string::npos)
        file = "/sys/fs/cgroup/cpuset" + line.substr(v1 + 8) + "/cpuset.effective_cpus";
      if (file.empty())
        continue;
      if (std::optional<std::string> text = readSmallFile(file))
        if (std::optional<std::vector<int>> cpus = parseCpuList(*text); cpus && !cpus->empty())
          return static_cast<int>(cpus->size());
    }
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online >= 1 ? static_cast<int>(std::min(online, 1L << 20)) : 1;
}

int threadsForLocalRanks(int allowed, int nodeCores, int localRanks) {
  if (allowed < 1)
    return 1;
  if (localRanks <= 1 || nodeCores < 1)
    return allowed;
  return std::clamp(nodeCores / localRanks, 1, allowed);
}

int threadsBeside(int allowed, double othersBusy) {
  if (allowed < 1)
    return 1;
  if (!(othersBusy > 0))
    return allowed;
  const int taken = static_cast<int>(std::floor(othersBusy + 0.5));
  return std::max(1, allowed - taken);
}

std::string ThreadChoice::why() const {
  std::string text;
  if (threadsForLocalRanks(allowed, nodeCores, localRanks) < allowed)
    text = std::to_string(localRanks) + " ranks of this job share this node's " +
           std::to_string(nodeCores) + " cores";
  if (threadsBeside(allowed, othersBusy) < allowed) {
    char busy[32];
    std::snprintf(busy, sizeof(busy), "%.1f", othersBusy);
    text += std::string(text.empty() ? "" : "; ") + "other processes kept " + busy +
            " cores busy as it started";
  }
  return text;
}

int ThreadChoice::effective() const {
  if (threads > 0 || how.empty())
    return std::max(threads, 0);
  if (how == "OMP_NUM_THREADS")
    if (const char *omp = std::getenv("OMP_NUM_THREADS"); omp && std::atoi(omp) > 0)
      return std::atoi(omp);
  return allowed;
}

ThreadChoice chooseComputeThreads(int requested, double seconds) {
  ThreadChoice choice;
  const std::vector<int> cpus = allowedCpus();
  choice.allowed = std::max(1, static_cast<int>(cpus.size()));
  if (requested > 0) {
    // Thousands of threads on a few cores only stall each other at every barrier, and past
    // the process limits OpenMP's runtime dies creating them, without a word from dprun.
    const int most = std::max(8, 4 * choice.allowed);
    if (requested > most)
      throw Error(ErrorKind::Usage,
                  "--threads " + std::to_string(requested) + ": this process may run on " +
                      std::to_string(choice.allowed) + " core" + (choice.allowed == 1 ? "" : "s") +
                      "; more than " + std::to_string(most) +
                      " compute threads (4 per core) only wait for each other");
    choice.threads = requested;
    choice.how = "--threads";
    return choice;
  }
  if (requested < 0) {
    choice.how = "all";
    return choice;
  }
  const char *omp = std::getenv("OMP_NUM_THREADS");
  if (omp && *omp) {
    choice.how = "OMP_NUM_THREADS";
    return choice;
  }
  choice.how = "auto";
  if (cpus.size() < 2)
    return choice;
  choice.localRanks = localRanks();
  choice.nodeCores = nodeCores();
  int threads = threadsForLocalRanks(choice.allowed, choice.nodeCores, choice.localRanks);
  if (std::optional<double> others = othersBusyCores(cpus, seconds)) {
    choice.othersBusy = *others;
    threads = std::min(threads, threadsBeside(choice.allowed, *others));
  }
  if (threads < choice.allowed)
    choice.threads = threads;
  return choice;
}

} // namespace dp::rt
