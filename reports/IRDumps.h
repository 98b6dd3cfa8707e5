// The IR dumps of `dpc compile --dump-dir`: the module after every pass, numbered in pipeline
// order, each headed by `// collectives:` notes on what the pass did to the allreduces. Every
// dump is valid input to dp-opt.
#pragma once

#include "reports/Collectives.h"

#include "mlir/Pass/PassInstrumentation.h"

#include <string>
#include <vector>

namespace dp::reports {

/// Writes DIR/NN-<pass>.mlir after each pass that runs on a module, each atomically.
class IRDumps : public mlir::PassInstrumentation {
public:
  explicit IRDumps(std::string dir) : dir_(std::move(dir)) {}

  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override;

  /// Writes `op` as DIR/name atomically, after `notes` as comment lines ("// " each; a pass's
  /// dump: the pass with its options, the dp-opt command that replays it from the dump before,
  /// and what changed in the collectives). The first failure
  /// to write is reported on stderr and remembered (failed()); compilation goes on.
  void write(mlir::Operation *op, llvm::StringRef name, const std::vector<std::string> &notes = {});
  /// Whether a dump could not be written: dpc then exits non-zero.
  bool failed() const { return failed_; }

private:
  bool failed_ = false;
  std::vector<CollectiveRecord> before_;
  std::string dir_;
  unsigned index_ = 0;
  /// The last dump's name: the input of the next pass's replay.
  std::string previous_ = "00-input.mlir";
};

} // namespace dp::reports
