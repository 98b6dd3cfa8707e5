// Gradient rules of the graph ops (GradientOpInterface). Each rule builds, at the builder's
// insertion point, the ops giving the operand gradients from the result gradients.
#include "dialect/Graph/IR/GraphDialect.h"

using namespace mlir;
using namespace dp::graph;

/// Gradient through an activation given its forward output `y` and incoming gradient `dy`.
static Value activationGrad(OpBuilder &b, Location loc, Activation act, Value y, Value dy) {
  if (act == Activation::none)
    return dy;
  return b.create<ActivationGradOp>(loc, dy.getType(), y, dy,
                                    ActivationAttr::get(b.getContext(), act));
}

LogicalResult DenseOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,
                                     SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  Value dz = activationGrad(b, loc, getActivation(), getResult(), resultGrads[0]);
  operandGrads.assign(getNumOperands(), Value());
  // y = x.W + b:  dx = dz.W^T,  dW = x^T.dz,  db = sum over rows of dz.
  if (wanted[0])
    operandGrads[0] = b.create<MatMulOp>(loc, getInput().getType(), dz, getKernel(),
                                         /*transpose_lhs=*/false, /*transpose_rhs=*/true);
  if (wanted[1])
    operandGrads[1] = b.create<MatMulOp>(loc, getKernel().getType(), getInput(), dz,
                                         /*transpose_lhs=*/true, /*transpose_rhs=*/false);
  if (getBias() && wanted[2])
    operandGrads[2] = b.create<ReduceRowsOp>(loc, getBias().getType(), dz);
  return success();
}

template <typename OpT>
static LogicalResult activationOpGradient(OpT op, OpBuilder &b, ValueRange resultGrads,
                                          SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(
      1, activationGrad(b, op.getLoc(), OpT::kActivation, op.getResult(), resultGrads[0]));
  return success();
}

#define DP_ACTIVATION_GRADIENT(OpT)                                                                \
  LogicalResult OpT::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,   \
                                   SmallVectorImpl<Value> &operandGrads) {                        \
    return activationOpGradient(*this, b, resultGrads, operandGrads);                             \
  }
DP_ACTIVATION_GRADIENT(ReluOp)
DP_ACTIVATION_GRADIENT(SigmoidOp)
DP_ACTIVATION_GRADIENT(TanhOp)
DP_ACTIVATION_GRADIENT(SoftmaxOp)
#undef DP_ACTIVATION_GRADIENT

/// Reshape-like ops: the gradient is the incoming gradient under the operand's shape.
static LogicalResult reshapeGradient(Operation *op, OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  Type inType = op->getOperand(0).getType();
  operandGrads.assign(1, b.create<ReshapeOp>(op->getLoc(), inType, resultGrads[0]));
  return success();
}

LogicalResult ReshapeOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                       SmallVectorImpl<Value> &operandGrads) {
  return reshapeGradient(*this, b, resultGrads, operandGrads);
}

LogicalResult FlattenOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                       SmallVectorImpl<Value> &operandGrads) {
  return reshapeGradient(*this, b, resultGrads, operandGrads);
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

LogicalResult AddOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,
                                   SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign({wanted[0] ? resultGrads[0] : Value(), wanted[1] ? resultGrads[0] : Value()});
  return success();
}

LogicalResult Conv2DOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,
                                      SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  Value dz = activationGrad(b, loc, getActivation(), getResult(), resultGrads[0]);
  operandGrads.assign(getNumOperands(), Value());
  if (wanted[0])
    operandGrads[0] = b.create<Conv2DGradInputOp>(loc, getInput().getType(), dz, getKernel(),
                                                  getStridesAttr(), getPaddingAttr());
  if (wanted[1])
    operandGrads[1] = b.create<Conv2DGradFilterOp>(loc, getKernel().getType(), getInput(), dz,
                                                   getStridesAttr(), getPaddingAttr());
  if (getBias() && wanted[2]) {
    // db = sum of dz over N, H and W: the NHWC gradient seen as [N*H*W, F] rows (a free view).
    auto dzType = cast<RankedTensorType>(dz.getType());
    int64_t filters = dzType.getShape().back();
    auto rows = RankedTensorType::get({dzType.getNumElements() / filters, filters},
                                      dzType.getElementType());
    Value flat = b.create<ReshapeOp>(loc, rows, dz);
    operandGrads[2] = b.create<ReduceRowsOp>(loc, getBias().getType(), flat);
  }
  return success();
}

LogicalResult MaxPool2DOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                         SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, b.create<MaxPool2DGradOp>(getLoc(), getInput().getType(), getInput(),
                                                   resultGrads[0], getWindowAttr(),
                                                   getStridesAttr()));
  return success();
}

LogicalResult DropoutOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                       SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, b.create<DropoutGradOp>(getLoc(), getType(), getResult(),
                                                 resultGrads[0], getRateAttr()));
  return success();
}

LogicalResult ZeroPad2DOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                         SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, b.create<ZeroPad2DGradOp>(getLoc(), getInput().getType(),
                                                   resultGrads[0], getPaddingAttr()));
  return success();
}

LogicalResult AvgPool2DOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                         SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, b.create<AvgPool2DGradOp>(getLoc(), getInput().getType(),
                                                   resultGrads[0], getWindowAttr(),
                                                   getStridesAttr()));
  return success();
}

LogicalResult GlobalAvgPool2DOp::buildGradient(OpBuilder &b, ValueRange resultGrads,
                                               ArrayRef<bool>,
                                               SmallVectorImpl<Value> &operandGrads) {
  // The global mean is an average pool whose window is the whole image: [N, C] is [N, 1, 1, C].
  Location loc = getLoc();
  auto in = cast<RankedTensorType>(getInput().getType());
  auto pooled = RankedTensorType::get({in.getDimSize(0), 1, 1, in.getDimSize(3)},
                                      in.getElementType());
  Value dy = b.create<ReshapeOp>(loc, pooled, resultGrads[0]);
  ArrayAttr window = b.getI64ArrayAttr({in.getDimSize(1), in.getDimSize(2)});
  operandGrads.assign(1, b.create<AvgPool2DGradOp>(loc, in, dy, window, window));
  return success();
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

LogicalResult LstmOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,
                                    SmallVectorImpl<Value> &operandGrads) {
  auto grad = b.create<LstmGradOp>(getLoc(), getOperandTypes(), getInput(), getKernel(),
                                   getRecurrentKernel(), getBias(), getResult(), resultGrads[0],
                                   getReturnSequencesAttr());
  operandGrads.clear();
  for (auto [result, want] : llvm::zip(grad.getResults(), wanted))
    operandGrads.push_back(want ? result : Value());
  return success();
}
