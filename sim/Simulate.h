// `dpc simulate`: checks a plan's collective schedule for deadlock and, given a profile and a
// topology, predicts its train step, the communication hidden behind compute and the scaling
// efficiency, at the plan's layout or over a range of device counts.
#pragma once

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dp::sim {

struct SimulateOptions {
  std::string plan;
  /// Ranks that run another plan: (rank, file).
  std::vector<std::pair<int, std::string>> rankPlans;
  std::string profile, topology;
  /// Overrides of the topology's counts; 0: the topology file's, else the plan's. int64 so
  /// that any count given is refused by its name, not cut to an int first.
  int64_t nodes = 0, ranksPerNode = 0, devicesPerRank = 0;
  std::string allreduce = "auto"; // flat, hierarchical, auto (as dprun)
  /// Device counts to predict (weak scaling); empty: the layout only.
  std::vector<int64_t> scale;
  /// The compute of one step in milliseconds: the profile's kernel times are scaled to it
  /// (0: not scaled; else kMinComputeMs..kMaxComputeMs, see sim/Model.h).
  double computeMs = 0;
  std::string json;
};

/// Exit codes: 0 done, 1 an input is refused (named on `err`), 2 bad usage, 4 the schedule
/// deadlocks or pairs different tensors.
int simulate(const SimulateOptions &options, llvm::raw_ostream &out, llvm::raw_ostream &err);

} // namespace dp::sim
