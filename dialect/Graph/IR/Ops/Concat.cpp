// graph.concat and graph.split: the verifiers, gradient rules, batch sharding and lowering of
// the two ops in one place. Each is the other's gradient; concat lowers to one `concat`
// kernel, split to one `slice` kernel per piece.
#include "dialect/Graph/IR/GraphDialect.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;

namespace {

/// Checks that `parts` join into `whole` along `axis`: one rank and element type, equal
/// sizes elsewhere, sizes along `axis` adding up. `partsName` names them in messages.
LogicalResult verifyJoin(Operation *op, TypeRange parts, Type whole, int64_t axis,
                         StringRef partsName) {
  if (parts.empty())
    return op->emitOpError() << "needs at least one " << partsName;
  auto w = cast<RankedTensorType>(whole);
  if (axis < 0 || axis >= w.getRank())
    return op->emitOpError() << "axis " << axis << " is outside a tensor of rank "
                             << w.getRank();
  int64_t sum = 0;
  for (auto [i, t] : llvm::enumerate(parts)) {
    auto p = cast<RankedTensorType>(t);
    if (p.getRank() != w.getRank() || p.getElementType() != w.getElementType())
      return op->emitOpError() << partsName << " #" << i << " is " << p << ", expected rank "
                               << w.getRank() << " of " << w.getElementType();
    for (int64_t d = 0; d < w.getRank(); ++d)
      if (d != axis && p.getDimSize(d) != w.getDimSize(d))
        return op->emitOpError() << partsName << " #" << i << " has size " << p.getDimSize(d)
                                 << " on axis " << d << ", expected " << w.getDimSize(d);
    sum += p.getDimSize(axis);
  }
  if (sum != w.getDimSize(axis))
    return op->emitOpError() << "sizes along axis " << axis << " add up to " << sum
                             << ", expected " << w.getDimSize(axis);
  return success();
}

} // namespace

LogicalResult ConcatOp::verify() {
  // The concat kernel takes at most as many inputs as Kernels.def allows.
  int maxInputs = rt::kernelInfo(rt::KernelKind::Concat).maxInputs;
  if (static_cast<int>(getInputs().size()) > maxInputs)
    return emitOpError() << "joins " << getInputs().size() << " inputs; at most " << maxInputs
                         << " are supported";
  return verifyJoin(*this, getInputs().getTypes(), getType(), getAxis(), "input");
}

LogicalResult SplitOp::verify() {
  return verifyJoin(*this, getResultTypes(), getInput().getType(), getAxis(), "result");
}

// The gradient of a concatenation is the incoming gradient cut back into the inputs' pieces.
LogicalResult ConcatOp::buildGradient(OpBuilder &b, ValueRange resultGrads,
                                      ArrayRef<bool> wanted,
                                      SmallVectorImpl<Value> &operandGrads) {
  // Along the batch the gradient is stacked as the result was: each replica cuts its rows.
  auto split = b.create<SplitOp>(getLoc(), getInputs().getTypes(), resultGrads[0], getAxis(),
                                 /*stacked=*/getAxis() == 0);
  operandGrads.assign(getNumOperands(), Value());
  for (unsigned i = 0, e = getNumOperands(); i < e; ++i)
    if (wanted[i])
      operandGrads[i] = split.getResult(i);
  return success();
}

// The gradient of a split joins the pieces' gradients; a piece nothing differentiates
// contributes zeros.
LogicalResult SplitOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool>,
                                     SmallVectorImpl<Value> &operandGrads) {
  SmallVector<Value> pieces;
  for (auto [result, grad] : llvm::zip(getResults(), resultGrads))
    pieces.push_back(grad ? grad
                          : b.create<FillOp>(getLoc(), result.getType(), b.getF64FloatAttr(0))
                                .getResult());
  operandGrads.assign(
      1, b.create<ConcatOp>(getLoc(), getInput().getType(), pieces, getAxis()).getResult());
  // A zero piece is a graph.fill, which carries no batch: under data parallelism such a
  // concat has no split (dist-split-batch says so) unless every piece has a gradient.
  return success();
}

// All inputs carry the batch or none does: a replica cannot join its rows of one input to the
// whole of another.
LogicalResult ConcatOp::getResultSharding(ArrayRef<bool> batched,
                                          SmallVectorImpl<BatchSharding> &results) {
  if (llvm::is_contained(batched, false))
    return failure();
  results.assign(1, BatchSharding::Rows);
  return success();
}

// A feature-axis split is row-wise; a batch-axis one only when its input is a stack of the
// pieces (each replica then holds its rows of each): cutting a replica's shard of one batch
// at the global sizes would hand rows to the wrong piece.
LogicalResult SplitOp::getResultSharding(ArrayRef<bool>, SmallVectorImpl<BatchSharding> &results) {
  if (getAxis() == 0 && !getStacked())
    return failure();
  results.assign(getNumResults(), BatchSharding::Rows);
  return success();
}

LogicalResult ConcatOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, rt::KernelKind::Concat, rt::AxisAttrs{static_cast<int64_t>(getAxis())});
  return success();
}

LogicalResult SplitOp::lowerToKernels(KernelLowering &l) {
  Value input = l.buffer(getInput());
  int64_t offset = 0;
  for (Value piece : getResults()) {
    rt::SliceAttrs attrs;
    attrs.axis = static_cast<int64_t>(getAxis()), attrs.offset = offset;
    l.emit(getLoc(), rt::KernelKind::Slice, {input}, {l.newBuffer(piece)}, attrs);
    offset += cast<RankedTensorType>(piece.getType()).getDimSize(getAxis());
  }
  return success();
}
