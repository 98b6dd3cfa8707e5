// Helpers shared by the op families of Ops/: operand checks of the verifiers, the gradient
// through a fused activation, and attribute conversions of the lowerings.
#pragma once

#include "dialect/Graph/IR/GraphDialect.h"

namespace dp::graph {

using namespace mlir;

inline RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Checks that `value` has rank `rank`; `what` names it in the message.
inline LogicalResult checkRank(Operation *op, Value value, int64_t rank, StringRef what) {
  auto type = tensorType(value);
  if (type.getRank() != rank)
    return op->emitOpError() << "expects " << what << " of rank " << rank << ", found " << type;
  return success();
}

/// The two factors of a product share their element type (both f32, or both bf16).
inline LogicalResult checkFactors(Operation *op, Value a, StringRef aName, Value b,
                                  StringRef bName) {
  Type ta = tensorType(a).getElementType(), tb = tensorType(b).getElementType();
  if (ta != tb)
    return op->emitOpError() << "multiplies " << aName << " of " << ta << " by " << bName << " of "
                             << tb << ": the factors must share an element type";
  return success();
}

/// Checks a gradient op's `grad` against the forward result's shape `expected` (failure: the
/// forward shape was already found invalid). The message says `why`, then `result` if given.
inline LogicalResult checkGradShape(Operation *op, Value grad,
                                    const FailureOr<SmallVector<int64_t>> &expected, StringRef why,
                                    Type result = {}) {
  if (failed(expected))
    return failure();
  auto dy = tensorType(grad);
  if (dy.getShape() == ArrayRef<int64_t>(*expected))
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "grad should be "
                            << RankedTensorType::get(*expected, dy.getElementType()) << why;
  if (result)
    diag << result;
  return diag << ", found " << dy;
}

/// Reads a two-element array of positive integers (`strides`, `window`) into `out`.
inline LogicalResult pairAttr(Operation *op, ArrayAttr attr, StringRef what, int64_t out[2]) {
  if (attr.size() != 2)
    return op->emitOpError() << "expects '" << what << "' to have 2 elements, found "
                             << attr.size();
  for (int i = 0; i < 2; ++i) {
    auto v = dyn_cast<IntegerAttr>(attr[i]);
    if (!v || v.getInt() < 1)
      return op->emitOpError() << "expects '" << what << "' to hold positive integers, found "
                               << attr;
    out[i] = v.getInt();
  }
  return success();
}

/// The gradient through an activation, from its forward output `y` and the incoming gradient
/// `dy` (the identity for none).
inline Value activationGrad(OpBuilder &b, Location loc, Activation act, Value y, Value dy) {
  if (act == Activation::none)
    return dy;
  return b.create<ActivationGradOp>(loc, dy.getType(), y, dy,
                                    ActivationAttr::get(b.getContext(), act));
}

inline int64_t at(ArrayAttr array, unsigned i) { return cast<IntegerAttr>(array[i]).getInt(); }

inline rt::Activation runtimeActivation(Activation a) {
  rt::Activation act = rt::Activation::None;
  rt::activationByName(stringifyActivation(a), act);
  return act;
}

} // namespace dp::graph
