// Conversion passes between the pipeline's dialects (declared in Passes.td).
#pragma once

#include "dialect/Plan/IR/PlanDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dp {
#define GEN_PASS_DECL
#include "passes/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Conversion/Passes.h.inc"
} // namespace dp
