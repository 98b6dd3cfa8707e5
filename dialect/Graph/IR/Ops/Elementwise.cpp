// graph.add, graph.bias_add, graph.cast, graph.fill and graph.reduce_rows. Each op's verifier,
// gradient rule, batch sharding and lowering (those it has) are here; see docs/architecture.md,
// "Adding an op".
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

LogicalResult BiasAddOp::verify() {
  auto in = tensorType(getInput()), bias = tensorType(getBias());
  if (bias.getRank() < 1 || bias.getRank() >= in.getRank() ||
      in.getShape().take_back(bias.getRank()) != bias.getShape())
    return emitOpError() << "adds a bias of " << bias << " to " << in
                         << ": the bias must have the shape of the input's trailing axes, the "
                            "batch axis left out";
  if (getType() != in)
    return emitOpError() << "result should be " << in << ", found " << getType();
  return success();
}

// dx = dy; db = the sum of dy over the leading axes: dy seen as rows of the bias's shape.
LogicalResult BiasAddOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,
                                       SmallVectorImpl<Value> &operandGrads) {
  Value dy = resultGrads[0];
  operandGrads.assign({wanted[0] ? dy : Value(), Value()});
  if (!wanted[1])
    return success();
  auto bias = tensorType(getBias()), in = tensorType(getInput());
  if (bias.getRank() + 1 != in.getRank()) {
    SmallVector<int64_t> rows{in.getNumElements() / bias.getNumElements()};
    rows.append(bias.getShape().begin(), bias.getShape().end());
    dy = b.create<ReshapeOp>(getLoc(), RankedTensorType::get(rows, in.getElementType()), dy);
  }
  operandGrads[1] = b.create<ReduceRowsOp>(getLoc(), bias, dy);
  return success();
}

// Row-wise in the input; a bias carrying the batch would be added to other replicas' samples.
LogicalResult BiasAddOp::getResultSharding(ArrayRef<bool> batched,
                                           SmallVectorImpl<BatchSharding> &results) {
  if (batched[1])
    return failure();
  results.assign(1, BatchSharding::Rows);
  return success();
}

LogicalResult BiasAddOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::AddRows);
  return success();
}
