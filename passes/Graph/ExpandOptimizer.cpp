// graph-expand-optimizer: apply_gradient becomes the optimizer's update ops (see Passes.td).
#include "passes/Graph/Passes.h"
#include "dialect/Graph/IR/Model.h"
#include "runtime/format/LrSchedule.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "graph-expand-optimizer"

namespace dp::graph {
#define GEN_PASS_DEF_EXPANDOPTIMIZERPASS
#include "passes/Graph/Passes.h.inc"
} // namespace dp::graph

using namespace mlir;
using namespace dp::graph;

namespace {

struct ExpandOptimizerPass : dp::graph::impl::ExpandOptimizerPassBase<ExpandOptimizerPass> {
  using ExpandOptimizerPassBase::ExpandOptimizerPassBase;

  void runOnOperation() override {
    func::FuncOp train = requireStepFunction(getOperation(), "train");
    if (!train)
      return signalPassFailure();
    Attribute optimizer = getOptimizer(train);
    if (!optimizer || !isOptimizer(optimizer)) {
      train.emitError("the train step has no valid 'graph.optimizer'");
      return signalPassFailure();
    }
    if (!(lrScale > 0)) {
      train.emitError() << "lr-scale must be positive, found " << lrScale;
      return signalPassFailure();
    }
    if (!lrSchedule.empty()) {
      dp::rt::LrSchedule schedule;
      std::string problem;
      if (!dp::rt::parseLrSchedule(lrSchedule, 0, schedule, problem)) {
        train.emitError() << "lr-schedule '" << lrSchedule << "': " << problem;
        return signalPassFailure();
      }
      if (!schedule.isConstant())
        train->setAttr(kLrScheduleAttr,
                       StringAttr::get(&getContext(), dp::rt::lrScheduleText(schedule)));
    }
    for (ApplyGradientOp apply : llvm::make_early_inc_range(train.getOps<ApplyGradientOp>()))
      expand(apply, optimizer);
  }

  /// A zero-initialised optimizer-state parameter next to the parameter it belongs to.
  Value stateFor(ParamOp param, StringRef suffix) {
    OpBuilder b(param);
    b.setInsertionPointAfter(param);
    std::string name = (param.getName() + "/" + suffix).str();
    auto state = b.create<ParamOp>(param.getLoc(), param.getType(), name,
                                   ZerosAttr::get(b.getContext()), /*trainable=*/false,
                                   /*optimizer_state=*/true);
    copyDiscardableAttrs(param, state);
    return state.getResult();
  }

  void expand(ApplyGradientOp apply, Attribute optimizer) {
    OpBuilder b(apply);
    Location loc = apply.getLoc();
    Value param = apply.getParam(), grad = apply.getGradient();
    auto paramOp = param.getDefiningOp<ParamOp>();
    auto lr = [&](APFloat value) { return b.getF64FloatAttr(value.convertToDouble() * lrScale); };
    auto f64 = [&](APFloat value) { return b.getF64FloatAttr(value.convertToDouble()); };
    // A weight decay, when the optimizer has one (the attribute is left out at 0).
    auto decay = [&](APFloat value) { return value.isZero() ? FloatAttr() : f64(value); };
    Operation *update =
        llvm::TypeSwitch<Attribute, Operation *>(optimizer)
            .Case([&](SgdAttr sgd) {
              return b.create<SgdUpdateOp>(loc, param, grad, Value(), lr(sgd.getLr()),
                                           decay(sgd.getWeightDecay()));
            })
            .Case([&](MomentumAttr m) {
              Value velocity = stateFor(paramOp, "velocity");
              return b.create<MomentumUpdateOp>(
                  loc, param, velocity, grad, Value(), lr(m.getLr()), f64(m.getMomentum()),
                  m.getNesterov() ? b.getUnitAttr() : UnitAttr(), decay(m.getWeightDecay()));
            })
            .Case([&](AdamAttr adam) {
              Value m = stateFor(paramOp, "m");
              Value v = stateFor(paramOp, "v");
              return b.create<AdamUpdateOp>(loc, param, m, v, grad, Value(), lr(adam.getLr()),
                                            f64(adam.getBeta1()), f64(adam.getBeta2()),
                                            f64(adam.getEpsilon()),
                                            adam.getTorchEpsilon() ? b.getUnitAttr() : UnitAttr(),
                                            decay(adam.getWeightDecay()));
            })
            .Default([](Attribute) -> Operation * { return nullptr; });
    // Placement and other annotations of later phases stay with the op.
    if (update)
      copyDiscardableAttrs(apply, update);
    apply.erase();
  }
};

} // namespace
