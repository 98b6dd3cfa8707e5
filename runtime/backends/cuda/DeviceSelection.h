// Which GPUs a process of a job uses: a pure function of where the process sits on its node and
// what the node shows it, so that it is tested without a GPU.
#pragma once

#include <string>
#include <vector>

namespace dp::rt::cuda {

/// The GPU ordinals (as the CUDA runtime numbers the visible ones) for a process that runs
/// `devicesPerProcess` replicas and is local rank `localRank` of its node: the `localRank`-th
/// run of `devicesPerProcess` consecutive visible GPUs, so that the processes of a node never
/// share one. `visible` is the number of GPUs the runtime reports; `visibleEnv` the value of
/// CUDA_VISIBLE_DEVICES (empty when unset), for the message. Throws Error(Launch) naming every
/// number when the node has too few.
std::vector<int> selectDevices(int localRank, int devicesPerProcess, int visible,
                               const std::string &visibleEnv);

} // namespace dp::rt::cuda
