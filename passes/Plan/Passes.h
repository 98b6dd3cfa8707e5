// The plan-phase passes (declared in Passes.td).
#pragma once

#include "dialect/Plan/IR/PlanDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dp::plan {
#define GEN_PASS_DECL
#include "passes/Plan/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Plan/Passes.h.inc"
} // namespace dp::plan
