// The conventions of a model module (see Model.h).
#include "dialect/Graph/IR/Model.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace dp::graph {

SmallVector<func::FuncOp> getModelFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> result;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func->hasAttr(kStepAttr) && !func.isExternal() && !func.isPrivate())
      result.push_back(func);
  return result;
}

func::FuncOp getStepFunction(ModuleOp module, StringRef step) {
  for (auto func : module.getOps<func::FuncOp>())
    if (auto attr = func->getAttrOfType<StringAttr>(kStepAttr); attr && attr.getValue() == step)
      return func;
  return nullptr;
}

func::FuncOp requireStepFunction(ModuleOp module, StringRef step) {
  func::FuncOp func = getStepFunction(module, step);
  if (!func)
    module.emitError() << "no " << step << " step (run graph-derive-steps first)";
  return func;
}

Value getStepOutput(func::FuncOp func, StringRef role) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (auto attr = func.getResultAttrOfType<StringAttr>(i, kRoleAttr);
        attr && attr.getValue() == role)
      return ret.getOperand(i);
  return nullptr;
}

Attribute getOptimizer(func::FuncOp func) { return func->getAttr(kOptimizerAttr); }

/// The f32 values of a parameter's initial data: dense elements, or a resource blob
/// (`dense_resource<name>`, the text IR's hex section) holding them little-endian.
FailureOr<std::vector<float>> initialValues(Operation *param, ElementsAttr values) {
  const int64_t n = values.getNumElements();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(values)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    ArrayRef<char> bytes = blob ? blob->getData() : ArrayRef<char>();
    if (static_cast<int64_t>(bytes.size()) != n * int64_t(sizeof(float)))
      return param->emitOpError() << "has initial data '" << resource.getRawHandle().getKey()
                                  << "' of " << bytes.size() << " bytes, expected " << n
                                  << " f32 values (" << n * int64_t(sizeof(float)) << " bytes)";
    std::vector<float> floats(static_cast<size_t>(n));
    std::memcpy(floats.data(), bytes.data(), bytes.size());
    return floats;
  }
  auto range = values.tryGetValues<APFloat>();
  if (!range)
    return param->emitOpError() << "has initial data whose values cannot be read: "
                                << values.getType();
  std::vector<float> floats;
  floats.reserve(static_cast<size_t>(n));
  for (const APFloat &v : *range)
    floats.push_back(v.convertToFloat());
  return floats;
}

std::optional<MutableOperandRange> updateScaleOperand(Operation *op) {
  if (auto u = dyn_cast<SgdUpdateOp>(op))
    return u.getScaleMutable();
  if (auto u = dyn_cast<MomentumUpdateOp>(op))
    return u.getScaleMutable();
  if (auto u = dyn_cast<AdamUpdateOp>(op))
    return u.getScaleMutable();
  return std::nullopt;
}

Value updateScale(Operation *op) {
  std::optional<MutableOperandRange> scale = updateScaleOperand(op);
  return scale && !scale->empty() ? (*scale)[0].get() : Value();
}

} // namespace dp::graph

void dp::graph::copyDiscardableAttrs(mlir::Operation *from, mlir::Operation *to) {
  for (mlir::NamedAttribute attr : from->getDiscardableAttrs())
    to->setAttr(attr.getName(), attr.getValue());
}
