// The ONNX importer: an ONNX model's forward graph becomes dp's model function (graph dialect),
// with the loss and optimizer the user chooses. dp derives the backward pass itself, so the
// forward graph is all it takes. Each ONNX node type the importer accepts is one entry of its
// table (supportedOps), which says from which opset and with which attributes; anything else
// is refused naming the node, its op type, the opset and what is missing, never changed
// silently. Shape arithmetic (Shape, Gather, Concat, ... on constants) is folded at the
// batch size given.
//
// Layout: ONNX's images are NCHW, dp's NHWC. A 4-D value keeps its ONNX (logical) shape in
// the importer and is NHWC in the graph; ops that would see the difference are refused
// where the importer cannot yet express it.
#pragma once

#include "importers/onnx/Layout.h"
#include "importers/onnx/OnnxFile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace dp::onnx_import {

struct ImportOptions {
  /// The batch size; 0: the model's own, where its inputs fix one.
  int64_t batch = 0;
  /// The loss on the model's output: "softmax-cross-entropy" (integer class labels), or
  /// "mean-squared-error" ("mse"; a regression: float targets of the output's shape, the
  /// output as computed, flattened to [batch, features] in ONNX's order), or
  /// "binary-cross-entropy" ("bce"; K yes/no outputs: float targets in [0, 1] of the output's
  /// shape, the output the logits, flattened alike).
  std::string loss = "softmax-cross-entropy";
  /// softmax-cross-entropy's label smoothing, in [0, 1] (0: none).
  double labelSmoothing = 0;
  /// The optimizer as NAME[:key=value,...] (sgd, momentum, adam), as in `--optimizer`.
  std::string optimizer = "sgd:lr=0.01";
  /// The model function's name; "" derives it from the file name.
  std::string name;
  /// A dynamic batch without `batch` is 1 (for export, where the batch does not matter).
  bool anyBatch = false;
  /// The output may have any rank >= 1 with the batch first: the loss takes it flattened to
  /// [batch, features] in ONNX's order of its elements, and the eval step's predictions are
  /// that (ONNX's operator conformance tests read any op's result so).
  bool flattenOutput = false;
};

/// The losses `--loss` takes, for help texts.
inline constexpr const char *kLossNames =
    "softmax-cross-entropy, mean-squared-error (mse), binary-cross-entropy (bce)";

/// `NAME[:key=value,...]` as the text of a graph optimizer attribute (`#graph.adam<lr = 1e-3>`),
/// or "" after setting `error`.
std::string optimizerAttributeText(const std::string &spec, std::string &error);

/// The model as a module holding one model function, or null after reporting every problem
/// as an error diagnostic on `context` (located at the ONNX node: a NameLoc of the node's name
/// around the file's location). `context` must have dp's dialects loaded.
/// `origins`, where given, receives each parameter's ONNX value and layout (for export);
/// `inputLayouts`, each model input's layout in the model function (axis j of the argument is
/// ONNX axis layout[j]: {0, 2, 3, 1} for an image fed NHWC).
mlir::OwningOpRef<mlir::ModuleOp>
importModel(mlir::MLIRContext &context, const OnnxFile &file, const ImportOptions &options,
            std::vector<ParamOrigin> *origins = nullptr,
            std::vector<std::vector<int64_t>> *inputLayouts = nullptr);

/// The output of a model whose every input is an initializer, folded on the host as the
/// importer folds shape arithmetic (ONNX's conformance tests of those ops): its values in
/// ONNX's order, its shape, and whether it holds floating-point values (else integers or
/// booleans). Returns "" or the first problem.
std::string foldedOutput(mlir::MLIRContext &context, const OnnxFile &file,
                         std::vector<double> &values, std::vector<int64_t> &dims, bool &isFloat);

/// One accepted ONNX op type: from which default-domain opset, the attributes it takes, and
/// what it becomes in dp.
struct OpSupport {
  const char *opType;
  int64_t sinceOpset;
  const char *attributes;
  const char *becomes;
};
llvm::ArrayRef<OpSupport> supportedOps();

/// supportedOps as the Markdown table of docs/onnx.md (a test keeps the two equal).
std::string supportedOpsTable();

} // namespace dp::onnx_import
