// The graph-phase passes (declared in Passes.td).
#pragma once

#include "dialect/Graph/IR/GraphDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dp::graph {
#define GEN_PASS_DECL
#include "passes/Graph/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Graph/Passes.h.inc"
} // namespace dp::graph
