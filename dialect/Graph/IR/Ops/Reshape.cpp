// graph.reshape and graph.flatten, which lower to views of their operand's buffer. Each op's
// verifier, gradient rule, batch sharding and lowering (those it has) are here; see
// docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

/// Reshape-like ops: the gradient is the incoming gradient under the operand's shape.
static LogicalResult reshapeGradient(Operation *op, OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  Type inType = op->getOperand(0).getType();
  operandGrads.assign(1, b.create<ReshapeOp>(op->getLoc(), inType, resultGrads[0]));
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto in = tensorType(getInput());
  auto out = tensorType(getResult());
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << in << " (" << in.getNumElements()
                         << " elements) to " << out << " (" << out.getNumElements() << " elements)";
  return success();
}

LogicalResult FlattenOp::verify() {
  auto in = tensorType(getInput());
  if (in.getRank() < 1)
    return emitOpError("expects an input with a batch axis");
  // The product of the non-batch axes; not the element count over the batch, which may be 0.
  int64_t features = 1;
  for (int64_t d : in.getShape().drop_front())
    features = ShapedType::isDynamic(d) || ShapedType::isDynamic(features) ? ShapedType::kDynamic
                                                                           : features * d;
  return checkResultShape(*this, {in.getDimSize(0), features});
}

LogicalResult ReshapeOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                       SmallVectorImpl<Value> &operandGrads) {
  return reshapeGradient(*this, b, resultGrads, operandGrads);
}

LogicalResult FlattenOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                       SmallVectorImpl<Value> &operandGrads) {
  return reshapeGradient(*this, b, resultGrads, operandGrads);
}

// Reshapes move no data: the result is a view of the operand's buffer.
LogicalResult ReshapeOp::lowerToKernels(KernelLowering &l) {
  l.view(getResult(), getInput());
  return success();
}

LogicalResult FlattenOp::lowerToKernels(KernelLowering &l) {
  l.view(getResult(), getInput());
  return success();
}
