// Serialises a planned plan.program into the .dpx format the runtime reads, and the pass that
// writes it to a file.
#pragma once

#include "runtime/format/Plan.h"

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
/// diagnostic and fails on anything it cannot encode or the runtime would refuse. `source`,
/// where given, is the imported model the plan records for `dprun --export`.
mlir::LogicalResult writePlan(mlir::ModuleOp module, llvm::StringRef producer, std::string &out,
                              const rt::ExportSourceDesc *source = nullptr);

/// plan-write with an imported model's source to record in the plan (`dpc compile` of an
/// ONNX model); null records none.
std::unique_ptr<mlir::Pass> createPlanWritePass(const PlanWritePassOptions &options,
                                                std::shared_ptr<const rt::ExportSourceDesc> source);

} // namespace dp::plan
