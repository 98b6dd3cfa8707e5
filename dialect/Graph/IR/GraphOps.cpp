// The graph dialect's op classes (generated from GraphOps.td) and the verifier helpers that
// GraphDialect.h declares for every op family. Each family's verifiers, gradient rules, batch
// sharding and lowering live in Ops/<Family>.cpp.
#include "dialect/Graph/IR/Ops/Common.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace dp::graph;

#define GET_OP_CLASSES
#include "dialect/Graph/IR/GraphOps.cpp.inc"

/// Checks that the result has exactly `expected` as its shape.
LogicalResult dp::graph::checkResultShape(Operation *op, ArrayRef<int64_t> expected) {
  auto type = tensorType(op->getResult(0));
  if (type.getShape() != expected) {
    auto want = RankedTensorType::get(expected, type.getElementType());
    return op->emitOpError() << "result type should be " << want << ", found " << type;
  }
  return success();
}

/// Checks that `value` is a vector of `channels` elements; `what` names it.
LogicalResult dp::graph::checkChannels(Operation *op, Value value, int64_t channels, StringRef what) {
  auto type = tensorType(value);
  if (type.getRank() != 1 || type.getDimSize(0) != channels)
    return op->emitOpError() << "expects " << what << " of shape [" << channels
                             << "] (one per channel), found " << type;
  return success();
}

/// The channel count of a batch-normalised input: its last axis (rank >= 2).
FailureOr<int64_t> dp::graph::normChannels(Operation *op, Value input) {
  auto type = tensorType(input);
  if (type.getRank() < 2)
    return op->emitOpError() << "expects an input with a batch axis and a channel axis, found "
                             << type;
  return type.getShape().back();
}

LogicalResult dp::graph::checkEpsilon(Operation *op, double epsilon) {
  if (!(epsilon > 0.0))
    return op->emitOpError() << "expects a positive epsilon, found " << epsilon;
  return success();
}
