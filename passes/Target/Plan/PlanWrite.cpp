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
  PlanWritePass(const dp::plan::PlanWritePassOptions &options,
                std::shared_ptr<const dp::rt::ExportSourceDesc> source)
      : PlanWritePassBase(options), source_(std::move(source)) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (output.empty()) {
      module.emitError("plan-write needs an output file (output=FILE)");
      return signalPassFailure();
    }
    std::string image;
    if (failed(dp::plan::writePlan(module, dp::plan::kProducer, image, source_.get())))
      return signalPassFailure();
    if (std::string error = dp::writeFileAtomically(output, image); !error.empty()) {
      module.emitError() << "cannot write '" << output << "': " << error;
      return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }

  std::shared_ptr<const dp::rt::ExportSourceDesc> source_;
};

} // namespace

std::unique_ptr<Pass>
dp::plan::createPlanWritePass(const PlanWritePassOptions &options,
                              std::shared_ptr<const dp::rt::ExportSourceDesc> source) {
  return std::make_unique<PlanWritePass>(options, std::move(source));
}
