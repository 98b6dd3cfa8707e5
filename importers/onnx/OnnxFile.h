// Reading an ONNX model file (.onnx) for the importer: the protobuf, the tensors it keeps in
// external files (PyTorch's default exporter writes the weights to `<model>.onnx.data`), and
// ONNX's own checker where the library knows the model's versions. Every problem is a message
// naming the file; nothing here throws.
#pragma once

#include "onnx/onnx_pb.h" // defines ONNX_API, then includes the generated onnx-ml.pb.h

#include <cstdint>
#include <string>

namespace dp::onnx_import {

/// The newest IR version and default-domain opset the ONNX library here knows (1.12: 8 and
/// 17). Newer models are read, and checked by the importer's own rules only.
int64_t libraryIrVersion();
int64_t libraryOpset();

/// A model read whole: every tensor's data in the model (external data loaded into raw_data).
struct OnnxFile {
  onnx::ModelProto model;
  std::string path;
  /// The model's default-domain ("" or "ai.onnx") opset.
  int64_t opset = 0;
  /// Whether ONNX's checker ran: only for models within the library's IR version and opset.
  bool checked = false;
};

/// Limits on what a file may make the reader hold.
struct OnnxLimits {
  /// The model file (protobuf's own limit is 2 GiB).
  uint64_t modelBytes = (uint64_t(2) << 30) - 1;
  /// All external data together.
  uint64_t externalBytes = uint64_t(16) << 30;
};

/// Reads `path` into `out`. Returns "" or the problem, naming the file: not a regular file,
/// too large, not an ONNX model, no default-domain opset, an external tensor whose file is
/// missing, outside the model's folder, shorter than it says, or of another size than the
/// tensor's shape and type need, or a model ONNX's checker refuses.
std::string readOnnxFile(const std::string &path, OnnxFile &out, const OnnxLimits &limits = {});

/// readOnnxFile's work after the file is read: `bytes` as the model of `path` (external data
/// is looked for beside it).
std::string parseOnnxBytes(const std::string &bytes, const std::string &path, OnnxFile &out,
                           const OnnxLimits &limits = {});

/// Writes `model` to `path` atomically (a reader sees the old file or the new one), after
/// ONNX's checker where the library knows the model's IR version and opset. Returns "" or the
/// problem, naming the file.
std::string writeOnnxFile(const std::string &path, const onnx::ModelProto &model);

/// The bytes one element of an ONNX tensor data type takes (FLOAT: 4), or 0 for a type
/// without a fixed size (STRING) or unknown.
uint64_t elementBytes(int32_t dataType);

} // namespace dp::onnx_import
