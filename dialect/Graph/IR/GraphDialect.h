// The graph dialect: model-level tensor ops, their attributes, and helpers shared by passes.
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/Interfaces/BatchShardingOpInterface.h"
#include "dialect/Interfaces/GradientOpInterface.h"
#include "dialect/Interfaces/KernelLoweringOpInterface.h"
#include "dialect/Interfaces/MixedPrecisionOpInterface.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "dialect/Interfaces/StepOpInterfaces.h"

#include <algorithm>
#include <cstdint>

#include "dialect/Graph/IR/GraphDialect.h.inc"
#include "dialect/Graph/IR/GraphEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/Graph/IR/GraphAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialect/Graph/IR/GraphOps.h.inc"

namespace dp::graph {

/// Names of the discardable attributes that mark up functions and their arguments.
inline constexpr llvm::StringLiteral kInputAttr = "graph.input";
inline constexpr llvm::StringLiteral kOptimizerAttr = "graph.optimizer";
inline constexpr llvm::StringLiteral kStepAttr = "graph.step";
inline constexpr llvm::StringLiteral kOutputAttr = "graph.output";
/// On a step's arguments and results (graph-derive-steps): what the runtime feeds or reads
/// there, by the runtime's role names (InputRole, OutputRole: "samples", "loss").
inline constexpr llvm::StringLiteral kRoleAttr = "graph.role";
/// On a func.call of a block: the prefix its parameters get when graph-inline-calls inlines it.
inline constexpr llvm::StringLiteral kScopeAttr = "graph.scope";
inline constexpr llvm::StringLiteral kModelAttr = "graph.model";
/// On the train step: the learning-rate schedule's canonical text (graph-expand-optimizer).
inline constexpr llvm::StringLiteral kLrScheduleAttr = "graph.lr_schedule";

/// Checks shared by the verifiers of the ops (messages say expected versus found).
/// The result 0 of `op` has exactly `expected` as its shape.
mlir::LogicalResult checkResultShape(mlir::Operation *op, llvm::ArrayRef<int64_t> expected);
/// `value` is [channels]; `what` names it.
mlir::LogicalResult checkChannels(mlir::Operation *op, mlir::Value value, int64_t channels,
                                  llvm::StringRef what);
/// The channel count (last axis) of a normalised input with a batch axis and a channel axis.
mlir::FailureOr<int64_t> normChannels(mlir::Operation *op, mlir::Value input);
/// A normalisation's epsilon is positive.
mlir::LogicalResult checkEpsilon(mlir::Operation *op, double epsilon);

/// True for the attributes that may initialise a parameter.
bool isInitializer(mlir::Attribute attr);
/// True for the attributes that may be a function's optimizer.
bool isOptimizer(mlir::Attribute attr);

/// The geometry of one spatial axis of a convolution or pooling window: output size and the
/// padding before and after (TensorFlow's "same": the odd row or column goes after).
struct WindowAxis {
  int64_t out = 0, padBefore = 0, padAfter = 0;
};
/// Axis geometry for an input of `in`, a window of `window` and stride `stride`; `same` pads
/// to ceil(in / stride) outputs, otherwise no padding (floor). `out` is below 1 when the
/// window does not fit.
inline WindowAxis windowAxis(int64_t in, int64_t window, int64_t stride, bool same) {
  WindowAxis a;
  if (!same) {
    a.out = in >= window ? (in - window) / stride + 1 : 0;
    return a;
  }
  a.out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>((a.out - 1) * stride + window - in, 0);
  a.padBefore = total / 2;
  a.padAfter = total - a.padBefore;
  return a;
}

} // namespace dp::graph
