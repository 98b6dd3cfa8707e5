// The conventions of a model module, owned by the graph dialect: which functions are models
// and steps, their named inputs and outputs, their optimizer. Every phase and tool reads a
// module through these.
#pragma once

#include "dialect/Graph/IR/GraphDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace dp::graph {

/// The functions of `module` that are models (no `graph.step` yet).
llvm::SmallVector<mlir::func::FuncOp> getModelFunctions(mlir::ModuleOp module);
/// The function whose `graph.step` is `step`, or null.
mlir::func::FuncOp getStepFunction(mlir::ModuleOp module, llvm::StringRef step);
/// As getStepFunction, but a missing step is an error at the module ("no train step (run
/// graph-derive-steps first)").
mlir::func::FuncOp requireStepFunction(mlir::ModuleOp module, llvm::StringRef step);
/// The value a step function returns in `role` (its `graph.role`: "loss", "correct"), or null.
mlir::Value getStepOutput(mlir::func::FuncOp func, llvm::StringRef role);
/// The optimizer attribute of a function, or null.
mlir::Attribute getOptimizer(mlir::func::FuncOp func);
/// Copies the discardable attributes of `from` (placement, annotations of other phases) onto
/// `to`, for ops a pass rewrites into others.
void copyDiscardableAttrs(mlir::Operation *from, mlir::Operation *to);
/// The f32 values of a parameter's initial data `values` (its `init`): dense elements, or a
/// resource blob (`dense_resource<name>`) holding them little-endian; an error at `param` (a
/// graph.param, a plan.param) when they cannot be read.
mlir::FailureOr<std::vector<float>> initialValues(mlir::Operation *param,
                                                  mlir::ElementsAttr values);
/// The `scale` operand of an optimizer update (sgd, momentum, adam: empty when it has none), or
/// nullopt for any other op.
std::optional<mlir::MutableOperandRange> updateScaleOperand(mlir::Operation *op);
/// The scale an optimizer update reads its gradient with (a graph.clip_factor's), or null.
mlir::Value updateScale(mlir::Operation *op);

} // namespace dp::graph
