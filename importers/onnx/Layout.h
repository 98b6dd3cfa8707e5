// How a parameter's values in dp relate to the ONNX initializer they come from, both ways:
// the importer applies toDp, `dpc export` toOnnx. One place for both, so that they stay each
// other's inverse (a unit test checks the round trip).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dp::onnx_import {

struct WeightLayout {
  enum class Kind {
    /// The same elements in the same order.
    Same,
    /// A product's weight: ONNX's [M, K] (Gemm with transB) is dp's [K, M] kernel.
    Transposed,
    /// A convolution's weight: ONNX's [F, C, KH, KW] is dp's [KH, KW, C, F].
    ConvFilter,
  };
  Kind kind = Kind::Same;
  /// The initializer's ONNX shape.
  std::vector<int64_t> onnxDims;
  /// A product's weight whose input is a flattened image: {C, H, W}; ONNX's K axis runs over
  /// (c, h, w), dp's over (h, w, c). Empty otherwise.
  std::vector<int64_t> flattenedChw;

  std::vector<float> toDp(const std::vector<float> &onnx) const;
  std::vector<float> toOnnx(const std::vector<float> &dp) const;
};

/// Where a parameter of an imported model came from, for writing it back.
struct ParamOrigin {
  /// The parameter's name in dp.
  std::string param;
  /// The ONNX value it holds: an initializer, or a value an Identity of one makes.
  std::string onnxName;
  /// Whether onnxName is an initializer of the file (else the Identity node that makes it is
  /// replaced by an initializer on export).
  bool isInitializer = true;
  /// Node inputs (node index, input index) to point at `param` instead: where one initializer
  /// became two parameters (a trained weight and untrained statistics).
  std::vector<std::pair<int, int>> rewire;
  WeightLayout layout;
};

} // namespace dp::onnx_import
