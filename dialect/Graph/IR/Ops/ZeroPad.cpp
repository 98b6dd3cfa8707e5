// graph.zero_pad2d and its gradient. Each op's verifier, gradient rule, batch sharding and
// lowering (those it has) are here; see docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

//===----------------------------------------------------------------------===//
// Padding, average pooling, batch normalisation, LSTM
//===----------------------------------------------------------------------===//

/// The padded shape of an [N, H, W, C] tensor under `padding` = [top, bottom, left, right].
static FailureOr<SmallVector<int64_t>> paddedShape(Operation *op, Value input, ArrayAttr padding,
                                                   StringRef inputName) {
  if (failed(checkRank(op, input, 4, inputName)))
    return failure();
  if (padding.size() != 4)
    return op->emitOpError() << "expects 'padding' to be [top, bottom, left, right], found "
                             << padding;
  int64_t pad[4];
  for (int i = 0; i < 4; ++i) {
    auto v = dyn_cast<IntegerAttr>(padding[i]);
    if (!v || v.getInt() < 0)
      return op->emitOpError() << "expects 'padding' to hold non-negative integers, found "
                               << padding;
    pad[i] = v.getInt();
  }
  SmallVector<int64_t> out(tensorType(input).getShape());
  out[1] += pad[0] + pad[1];
  out[2] += pad[2] + pad[3];
  return out;
}

static rt::PadAttrs padding(ArrayAttr p) {
  rt::PadAttrs a;
  a.pad_top = at(p, 0), a.pad_bottom = at(p, 1), a.pad_left = at(p, 2), a.pad_right = at(p, 3);
  return a;
}

LogicalResult ZeroPad2DOp::verify() {
  FailureOr<SmallVector<int64_t>> out = paddedShape(*this, getInput(), getPadding(), "input");
  if (failed(out))
    return failure();
  return checkResultShape(*this, *out);
}

LogicalResult ZeroPad2DGradOp::verify() {
  return checkGradShape(*this, getGrad(), paddedShape(*this, getResult(), getPadding(), "result"),
                        " (the padded shape)");
}

LogicalResult ZeroPad2DOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                         SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, b.create<ZeroPad2DGradOp>(getLoc(), getInput().getType(), resultGrads[0],
                                                   getPaddingAttr()));
  return success();
}

LogicalResult ZeroPad2DOp::lowerToKernels(KernelLowering &l) {
  rt::PadAttrs attrs = padding(getPadding());
  attrs.lowest = getLowest();
  l.kernel(*this, KernelKind::ZeroPad2d, attrs);
  return success();
}

LogicalResult ZeroPad2DGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::ZeroPad2dGrad, padding(getPadding()));
  return success();
}
