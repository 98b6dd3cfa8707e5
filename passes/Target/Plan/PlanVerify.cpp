// plan-verify: the end of the plan phase; the image plan-write would write, checked by the
// runtime's verifier and discarded (see Passes.td).
#include "passes/Target/Plan/PlanWriter.h"

#define DEBUG_TYPE "plan-verify"

namespace dp::plan {
#define GEN_PASS_DEF_PLANVERIFYPASS
#include "passes/Target/Plan/Passes.h.inc"
} // namespace dp::plan

using namespace mlir;

namespace {

struct PlanVerifyPass : dp::plan::impl::PlanVerifyPassBase<PlanVerifyPass> {
  void runOnOperation() override {
    std::string image;
    if (failed(dp::plan::writePlan(getOperation(), dp::plan::kProducer, image)))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
