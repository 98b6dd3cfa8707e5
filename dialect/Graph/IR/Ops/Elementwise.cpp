// graph.add, graph.cast, graph.fill and graph.reduce_rows. Each op's verifier, gradient rule,
// batch sharding and lowering (those it has) are here; see docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

LogicalResult CastOp::verify() {
  auto in = tensorType(getInput()), out = tensorType(getResult());
  if (in.getShape() != out.getShape())
    return emitOpError() << "changes the shape " << in << " to " << out << ": a cast keeps it";
  if (in.getElementType() == out.getElementType())
    return emitOpError() << "casts " << in.getElementType()
                         << " to itself: it must convert f32 to bf16 or back";
  return success();
}

LogicalResult ReduceRowsOp::verify() {
  auto in = tensorType(getInput());
  if (in.getRank() < 1)
    return emitOpError("expects an input with a batch axis");
  return checkResultShape(*this, in.getShape().drop_front());
}

LogicalResult AddOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,
                                   SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign({wanted[0] ? resultGrads[0] : Value(), wanted[1] ? resultGrads[0] : Value()});
  return success();
}

LogicalResult AddOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Add);
  return success();
}

LogicalResult CastOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Cast);
  return success();
}

LogicalResult FillOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Fill, rt::FillAttrs{getValue().convertToDouble()});
  return success();
}

LogicalResult ReduceRowsOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::ReduceRows);
  return success();
}
