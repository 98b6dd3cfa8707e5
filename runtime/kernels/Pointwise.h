// The pointwise kernels' functions, written once for every backend: what DP_POINTWISE_KERNEL
// and DP_POINTWISE_GRAD_KERNEL of runtime/format/Kernels.def compute for one element. The CPU
// backend runs them in OpenMP loops, the CUDA backend in grid-stride kernels (nvcc compiles
// the same source for the device), and the tests compare both with the formulas in double
// precision and the gradients with finite differences.
//
// A function is a struct with
//   static float forward(float x);            y = f(x)
//   static float backward(float x, float dy); dx = dy * f'(x)
// using nothing beyond <cmath> functions that CUDA also provides on the device.
#pragma once

#include "runtime/base/HostDevice.h"

#include <cmath>

namespace dp::rt::pointwise {

/// GELU, exact (erf) form: x * Phi(x), Phi the standard normal CDF (PyTorch's default and
/// ONNX's Gelu with approximate = "none").
struct Gelu {
  DP_HOST_DEVICE static float forward(float x) {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  }
  /// d/dx [x Phi(x)] = Phi(x) + x phi(x).
  DP_HOST_DEVICE static float backward(float x, float dy) {
    const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
    const float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
    return dy * (cdf + x * pdf);
  }
};

} // namespace dp::rt::pointwise
