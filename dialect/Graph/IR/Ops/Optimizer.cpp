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

/// A weight decay, when given, is finite and at least 0.
static LogicalResult verifyDecay(Operation *op, std::optional<APFloat> decay) {
  if (!decay)
    return success();
  const double d = decay->convertToDouble();
  if (!(d >= 0) || !std::isfinite(d))
    return op->emitOpError() << "weight_decay must be finite and >= 0, found " << d;
  return success();
}

LogicalResult SgdUpdateOp::verify() {
  return failure(failed(verifyDecay(*this, getWeightDecay())) ||
                 failed(verifyUpdate(*this, getParam(), {})));
}

LogicalResult MomentumUpdateOp::verify() {
  return failure(failed(verifyDecay(*this, getWeightDecay())) ||
                 failed(verifyUpdate(*this, getParam(), getVelocity())));
}

LogicalResult AdamUpdateOp::verify() {
  return failure(failed(verifyDecay(*this, getWeightDecay())) ||
                 failed(verifyUpdate(*this, getParam(), ValueRange{getM(), getV()})));
}

/// The decay of an update op (0 without one).
static double decayOf(std::optional<APFloat> decay) {
  return decay ? decay->convertToDouble() : 0.0;
}

// Updates write the persistent parameter (and optimizer state) buffers in place.
LogicalResult SgdUpdateOp::lowerToKernels(KernelLowering &l) {
  l.emit(getLoc(), KernelKind::SgdUpdate, {l.buffer(getGradient())}, {l.buffer(getParam())},
         rt::SgdAttrs{getLr().convertToDouble(), decayOf(getWeightDecay())});
  return success();
}

LogicalResult MomentumUpdateOp::lowerToKernels(KernelLowering &l) {
  rt::MomentumAttrs attrs;
  attrs.lr = getLr().convertToDouble(), attrs.momentum = getMomentum().convertToDouble();
  attrs.nesterov = getNesterov();
  attrs.weight_decay = decayOf(getWeightDecay());
  l.emit(getLoc(), KernelKind::MomentumUpdate, {l.buffer(getGradient())},
         {l.buffer(getParam()), l.buffer(getVelocity())}, attrs);
  return success();
}

LogicalResult AdamUpdateOp::lowerToKernels(KernelLowering &l) {
  rt::AdamAttrs attrs;
  attrs.lr = getLr().convertToDouble(), attrs.beta1 = getBeta1().convertToDouble();
  attrs.beta2 = getBeta2().convertToDouble(), attrs.epsilon = getEpsilon().convertToDouble();
  attrs.torch_epsilon = getTorchEpsilon();
  attrs.weight_decay = decayOf(getWeightDecay());
  l.emit(getLoc(), KernelKind::AdamUpdate, {l.buffer(getGradient())},
         {l.buffer(getParam()), l.buffer(getM()), l.buffer(getV())}, attrs);
  return success();
}
