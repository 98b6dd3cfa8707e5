// The graph dialect: model-level tensor ops, their attributes, and helpers shared by passes.
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/Interfaces/GradientOpInterface.h"

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
inline constexpr llvm::StringLiteral kModelAttr = "graph.model";

/// True for the attributes that may initialise a parameter.
bool isInitializer(mlir::Attribute attr);
/// True for the attributes that may be a function's optimizer.
bool isOptimizer(mlir::Attribute attr);

} // namespace dp::graph
