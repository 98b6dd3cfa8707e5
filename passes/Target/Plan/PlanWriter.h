// Serialises a planned plan.program into the .dpx format the runtime reads.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace dp::plan {

/// Builds the .dpx image (header + FlatBuffer) of the module's plan.program, which must have
/// been through plan-memory. Emits a diagnostic and fails on anything it cannot encode.
mlir::LogicalResult writePlan(mlir::ModuleOp module, llvm::StringRef producer, std::string &out);

} // namespace dp::plan
