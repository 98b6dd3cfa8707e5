// Writing an imported ONNX model back with the weights dp trained (`dpc export`, `dprun
// --export`): the same graph, each parameter's values in ONNX's layout as its initializer, so
// that the model runs wherever ONNX runs. No MLIR or LLVM here: dprun links it.
#pragma once

#include "importers/onnx/Layout.h"
#include "importers/onnx/OnnxFile.h"
#include "runtime/format/Plan.h"

#include <map>
#include <string>
#include <vector>

namespace dp::onnx_import {

/// Reads a `dprun --save-params` file (runtime/base/ParamsFile.h) into `out`, skipping
/// optimizer state (names with a '/'). Returns "" or the problem, naming the file.
std::string readParamsFile(const std::string &path, std::map<std::string, std::vector<float>> &out);

/// `file`'s model with every parameter of `origins` set from `params` (in dp's layout): an
/// initializer's values replaced, a value an Identity node copied becomes an initializer of
/// its own (the node removed), node inputs rewired where one initializer became two
/// parameters. Returns "" or the problem (a parameter missing from `params`, or of another
/// size).
std::string withTrainedWeights(const OnnxFile &file, const std::vector<ParamOrigin> &origins,
                               const std::map<std::string, std::vector<float>> &params,
                               onnx::ModelProto &out);

/// What a plan records of an imported model for `dprun --export`: the model without the
/// values of the initializers that `origins` name (the trained weights replace them), and
/// where each parameter goes back to.
rt::ExportSourceDesc exportSource(const OnnxFile &file, const std::vector<ParamOrigin> &origins);

/// Writes the model a plan recorded (`source`) to `path` with the weights `params` (in dp's
/// layout, by parameter name): `dprun --export`. Returns "" or the problem, naming the file.
std::string exportTrainedModel(const rt::ExportSourceDesc &source,
                               const std::map<std::string, std::vector<float>> &params,
                               const std::string &path);

} // namespace dp::onnx_import
