// The dist-phase passes (declared in Passes.td).
#pragma once

#include "dialect/Dist/IR/DistDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dp::dist {
#define GEN_PASS_DECL
#include "passes/Dist/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist
