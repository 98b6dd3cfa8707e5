// graph.conv2d and its two gradients. Each op's verifier, gradient rule, batch sharding and
// lowering (those it has) are here; see docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

/// The window's extent on one axis: its `k` taps `d` apart.
static int64_t windowExtent(int64_t k, int64_t d) { return (k - 1) * d + 1; }

/// The [N, OH, OW, F] result of convolving an [N, H, W, C] input with a [KH, KW, C / G, F]
/// kernel in G groups, after checking the ranks, channels and attributes.
static FailureOr<SmallVector<int64_t>> convOutput(Operation *op, Value input, Value kernel,
                                                  ArrayAttr stridesAttr, StringRef padding,
                                                  int64_t groups, ArrayAttr dilationsAttr,
                                                  StringRef inputName = "input") {
  if (failed(checkRank(op, input, 4, inputName)) || failed(checkRank(op, kernel, 4, "kernel")))
    return failure();
  if (padding != "valid" && padding != "same")
    return op->emitOpError() << "expects padding \"valid\" or \"same\", found \"" << padding
                             << "\"";
  int64_t strides[2], dilations[2];
  if (failed(pairAttr(op, stridesAttr, "strides", strides)) ||
      failed(pairAttr(op, dilationsAttr, "dilations", dilations)))
    return failure();
  auto in = tensorType(input).getShape();
  auto k = tensorType(kernel).getShape();
  if (groups < 1)
    return op->emitOpError() << "expects groups of at least 1, found " << groups;
  if (in[3] % groups != 0 || k[3] % groups != 0)
    return op->emitOpError() << groups << " groups do not divide the " << inputName << "'s "
                             << in[3] << " channels and the kernel's " << k[3] << " filters";
  if (in[3] / groups != k[2]) {
    InFlightDiagnostic d = op->emitOpError() << inputName << " has " << in[3]
                                             << " channels but the kernel expects " << k[2];
    if (groups > 1)
      d << " per group of " << groups;
    return d;
  }
  SmallVector<int64_t> out{in[0], 0, 0, k[3]};
  for (int i = 0; i < 2; ++i) {
    // A dilated window no image here could hold (and whose extent would overflow).
    if (k[i] > 1 && dilations[i] > in[1 + i])
      return op->emitOpError() << "dilation " << dilations[i] << " spreads the kernel of " << k[0]
                               << "x" << k[1] << " beyond an " << inputName << " of " << in[1]
                               << "x" << in[2];
    out[1 + i] =
        windowAxis(in[1 + i], windowExtent(k[i], dilations[i]), strides[i], padding == "same").out;
    if (out[1 + i] < 1)
      return op->emitOpError() << "kernel of " << k[0] << "x" << k[1] << " does not fit an "
                               << inputName << " of " << in[1] << "x" << in[2]
                               << " without padding";
  }
  return out;
}

/// The geometry of a convolution of `input` (NHWC) by `kernel` (HWIO), as the attributes of
/// any of the convolution kernels.
template <typename Attrs>
static Attrs convGeometry(Type input, Type kernel, ArrayAttr strides, StringRef padding,
                          int64_t groups, ArrayAttr dilations) {
  auto in = cast<RankedTensorType>(input).getShape();
  auto k = cast<RankedTensorType>(kernel).getShape();
  Attrs a;
  a.stride_h = at(strides, 0), a.stride_w = at(strides, 1);
  a.groups = groups;
  a.dilation_h = at(dilations, 0), a.dilation_w = at(dilations, 1);
  WindowAxis h = windowAxis(in[1], windowExtent(k[0], a.dilation_h), a.stride_h, padding == "same");
  WindowAxis w = windowAxis(in[2], windowExtent(k[1], a.dilation_w), a.stride_w, padding == "same");
  a.pad_top = h.padBefore, a.pad_bottom = h.padAfter;
  a.pad_left = w.padBefore, a.pad_right = w.padAfter;
  return a;
}

LogicalResult Conv2DOp::verify() {
  if (failed(checkFactors(*this, getInput(), "input", getKernel(), "kernel")))
    return failure();
  FailureOr<SmallVector<int64_t>> out = convOutput(*this, getInput(), getKernel(), getStrides(),
                                                   getPadding(), getGroups(), getDilations());
  if (failed(out))
    return failure();
  if (Value bias = getBias()) {
    if (failed(checkRank(*this, bias, 1, "bias")))
      return failure();
    if (tensorType(bias).getDimSize(0) != (*out)[3])
      return emitOpError() << "bias has " << tensorType(bias).getDimSize(0)
                           << " elements but the kernel has " << (*out)[3] << " filters";
  }
  return checkResultShape(*this, *out);
}

LogicalResult Conv2DGradInputOp::verify() {
  if (failed(checkFactors(*this, getGrad(), "grad", getKernel(), "kernel")))
    return failure();
  // The result is the forward input: convolving it must give the shape of `grad`.
  return checkGradShape(*this, getGrad(),
                        convOutput(*this, getResult(), getKernel(), getStrides(), getPadding(),
                                   getGroups(), getDilations(), "result"),
                        " for a result of ", getResult().getType());
}

LogicalResult Conv2DGradFilterOp::verify() {
  if (failed(checkFactors(*this, getInput(), "input", getGrad(), "grad")))
    return failure();
  return checkGradShape(*this, getGrad(),
                        convOutput(*this, getInput(), getResult(), getStrides(), getPadding(),
                                   getGroups(), getDilations()),
                        " for a result of ", getResult().getType());
}

LogicalResult Conv2DOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,
                                      SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  Value dz = activationGrad(b, loc, getActivation(), getResult(), resultGrads[0]);
  operandGrads.assign(getNumOperands(), Value());
  if (wanted[0])
    operandGrads[0] =
        b.create<Conv2DGradInputOp>(loc, getInput().getType(), dz, getKernel(), getStridesAttr(),
                                    getPaddingAttr(), getGroupsAttr(), getDilationsAttr());
  if (wanted[1])
    operandGrads[1] =
        b.create<Conv2DGradFilterOp>(loc, getKernel().getType(), getInput(), dz, getStridesAttr(),
                                     getPaddingAttr(), getGroupsAttr(), getDilationsAttr());
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

LogicalResult Conv2DOp::lowerToKernels(KernelLowering &l) {
  auto attrs =
      convGeometry<rt::Conv2dAttrs>(getInput().getType(), getKernel().getType(), getStrides(),
                                    getPadding(), getGroups(), getDilations());
  attrs.activation = runtimeActivation(getActivation());
  l.kernel(*this, KernelKind::Conv2d, attrs);
  return success();
}

LogicalResult Conv2DGradInputOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Conv2dGradInput,
           convGeometry<rt::ConvAttrs>(getType(), getKernel().getType(), getStrides(), getPadding(),
                                       getGroups(), getDilations()));
  return success();
}

LogicalResult Conv2DGradFilterOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Conv2dGradFilter,
           convGeometry<rt::ConvAttrs>(getInput().getType(), getType(), getStrides(), getPadding(),
                                       getGroups(), getDilations()));
  return success();
}

/// Under mixed precision a convolution reads its two factors in bf16, unless `out` (its output,
/// or the gradient with the output's shape) has fewer than `minRows` rows (batch x height x
/// width): then the casts cost more than bf16 saves.
static SmallVector<unsigned> convFactors(Value out, int64_t minRows) {
  auto shape = tensorType(out).getShape();
  if (shape[0] * shape[1] * shape[2] < minRows)
    return {};
  return {0, 1};
}

SmallVector<unsigned> Conv2DOp::getLowPrecisionOperands(int64_t minRows) {
  return convFactors(getResult(), minRows);
}

SmallVector<unsigned> Conv2DGradInputOp::getLowPrecisionOperands(int64_t minRows) {
  return convFactors(getOperand(0), minRows); // dy
}

SmallVector<unsigned> Conv2DGradFilterOp::getLowPrecisionOperands(int64_t minRows) {
  return convFactors(getOperand(1), minRows); // dy
}
