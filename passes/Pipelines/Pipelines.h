// The default dpc pipeline, also registered by name (`dp-opt --dp-compile`), and the
// registration of every dp dialect and pass for the tools.
#pragma once

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace dp {

struct CompileOptions : public mlir::PassPipelineOptions<CompileOptions> {
  Option<double> lrScale{*this, "lr-scale",
                         llvm::cl::desc("Multiply the learning rate by this factor"),
                         llvm::cl::init(1.0)};
  Option<int64_t> devicesPerProcess{*this, "devices-per-process",
                                    llvm::cl::desc("Replicas (devices) in each process"),
                                    llvm::cl::init(1)};
  Option<int64_t> processes{*this, "processes", llvm::cl::desc("Processes of the job"),
                            llvm::cl::init(1)};
  Option<std::string> device{*this, "device", llvm::cl::desc("Device kind: cpu or cuda"),
                             llvm::cl::init("cpu")};
  Option<double> bucketMb{*this, "bucket-mb",
                          llvm::cl::desc("Largest gradient bucket in MiB (0: one per gradient)"),
                          llvm::cl::init(25.0)};
  Option<bool> syncBatchNorm{
      *this, "sync-batch-norm",
      llvm::cl::desc("Batch statistics over the global batch (false: each replica's shard)"),
      llvm::cl::init(true)};
  Option<std::string> scaleLr{
      *this, "scale-lr",
      llvm::cl::desc("none: keep the learning rate; linear: multiply it by R x P (Goyal et al.)"),
      llvm::cl::init("none")};

  /// The factor the optimizer's learning rate is multiplied by: lr-scale, times R x P under
  /// linear scaling.
  double effectiveLrScale() const {
    return lrScale * (scaleLr == "linear" ? double(devicesPerProcess * processes) : 1.0);
  }
};

/// Appends the passes of `dpc compile` to `pm`, in order.
void buildCompilePipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// Registers the dialects dp's IR uses.
void registerDialects(mlir::DialectRegistry &registry);
/// Registers every dp pass and the `dp-compile` pipeline with the global pass registry.
void registerPassesAndPipelines();

} // namespace dp
