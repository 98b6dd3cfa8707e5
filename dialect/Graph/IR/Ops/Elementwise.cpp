// graph.add, graph.bias_add, graph.mul, graph.mul_reduce, graph.cast, graph.fill and
// graph.reduce_rows. Each op's verifier,
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

/// Whether `small` broadcasts to `full`: one rank, each axis full's or 1.
static bool broadcastsTo(RankedTensorType small, RankedTensorType full) {
  if (small.getRank() != full.getRank())
    return false;
  for (int64_t k = 0; k < full.getRank(); ++k)
    if (small.getDimSize(k) != full.getDimSize(k) && small.getDimSize(k) != 1)
      return false;
  return true;
}

LogicalResult MulOp::verify() {
  auto lhs = tensorType(getLhs()), rhs = tensorType(getRhs());
  if (lhs.getRank() < 1 || !broadcastsTo(rhs, lhs))
    return emitOpError() << "multiplies " << lhs << " by " << rhs
                         << ": the right operand must have the left's rank, each axis the "
                            "left's or of size 1";
  if (getType() != lhs)
    return emitOpError() << "result should be " << lhs << ", found " << getType();
  return success();
}

LogicalResult MulReduceOp::verify() {
  auto lhs = tensorType(getLhs()), rhs = tensorType(getRhs()), out = tensorType(getResult());
  if (lhs != rhs)
    return emitOpError() << "multiplies " << lhs << " by " << rhs << ": they must have one type";
  if (lhs.getRank() < 1)
    return emitOpError() << "sums " << lhs << ", which has no axis";
  if (!broadcastsTo(out, lhs))
    return emitOpError() << "sums " << lhs << " to " << out
                         << ": the result must have the operands' rank, each axis theirs or of "
                            "size 1";
  return success();
}

// d lhs = dy * rhs (rhs broadcast as in the forward product); d rhs = the sum of dy * lhs
// over rhs's broadcast axes.
LogicalResult MulOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,
                                   SmallVectorImpl<Value> &operandGrads) {
  Value dy = resultGrads[0];
  operandGrads.assign(2, Value());
  if (wanted[0])
    operandGrads[0] = b.create<MulOp>(getLoc(), getType(), dy, getRhs());
  if (wanted[1])
    operandGrads[1] = b.create<MulReduceOp>(getLoc(), getRhs().getType(), dy, getLhs());
  return success();
}

// Row-wise in lhs; rhs either carries the batch too or is the same on every replica, then
// broadcast along the batch axis (size 1 there).
LogicalResult MulOp::getResultSharding(ArrayRef<bool> batched,
                                       SmallVectorImpl<BatchSharding> &results) {
  if (batched[1] && !batched[0])
    return failure();
  if (batched[0] && !batched[1] && tensorType(getRhs()).getDimSize(0) != 1)
    return failure();
  results.assign(1, batched[0] ? BatchSharding::Rows : BatchSharding::None);
  return success();
}

// Rows where the result keeps the batch axis; a sum over it (a broadcast parameter's
// gradient) where the result's batch axis has size 1. (Asked while the operands are re-typed
// to a replica's rows and the result is not yet: only the result's size tells.)
LogicalResult MulReduceOp::getResultSharding(ArrayRef<bool> batched,
                                             SmallVectorImpl<BatchSharding> &results) {
  if (batched[0] != batched[1])
    return failure();
  if (!batched[0]) {
    results.assign(1, BatchSharding::None);
    return success();
  }
  const bool keeps = tensorType(getResult()).getDimSize(0) != 1;
  results.assign(1, keeps ? BatchSharding::Rows : BatchSharding::Reduced);
  return success();
}

LogicalResult MulOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Mul);
  return success();
}

LogicalResult MulReduceOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::MulReduce);
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
