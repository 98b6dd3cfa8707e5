// dp-opt: mlir-opt for dp's dialects and passes. Runs any pass or pipeline on any IR dump, so
// each step of `dpc compile --dump-dir` can be replayed and inspected on its own. Its input is
// read as dpc reads a model (tools/common/ModelInput.h): a regular file, nesting bounded.
#include "passes/Pipelines/Pipelines.h"
#include "tools/common/ModelInput.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  dp::registerDialects(registry);
  dp::registerPassesAndPipelines();
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "dp-opt: run dp passes on dp IR\n", registry);
  std::unique_ptr<llvm::MemoryBuffer> input = dp::readModelText(inputFile, llvm::errs(), "dp-opt");
  if (!input)
    return 1;
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "dp-opt: " << error << "\n";
    return 1;
  }
  const mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
