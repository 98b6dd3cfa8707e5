// graph.transpose: its verifier, gradient rule, batch sharding and lowering (to one transpose
// kernel per exchange of two axes that its permutation needs); see docs/architecture.md,
// "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

#include <numeric>

using namespace mlir;
using namespace dp;
using namespace dp::graph;

namespace {

/// The exchanges of two axes (a < b) that, applied in order to the identity order, give
/// `permutation`: position i holds input axis permutation[i] once exchange i is done.
SmallVector<std::pair<int64_t, int64_t>> exchanges(ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> order(permutation.size());
  std::iota(order.begin(), order.end(), 0);
  SmallVector<std::pair<int64_t, int64_t>> steps;
  for (int64_t i = 0, e = permutation.size(); i < e; ++i) {
    if (order[i] == permutation[i])
      continue;
    int64_t j = std::find(order.begin() + i, order.end(), permutation[i]) - order.begin();
    std::swap(order[i], order[j]);
    steps.push_back({i, j});
  }
  return steps;
}

} // namespace

LogicalResult TransposeOp::verify() {
  auto in = tensorType(getInput());
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != in.getRank())
    return emitOpError() << "permutation has " << perm.size() << " entries for an input of rank "
                         << in.getRank();
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= in.getRank() || seen[axis])
      return emitOpError() << "permutation [" << perm << "] is not an order of the axes 0 to "
                           << in.getRank() - 1;
    seen[axis] = true;
    shape.push_back(in.getDimSize(axis));
  }
  auto out = tensorType(getResult());
  if (out.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "result should be " << RankedTensorType::get(shape, in.getElementType())
                         << ", found " << out;
  return success();
}

// The gradient is the incoming gradient put back in the input's order: the inverse
// permutation.
LogicalResult TransposeOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                         SmallVectorImpl<Value> &operandGrads) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, axis] : llvm::enumerate(perm))
    inverse[axis] = static_cast<int64_t>(i);
  operandGrads.assign(
      1, b.create<TransposeOp>(getLoc(), getInput().getType(), resultGrads[0], inverse));
  return success();
}

// Row-wise while the batch axis stays first; a replica cannot move its shard's rows elsewhere.
LogicalResult TransposeOp::getResultSharding(ArrayRef<bool>,
                                             SmallVectorImpl<BatchSharding> &results) {
  if (getPermutation().empty() || getPermutation()[0] != 0)
    return failure();
  results.assign(1, BatchSharding::Rows);
  return success();
}

// One transpose kernel per exchange, through scratch buffers between them; the identity is a
// view of the input.
LogicalResult TransposeOp::lowerToKernels(KernelLowering &l) {
  auto steps = exchanges(getPermutation());
  if (steps.empty()) {
    l.view(getResult(), getInput());
    return success();
  }
  auto type = tensorType(getInput());
  SmallVector<int64_t> shape(type.getShape());
  Value current = l.buffer(getInput());
  for (auto [n, step] : llvm::enumerate(steps)) {
    std::swap(shape[step.first], shape[step.second]);
    Value next = n + 1 == steps.size()
                     ? l.newBuffer(getResult())
                     : l.scratch(*this, RankedTensorType::get(shape, type.getElementType()));
    rt::TransposeAttrs attrs;
    attrs.axis_a = step.first, attrs.axis_b = step.second;
    l.emit(getLoc(), rt::KernelKind::Transpose, {current}, {next}, attrs);
    current = next;
  }
  return success();
}
