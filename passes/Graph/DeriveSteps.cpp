// graph-derive-steps: the model function becomes a train step and an eval step (see Passes.td).
#include "dialect/Graph/IR/Model.h"
#include "passes/Graph/Passes.h"
#include "runtime/format/Enums.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "graph-derive-steps"

namespace dp::graph {
#define GEN_PASS_DEF_DERIVESTEPSPASS
#include "passes/Graph/Passes.h.inc"
} // namespace dp::graph

using namespace mlir;
using namespace dp::graph;

namespace {

/// Makes `func` a step: returns (loss, correct) (a regression's loss alone), and the eval step
/// its predictions too
/// (`logits`, where they have a row per sample), and carries the step and model names. Its
/// arguments and results get the roles the runtime finds them by: the loss's targets are the
/// `targets` input, every other input `samples`.
LogicalResult makeStep(func::FuncOp func, StringRef step, StringRef model, bool predictions) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  auto lossOp = ret.getNumOperands() == 1 ? ret.getOperand(0).getDefiningOp<dp::LossOpInterface>()
                                          : dp::LossOpInterface();
  if (!lossOp)
    return ret.emitError("a model must return its loss, a graph.softmax_cross_entropy or "
                         "graph.mean_squared_error (run graph-verify-model first)");
  // The targets input is the one the loss's targets come from (directly, or through ops
  // such as a concat of the labels).
  llvm::SetVector<BlockArgument> sources;
  SmallVector<Value> work{lossOp.getTargets()};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v))
      sources.insert(arg);
    else
      llvm::append_range(work, v.getDefiningOp()->getOperands());
  }
  if (sources.size() != 1 || sources.front().getOwner() != &func.getBody().front())
    return lossOp->emitOpError() << "takes its targets from " << sources.size()
                                 << " inputs of the model: the runtime feeds them from one";
  BlockArgument targets = sources.front();
  Value loss = ret.getOperand(0);
  OpBuilder b(ret);
  // A classification loss counts the rows it predicts right; a regression has no count.
  Value correct = lossOp.buildCorrectCount(b);
  SmallVector<Value> results{loss};
  if (correct)
    results.push_back(correct);
  // The predictions are an output where they are one row per sample the runtime feeds (not,
  // say, of samples the model concatenated).
  Value logits = lossOp.getPredictions();
  auto rows = [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.getRank() > 0 ? type.getDimSize(0) : ShapedType::kDynamic;
  };
  predictions &= rows(logits) != ShapedType::kDynamic && rows(logits) == rows(targets);
  if (predictions)
    results.push_back(logits);
  b.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
  func.setType(b.getFunctionType(func.getArgumentTypes(), ValueRange(results).getTypes()));
  auto role = [&](auto r) { return b.getStringAttr(r); };
  for (BlockArgument arg : func.getArguments())
    func.setArgAttr(arg.getArgNumber(), kRoleAttr,
                    role(dp::rt::inputRoleName(arg == targets ? dp::rt::InputRole::Targets
                                                              : dp::rt::InputRole::Samples)));
  func.setResultAttr(0, kOutputAttr, b.getStringAttr("loss"));
  func.setResultAttr(0, kRoleAttr, role(dp::rt::outputRoleName(dp::rt::OutputRole::Loss)));
  if (correct) {
    func.setResultAttr(1, kOutputAttr, b.getStringAttr("correct"));
    func.setResultAttr(1, kRoleAttr, role(dp::rt::outputRoleName(dp::rt::OutputRole::Correct)));
  }
  if (predictions) {
    const unsigned index = results.size() - 1;
    func.setResultAttr(index, kOutputAttr, b.getStringAttr("logits"));
    func.setResultAttr(index, kRoleAttr, role(dp::rt::outputRoleName(dp::rt::OutputRole::Logits)));
  }
  func.setSymName(step);
  func->setAttr(kStepAttr, b.getStringAttr(step));
  func->setAttr(kModelAttr, b.getStringAttr(model));
  return success();
}

struct DeriveStepsPass : dp::graph::impl::DeriveStepsPassBase<DeriveStepsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto models = getModelFunctions(module);
    if (models.size() != 1) {
      module.emitError() << "expected exactly one model function, found " << models.size()
                         << " (run graph-verify-model first)";
      return signalPassFailure();
    }
    func::FuncOp train = models.front();
    if (!train.getBody().hasOneBlock()) {
      train.emitError("a model function must have a single block");
      return signalPassFailure();
    }
    std::string model = train.getSymName().str();
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(train);
    auto eval = cast<func::FuncOp>(b.clone(*train));
    // The optimizer belongs to training only.
    eval->removeAttr(kOptimizerAttr);
    // Ops that compute differently in each step say how (dropout, batch normalisation).
    for (auto [func, training] : {std::pair(train, true), std::pair(eval, false)})
      for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
        auto form = dyn_cast<dp::StepFormOpInterface>(op);
        if (!form)
          continue;
        b.setInsertionPoint(&op);
        if (Value replacement = form.buildStepForm(b, training)) {
          op.getResult(0).replaceAllUsesWith(replacement);
          op.erase();
        }
      }
    if (failed(makeStep(train, "train", model, /*predictions=*/false)) ||
        failed(makeStep(eval, "eval", model, /*predictions=*/true)))
      return signalPassFailure();
  }
};

} // namespace
