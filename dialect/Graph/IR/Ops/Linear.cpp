// graph.dense, graph.matmul and graph.batch_matmul. Each op's verifier, gradient rule, batch
// sharding and lowering (those it has) are here; see docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

LogicalResult DenseOp::verify() {
  if (failed(checkFactors(*this, getInput(), "input", getKernel(), "kernel")))
    return failure();
  if (failed(checkRank(*this, getInput(), 2, "input")) ||
      failed(checkRank(*this, getKernel(), 2, "kernel")))
    return failure();
  auto in = tensorType(getInput()).getShape();
  auto k = tensorType(getKernel()).getShape();
  if (in[1] != k[0])
    return emitOpError() << "input has " << in[1] << " features but the kernel expects " << k[0];
  if (Value bias = getBias()) {
    if (failed(checkRank(*this, bias, 1, "bias")))
      return failure();
    if (tensorType(bias).getDimSize(0) != k[1])
      return emitOpError() << "bias has " << tensorType(bias).getDimSize(0)
                           << " elements but the kernel has " << k[1] << " units";
  }
  return checkResultShape(*this, {in[0], k[1]});
}

LogicalResult MatMulOp::verify() {
  if (failed(checkFactors(*this, getLhs(), "lhs", getRhs(), "rhs")))
    return failure();
  if (failed(checkRank(*this, getLhs(), 2, "lhs")) || failed(checkRank(*this, getRhs(), 2, "rhs")))
    return failure();
  auto a = tensorType(getLhs()).getShape();
  auto b = tensorType(getRhs()).getShape();
  int64_t m = getTransposeLhs() ? a[1] : a[0], ka = getTransposeLhs() ? a[0] : a[1];
  int64_t kb = getTransposeRhs() ? b[1] : b[0], n = getTransposeRhs() ? b[0] : b[1];
  if (ka != kb)
    return emitOpError() << "contracts " << ka << " columns of lhs with " << kb << " rows of rhs";
  return checkResultShape(*this, {m, n});
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

LogicalResult DenseOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Dense, rt::FusedActivationAttrs{runtimeActivation(getActivation())});
  return success();
}

LogicalResult MatMulOp::lowerToKernels(KernelLowering &l) {
  rt::MatMulAttrs attrs;
  attrs.transpose_a = getTransposeLhs(), attrs.transpose_b = getTransposeRhs();
  l.kernel(*this, KernelKind::MatMul, attrs);
  return success();
}

// Rows of a product come from the left operand unless it is transposed; a transposed left
// operand that carries the batch contracts over it (a weight gradient), and so does a right
// operand that carries it untransposed. A transposed right operand carrying the batch would
// put the batch in the columns: no rule splits that.
LogicalResult MatMulOp::getResultSharding(ArrayRef<bool> batched,
                                          SmallVectorImpl<BatchSharding> &results) {
  if (batched[1] && getTransposeRhs())
    return failure();
  results.assign(1,
                 batched[0] && !getTransposeLhs() ? BatchSharding::Rows : BatchSharding::Reduced);
  return success();
}

// Under mixed precision both factors are read in bf16 (the product accumulates in f32).
SmallVector<unsigned> DenseOp::getLowPrecisionOperands(int64_t) { return {0, 1}; }

SmallVector<unsigned> MatMulOp::getLowPrecisionOperands(int64_t) { return {0, 1}; }
SmallVector<unsigned> BatchMatMulOp::getLowPrecisionOperands(int64_t) { return {0, 1}; }

LogicalResult BatchMatMulOp::verify() {
  if (failed(checkFactors(*this, getLhs(), "lhs", getRhs(), "rhs")))
    return failure();
  auto a = tensorType(getLhs()), b = tensorType(getRhs()), c = tensorType(getResult());
  if (a.getRank() < 3 || b.getRank() != a.getRank())
    return emitOpError() << "expects lhs and rhs of one rank, at least 3, found " << a << " and "
                         << b;
  const int64_t rank = a.getRank();
  ArrayRef<int64_t> batch = a.getShape().drop_back(2);
  if (b.getShape().drop_back(2) != batch)
    return emitOpError() << "multiplies the matrices of " << a << " and " << b
                         << ": the sizes before the last two axes differ";
  if (!std::isfinite(getAlpha().convertToDouble()))
    return emitOpError() << "expects a finite alpha, found " << getAlpha().convertToDouble();
  int64_t m = a.getDimSize(rank - (getTransposeLhs() ? 1 : 2));
  int64_t ka = a.getDimSize(rank - (getTransposeLhs() ? 2 : 1));
  int64_t kb = b.getDimSize(rank - (getTransposeRhs() ? 1 : 2));
  int64_t n = b.getDimSize(rank - (getTransposeRhs() ? 2 : 1));
  if (ka != kb)
    return emitOpError() << "contracts " << ka << " columns of lhs with " << kb << " rows of rhs";
  SmallVector<int64_t> shape(batch);
  shape.append({m, n});
  if (c.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "result should be " << RankedTensorType::get(shape, c.getElementType())
                         << ", found " << c;
  return success();
}

// c = alpha op(a) op(b); with d = dc:
//   c = a b:      da = alpha d b^T     db = alpha a^T d
//   c = a b^T:    da = alpha d b       db = alpha d^T a
//   c = a^T b:    da = alpha b d^T     db = alpha a d
//   c = a^T b^T:  da = alpha b^T d^T   db = alpha d^T a^T
LogicalResult BatchMatMulOp::buildGradient(OpBuilder &b, ValueRange resultGrads,
                                           ArrayRef<bool> wanted,
                                           SmallVectorImpl<Value> &operandGrads) {
  const bool ta = getTransposeLhs(), tb = getTransposeRhs();
  Value d = resultGrads[0], lhs = getLhs(), rhs = getRhs();
  auto product = [&](Type type, Value x, Value y, bool tx, bool ty) -> Value {
    return b.create<BatchMatMulOp>(getLoc(), type, x, y, tx, ty, getAlpha());
  };
  operandGrads.assign(2, Value());
  if (wanted[0])
    operandGrads[0] =
        ta ? product(lhs.getType(), rhs, d, tb, true) : product(lhs.getType(), d, rhs, false, !tb);
  if (wanted[1])
    operandGrads[1] =
        tb ? product(rhs.getType(), d, lhs, true, ta) : product(rhs.getType(), lhs, d, !ta, false);
  return success();
}

// Each index of the leading axes is one product: row-wise when both operands carry the batch
// (or neither). A replica cannot multiply its rows of one by the whole of the other.
LogicalResult BatchMatMulOp::getResultSharding(ArrayRef<bool> batched,
                                               SmallVectorImpl<BatchSharding> &results) {
  if (llvm::is_contained(batched, false))
    return failure();
  results.assign(1, BatchSharding::Rows);
  return success();
}

LogicalResult BatchMatMulOp::lowerToKernels(KernelLowering &l) {
  rt::BatchMatMulAttrs attrs;
  attrs.transpose_a = getTransposeLhs(), attrs.transpose_b = getTransposeRhs();
  attrs.alpha = getAlpha().convertToDouble();
  l.kernel(*this, KernelKind::BatchMatMul, attrs);
  return success();
}
