// Batch normalisation: graph.batch_norm, the train-step ops it becomes (batch_moments,
// batch_norm_train, moving_stats_update) and its gradients. Each op's verifier, gradient rule,
// batch sharding and lowering (those it has) are here; see docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

/// Checks that `stats` is the [2, C] output of graph.batch_moments.
static LogicalResult checkStats(Operation *op, Value stats, int64_t channels) {
  auto type = tensorType(stats);
  if (type.getShape() != ArrayRef<int64_t>{2, channels})
    return op->emitOpError() << "expects stats of shape [2, " << channels
                             << "] (mean and mean of squares), found " << type;
  return success();
}

static rt::EpsilonAttrs epsilon(APFloat e) { return {e.convertToDouble()}; }

/// The layer name of a batch normalisation: the prefix of its gamma's name.
static std::string layerOf(Value gamma) {
  if (auto param = gamma.getDefiningOp<ParamOp>())
    return param.getName().rsplit('.').first.str();
  return "batch_norm";
}

LogicalResult BatchNormOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c) || failed(checkChannels(*this, getGamma(), *c, "gamma")) ||
      failed(checkChannels(*this, getBeta(), *c, "beta")) ||
      failed(checkChannels(*this, getMovingMean(), *c, "moving_mean")) ||
      failed(checkChannels(*this, getMovingVar(), *c, "moving_var")) ||
      failed(checkEpsilon(*this, getEpsilon().convertToDouble())))
    return failure();
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError() << "expects a momentum in [0, 1], found " << momentum;
  return checkResultShape(*this, tensorType(getInput()).getShape());
}

LogicalResult BatchMomentsOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c))
    return failure();
  return checkResultShape(*this, {2, *c});
}

LogicalResult BatchNormTrainOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c) || failed(checkStats(*this, getStats(), *c)) ||
      failed(checkChannels(*this, getGamma(), *c, "gamma")) ||
      failed(checkChannels(*this, getBeta(), *c, "beta")))
    return failure();
  return checkEpsilon(*this, getEpsilon().convertToDouble());
}

LogicalResult MovingStatsUpdateOp::verify() {
  int64_t c = tensorType(getMovingMean()).getNumElements();
  if (failed(checkChannels(*this, getMovingMean(), c, "moving_mean")) ||
      failed(checkStats(*this, getStats(), c)))
    return failure();
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError() << "expects a momentum in [0, 1], found " << momentum;
  return success();
}

LogicalResult BatchNormGradParamsOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c) || failed(checkStats(*this, getStats(), *c)) ||
      failed(checkChannels(*this, getGammaGrad(), *c, "gamma_grad")) ||
      failed(checkChannels(*this, getBetaGrad(), *c, "beta_grad")))
    return failure();
  if (getGrad().getType() != getInput().getType())
    return emitOpError() << "expects grad of the input's type " << getInput().getType()
                         << ", found " << getGrad().getType();
  return checkEpsilon(*this, getEpsilon().convertToDouble());
}

LogicalResult BatchNormGradInputOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c) || failed(checkStats(*this, getStats(), *c)) ||
      failed(checkChannels(*this, getGamma(), *c, "gamma")) ||
      failed(checkChannels(*this, getGammaGrad(), *c, "gamma_grad")) ||
      failed(checkChannels(*this, getBetaGrad(), *c, "beta_grad")))
    return failure();
  return checkEpsilon(*this, getEpsilon().convertToDouble());
}

LogicalResult BatchNormTrainOp::buildGradient(OpBuilder &b, ValueRange resultGrads,
                                              ArrayRef<bool> wanted,
                                              SmallVectorImpl<Value> &operandGrads) {
  // The statistics come from graph.batch_moments of the input, which autodiff does not
  // differentiate: the input gradient below includes their dependence on it.
  Location loc = getLoc();
  Type channels = getGamma().getType();
  auto params = b.create<BatchNormGradParamsOp>(loc, TypeRange{channels, channels}, getInput(),
                                                getStats(), resultGrads[0], getEpsilonAttr());
  operandGrads.assign(getNumOperands(), Value());
  if (wanted[0])
    operandGrads[0] = b.create<BatchNormGradInputOp>(
        loc, getInput().getType(), getInput(), getStats(), getGamma(), params.getGammaGrad(),
        params.getBetaGrad(), resultGrads[0], getEpsilonAttr());
  if (wanted[2])
    operandGrads[2] = params.getGammaGrad();
  if (wanted[3])
    operandGrads[3] = params.getBetaGrad();
  return success();
}

LogicalResult BatchNormOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::BatchNormInfer, epsilon(getEpsilon()));
  return success();
}

LogicalResult BatchMomentsOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::BatchMoments);
  return success();
}

LogicalResult BatchNormTrainOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::BatchNormTrain, epsilon(getEpsilon()));
  return success();
}

LogicalResult BatchNormGradParamsOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::BatchNormGradParams, epsilon(getEpsilon()));
  return success();
}

LogicalResult BatchNormGradInputOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::BatchNormGradInput, epsilon(getEpsilon()));
  return success();
}

// The moving statistics are persistent: updated in place.
LogicalResult MovingStatsUpdateOp::lowerToKernels(KernelLowering &l) {
  l.emit(getLoc(), KernelKind::MovingStatsUpdate, {l.buffer(getStats())},
         {l.buffer(getMovingMean()), l.buffer(getMovingVar())},
         rt::MovingStatsAttrs{getMomentum().convertToDouble()});
  return success();
}

bool BatchMomentsOp::isGlobalStatistic(unsigned) { return true; }

std::string BatchMomentsOp::getStatisticName(unsigned) {
  for (Operation *user : getResult().getUsers())
    if (auto train = dyn_cast<BatchNormTrainOp>(user))
      return layerOf(train.getGamma()) + ".batch_stats";
  return "batch_norm.batch_stats";
}

bool BatchNormGradParamsOp::isGlobalStatistic(unsigned) { return true; }

std::string BatchNormGradParamsOp::getStatisticName(unsigned result) {
  return result == 0 ? "batch_norm.gamma" : "batch_norm.beta";
}

// In the train step batch normalisation normalises with the batch's statistics and moves the
// moving ones towards them; the eval step keeps graph.batch_norm (the moving statistics).
Value BatchNormOp::buildStepForm(OpBuilder &b, bool training) {
  if (!training)
    return Value();
  Location loc = getLoc();
  auto x = tensorType(getInput());
  auto statsType = RankedTensorType::get({2, x.getShape().back()}, x.getElementType());
  Value stats = b.create<BatchMomentsOp>(loc, statsType, getInput());
  Value y = b.create<BatchNormTrainOp>(loc, x, getInput(), stats, getGamma(), getBeta(),
                                       getEpsilonAttr());
  b.create<MovingStatsUpdateOp>(loc, getMovingMean(), getMovingVar(), stats, getMomentumAttr());
  return y;
}
