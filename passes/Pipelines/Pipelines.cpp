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
#include "runtime/format/Enums.h"
#include "runtime/format/LrSchedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"

#include <cmath>
#include <cstdio>

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
  opt.lrSchedule = options.canonicalLrSchedule();
  pm.addPass(graph::createExpandOptimizerPass(opt));
  if (options.precision != "fp32") {
    graph::MixedPrecisionPassOptions mixed;
    mixed.precision = options.precision;
    pm.addPass(graph::createMixedPrecisionPass(mixed));
  }
  pm.addPass(graph::createVerifyStepsPass());
  // Dist phase: the steps on R devices x P processes, gradients averaged in buckets.
  dist::ReplicatePassOptions replicate;
  replicate.devicesPerProcess = options.devicesPerProcess;
  replicate.processes = options.trainingProcesses();
  replicate.device = options.device;
  replicate.nodes = options.nodes;
  pm.addPass(dist::createReplicatePass(replicate));
  pm.addPass(dist::createSplitBatchPass());
  if (options.parameterServer()) {
    // Parameter servers: each worker normalises with its own shard's statistics (no
    // collective between workers), and the updates move to the servers.
    dist::PlaceParametersPassOptions place;
    place.servers = options.servers;
    place.staleness = options.staleness;
    place.sync = options.sync;
    pm.addPass(dist::createPlaceParametersPass(place));
    dist::SplitParameterServerPassOptions split;
    split.bucketMb = options.bucketMb;
    pm.addPass(dist::createSplitParameterServerPass(split));
  } else {
    if (options.syncBatchNorm)
      pm.addPass(dist::createSyncBatchNormPass());
    dist::InsertAllReducePassOptions insert;
    insert.precision = options.allreducePrecision;
    pm.addPass(dist::createInsertAllReducePass(insert));
    dist::FuseAllReducePassOptions fuse;
    fuse.bucketMb = options.bucketMb;
    pm.addPass(dist::createFuseAllReducePass(fuse));
    pm.addPass(dist::createSchedulePass());
  }
  pm.addPass(dist::createVerifyPass());
  // Plan phase: buffers, kernel calls and the memory plan.
  pm.addPass(createConvertDistToPlanPass());
  pm.addPass(plan::createPlanMemoryPass());
  pm.addPass(plan::createPlanVerifyPass());
  if (!options.output.empty()) {
    plan::PlanWritePassOptions write;
    write.output = options.output;
    pm.addPass(plan::createPlanWritePass(write));
  }
}

static std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

std::string CompileOptions::verify() const {
  // A process's replicas each hand their copy of a bucket to one collective kernel, which
  // takes at most the contract table's number of inputs.
  const int maxDevices = rt::kernelInfo(rt::KernelKind::AllReduceStart).maxInputs;
  if (devicesPerProcess < 1)
    return "devices-per-process must be at least 1, found " + std::to_string(devicesPerProcess);
  if (devicesPerProcess > maxDevices)
    return "devices-per-process must be at most " + std::to_string(maxDevices) +
           " (the devices of one process), found " + std::to_string(devicesPerProcess);
  if (processes < 1)
    return "processes must be at least 1, found " + std::to_string(processes);
  if (processes > kMaxProcesses)
    return "processes must be at most " + std::to_string(kMaxProcesses) + ", found " +
           std::to_string(processes);
  rt::DeviceKind kind;
  if (!rt::deviceKindByName(device, kind))
    return "device must be " + rt::deviceKindNames() + ", not '" + device + "'";
  if (precision != "fp32" && precision != "bf16")
    return "precision must be fp32 or bf16, not '" + precision + "'";
  if (precision == "bf16" && kind == rt::DeviceKind::Cuda)
    return "precision bf16 is built for device cpu only so far (the CUDA backend has no bf16 "
           "kernels yet)";
  if (allreducePrecision != "fp32" && allreducePrecision != "bf16")
    return "allreduce-precision must be fp32 or bf16, not '" + allreducePrecision + "'";
  if (allreducePrecision == "bf16" && kind == rt::DeviceKind::Cuda)
    return "allreduce-precision bf16 is built for device cpu only so far (NCCL's engine "
           "averages f32 buckets)";
  if (allreducePrecision == "bf16" && strategy == "parameter-server")
    return "allreduce-precision bf16 applies to the allreduce strategy (a parameter server "
           "receives f32 gradients)";
  if (strategy != "allreduce" && strategy != "parameter-server")
    return "strategy must be allreduce or parameter-server, not '" + strategy + "'";
  if (parameterServer()) {
    if (servers < 1 || workers < 1)
      return "servers and workers must be at least 1, found " + std::to_string(servers) +
             " and " + std::to_string(workers);
    if (servers + workers > kMaxProcesses)
      return "servers and workers must be at most " + std::to_string(kMaxProcesses) +
             " processes together, found " + std::to_string(servers + workers);
    if (devicesPerProcess != 1)
      return "devices-per-process must be 1 under the parameter-server strategy (one device "
             "per worker), found " +
             std::to_string(devicesPerProcess);
    if (processes != 1 && processes != servers + workers)
      return "processes is the servers and the workers together (" +
             std::to_string(servers + workers) + ") under the parameter-server strategy, "
             "found " + std::to_string(processes);
    if (nodes != 1)
      return "nodes must be 1 under the parameter-server strategy, found " +
             std::to_string(nodes);
    if (staleness < -1)
      return "staleness must be -1 (unbounded) or at least 0, found " + std::to_string(staleness);
    if (sync && staleness > 0)
      return "sync and staleness " + std::to_string(staleness) +
             " exclude each other (a synchronous step has staleness 0)";
  } else if (servers != 1 || workers != 1 || staleness != -1 || sync) {
    return std::string(servers != 1 ? "servers" : workers != 1 ? "workers"
                       : staleness != -1 ? "staleness" : "sync") +
           " needs strategy parameter-server";
  }
  if (nodes < 1 || processes % nodes != 0)
    return "nodes must be at least 1 and divide the " + std::to_string(processes) +
           " processes evenly, found " + std::to_string(nodes);
  if (std::isnan(bucketMb))
    return "bucket-mb must be a number of MiB, found nan";
  if (bucketMb < 0)
    return "bucket-mb must not be negative, found " + number(bucketMb);
  if (!(bucketMb <= kMaxBucketMb))
    return "bucket-mb must be at most " + number(kMaxBucketMb) +
           " (any size past the model's gradients is one bucket), found " + number(bucketMb);
  if (!(lrScale > 0) || !(lrScale <= kMaxLrScale))
    return "lr-scale must be positive and at most 1000000, found " +
           number(lrScale);
  if (scaleLr != "none" && scaleLr != "linear")
    return "scale-lr must be none or linear, not '" + scaleLr + "'";
  if (!lrSchedule.empty()) {
    rt::LrSchedule schedule;
    std::string problem;
    if (!rt::parseLrSchedule(lrSchedule, 0.1, schedule, problem))
      return "lr-schedule '" + lrSchedule + "': " + problem;
  }
  return {};
}

std::string CompileOptions::canonicalLrSchedule() const {
  if (lrSchedule.empty())
    return "";
  const double factor = replicaLrFactor();
  rt::LrSchedule schedule;
  std::string problem;
  if (!rt::parseLrSchedule(lrSchedule, factor > 1 ? 1.0 / factor : 0.1, schedule, problem))
    return lrSchedule; // verify() refused it already; the pass says so again
  return schedule.isConstant() ? "" : rt::lrScheduleText(schedule);
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
        if (failed(options.parseFromString(text)))
          return failure();
        if (std::string message = options.verify(); !message.empty())
          return error("dp-compile: " + message);
        buildCompilePipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) { handler(CompileOptions()); });
}

} // namespace dp
