// The launch environment: which launcher started this process, the SLURM variables it sees,
// and their cross-check against MPI's view of the job; see Comm.h and Internal.h.
#include "runtime/comm/Internal.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace dp::rt {
namespace {

const char *env(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

/// The integer value of variable `name`, or -1 when it is unset or not a plain number (SLURM
/// also writes forms like "2(x3)" into some variables; those are not used here).
long envInt(const char *name) {
  const char *value = env(name);
  if (!value)
    return -1;
  char *end = nullptr;
  long n = std::strtol(value, &end, 10);
  return *end == '\0' && n >= 0 ? n : -1;
}

// The SLURM variables worth reporting, in the order they are printed.
const char *const kSlurmVariables[] = {"SLURM_JOB_ID",  "SLURM_STEP_ID", "SLURM_PROCID",
                                       "SLURM_NTASKS",  "SLURM_LOCALID", "SLURM_NODEID",
                                       "SLURM_STEP_NUM_TASKS"};

} // namespace

std::string LaunchInfo::describe() const {
  std::string text = "rank " + std::to_string(rank) + " of " + std::to_string(size);
  if (!host.empty())
    text += " on " + host;
  text += " (" + launcher;
  if (!slurm.empty())
    text += ", " + slurm;
  return text + ")";
}

bool launchedByMpiLauncher() {
  // Open MPI's mpirun; PMIx (srun --mpi=pmix, prterun); PMI-1/2 (MPICH's hydra, srun --mpi=pmi2).
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                           "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"})
    if (env(name))
      return true;
  return false;
}

bool launcherKeepsJobOnFailure() {
  const char *recovery = env("OMPI_MCA_orte_enable_recovery");
  return recovery && std::string(recovery) == "1";
}

namespace comm {

std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", seconds);
  return text;
}

std::string detectLauncher() {
  if (env("OMPI_COMM_WORLD_SIZE"))
    return "mpirun";
  // A SLURM job step: srun started this process (with or without an MPI plugin).
  if (env("SLURM_STEP_ID") && env("SLURM_PROCID"))
    return "srun";
  if (launchedByMpiLauncher())
    return "mpirun";
  return "direct";
}

std::string slurmVariables() {
  std::string text;
  for (const char *name : kSlurmVariables)
    if (const char *value = env(name)) {
      if (name == std::string("SLURM_STEP_NUM_TASKS") && env("SLURM_NTASKS") &&
          std::string(value) == env("SLURM_NTASKS"))
        continue; // the same as SLURM_NTASKS: not worth printing twice
      text += (text.empty() ? "" : " ") + std::string(name) + "=" + value;
    }
  return text;
}

std::string slurmMismatch(int mpiRank, int mpiSize) {
  // Under mpirun inside an allocation the SLURM variables describe mpirun's own daemons (one
  // per node), not the ranks: only a job step started by srun is comparable.
  if (detectLauncher() != "srun")
    return "";
  long procId = envInt("SLURM_PROCID");
  long tasks = envInt("SLURM_STEP_NUM_TASKS");
  if (tasks < 0)
    tasks = envInt("SLURM_NTASKS");
  bool rankOk = procId < 0 || procId == mpiRank;
  bool sizeOk = tasks < 0 || tasks == mpiSize;
  if (rankOk && sizeOk)
    return "";
  std::string text = "SLURM and MPI disagree about this process: SLURM says task " +
                     (procId < 0 ? std::string("?") : std::to_string(procId)) + " of " +
                     (tasks < 0 ? std::string("?") : std::to_string(tasks)) + " (" +
                     slurmVariables() + "), MPI says rank " + std::to_string(mpiRank) + " of " +
                     std::to_string(mpiSize);
  if (mpiSize == 1 && tasks > 1)
    text += ": srun started the processes without connecting them through MPI; launch with "
            "`srun --mpi=pmix` (`srun --mpi=list` shows the plugins) or use mpirun";
  else
    text += ": check the srun options (--ntasks, --mpi=pmix) against the MPI library";
  return text;
}

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0)
    return "?";
  return name;
}

std::string rankList(std::vector<int> ranks, const std::string &noun) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string text = noun + (ranks.size() == 1 ? " " : "s ");
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    if (i > 0)
      text += ", ";
    text += std::to_string(ranks[i]);
    if (j >= i + 2)
      text += "-" + std::to_string(ranks[j]);
    else if (j == i + 1)
      text += ", " + std::to_string(ranks[j]);
    i = j + 1;
  }
  return text;
}

} // namespace comm
} // namespace dp::rt
