// How many compute threads a process should run on the cores it was given when other
// processes already keep some of them busy. A team of spinning OpenMP threads on a core that
// another process also wants stalls at every barrier until the scheduler gives the core back
// (mnist_cnn, 2 threads on 2 cores beside one busy process: 3x slower); one thread fewer runs
// on the free core at full speed. dprun measures the others' use of its cores for a moment
// before it builds its kernels (which oneDNN sizes for the thread count they are created
// with) and leaves every core they keep at least half busy to them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dp::rt {

/// Busy and total time of a set of CPUs, in the kernel's clock ticks (USER_HZ).
struct CpuTicks {
  uint64_t busy = 0, total = 0;
};

/// The ticks of the CPUs `cpus` in the text of /proc/stat ("cpuN user nice system idle iowait
/// irq softirq steal ..."): busy is everything but idle and iowait. nullopt when a CPU's line
/// is missing or malformed.
std::optional<CpuTicks> parseCpuTicks(const std::string &procStat, const std::vector<int> &cpus);

/// The cores' worth of time that processes other than this one spent on `cpus` over the next
/// `seconds` (this thread sleeps meanwhile): their busy time from /proc/stat less this
/// process's own CPU time. nullopt when /proc/stat cannot be read.
std::optional<double> othersBusyCores(const std::vector<int> &cpus, double seconds,
                                      const std::string &procStat = "/proc/stat");

/// The compute threads for `allowed` cores of which other processes keep `othersBusy` cores'
/// worth busy: every core they use at least half of is left to them; at least 1.
int threadsBeside(int allowed, double othersBusy);

/// CPU numbers in the kernel's list format ("0-3,8,10-11"), ascending; nullopt when malformed.
std::optional<std::vector<int>> parseCpuList(const std::string &text);

/// The tasks SLURM runs on node `nodeId` of a step, from SLURM_STEP_TASKS_PER_NODE's format
/// ("2(x3),1": 2 on each of the first 3 nodes, 1 on the fourth); 0 when it does not say.
int slurmTasksOnNode(const std::string &tasksPerNode, int nodeId);

/// The ranks of this job on this node, as the launcher says (OMPI_COMM_WORLD_LOCAL_SIZE,
/// MPI_LOCALNRANKS, or SLURM_STEP_TASKS_PER_NODE with SLURM_NODEID); 1 when none does.
int localRanks();

/// The cores the job's ranks on this node can share: this process's cgroup cpuset (what
/// `sbatch` or a container gives the job), else the online CPUs.
int nodeCores();

/// The compute threads for a process allowed `allowed` cores when `localRanks` ranks of its
/// job run on a node of `nodeCores` cores: its share, nodeCores / localRanks, where the ranks'
/// cores must overlap (more ranks x cores than the node has: a launcher that did not bind
/// them, or bound them to shared sockets), else all it is allowed; at least 1.
int threadsForLocalRanks(int allowed, int nodeCores, int localRanks);

/// The choice dprun made, for its report.
struct ThreadChoice {
  int threads = 0;       // compute threads per process; 0 leaves OpenMP's own choice
  int allowed = 0;       // cores the process may run on
  double othersBusy = 0; // cores' worth the others used while dprun measured (auto only)
  int localRanks = 1;    // ranks of the job on this node, and the cores they share (auto only)
  int nodeCores = 0;
  std::string how;       // "auto", "all", "--threads", "OMP_NUM_THREADS"

  /// The compute threads the process runs with, however they were chosen: `threads`, or
  /// OpenMP's own count (OMP_NUM_THREADS, else one per allowed core); 0 when no choice was
  /// made (not a CPU plan).
  int effective() const;
  /// Whether auto left cores to other processes (threads is then below allowed).
  bool leftCoresOut() const { return how == "auto" && threads > 0; }
  /// Why, for the run's report: "2 ranks of this job share this node's 2 cores" and/or
  /// "other processes kept 1.0 cores busy as it started".
  std::string why() const;
};

/// Decides the compute threads of a CPU process: `requested` > 0 (dprun --threads N) wins (up
/// to 4 per allowed core, at least 8: more is refused with Error(Usage));
/// -1 (--threads all) and a set OMP_NUM_THREADS leave the count to OpenMP (one per allowed
/// core, or OMP_NUM_THREADS); else (0, auto), on 2 or more cores, the fewer of
/// threadsForLocalRanks() and threadsBeside() of the others' use measured for `seconds`.
ThreadChoice chooseComputeThreads(int requested, double seconds = 0.1);

} // namespace dp::rt
