// The per-pass IR dumps (see IRDumps.h).
#include "reports/IRDumps.h"

#include "dialect/Common/AtomicFile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dp::reports {

void IRDumps::runBeforePass(Pass *pass, Operation *op) {
  if (auto module = dyn_cast<ModuleOp>(op))
    before_ = collectCollectives(module);
}

void IRDumps::runAfterPass(Pass *pass, Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return;
  std::string name = llvm::formatv("{0:d2}-{1}.mlir", ++index_, pass->getArgument()).str();
  // The pass with its options as a pipeline, so that the dump replays as printed.
  std::string pipeline;
  llvm::raw_string_ostream p(pipeline);
  pass->printAsTextualPipeline(p);
  std::vector<std::string> notes = {"after pass: " + pipeline,
                                    "replay: dp-opt " + previous_ +
                                        " --pass-pipeline='builtin.module(" + pipeline + ")'"};
  for (std::string &change : describeCollectiveChanges(before_, collectCollectives(module)))
    notes.push_back("collectives: " + change);
  write(op, name, notes);
}

void IRDumps::write(Operation *op, StringRef name, const std::vector<std::string> &notes) {
  llvm::SmallString<256> path(dir_);
  llvm::sys::path::append(path, name);
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const std::string &note : notes)
    os << "// " << note << "\n";
  previous_ = name.str();
  op->print(os);
  os << "\n";
  if (std::string error = writeFileAtomically(path.str().str(), os.str()); !error.empty()) {
    if (!failed_)
      llvm::errs() << "dpc: cannot write the dump " << path << ": " << error << "\n";
    failed_ = true;
  }
}

} // namespace dp::reports
