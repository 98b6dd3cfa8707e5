// graph-mixed-precision: the products of both steps in bf16 with f32 accumulation, everything
// else in f32 (see Passes.td). One cast per f32 value that products read, placed right after
// the value is defined and shared by all of them.
#include "passes/Graph/Passes.h"

#include "llvm/ADT/DenseMap.h"

#define DEBUG_TYPE "graph-mixed-precision"

namespace dp::graph {
#define GEN_PASS_DEF_MIXEDPRECISIONPASS
#include "passes/Graph/Passes.h.inc"
} // namespace dp::graph

using namespace mlir;
using namespace dp;
using namespace dp::graph;

namespace {

/// The output rows (batch x height x width) of the convolution that `op` computes or
/// differentiates, else 0.
int64_t convRows(Operation *op) {
  Value out;
  if (auto conv = dyn_cast<Conv2DOp>(op))
    out = conv.getResult();
  else if (isa<Conv2DGradInputOp>(op))
    out = op->getOperand(0); // dy
  else if (isa<Conv2DGradFilterOp>(op))
    out = op->getOperand(1); // dy
  if (!out)
    return 0;
  auto shape = cast<RankedTensorType>(out.getType()).getShape();
  return shape[0] * shape[1] * shape[2];
}

/// The operands of `op` that are the factors of a product computed in bf16, when it is one
/// (an LSTM's input and kernels count: oneDNN runs the whole layer in bf16). Convolutions
/// with fewer than `convMinRows` output rows have none.
SmallVector<OpOperand *, 2> factors(Operation *op, int64_t convMinRows) {
  auto both = [&](unsigned a, unsigned b) {
    return SmallVector<OpOperand *, 2>{&op->getOpOperand(a), &op->getOpOperand(b)};
  };
  if (isa<Conv2DOp, Conv2DGradInputOp, Conv2DGradFilterOp>(op) && convRows(op) < convMinRows)
    return {};
  if (isa<DenseOp, MatMulOp, Conv2DOp, Conv2DGradInputOp, Conv2DGradFilterOp>(op))
    return both(0, 1);
  if (isa<LstmOp, LstmGradOp>(op)) // x, w, r (not b; lstm_grad's y is the lstm's own result)
    return {&op->getOpOperand(0), &op->getOpOperand(1), &op->getOpOperand(2)};
  return {};
}

/// Whether `use` reads an LSTM's result where the kernels take it as it is: the input of
/// another LSTM or of an lstm_grad, or an lstm_grad's `output`.
bool readsLstmResultAsIs(OpOperand &use) {
  Operation *user = use.getOwner();
  unsigned i = use.getOperandNumber();
  return (isa<LstmOp>(user) && i == 0) || (isa<LstmGradOp>(user) && (i == 0 || i == 4));
}

struct MixedPrecisionPass : graph::impl::MixedPrecisionPassBase<MixedPrecisionPass> {
  using MixedPrecisionPassBase::MixedPrecisionPassBase;

  void runOnOperation() override {
    if (precision == "fp32")
      return;
    if (precision != "bf16") {
      getOperation().emitError() << "graph-mixed-precision: precision must be fp32 or bf16, not '"
                                 << precision << "'";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      castFactors(func);
  }

  void castFactors(func::FuncOp func) {
    OpBuilder b(func.getContext());
    Type bf16 = b.getBF16Type();
    llvm::DenseMap<Value, Value> casts; // f32 value -> its bf16 cast
    auto castOf = [&](Value v) {
      Value &slot = casts[v];
      if (slot)
        return slot;
      if (Operation *def = v.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
      auto type = cast<RankedTensorType>(v.getType());
      slot = b.create<CastOp>(v.getLoc(), type.clone(bf16), v);
      return slot;
    };
    func.walk([&](Operation *op) {
      for (OpOperand *operand : factors(op, convMinRows))
        if (cast<RankedTensorType>(operand->get().getType()).getElementType().isF32())
          operand->set(castOf(operand->get()));
      // oneDNN's bf16 LSTM writes bf16 h: the result becomes bf16; LSTMs read it so, every
      // other reader through one cast back to f32 (whose bf16 cast is the result itself).
      auto lstm = dyn_cast<LstmOp>(op);
      if (!lstm || !lstm.getResult().getType().getElementType().isF32())
        return;
      Value y = lstm.getResult();
      auto type = cast<RankedTensorType>(y.getType());
      y.setType(type.clone(bf16));
      SmallVector<OpOperand *> others;
      for (OpOperand &use : y.getUses())
        if (!readsLstmResultAsIs(use))
          others.push_back(&use);
      if (others.empty())
        return;
      b.setInsertionPointAfter(lstm);
      Value wide = b.create<CastOp>(lstm.getLoc(), type, y);
      for (OpOperand *use : others)
        use->set(wide);
      casts[wide] = y;
    });
  }
};

} // namespace
