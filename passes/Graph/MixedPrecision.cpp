// graph-mixed-precision: the products of both steps in bf16 with f32 accumulation, everything
// else in f32 (see Passes.td). Which operands an op reads in bf16 is the op's own rule
// (MixedPrecisionOpInterface). One cast per f32 value they read, placed right after the value
// is defined and shared by all of them.
#include "passes/Graph/Passes.h"
#include "passes/Pipelines/CompileOptions.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>

#define DEBUG_TYPE "graph-mixed-precision"

namespace dp::graph {
#define GEN_PASS_DEF_MIXEDPRECISIONPASS
#include "passes/Graph/Passes.h.inc"
} // namespace dp::graph

using namespace mlir;
using namespace dp;
using namespace dp::graph;

namespace {

struct MixedPrecisionPass : graph::impl::MixedPrecisionPassBase<MixedPrecisionPass> {
  using MixedPrecisionPassBase::MixedPrecisionPassBase;

  void runOnOperation() override {
    if (precision == "fp32")
      return;
    std::string problem = CompileOptions::check("precision", precision);
    if (problem.empty())
      problem = CompileOptions::check("conv-min-rows", int64_t(convMinRows));
    if (!problem.empty()) {
      getOperation().emitError() << "graph-mixed-precision: " << problem;
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      castFactors(func);
  }

  void castFactors(func::FuncOp func) {
    OpBuilder b(func.getContext());
    Type bf16 = b.getBF16Type();
    llvm::DenseMap<Value, Value> casts; // f32 value -> its bf16 cast
    auto placeAfterDefinition = [&](Value v) {
      if (Operation *def = v.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
    };
    // Reshapes of one value to one shape (an importer writes one per reader: ONNX's q, k and
    // v products each reshape the normalised tokens) share one cast: that of a reshape right
    // after the value, which comes before all of them. (source, shape) -> that reshape.
    llvm::DenseMap<std::pair<Value, Type>, Value> firstReshapes;
    SmallVector<ReshapeOp> superseded; // reshapes whose readers now read the shared cast
    std::function<Value(Value)> castOf = [&](Value v) -> Value {
      if (Value known = casts.lookup(v))
        return known;
      if (auto reshape = v.getDefiningOp<ReshapeOp>()) {
        Value source = reshape.getInput();
        Value &first = firstReshapes[{source, v.getType()}];
        if (!first) {
          bool isFirst = source.getDefiningOp() ? reshape->getPrevNode() == source.getDefiningOp()
                                                : reshape->getPrevNode() == nullptr;
          placeAfterDefinition(source);
          first = isFirst ? v : b.create<ReshapeOp>(reshape.getLoc(), v.getType(), source);
        }
        if (first != v) {
          Value shared = castOf(first);
          casts[v] = shared;
          superseded.push_back(reshape);
          return shared;
        }
      }
      placeAfterDefinition(v);
      auto type = cast<RankedTensorType>(v.getType());
      Value c = b.create<CastOp>(v.getLoc(), type.clone(bf16), v);
      casts[v] = c;
      return c;
    };
    func.walk([&](MixedPrecisionOpInterface op) {
      for (unsigned i : op.getLowPrecisionOperands(convMinRows)) {
        OpOperand &operand = op->getOpOperand(i);
        if (cast<RankedTensorType>(operand.get().getType()).getElementType().isF32())
          operand.set(castOf(operand.get()));
      }
      // A result that becomes bf16 (oneDNN's bf16 LSTM writes bf16 h): the readers that take
      // it as it is read it so, every other reader through one cast back to f32 (whose bf16
      // cast is the result itself).
      if (!op.hasLowPrecisionResult() || op->getNumResults() != 1)
        return;
      Value y = op->getResult(0);
      auto type = cast<RankedTensorType>(y.getType());
      if (!type.getElementType().isF32())
        return;
      y.setType(type.clone(bf16));
      SmallVector<OpOperand *> others;
      for (OpOperand &use : y.getUses()) {
        auto reader = dyn_cast<MixedPrecisionOpInterface>(use.getOwner());
        if (!reader || !reader.readsLowPrecisionResultAsIs(use.getOperandNumber()))
          others.push_back(&use);
      }
      if (others.empty())
        return;
      b.setInsertionPointAfter(op);
      Value wide = b.create<CastOp>(op->getLoc(), type, y);
      for (OpOperand *use : others)
        use->set(wide);
      casts[wide] = y;
    });
    for (ReshapeOp reshape : superseded)
      if (reshape->use_empty())
        reshape.erase();
  }
};

} // namespace
