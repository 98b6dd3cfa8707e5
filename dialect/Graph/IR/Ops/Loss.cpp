// graph.softmax_cross_entropy, its gradient, and graph.count_correct; graph.mean_squared_error
// and its gradient. Each op's verifier,
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

/// Label smoothing, when given, lies in [0, 1].
static LogicalResult verifySmoothing(Operation *op, std::optional<APFloat> smoothing) {
  if (smoothing) {
    const double s = smoothing->convertToDouble();
    if (!(s >= 0 && s <= 1))
      return op->emitOpError() << "label_smoothing must lie in [0, 1], found " << s;
  }
  return success();
}

/// The kernels' attributes of an op with an optional label smoothing (0 without one).
static rt::XentAttrs xentAttrs(std::optional<APFloat> smoothing) {
  return rt::XentAttrs{smoothing ? smoothing->convertToDouble() : 0.0};
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  if (failed(verifySmoothing(*this, getLabelSmoothing())))
    return failure();
  return verifyLogitsAndLabels(*this, getLogits(), getLabels());
}

LogicalResult CountCorrectOp::verify() {
  return verifyLogitsAndLabels(*this, getLogits(), getLabels());
}

LogicalResult SoftmaxCrossEntropyGradOp::verify() {
  if (failed(verifySmoothing(*this, getLabelSmoothing())) ||
      failed(verifyLogitsAndLabels(*this, getLogits(), getLabels())))
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
    operandGrads[0] =
        b.create<SoftmaxCrossEntropyGradOp>(getLoc(), getLogits().getType(), getLogits(),
                                            getLabels(), resultGrads[0], getLabelSmoothingAttr());
  // Labels are integers: they have no gradient.
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::SoftmaxXent, xentAttrs(getLabelSmoothing()));
  return success();
}

LogicalResult SoftmaxCrossEntropyGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::SoftmaxXentGrad, xentAttrs(getLabelSmoothing()));
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

// ---- mean squared error -------------------------------------------------------------------

/// Common checks of ops taking [N, K] predictions and targets of their shape.
static LogicalResult verifyPredictionsAndTargets(Operation *op, Value predictions, Value targets) {
  if (failed(checkRank(op, predictions, 2, "predictions")))
    return failure();
  if (predictions.getType() != targets.getType())
    return op->emitOpError() << "has predictions " << predictions.getType() << " but targets "
                             << targets.getType() << ": each prediction needs its target";
  return success();
}

LogicalResult MeanSquaredErrorOp::verify() {
  return verifyPredictionsAndTargets(*this, getPrediction(), getTarget());
}

LogicalResult MeanSquaredErrorGradOp::verify() {
  if (failed(verifyPredictionsAndTargets(*this, getPrediction(), getTarget())))
    return failure();
  if (getType() != getPrediction().getType())
    return emitOpError() << "result type should be " << getPrediction().getType() << ", found "
                         << getType();
  return success();
}

LogicalResult MeanSquaredErrorOp::buildGradient(OpBuilder &b, ValueRange resultGrads,
                                                ArrayRef<bool> wanted,
                                                SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (wanted[0])
    operandGrads[0] = b.create<MeanSquaredErrorGradOp>(
        getLoc(), getPrediction().getType(), getPrediction(), getTarget(), resultGrads[0]);
  // The targets are data the runtime feeds: nothing trains them.
  return success();
}

LogicalResult MeanSquaredErrorOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::SquaredError);
  return success();
}

LogicalResult MeanSquaredErrorGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::SquaredErrorGrad);
  return success();
}

// A regression has no correct predictions to count.
Value MeanSquaredErrorOp::buildCorrectCount(OpBuilder &) { return Value(); }

Value MeanSquaredErrorOp::getTargets() { return getTarget(); }

Value MeanSquaredErrorOp::getPredictions() { return getPrediction(); }

// ---- binary cross-entropy -------------------------------------------------------------------

LogicalResult SigmoidCrossEntropyOp::verify() {
  return verifyPredictionsAndTargets(*this, getLogits(), getTargets());
}

LogicalResult CountBinaryCorrectOp::verify() {
  return verifyPredictionsAndTargets(*this, getLogits(), getTargets());
}

LogicalResult SigmoidCrossEntropyGradOp::verify() {
  if (failed(verifyPredictionsAndTargets(*this, getLogits(), getTargets())))
    return failure();
  if (getType() != getLogits().getType())
    return emitOpError() << "result type should be " << getLogits().getType() << ", found "
                         << getType();
  return success();
}

LogicalResult SigmoidCrossEntropyOp::buildGradient(OpBuilder &b, ValueRange resultGrads,
                                                   ArrayRef<bool> wanted,
                                                   SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (wanted[0])
    operandGrads[0] = b.create<SigmoidCrossEntropyGradOp>(
        getLoc(), getLogits().getType(), getLogits(), getTargets(), resultGrads[0]);
  // The targets are data the runtime feeds: nothing trains them.
  return success();
}

LogicalResult SigmoidCrossEntropyOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::SigmoidXent);
  return success();
}

LogicalResult SigmoidCrossEntropyGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::SigmoidXentGrad);
  return success();
}

LogicalResult CountBinaryCorrectOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::CountBinaryCorrect);
  return success();
}

// The step's `correct` output: the rows' right yes/no answers.
Value SigmoidCrossEntropyOp::buildCorrectCount(OpBuilder &b) {
  return b.create<CountBinaryCorrectOp>(getLoc(), getResult().getType(), getLogits(), getTargets());
}

Value SigmoidCrossEntropyOp::getPredictions() { return getLogits(); }
