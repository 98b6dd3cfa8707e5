// graph.dropout and graph.dropout_grad. Each op's verifier, gradient rule, batch sharding and
// lowering (those it has) are here; see docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

/// Dropout's rate is a probability below 1.
static LogicalResult checkRate(Operation *op, double rate) {
  if (!(rate >= 0.0 && rate < 1.0))
    return op->emitOpError() << "expects a rate in [0, 1), found " << rate;
  return success();
}

LogicalResult DropoutOp::verify() {
  // Masks are drawn per sample row.
  if (tensorType(getInput()).getRank() < 1)
    return emitOpError("expects an input with a batch axis");
  return checkRate(*this, getRate().convertToDouble());
}

LogicalResult DropoutGradOp::verify() {
  auto forward = getOutput().getDefiningOp<DropoutOp>();
  if (!forward)
    return emitOpError("expects output to be the result of a graph.dropout");
  if (forward.getRate() != getRate())
    return emitOpError() << "has rate " << getRate().convertToDouble()
                         << " but its graph.dropout has " << forward.getRate().convertToDouble();
  return checkRate(*this, getRate().convertToDouble());
}

LogicalResult DropoutOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                       SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(
      1, b.create<DropoutGradOp>(getLoc(), getType(), getResult(), resultGrads[0], getRateAttr()));
  return success();
}

// The mask is a buffer of the step, read again by the gradient. Each device numbers its
// dropouts in order, so that the replicas of one dropout draw from one stream.
LogicalResult DropoutOp::lowerToKernels(KernelLowering &l) {
  Value y = l.newBuffer(getResult());
  Value mask = l.scratch(*this, getType());
  l.remember(getResult(), mask);
  rt::DropoutAttrs attrs;
  attrs.rate = getRate().convertToDouble();
  attrs.stream = l.nextIndex(*this, "dropout");
  l.emit(getLoc(), KernelKind::Dropout, {l.buffer(getInput())}, {y, mask}, attrs);
  return success();
}

LogicalResult DropoutGradOp::lowerToKernels(KernelLowering &l) {
  Value mask = l.recall(getOutput());
  if (!mask)
    return emitOpError("has no mask: its graph.dropout was not lowered in this step");
  Value dx = l.newBuffer(getResult());
  l.emit(getLoc(), KernelKind::DropoutGrad, {mask, l.buffer(getGrad())}, {dx}, rt::NoAttrs{});
  return success();
}

// Dropout is the identity when evaluating.
Value DropoutOp::buildStepForm(OpBuilder &, bool training) {
  return training ? Value() : getInput();
}
