// graph-verify-steps: the contract of the graph phase, checked on its output (see Passes.td):
// a train and an eval step returning the loss and the correct count (a regression's none), its
// inputs with their
// roles, every op lowerable to
// kernels, each parameter updated at most once and only in the train step.
#include "dialect/Graph/IR/Model.h"
#include "passes/Graph/Passes.h"
#include "runtime/format/Enums.h"

#include "llvm/ADT/StringMap.h"

#define DEBUG_TYPE "graph-verify-steps"

namespace dp::graph {
#define GEN_PASS_DEF_VERIFYSTEPSPASS
#include "passes/Graph/Passes.h.inc"
} // namespace dp::graph

using namespace mlir;
using namespace dp;
using namespace dp::graph;

namespace {

LogicalResult verifyStep(func::FuncOp func, StringRef step) {
  // The runtime feeds the inputs by role: the targets in one, the samples in the others.
  unsigned targets = 0;
  bool regression = false;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto role = func.getArgAttrOfType<StringAttr>(i, kRoleAttr);
    rt::InputRole parsed;
    if (!role || !rt::inputRoleByName(role.getValue(), parsed))
      return func.emitError() << "argument " << i << " of the " << step
                              << " step has no input role (samples or targets)";
    if (parsed == rt::InputRole::Targets) {
      ++targets;
      auto type = cast<ShapedType>(func.getArgument(i).getType());
      regression = type.getElementType().isF32();
      // The runtime feeds a regression's K floats per sample as [rows, K].
      if (regression && type.getRank() != 2)
        return func.emitError() << "the " << step << " step's float targets are " << type
                                << ": the runtime feeds a regression's targets as [batch, K]";
    }
  }
  if (targets > 1)
    return func.emitError() << "the " << step << " step has " << targets
                            << " targets inputs; the runtime feeds one";
  // A classifier's steps count the rows they predict right; a regression's (float targets)
  // have no count.
  for (StringRef output :
       {rt::outputRoleName(rt::OutputRole::Loss), rt::outputRoleName(rt::OutputRole::Correct)})
    if (!getStepOutput(func, output) &&
        !(regression && output == rt::outputRoleName(rt::OutputRole::Correct)))
      return func.emitError() << "the " << step << " step does not return '" << output << "'";
  llvm::StringMap<Operation *> updated;
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<func::FuncOp, func::ReturnOp, ParamOp>(op))
      return WalkResult::advance();
    if (!isa<KernelLoweringOpInterface>(op)) {
      op->emitOpError() << "has no kernel to lower to"
                        << (isa<ApplyGradientOp>(op) ? " (run graph-expand-optimizer)" : "");
      return WalkResult::interrupt();
    }
    auto update = dyn_cast<ParameterUpdateOpInterface>(op);
    if (!update)
      return WalkResult::advance();
    // The update's own verifier has checked that it changes a trainable graph.param.
    auto param = update.getUpdatedParameter().getDefiningOp<ParamOp>();
    if (step != "train") {
      op->emitOpError() << "updates '" << param.getName() << "' in the " << step << " step";
      return WalkResult::interrupt();
    }
    auto [it, inserted] = updated.try_emplace(param.getName(), op);
    if (!inserted) {
      op->emitOpError() << "is the second update of '" << param.getName() << "'";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

struct VerifyStepsPass : graph::impl::VerifyStepsPassBase<VerifyStepsPass> {
  void runOnOperation() override {
    for (StringRef step : {"train", "eval"}) {
      func::FuncOp func = requireStepFunction(getOperation(), step);
      if (!func || failed(verifyStep(func, step)))
        return signalPassFailure();
    }
  }
};

} // namespace
