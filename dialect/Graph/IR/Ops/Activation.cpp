// The activations (graph.relu, sigmoid, tanh, softmax) and graph.activation_grad. Each op's
// verifier, gradient rule, batch sharding and lowering (those it has) are here; see
// docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

template <typename OpT>
static LogicalResult activationOpGradient(OpT op, OpBuilder &b, ValueRange resultGrads,
                                          SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(
      1, activationGrad(b, op.getLoc(), OpT::kActivation, op.getResult(), resultGrads[0]));
  return success();
}

#define DP_ACTIVATION_GRADIENT(OpT)                                                                \
  LogicalResult OpT::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,    \
                                   SmallVectorImpl<Value> &operandGrads) {                         \
    return activationOpGradient(*this, b, resultGrads, operandGrads);                              \
  }

template <typename OpT> static LogicalResult lowerActivation(OpT op, KernelLowering &l) {
  l.kernel(op, KernelKind::Activation, rt::ActivationAttrs{runtimeActivation(OpT::kActivation)});
  return success();
}

#define DP_ACTIVATION_LOWERING(OpT)                                                                \
  LogicalResult OpT::lowerToKernels(KernelLowering &l) { return lowerActivation(*this, l); }

LogicalResult ActivationGradOp::verify() {
  if (getActivation() == Activation::none)
    return emitOpError("needs an activation other than none");
  return success();
}

DP_ACTIVATION_GRADIENT(ReluOp)

DP_ACTIVATION_GRADIENT(SigmoidOp)

DP_ACTIVATION_GRADIENT(TanhOp)

DP_ACTIVATION_GRADIENT(SoftmaxOp)

DP_ACTIVATION_LOWERING(ReluOp)

DP_ACTIVATION_LOWERING(SigmoidOp)

DP_ACTIVATION_LOWERING(TanhOp)

DP_ACTIVATION_LOWERING(SoftmaxOp)

LogicalResult ActivationGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::ActivationGrad,
           rt::ActivationAttrs{runtimeActivation(getActivation())});
  return success();
}
