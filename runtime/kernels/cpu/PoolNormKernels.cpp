// Zero padding, average pooling and batch normalisation (placeholder until implemented).
#include "runtime/kernels/cpu/Internal.h"

namespace dp::rt::cpu {
#define DP_UNIMPLEMENTED(Name)                                                                     \
  std::unique_ptr<Kernel> make##Name(const KernelSite &site) { site.fail("not implemented"); }
DP_UNIMPLEMENTED(ZeroPad2d)
DP_UNIMPLEMENTED(ZeroPad2dGrad)
DP_UNIMPLEMENTED(AvgPool2d)
DP_UNIMPLEMENTED(AvgPool2dGrad)
DP_UNIMPLEMENTED(BatchMoments)
DP_UNIMPLEMENTED(BatchNormTrain)
DP_UNIMPLEMENTED(BatchNormInfer)
DP_UNIMPLEMENTED(BatchNormGradParams)
DP_UNIMPLEMENTED(BatchNormGradInput)
DP_UNIMPLEMENTED(MovingStatsUpdate)
} // namespace dp::rt::cpu
