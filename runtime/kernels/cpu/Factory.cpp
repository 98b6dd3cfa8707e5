// The CPU backend's factory: checks how a kernel's buffers overlap, then hands the kernel to the
// family that implements its kind.
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

Activation activationAttr(const KernelSite &site, bool required) {
  const int64_t value = required ? site.intAttr("activation") : site.intAttr("activation", 0);
  if (value < 0 || value > static_cast<int64_t>(Activation::Softmax))
    site.fail("unknown activation " + std::to_string(value));
  return static_cast<Activation>(value);
}

std::unique_ptr<Kernel> makeCpuKernel(const KernelSite &site) {
  checkOverlaps(site);
  try {
    switch (site.kind()) {
    case KernelKind::Dense:
      return makeDense(site);
    case KernelKind::Activation:
      return makeActivation(site);
    case KernelKind::ActivationGrad:
      return makeActivationGrad(site);
    case KernelKind::MatMul:
      return makeMatMul(site);
    case KernelKind::ReduceRows:
      return makeReduceRows(site);
    case KernelKind::Add:
      return makeAdd(site);
    case KernelKind::Copy:
      return makeCopy(site);
    case KernelKind::Fill:
      return makeFill(site);
    case KernelKind::SoftmaxXent:
      return makeSoftmaxXent(site);
    case KernelKind::SoftmaxXentGrad:
      return makeSoftmaxXentGrad(site);
    case KernelKind::CountCorrect:
      return makeCountCorrect(site);
    case KernelKind::SgdUpdate:
      return makeSgdUpdate(site);
    case KernelKind::MomentumUpdate:
      return makeMomentumUpdate(site);
    case KernelKind::AdamUpdate:
      return makeAdamUpdate(site);
    case KernelKind::Conv2d:
      return makeConv2d(site);
    case KernelKind::Conv2dGradInput:
      return makeConv2dGradInput(site);
    case KernelKind::Conv2dGradFilter:
      return makeConv2dGradFilter(site);
    case KernelKind::MaxPool2d:
      return makeMaxPool2d(site);
    case KernelKind::MaxPool2dGrad:
      return makeMaxPool2dGrad(site);
    case KernelKind::Dropout:
      return makeDropout(site);
    case KernelKind::DropoutGrad:
      return makeDropoutGrad(site);
    case KernelKind::ZeroPad2d:
      return makeZeroPad2d(site);
    case KernelKind::ZeroPad2dGrad:
      return makeZeroPad2dGrad(site);
    case KernelKind::AvgPool2d:
      return makeAvgPool2d(site);
    case KernelKind::AvgPool2dGrad:
      return makeAvgPool2dGrad(site);
    case KernelKind::BatchMoments:
      return makeBatchMoments(site);
    case KernelKind::BatchNormTrain:
      return makeBatchNormTrain(site);
    case KernelKind::BatchNormInfer:
      return makeBatchNormInfer(site);
    case KernelKind::BatchNormGradParams:
      return makeBatchNormGradParams(site);
    case KernelKind::BatchNormGradInput:
      return makeBatchNormGradInput(site);
    case KernelKind::MovingStatsUpdate:
      return makeMovingStatsUpdate(site);
    case KernelKind::Lstm:
      return makeLstm(site);
    case KernelKind::LstmGrad:
      return makeLstmGrad(site);
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
