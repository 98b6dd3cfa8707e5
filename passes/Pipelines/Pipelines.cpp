// The default dpc pipeline and tool-wide registration.
#include "passes/Pipelines/Pipelines.h"

#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Plan/IR/PlanDialect.h"
#include "passes/Conversion/Passes.h"
#include "passes/Graph/Passes.h"
#include "passes/Plan/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace dp {

void buildCompilePipeline(OpPassManager &pm, const CompileOptions &options) {
  pm.addPass(graph::createVerifyModelPass());
  pm.addPass(graph::createDeriveStepsPass());
  pm.addPass(graph::createAutodiffPass());
  graph::ExpandOptimizerPassOptions opt;
  opt.lrScale = options.lrScale;
  pm.addPass(graph::createExpandOptimizerPass(opt));
  pm.addPass(createConvertGraphToPlanPass());
  pm.addPass(plan::createPlanMemoryPass());
}

void registerDialects(DialectRegistry &registry) {
  registry.insert<func::FuncDialect, graph::GraphDialect, plan::PlanDialect>();
}

void registerPassesAndPipelines() {
  graph::registerGraphPasses();
  registerConversionPasses();
  plan::registerPlanPasses();
  PassPipelineRegistration<CompileOptions>(
      "dp-compile", "The default dpc pipeline: from a model to a planned plan.program",
      buildCompilePipeline);
}

} // namespace dp
