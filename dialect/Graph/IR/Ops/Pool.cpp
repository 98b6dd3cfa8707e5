// The poolings (graph.max_pool2d, avg_pool2d, global_avg_pool2d) and their gradients. Each op's
// verifier, gradient rule, batch sharding and lowering (those it has) are here; see
// docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

/// The [N, OH, OW, C] result of pooling an [N, H, W, C] input.
static FailureOr<SmallVector<int64_t>> poolOutput(Operation *op, Value input, ArrayAttr windowAttr,
                                                  ArrayAttr stridesAttr) {
  if (failed(checkRank(op, input, 4, "input")))
    return failure();
  int64_t window[2], strides[2];
  if (failed(pairAttr(op, windowAttr, "window", window)) ||
      failed(pairAttr(op, stridesAttr, "strides", strides)))
    return failure();
  auto in = tensorType(input).getShape();
  SmallVector<int64_t> out{in[0], 0, 0, in[3]};
  for (int i = 0; i < 2; ++i) {
    out[1 + i] = windowAxis(in[1 + i], window[i], strides[i], /*same=*/false).out;
    if (out[1 + i] < 1)
      return op->emitOpError() << "window of " << window[0] << "x" << window[1]
                               << " does not fit an input of " << in[1] << "x" << in[2];
  }
  return out;
}

/// A pooling op: its result is the pooled `input`.
static LogicalResult verifyPool(Operation *op, Value input, ArrayAttr window, ArrayAttr strides) {
  FailureOr<SmallVector<int64_t>> out = poolOutput(op, input, window, strides);
  if (failed(out))
    return failure();
  return checkResultShape(op, *out);
}

/// A pooling gradient: `grad` has the pooled shape of `input` (the forward input's shape).
static LogicalResult verifyPoolGrad(Operation *op, Value input, Value grad, ArrayAttr window,
                                    ArrayAttr strides) {
  return checkGradShape(op, grad, poolOutput(op, input, window, strides), " (the pooled shape)");
}

static rt::PoolAttrs pool(int64_t wh, int64_t ww, int64_t sh, int64_t sw) {
  rt::PoolAttrs a;
  a.window_h = wh, a.window_w = ww, a.stride_h = sh, a.stride_w = sw;
  return a;
}

static rt::PoolAttrs pool(ArrayAttr window, ArrayAttr strides) {
  return pool(at(window, 0), at(window, 1), at(strides, 0), at(strides, 1));
}

LogicalResult MaxPool2DOp::verify() {
  return verifyPool(*this, getInput(), getWindow(), getStrides());
}

LogicalResult MaxPool2DGradOp::verify() {
  return verifyPoolGrad(*this, getInput(), getGrad(), getWindow(), getStrides());
}

LogicalResult AvgPool2DOp::verify() {
  return verifyPool(*this, getInput(), getWindow(), getStrides());
}

LogicalResult AvgPool2DGradOp::verify() {
  return verifyPoolGrad(*this, getResult(), getGrad(), getWindow(), getStrides());
}

LogicalResult GlobalAvgPool2DOp::verify() {
  if (failed(checkRank(*this, getInput(), 4, "input")))
    return failure();
  auto in = tensorType(getInput()).getShape();
  return checkResultShape(*this, {in[0], in[3]});
}

LogicalResult MaxPool2DOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                         SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1,
                      b.create<MaxPool2DGradOp>(getLoc(), getInput().getType(), getInput(),
                                                resultGrads[0], getWindowAttr(), getStridesAttr()));
  return success();
}

LogicalResult AvgPool2DOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                         SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, b.create<AvgPool2DGradOp>(getLoc(), getInput().getType(), resultGrads[0],
                                                   getWindowAttr(), getStridesAttr()));
  return success();
}

LogicalResult GlobalAvgPool2DOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                               SmallVectorImpl<Value> &operandGrads) {
  // The global mean is an average pool whose window is the whole image: [N, C] is [N, 1, 1, C].
  Location loc = getLoc();
  auto in = cast<RankedTensorType>(getInput().getType());
  auto pooled =
      RankedTensorType::get({in.getDimSize(0), 1, 1, in.getDimSize(3)}, in.getElementType());
  Value dy = b.create<ReshapeOp>(loc, pooled, resultGrads[0]);
  ArrayAttr window = b.getI64ArrayAttr({in.getDimSize(1), in.getDimSize(2)});
  operandGrads.assign(1, b.create<AvgPool2DGradOp>(loc, in, dy, window, window));
  return success();
}

LogicalResult MaxPool2DOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::MaxPool2d, pool(getWindow(), getStrides()));
  return success();
}

LogicalResult MaxPool2DGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::MaxPool2dGrad, pool(getWindow(), getStrides()));
  return success();
}

LogicalResult AvgPool2DOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::AvgPool2d, pool(getWindow(), getStrides()));
  return success();
}

LogicalResult AvgPool2DGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::AvgPool2dGrad, pool(getWindow(), getStrides()));
  return success();
}

// An average pool whose window is the whole image, writing [N, C].
LogicalResult GlobalAvgPool2DOp::lowerToKernels(KernelLowering &l) {
  auto in = cast<RankedTensorType>(getInput().getType()).getShape();
  l.kernel(*this, KernelKind::AvgPool2d, pool(in[1], in[2], in[1], in[2]));
  return success();
}
