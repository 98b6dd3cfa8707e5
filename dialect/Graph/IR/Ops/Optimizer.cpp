// graph.apply_gradient and the optimizer updates (sgd, momentum, adam). Each op's verifier,
// gradient rule, batch sharding and lowering (those it has) are here; see docs/architecture.md,
// "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

/// Checks that `value` is a parameter declared by graph.param, with the wanted role.
static LogicalResult checkParam(Operation *op, Value value, StringRef what, bool optimizerState) {
  auto param = value.getDefiningOp<ParamOp>();
  if (!param)
    return op->emitOpError() << "expects " << what << " to be a graph.param";
  if (optimizerState && !param.getOptimizerState())
    return op->emitOpError() << "expects " << what << " to be optimizer state, found parameter '"
                             << param.getName() << "'";
  if (!optimizerState && !param.getTrainable())
    return op->emitOpError() << "expects " << what << " to be trainable, found parameter '"
                             << param.getName() << "'";
  return success();
}

/// Checks the update ops: a trainable param and its optimizer state (types match by trait).
static LogicalResult verifyUpdate(Operation *op, Value param, ValueRange state) {
  if (failed(checkParam(op, param, "the updated value", /*optimizerState=*/false)))
    return failure();
  for (Value s : state)
    if (failed(checkParam(op, s, "the optimizer state", /*optimizerState=*/true)))
      return failure();
  return success();
}

LogicalResult ApplyGradientOp::verify() { return verifyUpdate(*this, getParam(), {}); }

LogicalResult SgdUpdateOp::verify() { return verifyUpdate(*this, getParam(), {}); }

LogicalResult MomentumUpdateOp::verify() { return verifyUpdate(*this, getParam(), getVelocity()); }

LogicalResult AdamUpdateOp::verify() {
  return verifyUpdate(*this, getParam(), ValueRange{getM(), getV()});
}

// Updates write the persistent parameter (and optimizer state) buffers in place.
LogicalResult SgdUpdateOp::lowerToKernels(KernelLowering &l) {
  l.emit(getLoc(), KernelKind::SgdUpdate, {l.buffer(getGradient())}, {l.buffer(getParam())},
         rt::SgdAttrs{getLr().convertToDouble()});
  return success();
}

LogicalResult MomentumUpdateOp::lowerToKernels(KernelLowering &l) {
  rt::MomentumAttrs attrs;
  attrs.lr = getLr().convertToDouble(), attrs.momentum = getMomentum().convertToDouble();
  attrs.nesterov = getNesterov();
  l.emit(getLoc(), KernelKind::MomentumUpdate, {l.buffer(getGradient())},
         {l.buffer(getParam()), l.buffer(getVelocity())}, attrs);
  return success();
}

LogicalResult AdamUpdateOp::lowerToKernels(KernelLowering &l) {
  rt::AdamAttrs attrs;
  attrs.lr = getLr().convertToDouble(), attrs.beta1 = getBeta1().convertToDouble();
  attrs.beta2 = getBeta2().convertToDouble(), attrs.epsilon = getEpsilon().convertToDouble();
  attrs.torch_epsilon = getTorchEpsilon();
  l.emit(getLoc(), KernelKind::AdamUpdate, {l.buffer(getGradient())},
         {l.buffer(getParam()), l.buffer(getM()), l.buffer(getV())}, attrs);
  return success();
}
