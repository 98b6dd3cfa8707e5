// The Keras-like model summary printed by `dpc summary`: layers, output shapes, parameters.
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace dp::reports {

struct ParamCounts {
  int64_t trainable = 0, nonTrainable = 0;
  int64_t total() const { return trainable + nonTrainable; }
};

/// Prints the table for a model function (one that passed graph-verify-model) and returns the
/// parameter totals; each parameter name counts once however often it is used.
ParamCounts printModelSummary(mlir::func::FuncOp model, llvm::raw_ostream &os);

/// `n` with thousands separators: 79510 -> "79,510".
std::string withThousands(int64_t n);

} // namespace dp::reports
