// The default dpc pipeline, also registered by name (`dp-opt --dp-compile`), and the
// registration of every dp dialect and pass for the tools.
#pragma once

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Pipelines/CompileOptions.h"

namespace dp {

/// Appends the passes of `dpc compile` to `pm`, in order, for options that verify().
void buildCompilePipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// Registers the dialects dp's IR uses.
void registerDialects(mlir::DialectRegistry &registry);
/// Registers every dp pass and the `dp-compile` pipeline with the global pass registry.
void registerPassesAndPipelines();

} // namespace dp
