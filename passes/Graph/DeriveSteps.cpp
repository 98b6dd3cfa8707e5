// graph-derive-steps: the model function becomes a train step and an eval step (see Passes.td).
#include "passes/Graph/Passes.h"
#include "dialect/Graph/IR/Model.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "graph-derive-steps"

namespace dp::graph {
#define GEN_PASS_DEF_DERIVESTEPSPASS
#include "passes/Graph/Passes.h.inc"
} // namespace dp::graph

using namespace mlir;
using namespace dp::graph;

namespace {

/// Makes `func` a step: returns (loss, correct) and carries the step and model names.
LogicalResult makeStep(func::FuncOp func, StringRef step, StringRef model) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  auto lossOp = ret.getNumOperands() == 1
                    ? ret.getOperand(0).getDefiningOp<SoftmaxCrossEntropyOp>()
                    : SoftmaxCrossEntropyOp();
  if (!lossOp)
    return ret.emitError("a model must return its loss, a graph.softmax_cross_entropy "
                         "(run graph-verify-model first)");
  Value loss = lossOp.getResult();
  OpBuilder b(ret);
  Value correct = b.create<CountCorrectOp>(lossOp.getLoc(), loss.getType(), lossOp.getLogits(),
                                           lossOp.getLabels());
  b.create<func::ReturnOp>(ret.getLoc(), ValueRange{loss, correct});
  ret.erase();
  func.setType(b.getFunctionType(func.getArgumentTypes(), {loss.getType(), correct.getType()}));
  func.setResultAttr(0, kOutputAttr, b.getStringAttr("loss"));
  func.setResultAttr(1, kOutputAttr, b.getStringAttr("correct"));
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
    // Dropout is the identity when evaluating.
    for (DropoutOp d : llvm::make_early_inc_range(eval.getOps<DropoutOp>())) {
      d.replaceAllUsesWith(d.getInput());
      d.erase();
    }
    // Batch normalisation trains on the statistics of the batch and moves the moving ones.
    for (BatchNormOp bn : llvm::make_early_inc_range(train.getOps<BatchNormOp>())) {
      b.setInsertionPoint(bn);
      Location loc = bn.getLoc();
      auto x = cast<RankedTensorType>(bn.getInput().getType());
      auto statsType = RankedTensorType::get({2, x.getShape().back()}, x.getElementType());
      Value stats = b.create<BatchMomentsOp>(loc, statsType, bn.getInput());
      Value y = b.create<BatchNormTrainOp>(loc, x, bn.getInput(), stats, bn.getGamma(),
                                           bn.getBeta(), bn.getEpsilonAttr());
      b.create<MovingStatsUpdateOp>(loc, bn.getMovingMean(), bn.getMovingVar(), stats,
                                    bn.getMomentumAttr());
      bn.replaceAllUsesWith(y);
      bn.erase();
    }
    if (failed(makeStep(train, "train", model)) || failed(makeStep(eval, "eval", model)))
      return signalPassFailure();
  }
};

} // namespace
