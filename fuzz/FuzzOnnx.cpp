// Fuzz target: bytes as an ONNX model file, through everything `dpc compile model.onnx` does
// to it: protobuf's parser, the reader's checks (opsets, external data, which a fuzzed model
// cannot reach: it has no folder), ONNX's checker, the importer at batch 4 with the default
// loss and optimizer, and the whole compile pipeline over two devices with the plan writer, in
// memory. Diagnostics are swallowed: an error is the expected answer.
#include "fuzz/FuzzMlir.h"
#include "importers/onnx/Import.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Larger inputs make each run slower, not the importer deeper.
  if (size > (size_t(1) << 17))
    return 0;
  dp::onnx_import::OnnxFile file;
  // A folder that does not exist: external data is refused, never read from the machine.
  if (!dp::onnx_import::parseOnnxBytes(std::string(reinterpret_cast<const char *>(data), size),
                                       "/nonexistent/fuzz.onnx", file)
           .empty())
    return 0;
  // A context per input: uniqued types and attributes would otherwise accumulate.
  mlir::MLIRContext context(dp::fuzz::registry(), mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  mlir::ScopedDiagnosticHandler silence(&context,
                                        [](mlir::Diagnostic &) { return mlir::success(); });
  dp::onnx_import::ImportOptions options;
  options.batch = 4;
  mlir::OwningOpRef<mlir::ModuleOp> module = dp::onnx_import::importModel(context, file, options);
  if (!module)
    return 0;
  dp::fuzz::compileAndWrite(*module);
  return 0;
}
