// Which GPUs each process of a node takes: consecutive runs of R visible GPUs by local rank,
// and a refusal naming every number when the node has too few.
#include "runtime/backends/cuda/DeviceSelection.h"
#include "test/unit/ErrorMatchers.h"

#include <gtest/gtest.h>

namespace dp::rt::cuda {
namespace {

TEST(DeviceSelection, ProcessesOfANodeTakeDisjointRuns) {
  // seed 002: four GPUs per node, one process per GPU or one process with four.
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(selectDevices(rank, 1, 4, ""), std::vector<int>{rank});
  EXPECT_EQ(selectDevices(0, 4, 4, ""), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(selectDevices(1, 2, 4, "4,5,6,7"), (std::vector<int>{2, 3}));
}

TEST(DeviceSelection, TooFewGpusIsALaunchErrorNamingTheNumbers) {
  EXPECT_DP_ERROR(selectDevices(2, 2, 4, "0,1,2,3"), ErrorKind::Launch,
                  "local rank 2 runs 2 device(s) per process, so the 3 process(es) up to it on "
                  "this node need 6 GPU(s), but the node shows 4 (CUDA_VISIBLE_DEVICES=0,1,2,3)");
  EXPECT_DP_ERROR(selectDevices(0, 1, 0, ""), ErrorKind::Launch,
                  "the node shows 0 (CUDA_VISIBLE_DEVICES is unset)");
  EXPECT_DP_ERROR(selectDevices(-1, 1, 4, ""), ErrorKind::Launch, "local rank -1");
}

} // namespace
} // namespace dp::rt::cuda
