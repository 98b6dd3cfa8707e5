// The mean squared error and its gradient (the squared_error and squared_error_grad kernels
// of runtime/format/Kernels.def), written once for every backend: the CPU backend runs these
// functions in threaded loops, the CUDA backend in its single-block sum and grid-stride
// kernels (nvcc compiles the same source for the device), and the tests compare both with the
// reference. Only the step's valid rows count (ValidRows): the loss is the mean over their
// elements, and the rows past them get a zero gradient.
#pragma once

#include "runtime/base/HostDevice.h"
#include "runtime/kernels/ValidRows.h"

#include <cstdint>

namespace dp::rt {

/// The sum of (prediction - target)^2 over the valid rows r = first, first + stride, ... <
/// rows of [rows, cols]: the share of one of `stride` workers (the kernel adds the shares, in
/// worker order, and calls squaredErrorLoss).
DP_HOST_DEVICE inline double squaredErrorShare(const float *prediction, const float *target,
                                               int64_t rows, int64_t cols, const ValidRows &valid,
                                               int64_t first, int64_t stride) {
  double sum = 0;
  for (int64_t r = first; r < rows; r += stride) {
    if (!valid(r))
      continue;
    const float *p = prediction + r * cols, *t = target + r * cols;
    for (int64_t k = 0; k < cols; ++k) {
      const double d = double(p[k]) - double(t[k]);
      sum += d * d;
    }
  }
  return sum;
}

/// The loss from the valid rows' summed squares: their mean over the valid elements.
DP_HOST_DEVICE inline float squaredErrorLoss(double sum, const ValidRows &valid, int64_t rows,
                                             int64_t cols) {
  return valid.elementMean(sum, rows, cols);
}

/// The factor 2 dloss / (V cols) of every valid element's gradient, V the valid rows.
DP_HOST_DEVICE inline float squaredErrorGradScale(float dloss, const ValidRows &valid, int64_t rows,
                                                  int64_t cols) {
  const int64_t count = valid.count(rows) * cols;
  return count > 0 ? 2.0f * dloss / static_cast<float>(count) : 0.0f;
}

/// Element i of squared_error_grad over [rows, cols]: scale (prediction - target) in a valid
/// row, zero past them. g may be prediction (each element is read before it is written).
DP_HOST_DEVICE inline void squaredErrorGradElement(const float *prediction, const float *target,
                                                   float scale, float *g, int64_t cols,
                                                   const ValidRows &valid, int64_t i) {
  g[i] = valid(i / cols) ? scale * (prediction[i] - target[i]) : 0.0f;
}

/// squared_error and its gradient, as the backends' generic loss kernels take them.
struct SquaredErrorFns {
  static DP_HOST_DEVICE double share(const float *p, const float *t, int64_t rows, int64_t cols,
                                     const ValidRows &valid, int64_t first, int64_t stride) {
    return squaredErrorShare(p, t, rows, cols, valid, first, stride);
  }
  static DP_HOST_DEVICE float finish(double sum, const ValidRows &valid, int64_t rows,
                                     int64_t cols) {
    return squaredErrorLoss(sum, valid, rows, cols);
  }
  static DP_HOST_DEVICE float gradScale(float dloss, const ValidRows &valid, int64_t rows,
                                        int64_t cols) {
    return squaredErrorGradScale(dloss, valid, rows, cols);
  }
  static DP_HOST_DEVICE void gradElement(const float *p, const float *t, float scale, float *g,
                                         int64_t cols, const ValidRows &valid, int64_t i) {
    squaredErrorGradElement(p, t, scale, g, cols, valid, i);
  }
};

} // namespace dp::rt
