// The collective schedule of a job, checked before it runs: from each rank's plan, the
// collectives every rank's communication thread posts (per bucket, in manifest order, as
// runtime/comm does it) on each communicator of the layout (world for flat; the node's reduce
// and broadcast communicators and the leaders' for hierarchical), replayed for two train steps
// against the plan's allreduce starts and waits. MPI pairs the collectives of a communicator by
// their order, so each pairing must be the same bucket of the same size on every member; and
// every replica must get past every wait. A rank whose order differs (a plan edited by hand,
// a plan compiled otherwise) is reported with the first pairing that differs, or with the
// ranks left waiting and what each waits for.
#pragma once

#include "sim/Model.h"

#include <string>
#include <vector>

namespace dp::sim {

struct ScheduleCheck {
  bool ok = true;
  /// "3 collectives per step on 1 communicator (world), the same order on all 4 ranks".
  std::string summary;
  /// When not ok: what goes wrong, first the pairing that differs or the wait-for state.
  std::vector<std::string> problems;
};

/// Checks the schedule of `ranks` (one plan per rank, named by `names` in messages) run on
/// `nodes` nodes under `layout`. The plans' process counts must equal ranks.size().
ScheduleCheck checkSchedule(const std::vector<const rt::Plan *> &ranks,
                            const std::vector<std::string> &names, int nodes, Layout layout);

} // namespace dp::sim
