// Fuzz target: bytes as a model's text, through everything `dpc compile` does to it: the
// nesting pre-scan, MLIR's parser with dp's dialects, the whole compile pipeline (model
// verification, inlining, autodiff, replication over two devices, batch split, allreduce
// placement and fusion, lowering, memory planning) and the plan writer with the runtime's
// verifier, in memory. Diagnostics are swallowed: an error is the expected answer.
#include "dialect/Common/Nesting.h"
#include "fuzz/FuzzMlir.h"
#include "tools/common/GuardedStack.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

int compile(const std::string &text);

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Larger inputs make each run slower, not the parser deeper.
  if (size > (size_t(1) << 16))
    return 0;
  const std::string text(reinterpret_cast<const char *>(data), size);
  // As dpc runs it: on a guarded stack (an expression of 60,000 signs recurses past the
  // fuzzer's own 8 MiB). Running past even that one is a finding: the process ends with a
  // message.
  return dp::runOnGuardedStack([&] { return compile(text); },
                               "fuzz_model: the parser ran past its guarded stack\n", 99);
}

namespace {

int compile(const std::string &text) {
  if (dp::nestingBeyond(text, dp::kMaxNesting))
    return 0; // refused before parsing, as dpc refuses it
  // A context per input: uniqued types and attributes would otherwise accumulate.
  mlir::MLIRContext context(dp::fuzz::registry(), mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  mlir::ScopedDiagnosticHandler silence(&context,
                                        [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir"),
                             llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sources, &context);
  if (!module)
    return 0;
  dp::fuzz::compileAndWrite(*module);
  return 0;
}

} // namespace
