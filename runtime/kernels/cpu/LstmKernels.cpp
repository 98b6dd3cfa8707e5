// LSTM layer kernels (placeholder until implemented).
#include "runtime/kernels/cpu/Internal.h"

namespace dp::rt::cpu {
std::unique_ptr<Kernel> makeLstm(const KernelSite &site) { site.fail("not implemented"); }
std::unique_ptr<Kernel> makeLstmGrad(const KernelSite &site) { site.fail("not implemented"); }
} // namespace dp::rt::cpu
