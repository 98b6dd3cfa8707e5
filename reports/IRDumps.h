// The IR dumps of `dpc compile --dump-dir`: the module after every pass, numbered in pipeline
// order, each headed by `// collectives:` notes on what the pass did to the allreduces. Every
// dump is valid input to dp-opt.
#pragma once

#include "reports/Collectives.h"

#include "mlir/Pass/PassInstrumentation.h"

#include <string>
#include <vector>

namespace dp::reports {

/// Writes DIR/NN-<pass>.mlir after each pass that runs on a module.
class IRDumps : public mlir::PassInstrumentation {
public:
  explicit IRDumps(std::string dir) : dir_(std::move(dir)) {}

  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override;

  /// Writes `op` as DIR/name, after `notes` as comment lines; failures to write are reported
  /// on stderr, not fatal.
  void write(mlir::Operation *op, llvm::StringRef name, const std::vector<std::string> &notes = {});

private:
  std::vector<CollectiveRecord> before_;
  std::string dir_;
  unsigned index_ = 0;
};

} // namespace dp::reports
