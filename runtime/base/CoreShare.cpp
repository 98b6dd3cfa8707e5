// See CoreShare.h.
#include "runtime/base/CoreShare.h"

#include "runtime/base/HostMemory.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
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

int threadsBeside(int allowed, double othersBusy) {
  if (allowed < 1)
    return 1;
  if (!(othersBusy > 0))
    return allowed;
  const int taken = static_cast<int>(std::floor(othersBusy + 0.5));
  return std::max(1, allowed - taken);
}

ThreadChoice chooseComputeThreads(int requested, double seconds) {
  ThreadChoice choice;
  const std::vector<int> cpus = allowedCpus();
  choice.allowed = std::max(1, static_cast<int>(cpus.size()));
  if (requested > 0) {
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
  if (std::optional<double> others = othersBusyCores(cpus, seconds)) {
    choice.othersBusy = *others;
    const int threads = threadsBeside(choice.allowed, *others);
    if (threads < choice.allowed)
      choice.threads = threads;
  }
  return choice;
}

} // namespace dp::rt
