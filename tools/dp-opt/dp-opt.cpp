// dp-opt: mlir-opt for dp's dialects and passes. Runs any pass or pipeline on any IR dump, so
// each step of `dpc compile --dump-dir` can be replayed and inspected on its own. Its input is
// read as dpc reads a model (tools/common/ModelInput.h): a regular file, nesting bounded; its
// output file (-o) is written atomically.
#include "dialect/Common/AtomicFile.h"
#include "passes/Pipelines/Pipelines.h"
#include "tools/common/GuardedStack.h"
#include "tools/common/ModelInput.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

static int dpOptMain(int argc, char **argv) {
  mlir::DialectRegistry registry;
  dp::registerDialects(registry);
  dp::registerPassesAndPipelines();
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "dp-opt: run dp passes on dp IR\n", registry);
  std::unique_ptr<llvm::MemoryBuffer> input = dp::readModelText(inputFile, llvm::errs(), "dp-opt");
  if (!input)
    return 1;
  const mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (outputFile == "-")
    return mlir::failed(mlir::MlirOptMain(llvm::outs(), std::move(input), registry, config));
  // A stream that exists as one (/dev/null, a FIFO) is written as a stream.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(outputFile, status) && llvm::sys::fs::exists(status) &&
      !llvm::sys::fs::is_regular_file(status) && !llvm::sys::fs::is_directory(status)) {
    std::error_code ec;
    llvm::raw_fd_ostream stream(outputFile, ec);
    if (ec) {
      llvm::errs() << "dp-opt: cannot open '" << outputFile << "': " << ec.message() << "\n";
      return 1;
    }
    return mlir::failed(mlir::MlirOptMain(stream, std::move(input), registry, config));
  }
  // A file is written whole and atomically, after the passes succeeded.
  std::string text;
  llvm::raw_string_ostream os(text);
  if (mlir::failed(mlir::MlirOptMain(os, std::move(input), registry, config)))
    return 1;
  if (std::string error = dp::writeFileAtomically(outputFile, os.str()); !error.empty()) {
    llvm::errs() << "dp-opt: cannot write '" << outputFile << "': " << error << "\n";
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  // As dpc: input of any shape ends with a message, never a crash (tools/common/GuardedStack.h).
  static const std::string message = std::string("dp-opt: ") + dp::kParserStackMessage;
  return dp::runOnGuardedStack([&] { return dpOptMain(argc, argv); }, message.c_str());
}
