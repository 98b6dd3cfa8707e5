// graph-autodiff: reverse-mode differentiation of the train step's loss (see Passes.td).
#include "dialect/Graph/IR/Model.h"
#include "passes/Graph/Passes.h"
#include "runtime/format/Enums.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#define DEBUG_TYPE "graph-autodiff"

namespace dp::graph {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "passes/Graph/Passes.h.inc"
} // namespace dp::graph

using namespace mlir;
using namespace dp::graph;

namespace {

/// The values on a path from a trainable parameter to `loss`: exactly those that need a
/// gradient. Everything else (inputs, labels, side branches) is skipped.
llvm::DenseSet<Value> activeValues(Block &body, Value loss) {
  llvm::DenseSet<Value> varied;
  for (Operation &op : body) {
    auto param = dyn_cast<ParamOp>(op);
    bool fromParam = param && param.getTrainable();
    // Batch statistics are not differentiated (StopsGradient): the op that normalises with
    // them accounts for their dependence on the input in its own gradient.
    bool fromVaried = !op.hasTrait<dp::StopsGradient>() &&
                      llvm::any_of(op.getOperands(), [&](Value v) { return varied.contains(v); });
    if (fromParam || fromVaried)
      varied.insert(op.result_begin(), op.result_end());
  }
  llvm::DenseSet<Value> active;
  llvm::SmallVector<Value> worklist{loss};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!varied.contains(v) || !active.insert(v).second)
      continue;
    if (Operation *def = v.getDefiningOp())
      worklist.append(def->operand_begin(), def->operand_end());
  }
  return active;
}

LogicalResult differentiate(func::FuncOp func) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = getStepOutput(func, dp::rt::outputRoleName(dp::rt::OutputRole::Loss));
  if (!loss)
    return func.emitError("train step has no 'loss' output (run graph-derive-steps first)");

  // Declarations of one parameter name are one tensor: merge them into the first, so that its
  // gradient is summed over all uses and it is updated once, after the last of them.
  llvm::StringMap<ParamOp> firstDecl;
  for (ParamOp param : llvm::make_early_inc_range(func.getOps<ParamOp>())) {
    auto [it, inserted] = firstDecl.try_emplace(param.getName(), param);
    if (!inserted && it->second.getType() == param.getType() &&
        it->second.getTrainable() == param.getTrainable()) {
      param.replaceAllUsesWith(it->second.getResult());
      param.erase();
    }
  }

  llvm::DenseSet<Value> active = activeValues(body, loss);
  // Uses of each active value by active ops not yet differentiated: a gradient is complete,
  // and its parameter's update may be issued, when this count reaches zero.
  llvm::DenseMap<Value, unsigned> pendingUses;
  for (Value v : active)
    for (Operation *user : v.getUsers())
      if (llvm::any_of(user->getResults(), [&](Value r) { return active.contains(r); }))
        ++pendingUses[v];

  OpBuilder b(ret);
  llvm::DenseMap<Value, Value> grads;
  auto accumulate = [&](Value v, Value g, Location loc) {
    Value &slot = grads[v];
    slot = slot ? b.create<AddOp>(loc, slot, g).getResult() : g;
  };
  grads[loss] = b.create<FillOp>(loss.getLoc(), loss.getType(), b.getF64FloatAttr(1.0));

  auto emitApply = [&](Value v) {
    if (auto param = v.getDefiningOp<ParamOp>(); param && param.getTrainable())
      b.create<ApplyGradientOp>(param.getLoc(), v, grads[v]);
  };

  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      Value g = active.contains(r) ? grads.lookup(r) : Value();
      any |= static_cast<bool>(g);
      resultGrads.push_back(g);
    }
    // Parameters are the leaves: their gradients are complete once all users are done.
    if (!any || isa<ParamOp>(op))
      continue;
    auto rule = dyn_cast<dp::GradientOpInterface>(op);
    if (!rule)
      return op->emitOpError("has no gradient rule, but the loss depends on a parameter "
                             "through it");
    SmallVector<bool> wanted;
    for (Value operand : op->getOperands())
      wanted.push_back(active.contains(operand));
    SmallVector<Value> operandGrads;
    if (failed(rule.buildGradient(b, resultGrads, wanted, operandGrads)))
      return op->emitOpError("failed to build its gradient");
    for (auto [operand, g, want] : llvm::zip(op->getOperands(), operandGrads, wanted)) {
      if (!want)
        continue;
      if (!g)
        return op->emitOpError("gradient rule gave no gradient for an operand that needs one");
      accumulate(operand, g, op->getLoc());
      if (--pendingUses[operand] == 0)
        emitApply(operand);
    }
  }

  // Trainable parameters that do not reach the loss get no gradient: say so.
  for (ParamOp param : func.getOps<ParamOp>())
    if (param.getTrainable() && !active.contains(param.getResult()))
      param.emitWarning() << "parameter '" << param.getName()
                          << "' does not affect the loss; it will not be trained";
  return success();
}

struct AutodiffPass : dp::graph::impl::AutodiffPassBase<AutodiffPass> {
  void runOnOperation() override {
    func::FuncOp train = getStepFunction(getOperation(), "train");
    if (!train) {
      getOperation().emitError("no train step (run graph-derive-steps first)");
      return signalPassFailure();
    }
    // Gradients or updates mark a differentiated step (a graph.fill may be part of the model).
    if (!train.getOps<dp::ParameterUpdateOpInterface>().empty()) {
      train.emitError("the train step is already differentiated");
      return signalPassFailure();
    }
    if (failed(differentiate(train)))
      signalPassFailure();
  }
};

} // namespace
