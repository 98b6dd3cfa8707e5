// graph.gather (an embedding lookup) and graph.gather_grad (its table's gradient, a
// scatter-add). Each op's verifier, gradient rule, batch sharding and lowering (those it has)
// are here; see docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

/// The shape of a gather of a [V, D] table by `indices`: the indices' shape and D.
static SmallVector<int64_t> gatheredShape(RankedTensorType table, RankedTensorType indices) {
  SmallVector<int64_t> shape(indices.getShape());
  shape.push_back(table.getDimSize(1));
  return shape;
}

LogicalResult GatherOp::verify() {
  if (failed(checkRank(*this, getTable(), 2, "a table")))
    return failure();
  auto table = tensorType(getTable()), indices = tensorType(getIndices());
  if (indices.getRank() < 1)
    return emitOpError("expects indices with a batch axis, found a scalar");
  const SmallVector<int64_t> shape = gatheredShape(table, indices);
  if (tensorType(getResult()).getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "result should be "
                         << RankedTensorType::get(shape, table.getElementType())
                         << " (the indices' shape and the table's row), found " << getType();
  return success();
}

LogicalResult GatherGradOp::verify() {
  if (failed(checkRank(*this, getResult(), 2, "a table gradient")))
    return failure();
  auto indices = tensorType(getIndices());
  if (indices.getRank() < 1)
    return emitOpError("expects indices with a batch axis, found a scalar");
  const SmallVector<int64_t> shape = gatheredShape(tensorType(getResult()), indices);
  return checkGradShape(*this, getGrad(), FailureOr<SmallVector<int64_t>>(shape),
                        " (the indices' shape and the table's row) for a table gradient ",
                        getType());
}

LogicalResult GatherOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,
                                      SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (wanted[0])
    operandGrads[0] =
        b.create<GatherGradOp>(getLoc(), getTable().getType(), resultGrads[0], getIndices());
  // The indices are integers: they have no gradient.
  return success();
}

// Rows where the indices carry the batch (the table is the same on every replica); a table
// that carries the batch is not an embedding.
LogicalResult GatherOp::getResultSharding(ArrayRef<bool> batched,
                                          SmallVectorImpl<BatchSharding> &results) {
  if (batched[0])
    return failure();
  results.assign(1, batched[1] ? BatchSharding::Rows : BatchSharding::None);
  return success();
}

LogicalResult GatherOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Gather);
  return success();
}

LogicalResult GatherGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::GatherGrad);
  return success();
}
