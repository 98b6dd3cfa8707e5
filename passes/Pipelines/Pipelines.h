// The default dpc pipeline, also registered by name (`dp-opt --dp-compile`), and the
// registration of every dp dialect and pass for the tools.
#pragma once

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "runtime/format/Enums.h"

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
  Option<int64_t> nodes{*this, "nodes",
                        llvm::cl::desc("Hosts the processes are spread over, evenly"),
                        llvm::cl::init(1)};
  Option<std::string> strategy{
      *this, "strategy",
      llvm::cl::desc("allreduce (data parallelism) or parameter-server"),
      llvm::cl::init("allreduce")};
  Option<int64_t> servers{*this, "servers",
                          llvm::cl::desc("Parameter servers (S; parameter-server only)"),
                          llvm::cl::init(1)};
  Option<int64_t> workers{*this, "workers",
                          llvm::cl::desc("Workers (W; parameter-server only)"),
                          llvm::cl::init(1)};
  Option<int64_t> staleness{
      *this, "staleness",
      llvm::cl::desc("Steps a worker may run ahead of the slowest; -1: unbounded "
                     "(parameter-server only)"),
      llvm::cl::init(-1)};
  Option<bool> sync{*this, "sync",
                    llvm::cl::desc("Servers average one gradient from every worker, then update "
                                   "(parameter-server only)"),
                    llvm::cl::init(false)};
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
  Option<std::string> lrSchedule{
      *this, "lr-schedule",
      llvm::cl::desc("The learning-rate schedule the runtime applies (constant, step:every=E,"
                     "factor=F, cosine:epochs=T[,min=M], plateau:patience=N,factor=F[,min=M], "
                     "each after an optional warmup-linear:epochs=K[,start=S]+)"),
      llvm::cl::init("")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("fp32, or bf16: mixed precision, the products (dense, matmul, "
                     "convolutions) in bf16 with f32 accumulation, parameters, gradients and "
                     "optimizer state in f32"),
      llvm::cl::init("fp32")};
  Option<std::string> allreducePrecision{
      *this, "allreduce-precision",
      llvm::cl::desc("fp32, or bf16: the gradient buckets cross the processes as bf16 (half "
                     "the bytes; summed in f32 within a process, averaged back to f32)"),
      llvm::cl::init("fp32")};
  Option<std::string> output{
      *this, "output",
      llvm::cl::desc("Write the plan to this .dpx file (verified by the runtime's verifier, "
                     "atomically); empty: leave the planned IR only"),
      llvm::cl::init("")};

  /// The one check of the options, with one message per option ("option-name ..."); empty
  /// when they are valid. `dpc` and the `dp-compile` pipeline both use it before any pass
  /// runs.
  std::string verify() const;
  /// The most processes a plan may be compiled for, and the largest bucket in MiB (a size past
  /// the model's gradients is one bucket anyway; past this it would overflow a byte count).
  static constexpr int64_t kMaxProcesses = rt::kMaxProcesses;
  static constexpr double kMaxBucketMb = 1 << 20;
  /// A learning rate scaled past a million times the model's only trains to inf and NaN.
  static constexpr double kMaxLrScale = 1e6;

  /// The factor the replicas add to the learning rate: R x P under linear scaling, else 1.
  double replicaLrFactor() const {
    return scaleLr == "linear" ? double(devicesPerProcess * trainingProcesses()) : 1.0;
  }
  bool parameterServer() const { return strategy == "parameter-server"; }
  /// The processes that compute gradients: the workers, or P.
  int64_t trainingProcesses() const { return parameterServer() ? workers : processes; }
  /// The factor the optimizer's learning rate is multiplied by: lr-scale times the replicas'.
  double effectiveLrScale() const { return lrScale * replicaLrFactor(); }
  /// The schedule's canonical text, with a warmup's default start filled in: the rate before
  /// the replicas' scaling (1 / (R x P) under linear scaling, Goyal et al.'s warmup), else
  /// 0.1. Empty for none. The options must verify().
  std::string canonicalLrSchedule() const;
};

/// Appends the passes of `dpc compile` to `pm`, in order, for options that verify().
void buildCompilePipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// Registers the dialects dp's IR uses.
void registerDialects(mlir::DialectRegistry &registry);
/// Registers every dp pass and the `dp-compile` pipeline with the global pass registry.
void registerPassesAndPipelines();

} // namespace dp
