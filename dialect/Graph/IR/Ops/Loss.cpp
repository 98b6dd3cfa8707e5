// graph.softmax_cross_entropy, its gradient, and graph.count_correct. Each op's verifier,
// gradient rule, batch sharding and lowering (those it has) are here; see docs/architecture.md,
// "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

/// Common checks of ops taking [N, C] logits and [N] labels.
static LogicalResult verifyLogitsAndLabels(Operation *op, Value logits, Value labels) {
  if (failed(checkRank(op, logits, 2, "logits")) || failed(checkRank(op, labels, 1, "labels")))
    return failure();
  int64_t n = tensorType(logits).getDimSize(0), m = tensorType(labels).getDimSize(0);
  if (n != m)
    return op->emitOpError() << "has " << n << " rows of logits but " << m << " labels";
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  return verifyLogitsAndLabels(*this, getLogits(), getLabels());
}

LogicalResult CountCorrectOp::verify() {
  return verifyLogitsAndLabels(*this, getLogits(), getLabels());
}

LogicalResult SoftmaxCrossEntropyGradOp::verify() {
  if (failed(verifyLogitsAndLabels(*this, getLogits(), getLabels())))
    return failure();
  if (getType() != getLogits().getType())
    return emitOpError() << "result type should be " << getLogits().getType() << ", found "
                         << getType();
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::buildGradient(OpBuilder &b, ValueRange resultGrads,
                                                   ArrayRef<bool> wanted,
                                                   SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (wanted[0])
    operandGrads[0] = b.create<SoftmaxCrossEntropyGradOp>(getLoc(), getLogits().getType(),
                                                          getLogits(), getLabels(), resultGrads[0]);
  // Labels are integers: they have no gradient.
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::SoftmaxXent);
  return success();
}

LogicalResult SoftmaxCrossEntropyGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::SoftmaxXentGrad);
  return success();
}

LogicalResult CountCorrectOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::CountCorrect);
  return success();
}

// The step's `correct` output: the rows whose largest logit is the label.
Value SoftmaxCrossEntropyOp::buildCorrectCount(OpBuilder &b) {
  return b.create<CountCorrectOp>(getLoc(), getResult().getType(), getLogits(), getLabels());
}

Value SoftmaxCrossEntropyOp::getTargets() { return getLabels(); }

Value SoftmaxCrossEntropyOp::getPredictions() { return getLogits(); }
