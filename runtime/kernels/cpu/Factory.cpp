// The CPU backend's factory: checks how a kernel's buffers overlap, decodes the kernel's typed
// attributes and hands them to the factory of its kind (both generated from Kernels.def).
#include "runtime/kernels/cpu/CpuKernels.h"
#include "runtime/kernels/cpu/Internal.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace dp::rt::cpu {
namespace {

// Kinds whose loops read each element (or row) before writing the same position, so an output
// may reuse exactly the bytes of an input; partial overlaps are never safe.
bool allowsInPlace(KernelKind kind) {
  switch (kind) {
  case KernelKind::Activation:
  case KernelKind::ActivationGrad:
  case KernelKind::Add:
  case KernelKind::Copy:
  case KernelKind::SoftmaxXentGrad:
    return true;
  default:
    return false;
  }
}

void checkOverlaps(const KernelSite &site) {
  const bool inPlace = allowsInPlace(site.kind());
  for (int o = 0; o < site.numOutputs(); ++o) {
    const TensorView out = site.output(o);
    for (int i = 0; i < site.numInputs(); ++i) {
      const TensorView in = site.input(i);
      if (out.overlaps(in) && !(inPlace && out.sameBytes(in)))
        site.fail("output " + std::to_string(o) + " (buffer " + std::to_string(out.id) +
                  ") overlaps input " + std::to_string(i) + " (buffer " + std::to_string(in.id) +
                  ")" + (inPlace ? " without being the same bytes" : ""));
    }
    for (int p = 0; p < o; ++p)
      if (out.overlaps(site.output(p)))
        site.fail("outputs " + std::to_string(p) + " and " + std::to_string(o) + " overlap");
  }
}

} // namespace

std::unique_ptr<Kernel> makeCpuKernel(const KernelSite &site) {
  checkOverlaps(site);
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
                site.where() + ": oneDNN cannot create the primitive: " + e.what());
  }
  site.fail("kernel kind " + std::to_string(static_cast<unsigned>(site.kind())) +
            " has no CPU implementation");
}

} // namespace dp::rt::cpu
