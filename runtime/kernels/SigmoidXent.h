// Binary cross-entropy on logits, its gradient and the binary accuracy's count (the
// sigmoid_xent, sigmoid_xent_grad and count_binary_correct kernels of runtime/format/
// Kernels.def), written once for every backend as runtime/kernels/SquaredError.h is: the CPU
// backend runs these functions in its generic threaded loss kernels, the CUDA backend in its
// single-block sum and grid-stride kernels. Only the step's valid rows count.
#pragma once

#include "runtime/base/HostDevice.h"
#include "runtime/kernels/ValidRows.h"

#include <cmath>
#include <cstdint>

namespace dp::rt {

/// sigmoid_xent and its gradient, as the backends' generic loss kernels take them.
struct SigmoidXentFns {
  /// The binary cross-entropy of sigmoid(x) against target t, computed stably from the logit:
  /// max(x, 0) - x t + log(1 + exp(-|x|)) (PyTorch's BCEWithLogitsLoss, Keras's
  /// BinaryCrossentropy(from_logits=True)).
  static DP_HOST_DEVICE double term(float x, float t) {
    const double xd = x;
    return (xd > 0 ? xd : 0.0) - xd * double(t) + log1p(exp(-fabs(xd)));
  }
  /// The sum of term over the valid rows r = first, first + stride, ... < rows of
  /// [rows, cols]: one of `stride` workers' share (added in worker order, then finish).
  static DP_HOST_DEVICE double share(const float *x, const float *t, int64_t rows, int64_t cols,
                                     const ValidRows &valid, int64_t first, int64_t stride) {
    double sum = 0;
    for (int64_t r = first; r < rows; r += stride)
      if (valid(r))
        for (int64_t k = 0; k < cols; ++k)
          sum += term(x[r * cols + k], t[r * cols + k]);
    return sum;
  }
  /// The loss: the mean over the valid elements.
  static DP_HOST_DEVICE float finish(double sum, const ValidRows &valid, int64_t rows,
                                     int64_t cols) {
    return valid.elementMean(sum, rows, cols);
  }
  /// The factor dloss / (V cols) of every valid element's gradient, V the valid rows.
  static DP_HOST_DEVICE float gradScale(float dloss, const ValidRows &valid, int64_t rows,
                                        int64_t cols) {
    const int64_t count = valid.count(rows) * cols;
    return count > 0 ? dloss / static_cast<float>(count) : 0.0f;
  }
  /// Element i of the gradient: scale (sigmoid(x) - t) in a valid row, zero past them. g may
  /// be x (each element is read before it is written).
  static DP_HOST_DEVICE void gradElement(const float *x, const float *t, float scale, float *g,
                                         int64_t cols, const ValidRows &valid, int64_t i) {
    g[i] = valid(i / cols) ? scale * (1.0f / (1.0f + expf(-x[i])) - t[i]) : 0.0f;
  }
};

/// count_binary_correct as the generic sum kernels take it: for each valid row, the fraction of
/// its outputs whose prediction (logit > 0) is the target's (target > 0.5), so that a row
/// counts 1 when all its outputs are right (Keras's binary_accuracy, averaged over the outputs).
struct BinaryCorrectFns {
  static DP_HOST_DEVICE double share(const float *x, const float *t, int64_t rows, int64_t cols,
                                     const ValidRows &valid, int64_t first, int64_t stride) {
    double sum = 0;
    for (int64_t r = first; r < rows; r += stride) {
      if (!valid(r))
        continue;
      int64_t right = 0;
      for (int64_t k = 0; k < cols; ++k)
        right += (x[r * cols + k] > 0) == (t[r * cols + k] > 0.5f);
      sum += double(right) / double(cols);
    }
    return sum;
  }
  static DP_HOST_DEVICE float finish(double sum, const ValidRows &, int64_t, int64_t) {
    return static_cast<float>(sum);
  }
};

} // namespace dp::rt
