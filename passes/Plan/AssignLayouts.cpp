// plan-assign-layouts: the layout each convolution kernel reads its weights in (see Passes.td).
#include "passes/Pipelines/CompileOptions.h"
#include "passes/Plan/Passes.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "plan-assign-layouts"

namespace dp::plan {
#define GEN_PASS_DEF_ASSIGNLAYOUTSPASS
#include "passes/Plan/Passes.h.inc"
} // namespace dp::plan

using namespace mlir;
using namespace dp::plan;

namespace {

/// Whether `kernel` (a convolution of live taps `taps`) should work on the stored weights.
bool wantsPlain(KernelOp kernel, const dp::rt::LiveTaps &taps, StringRef mode,
                int64_t convMinRows) {
  // The stored layout is readable as such only in one group, through a dense window (the
  // contract refuses plain_weights elsewhere).
  if (mode == "blocked" || !taps.allowsPlainWeights())
    return false;
  if (mode == "plain" || taps.isProduct())
    return true;
  // The type the kernel reads: its image (or, for the input gradient, the output gradient).
  const bool f32 = cast<MemRefType>(kernel.getInputs()[0].getType()).getElementType().isF32();
  StringRef kind = kernel.getKind();
  if (kind == "conv2d" || kind == "conv2d_grad_input")
    return f32 && taps.shape.rows() < convMinRows;
  return false;
}

struct AssignLayoutsPass : public dp::plan::impl::AssignLayoutsPassBase<AssignLayoutsPass> {
  using AssignLayoutsPassBase::AssignLayoutsPassBase;

  void runOnOperation() override {
    std::string problem = dp::CompileOptions::check("weight-layouts", weightLayouts);
    if (problem.empty())
      problem = dp::CompileOptions::check("conv-min-rows", int64_t(convMinRows));
    if (!problem.empty()) {
      getOperation().emitError() << "plan-assign-layouts: " << problem;
      return signalPassFailure();
    }
    Builder b(&getContext());
    getOperation().walk([&](KernelOp kernel) {
      std::optional<dp::rt::LiveTaps> taps = convLiveTaps(kernel);
      if (!taps)
        return;
      kernel->setAttr("plain_weights",
                      b.getI64IntegerAttr(wantsPlain(kernel, *taps, weightLayouts, convMinRows)));
    });
  }
};

} // namespace
