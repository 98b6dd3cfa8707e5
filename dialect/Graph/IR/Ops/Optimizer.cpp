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

/// Checks the update ops: a trainable param and its optimizer state (types match by trait),
/// and a scale, when given, of one f32 element.
static LogicalResult verifyUpdate(Operation *op, Value param, ValueRange state, Value scale = {}) {
  if (scale && cast<RankedTensorType>(scale.getType()).getRank() != 0)
    return op->emitOpError() << "expects the scale to be a tensor<f32>, found " << scale.getType();
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
                 failed(verifyUpdate(*this, getParam(), {}, getScale())));
}

LogicalResult MomentumUpdateOp::verify() {
  return failure(failed(verifyDecay(*this, getWeightDecay())) ||
                 failed(verifyUpdate(*this, getParam(), getVelocity(), getScale())));
}

LogicalResult AdamUpdateOp::verify() {
  return failure(failed(verifyDecay(*this, getWeightDecay())) ||
                 failed(verifyUpdate(*this, getParam(), ValueRange{getM(), getV()}, getScale())));
}

/// The decay of an update op (0 without one).
static double decayOf(std::optional<APFloat> decay) {
  return decay ? decay->convertToDouble() : 0.0;
}

LogicalResult ClipFactorOp::verify() {
  const double maxNorm = getMaxNorm().convertToDouble();
  if (!(maxNorm > 0) || !std::isfinite(maxNorm))
    return emitOpError() << "max_norm must be finite and > 0, found " << maxNorm;
  if (getGradients().empty())
    return emitOpError() << "expects at least one gradient";
  return success();
}

LogicalResult ClipFactorOp::lowerToKernels(KernelLowering &l) {
  SmallVector<Value> inputs;
  for (Value g : getGradients())
    inputs.push_back(l.buffer(g));
  l.emit(getLoc(), KernelKind::ClipFactor, inputs, {l.newBuffer(getResult())},
         rt::ClipAttrs{getMaxNorm().convertToDouble()});
  return success();
}

/// The kernel inputs of an update: its gradient, and its scale when it has one.
static SmallVector<Value> updateInputs(KernelLowering &l, Value gradient, Value scale) {
  SmallVector<Value> inputs{l.buffer(gradient)};
  if (scale)
    inputs.push_back(l.buffer(scale));
  return inputs;
}

// Updates write the persistent parameter (and optimizer state) buffers in place.
LogicalResult SgdUpdateOp::lowerToKernels(KernelLowering &l) {
  l.emit(getLoc(), KernelKind::SgdUpdate, updateInputs(l, getGradient(), getScale()),
         {l.buffer(getParam())},
         rt::SgdAttrs{getLr().convertToDouble(), decayOf(getWeightDecay())});
  return success();
}

LogicalResult MomentumUpdateOp::lowerToKernels(KernelLowering &l) {
  rt::MomentumAttrs attrs;
  attrs.lr = getLr().convertToDouble(), attrs.momentum = getMomentum().convertToDouble();
  attrs.nesterov = getNesterov();
  attrs.weight_decay = decayOf(getWeightDecay());
  l.emit(getLoc(), KernelKind::MomentumUpdate, updateInputs(l, getGradient(), getScale()),
         {l.buffer(getParam()), l.buffer(getVelocity())}, attrs);
  return success();
}

LogicalResult AdamUpdateOp::lowerToKernels(KernelLowering &l) {
  rt::AdamAttrs attrs;
  attrs.lr = getLr().convertToDouble(), attrs.beta1 = getBeta1().convertToDouble();
  attrs.beta2 = getBeta2().convertToDouble(), attrs.epsilon = getEpsilon().convertToDouble();
  attrs.torch_epsilon = getTorchEpsilon();
  attrs.weight_decay = decayOf(getWeightDecay());
  l.emit(getLoc(), KernelKind::AdamUpdate, updateInputs(l, getGradient(), getScale()),
         {l.buffer(getParam()), l.buffer(getM()), l.buffer(getV())}, attrs);
  return success();
}
