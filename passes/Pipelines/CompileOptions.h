// The options of `dpc compile` and of the `dp-compile` pipeline, from the one table of
// CompileOptions.def.
#pragma once

#include "mlir/Pass/PassOptions.h"
#include "mlir/Support/LogicalResult.h"
#include "runtime/format/Enums.h"

#include <memory>
#include <set>
#include <string>

namespace dp::rt {
struct ExportSourceDesc; // runtime/format/Plan.h
} // namespace dp::rt

namespace dp {

/// One value of a choice option: its name and its help.
struct OptionChoice {
  const char *name;
  const char *help;
};

/// The values of each choice option of CompileOptions.def, by field name.
namespace compile_choices {
#define DP_VALUE(Name, Help)                                                                       \
  OptionChoice { Name, Help }
#define DP_CHOICE(Field, Name, Help, ...) inline constexpr OptionChoice Field[] = {__VA_ARGS__};
#include "passes/Pipelines/CompileOptions.def"
#undef DP_VALUE
} // namespace compile_choices

/// The options of `dpc compile` and of the `dp-compile` pipeline: the fields of
/// CompileOptions.def, and the plan file to write.
struct CompileOptions : public mlir::PassPipelineOptions<CompileOptions> {
#define DP_INT(Field, Name, Value, Default, Min, Max, WhyMax, Help)                                \
  Option<int64_t> Field{*this, Name, llvm::cl::desc(Help), llvm::cl::init(Default)};
#define DP_REAL(Field, Name, Value, Default, Min, MinExcluded, Max, WhyMax, Help)                  \
  Option<double> Field{*this, Name, llvm::cl::desc(Help), llvm::cl::init(Default)};
#define DP_TEXT(Field, Name, Value, Default, Help)                                                 \
  Option<std::string> Field{*this, Name, llvm::cl::desc(Help), llvm::cl::init(Default)};
#define DP_FLAG(Field, Name, Help)                                                                 \
  Option<bool> Field{*this, Name, llvm::cl::desc(Help), llvm::cl::init(false)};
#define DP_CHOICE(Field, Name, Help, ...)                                                          \
  Option<std::string> Field{*this, Name, llvm::cl::desc(Help),                                     \
                            llvm::cl::init(compile_choices::Field[0].name)};
#include "passes/Pipelines/CompileOptions.def"
  /// The driver's `-o`.
  Option<std::string> output{
      *this, "output",
      llvm::cl::desc("Write the plan to this .dpx file (verified by the runtime's verifier, "
                     "atomically); empty: leave the planned IR only"),
      llvm::cl::init("")};

  /// An imported model's source, recorded in the plan for `dprun --export` (set by `dpc`
  /// for an ONNX model; not a pipeline option).
  std::shared_ptr<const rt::ExportSourceDesc> exportSource;

  /// The options given explicitly, by name (the rest have their defaults). parse() records
  /// them; a driver that sets the fields itself records them too.
  std::set<std::string> given;
  /// Parses `name=value ...` (the `dp-compile` pipeline's text) and records what was given.
  mlir::LogicalResult parse(llvm::StringRef text);

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
  /// A process's replicas each hand their copy of a bucket to one collective kernel, which
  /// takes at most the contract table's number of inputs.
  static int64_t maxDevicesPerProcess();

  /// The range and value checks of CompileOptions.def for the option `name` (a message
  /// naming it, or empty when the value is in range). Passes check their own options of the
  /// same name with these too.
  static std::string check(llvm::StringRef name, int64_t value);
  static std::string check(llvm::StringRef name, double value);
  static std::string check(llvm::StringRef name, llvm::StringRef value);

  /// The factor the replicas add to the learning rate: R x P under linear scaling, else 1.
  double replicaLrFactor() const {
    return scaleLr == "linear" ? double(devicesPerProcess * trainingProcesses()) : 1.0;
  }
  bool parameterServer() const { return strategy == "parameter-server"; }
  /// Steps a worker may run ahead of the slowest: -1 for `inf`. The options must verify().
  int64_t stalenessSteps() const;
  bool syncBatchNorm() const { return batchNormStats == "global"; }
  /// The processes that compute gradients: the workers, or P.
  int64_t trainingProcesses() const { return parameterServer() ? workers : processes; }
  /// The factor the optimizer's learning rate is multiplied by: lr-scale times the replicas'.
  double effectiveLrScale() const { return lrScale * replicaLrFactor(); }
  /// The schedule's canonical text, with a warmup's default start filled in: the rate before
  /// the replicas' scaling (1 / (R x P) under linear scaling, Goyal et al.'s warmup), else
  /// 0.1. Empty for none. The options must verify().
  std::string canonicalLrSchedule() const;
};

} // namespace dp
