// The CPU backend's factory: checks how a kernel's buffers overlap (the contract's rule),
// decodes the kernel's typed attributes and hands them to the factory of its kind (both
// generated from Kernels.def).
#include "runtime/kernels/Contract.h"
#include "runtime/kernels/cpu/CpuKernels.h"
#include "runtime/kernels/cpu/Internal.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace dp::rt::cpu {

std::unique_ptr<Kernel> makeCpuKernel(const KernelSite &site) {
  contract::checkOverlaps(site);
  try {
    switch (site.kind()) {
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                                       \
  case KernelKind::Enum:                                                                         \
    return make##Enum(site, site.attrs<Attrs>());
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                            \
  case KernelKind::Enum:                                                                         \
    break;
#include "runtime/format/Kernels.def"
    case KernelKind::NumKinds:
      break;
    }
  } catch (const dnnl::error &e) {
    throw Error(ErrorKind::Runtime,
                site.where() + ": oneDNN cannot create the primitive: " + e.what() +
                    (site.touches(DType::BF16)
                         ? " (its bf16 kernels need a CPU with AVX-512; compile the model "
                           "without --precision bf16)"
                         : ""));
  }
  site.fail("kernel kind " + std::to_string(static_cast<unsigned>(site.kind())) +
            " has no CPU implementation");
}

} // namespace dp::rt::cpu
