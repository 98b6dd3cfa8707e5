// WeightLayout's two directions (see Layout.h).
#include "importers/onnx/Layout.h"

namespace dp::onnx_import {
namespace {

/// The index in dp's values of each element of ONNX's, in ONNX's order.
std::vector<int64_t> dpIndexOfOnnx(const WeightLayout &l) {
  int64_t n = 1;
  for (int64_t d : l.onnxDims)
    n *= d;
  std::vector<int64_t> at(n);
  switch (l.kind) {
  case WeightLayout::Kind::Same:
  case WeightLayout::Kind::Transposed: {
    // ONNX [K, M] (Same) or [M, K] (Transposed); dp [K', M] with K' the K axis in dp's order.
    const bool t = l.kind == WeightLayout::Kind::Transposed;
    const bool matrix = l.onnxDims.size() == 2;
    const int64_t rows = matrix ? l.onnxDims[0] : n, cols = matrix ? l.onnxDims[1] : 1;
    const int64_t m = t ? rows : cols;
    auto dpRow = [&](int64_t kk) {
      if (l.flattenedChw.size() != 3)
        return kk;
      const int64_t C = l.flattenedChw[0], H = l.flattenedChw[1], W = l.flattenedChw[2];
      const int64_t c = kk / (H * W), h = kk / W % H, w = kk % W;
      return (h * W + w) * C + c;
    };
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t kk = t ? c : r, mm = t ? r : c;
        at[r * cols + c] = dpRow(kk) * m + mm;
      }
    return at;
  }
  case WeightLayout::Kind::ConvFilter: {
    const int64_t F = l.onnxDims[0], C = l.onnxDims[1], KH = l.onnxDims[2], KW = l.onnxDims[3];
    for (int64_t f = 0; f < F; ++f)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < KH; ++i)
          for (int64_t j = 0; j < KW; ++j)
            at[((f * C + c) * KH + i) * KW + j] = ((i * KW + j) * C + c) * F + f;
    return at;
  }
  }
  return at;
}

} // namespace

std::vector<float> WeightLayout::toDp(const std::vector<float> &onnx) const {
  std::vector<int64_t> at = dpIndexOfOnnx(*this);
  std::vector<float> out(onnx.size());
  for (size_t i = 0; i < at.size() && i < onnx.size(); ++i)
    out[at[i]] = onnx[i];
  return out;
}

std::vector<float> WeightLayout::toOnnx(const std::vector<float> &dp) const {
  std::vector<int64_t> at = dpIndexOfOnnx(*this);
  std::vector<float> out(dp.size());
  for (size_t i = 0; i < at.size() && i < dp.size(); ++i)
    out[i] = dp[at[i]];
  return out;
}

} // namespace dp::onnx_import
