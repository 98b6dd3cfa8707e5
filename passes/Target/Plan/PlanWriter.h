// Serialises a planned plan.program into the .dpx format the runtime reads, and the pass that
// writes it to a file.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace dp::plan {

#define GEN_PASS_DECL
#include "passes/Target/Plan/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Target/Plan/Passes.h.inc"

/// The compiler's name and version, recorded in every plan it writes.
inline constexpr const char *kProducer = "dpc 0.1.0";

/// Builds the .dpx image (header + FlatBuffer) of the module's plan.program, which must have
/// been through plan-memory, and checks it with the runtime's plan verifier. Emits a
/// diagnostic and fails on anything it cannot encode or the runtime would refuse.
mlir::LogicalResult writePlan(mlir::ModuleOp module, llvm::StringRef producer, std::string &out);

} // namespace dp::plan
