// The default dpc pipeline and tool-wide registration.
#include "passes/Pipelines/Pipelines.h"

#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Plan/IR/PlanDialect.h"
#include "passes/Conversion/Passes.h"
#include "passes/Dist/Passes.h"
#include "passes/Graph/Passes.h"
#include "passes/Plan/Passes.h"
#include "passes/Target/Plan/PlanWriter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"

#include <type_traits>

using namespace mlir;

namespace dp {

namespace {

// passOptions<T>(options): the pass options T with every field that has the name and the type
// of a field of CompileOptions.def set to that option's value. A field of the same name and
// another type (the pass's staleness, a number of steps) is set by the pipeline itself.
#define DP_FORWARD(Field)                                                                          \
  template <class T>                                                                               \
  auto forward_##Field(T &pass, const CompileOptions &options, int)                                \
      ->std::enable_if_t<                                                                          \
          std::is_same_v<decltype(T::Field), std::decay_t<decltype(options.Field.getValue())>>> {  \
    pass.Field = options.Field.getValue();                                                         \
  }                                                                                                \
  template <class T> void forward_##Field(T &, const CompileOptions &, long) {}
#define DP_INT(Field, ...) DP_FORWARD(Field)
#define DP_REAL(Field, ...) DP_FORWARD(Field)
#define DP_TEXT(Field, ...) DP_FORWARD(Field)
#define DP_FLAG(Field, ...) DP_FORWARD(Field)
#define DP_CHOICE(Field, ...) DP_FORWARD(Field)
#include "passes/Pipelines/CompileOptions.def"
#undef DP_FORWARD

template <class T> T passOptions(const CompileOptions &options) {
  T pass;
#define DP_INT(Field, ...) forward_##Field(pass, options, 0);
#define DP_REAL(Field, ...) forward_##Field(pass, options, 0);
#define DP_TEXT(Field, ...) forward_##Field(pass, options, 0);
#define DP_FLAG(Field, ...) forward_##Field(pass, options, 0);
#define DP_CHOICE(Field, ...) forward_##Field(pass, options, 0);
#include "passes/Pipelines/CompileOptions.def"
  return pass;
}

} // namespace

void buildCompilePipeline(OpPassManager &pm, const CompileOptions &options) {
  // Graph phase: one model becomes a train and an eval step, with gradients and updates.
  pm.addPass(graph::createInlineCallsPass());
  pm.addPass(graph::createVerifyModelPass());
  pm.addPass(graph::createDeriveStepsPass());
  pm.addPass(graph::createAutodiffPass());
  auto opt = passOptions<graph::ExpandOptimizerPassOptions>(options);
  opt.lrScale = options.effectiveLrScale();
  opt.lrSchedule = options.canonicalLrSchedule();
  pm.addPass(graph::createExpandOptimizerPass(opt));
  if (options.precision != "fp32")
    pm.addPass(
        graph::createMixedPrecisionPass(passOptions<graph::MixedPrecisionPassOptions>(options)));
  pm.addPass(graph::createVerifyStepsPass());
  // Dist phase: the steps on R devices x P processes, gradients averaged in buckets.
  auto replicate = passOptions<dist::ReplicatePassOptions>(options);
  replicate.processes = options.trainingProcesses();
  pm.addPass(dist::createReplicatePass(replicate));
  pm.addPass(dist::createSplitBatchPass());
  if (options.parameterServer()) {
    // Parameter servers: each worker normalises with its own shard's statistics (no
    // collective between workers), and the updates move to the servers.
    auto place = passOptions<dist::PlaceParametersPassOptions>(options);
    place.staleness = options.stalenessSteps();
    pm.addPass(dist::createPlaceParametersPass(place));
    pm.addPass(dist::createSplitParameterServerPass(
        passOptions<dist::SplitParameterServerPassOptions>(options)));
  } else {
    if (options.syncBatchNorm())
      pm.addPass(dist::createSyncBatchNormPass());
    if (options.microBatch > 0)
      pm.addPass(dist::createAccumulatePass());
    pm.addPass(
        dist::createInsertAllReducePass(passOptions<dist::InsertAllReducePassOptions>(options)));
    pm.addPass(dist::createFuseAllReducePass(passOptions<dist::FuseAllReducePassOptions>(options)));
    pm.addPass(dist::createSchedulePass());
    if (options.clipNorm > 0)
      pm.addPass(
          dist::createClipGradientsPass(passOptions<dist::ClipGradientsPassOptions>(options)));
    if (options.shardOptimizer > 0)
      pm.addPass(
          dist::createShardOptimizerPass(passOptions<dist::ShardOptimizerPassOptions>(options)));
  }
  pm.addPass(dist::createVerifyPass());
  // Plan phase: buffers, kernel calls and the memory plan.
  pm.addPass(createConvertDistToPlanPass());
  if (options.fuse == "all" || options.fuse == "padding")
    pm.addPass(plan::createFoldPaddingPass());
  if (options.fuse == "all" || options.fuse == "epilogues")
    pm.addPass(plan::createFuseEpiloguesPass());
  pm.addPass(plan::createAssignLayoutsPass(passOptions<plan::AssignLayoutsPassOptions>(options)));
  pm.addPass(plan::createPlanMemoryPass());
  pm.addPass(plan::createPlanVerifyPass());
  if (!options.output.empty()) {
    plan::PlanWritePassOptions write;
    write.output = options.output;
    pm.addPass(plan::createPlanWritePass(write, options.exportSource));
  }
}

void registerDialects(DialectRegistry &registry) {
  registry.insert<func::FuncDialect, graph::GraphDialect, dist::DistDialect, plan::PlanDialect>();
}

void registerPassesAndPipelines() {
  graph::registerGraphPasses();
  dist::registerDistPasses();
  registerConversionPasses();
  plan::registerPlanPasses();
  plan::registerPlanTargetPasses();
  // As PassPipelineRegistration, but options that do not verify are an error naming them.
  registerPassPipeline(
      "dp-compile",
      "The dpc pipeline: from a model to a planned plan.program (and with output=F, the plan "
      "file dpc writes)",
      [](OpPassManager &pm, StringRef text, function_ref<LogicalResult(const Twine &)> error) {
        CompileOptions options;
        if (failed(options.parse(text)))
          return failure();
        if (std::string message = options.verify(); !message.empty())
          return error("dp-compile: " + message);
        buildCompilePipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) { handler(CompileOptions()); });
}

} // namespace dp
