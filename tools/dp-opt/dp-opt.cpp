// dp-opt: mlir-opt for dp's dialects and passes. Runs any pass or pipeline on any IR dump, so
// each step of `dpc compile --dump-dir` can be replayed and inspected on its own.
#include "passes/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  dp::registerDialects(registry);
  dp::registerPassesAndPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dp-opt: run dp passes on dp IR\n", registry));
}
