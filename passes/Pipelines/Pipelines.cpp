// The default dpc pipeline and tool-wide registration.
#include "passes/Pipelines/Pipelines.h"

#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Plan/IR/PlanDialect.h"
#include "passes/Conversion/Passes.h"
#include "passes/Dist/Passes.h"
#include "passes/Graph/Passes.h"
#include "passes/Plan/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace dp {

void buildCompilePipeline(OpPassManager &pm, const CompileOptions &options) {
  // Graph phase: one model becomes a train and an eval step, with gradients and updates.
  pm.addPass(graph::createInlineCallsPass());
  pm.addPass(graph::createVerifyModelPass());
  pm.addPass(graph::createDeriveStepsPass());
  pm.addPass(graph::createAutodiffPass());
  graph::ExpandOptimizerPassOptions opt;
  opt.lrScale = options.effectiveLrScale();
  pm.addPass(graph::createExpandOptimizerPass(opt));
  pm.addPass(graph::createVerifyStepsPass());
  // Dist phase: the steps on R devices x P processes, gradients averaged in buckets.
  dist::ReplicatePassOptions replicate;
  replicate.devicesPerProcess = options.devicesPerProcess;
  replicate.processes = options.processes;
  replicate.device = options.device;
  pm.addPass(dist::createReplicatePass(replicate));
  pm.addPass(dist::createSplitBatchPass());
  if (options.syncBatchNorm)
    pm.addPass(dist::createSyncBatchNormPass());
  pm.addPass(dist::createInsertAllReducePass());
  dist::FuseAllReducePassOptions fuse;
  fuse.bucketMb = options.bucketMb;
  pm.addPass(dist::createFuseAllReducePass(fuse));
  pm.addPass(dist::createSchedulePass());
  pm.addPass(dist::createVerifyPass());
  // Plan phase: buffers, kernel calls and the memory plan.
  pm.addPass(createConvertDistToPlanPass());
  pm.addPass(plan::createPlanMemoryPass());
}

void registerDialects(DialectRegistry &registry) {
  registry.insert<func::FuncDialect, graph::GraphDialect, dist::DistDialect, plan::PlanDialect>();
}

void registerPassesAndPipelines() {
  graph::registerGraphPasses();
  dist::registerDistPasses();
  registerConversionPasses();
  plan::registerPlanPasses();
  PassPipelineRegistration<CompileOptions>(
      "dp-compile", "The default dpc pipeline: from a model to a planned plan.program",
      buildCompilePipeline);
}

} // namespace dp
