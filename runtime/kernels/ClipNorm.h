// Clipping by global norm (the clip_factor kernel of runtime/format/Kernels.def), written once
// for every backend: the factor by which the optimizer updates scale every gradient so that
// their global norm is at most max_norm (PyTorch's clip_grad_norm_). The sum of squares is
// formed in double, in an order fixed by the sizes alone, so that every replica, which holds
// the same averaged gradients, computes the same factor whatever its thread count.
#pragma once

#include "runtime/base/HostDevice.h"

#include <cmath>
#include <cstdint>

namespace dp::rt {

/// Elements of one block of the CPU sum: each input's blocks are summed on their own, then
/// added in order.
inline constexpr int64_t kClipBlock = 16384;

/// The sum of x[i]^2 for i = first, first + stride, ... < n, in double.
DP_HOST_DEVICE inline double sumOfSquares(const float *x, int64_t first, int64_t n,
                                          int64_t stride) {
  double sum = 0;
  for (int64_t i = first; i < n; i += stride)
    sum += double(x[i]) * double(x[i]);
  return sum;
}

/// min(1, maxNorm / (norm + 1e-6)) for norm = sqrt(sumOfSquares); NaN when the norm is NaN
/// (a NaN gradient is not hidden by clipping).
DP_HOST_DEVICE inline float clipFactor(double sumOfSquares, double maxNorm) {
  const double norm = sqrt(sumOfSquares);
  const double factor = maxNorm / (norm + 1e-6);
  if (factor != factor)
    return static_cast<float>(factor);
  return static_cast<float>(factor < 1 ? factor : 1);
}

} // namespace dp::rt
