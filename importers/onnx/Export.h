// Writing an imported ONNX model back with the weights dp trained (`dpc export`): the same
// graph, each parameter's values in ONNX's layout as its initializer, so that the model runs
// wherever ONNX runs. The parameters come from `dprun --save-params`.
#pragma once

#include "importers/onnx/Layout.h"
#include "importers/onnx/OnnxFile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace dp::onnx_import {

/// Reads a `dprun --save-params` file (runtime/base/ParamsFile.h) into `out`, skipping
/// optimizer state (names with a '/'). Returns "" or the problem, naming the file.
std::string readParamsFile(const std::string &path, llvm::StringMap<std::vector<float>> &out);

/// `file`'s model with every parameter of `origins` set from `params` (in dp's layout): an
/// initializer's values replaced, a value an Identity node copied becomes an initializer of
/// its own (the node removed), node inputs rewired where one initializer became two
/// parameters. Returns "" or the problem (a parameter missing from `params`, or of another
/// size).
std::string withTrainedWeights(const OnnxFile &file, llvm::ArrayRef<ParamOrigin> origins,
                               const llvm::StringMap<std::vector<float>> &params,
                               onnx::ModelProto &out);

} // namespace dp::onnx_import
