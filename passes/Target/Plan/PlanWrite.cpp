// plan-write: the planned program, verified by the runtime's verifier, written atomically to
// a .dpx file (see Passes.td).
#include "passes/Target/Plan/PlanWriter.h"

#include "dialect/Common/AtomicFile.h"

#define DEBUG_TYPE "plan-write"

namespace dp::plan {
#define GEN_PASS_DEF_PLANWRITEPASS
#include "passes/Target/Plan/Passes.h.inc"
} // namespace dp::plan

using namespace mlir;

namespace {

struct PlanWritePass : dp::plan::impl::PlanWritePassBase<PlanWritePass> {
  using PlanWritePassBase::PlanWritePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (output.empty()) {
      module.emitError("plan-write needs an output file (output=FILE)");
      return signalPassFailure();
    }
    std::string image;
    if (failed(dp::plan::writePlan(module, dp::plan::kProducer, image)))
      return signalPassFailure();
    if (std::string error = dp::writeFileAtomically(output, image); !error.empty()) {
      module.emitError() << "cannot write '" << output << "': " << error;
      return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
