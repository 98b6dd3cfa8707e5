// The CPU backend's factory: checks how a kernel's buffers overlap (the contract's rule),
// decodes the kernel's typed attributes, runs the contract's check of its kind and hands both
// to the factory of its kind (the dispatch and the factories' declarations are generated from
// Kernels.def).
#include "runtime/backends/cpu/CpuKernels.h"
#include "runtime/backends/cpu/Internal.h"
#include "runtime/kernels/Contract.h"

#include "runtime/base/HostMemory.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <new>

namespace dp::rt::cpu {

namespace {

/// A kernel whose allocations at run time (oneDNN's scratchpads, a primitive's first use) may
/// fail: said as what it is (exit 7), naming the kernel and the memory the process has left.
class MemoryGuard final : public Kernel {
public:
  MemoryGuard(std::unique_ptr<Kernel> inner, std::string where)
      : inner_(std::move(inner)), where_(std::move(where)) {}
  void run(const StepContext &ctx) override {
    try {
      inner_->run(ctx);
    } catch (const dnnl::error &e) {
      if (e.status != dnnl_out_of_memory)
        throw;
      throw Error(ErrorKind::Memory,
                  outOfMemoryMessage("running " + where_ + " (oneDNN: " + e.what() + ")"));
    } catch (const std::bad_alloc &) {
      throw Error(ErrorKind::Memory, outOfMemoryMessage("running " + where_));
    }
  }

private:
  std::unique_ptr<Kernel> inner_;
  std::string where_;
};

std::unique_ptr<Kernel> makeUnguarded(const KernelSite &site);

} // namespace

std::unique_ptr<Kernel> makeCpuKernel(const KernelSite &site) {
  std::unique_ptr<Kernel> kernel;
  try {
    kernel = makeUnguarded(site);
  } catch (const std::bad_alloc &) {
    throw Error(ErrorKind::Memory, outOfMemoryMessage("creating " + site.where()));
  }
  return std::make_unique<MemoryGuard>(std::move(kernel), site.where());
}

namespace {

std::unique_ptr<Kernel> makeUnguarded(const KernelSite &site) {
  contract::checkOverlaps(site);
  try {
    switch (site.kind()) {
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                                         \
  case KernelKind::Enum: {                                                                         \
    const Attrs &attrs = site.attrs<Attrs>();                                                      \
    return make##Enum(site, attrs, contract::check##Enum(site, attrs));                            \
  }
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                              \
  case KernelKind::Enum:                                                                           \
    break;
#include "runtime/format/Kernels.def"
    case KernelKind::NumKinds:
      break;
    }
  } catch (const dnnl::error &e) {
    if (e.status == dnnl_out_of_memory)
      throw Error(ErrorKind::Memory,
                  outOfMemoryMessage("creating " + site.where() + " (oneDNN: " + e.what() + ")"));
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

} // namespace

} // namespace dp::rt::cpu
