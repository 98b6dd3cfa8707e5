// graph-verify-model: the checks that make a function a trainable model (see Passes.td).
#include "passes/Graph/Passes.h"
#include "dialect/Graph/IR/Model.h"

#include "llvm/ADT/StringMap.h"

#define DEBUG_TYPE "graph-verify-model"

namespace dp::graph {
#define GEN_PASS_DEF_VERIFYMODELPASS
#include "passes/Graph/Passes.h.inc"
} // namespace dp::graph

using namespace mlir;
using namespace dp::graph;

namespace {

LogicalResult verifyInputs(func::FuncOp func) {
  llvm::StringMap<unsigned> names;
  int64_t batch = -1;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto name = func.getArgAttrOfType<StringAttr>(i, kInputAttr);
    if (!name)
      return func.emitError() << "argument #" << i << " of model '" << func.getSymName()
                              << "' needs a name: add {graph.input = \"...\"}";
    auto [it, inserted] = names.try_emplace(name.getValue(), i);
    if (!inserted)
      return func.emitError() << "input '" << name.getValue() << "' is bound to arguments #"
                              << it->second << " and #" << i;
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (!type || type.getRank() < 1 || !type.hasStaticShape())
      return func.emitError() << "input '" << name.getValue()
                              << "' must be a static tensor with a batch axis, found "
                              << func.getArgument(i).getType();
    if (batch < 0)
      batch = type.getDimSize(0);
    else if (type.getDimSize(0) != batch)
      return func.emitError() << "input '" << name.getValue() << "' has batch "
                              << type.getDimSize(0) << " but the first input has batch " << batch;
  }
  if (batch < 0)
    return func.emitError() << "model '" << func.getSymName() << "' has no inputs";
  return success();
}

LogicalResult verifyParams(func::FuncOp func) {
  llvm::StringMap<ParamOp> seen;
  bool anyTrainable = false;
  WalkResult walk = func.walk([&](ParamOp param) {
    anyTrainable |= param.getTrainable();
    auto [it, inserted] = seen.try_emplace(param.getName(), param);
    if (!inserted && it->second.getType() != param.getType()) {
      param.emitError() << "parameter '" << param.getName() << "' redeclared as "
                        << param.getType() << ", first declared as " << it->second.getType();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!anyTrainable)
    return func.emitError() << "model '" << func.getSymName() << "' has no trainable parameter";
  return success();
}

/// The most elements one tensor may hold: 2^32 f32 values are 16 GiB, past any device's
/// arena for one tensor; and the byte counts of the plan stay far from overflowing.
constexpr int64_t kMaxTensorElements = int64_t(1) << 32;

/// Every tensor of the model (inputs, parameters, every op's results) holds at least one and
/// at most kMaxTensorElements elements: a zero-width layer or a 2^60-element parameter would
/// otherwise reach the runtime, which refuses it, or the memory planner, which overflows.
LogicalResult verifyTensorSizes(func::FuncOp func) {
  auto check = [](Type type, auto emit) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return success();
    int64_t elements = 1;
    for (int64_t dim : tensor.getShape()) {
      if (dim < 1)
        return emit() << "a tensor must hold at least one element, found " << type;
      if (elements > kMaxTensorElements / dim)
        return emit() << "a tensor may hold at most 2^32 elements, found " << type;
      elements *= dim;
    }
    return success();
  };
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (failed(check(func.getArgument(i).getType(),
                     [&] { return func.emitError() << "input #" << i << ": "; })))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (failed(check(type, [&] { return op->emitError(); })))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult verifyLossAndOptimizer(func::FuncOp func) {
  Attribute opt = getOptimizer(func);
  if (!opt)
    return func.emitError() << "model '" << func.getSymName()
                            << "' needs an optimizer: add attributes {graph.optimizer = "
                               "#graph.sgd<lr = 0.1>}";
  if (!isOptimizer(opt))
    return func.emitError() << "'graph.optimizer' must be #graph.sgd, #graph.momentum or "
                               "#graph.adam, found "
                            << opt;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (ret.getNumOperands() != 1)
    return ret.emitError() << "a model returns exactly one value, its loss; found "
                           << ret.getNumOperands();
  if (!ret.getOperand(0).getDefiningOp<dp::LossOpInterface>())
    return ret.emitError() << "the returned value must be a loss (graph.softmax_cross_entropy or "
                              "graph.mean_squared_error)";
  return success();
}

struct VerifyModelPass : dp::graph::impl::VerifyModelPassBase<VerifyModelPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto models = getModelFunctions(module);
    if (models.size() != 1) {
      module.emitError() << "expected exactly one model function, found " << models.size();
      return signalPassFailure();
    }
    func::FuncOp func = models.front();
    if (!func.getBody().hasOneBlock()) {
      func.emitError("a model function must have a single block");
      return signalPassFailure();
    }
    if (failed(verifyInputs(func)) || failed(verifyTensorSizes(func)) ||
        failed(verifyParams(func)) || failed(verifyLossAndOptimizer(func)))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
