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

/// ReLU6: min(max(x, 0), 6) (PyTorch's ReLU6, ONNX's Clip(0, 6); MobileNetV2's activation).
struct Relu6 {
  DP_HOST_DEVICE static float forward(float x) { return fminf(fmaxf(x, 0.0f), 6.0f); }
  DP_HOST_DEVICE static float backward(float x, float dy) {
    return x > 0.0f && x < 6.0f ? dy : 0.0f;
  }
};

/// Hard sigmoid as PyTorch computes it: relu6(x + 3) / 6 (ONNX's HardSigmoid with alpha 1/6,
/// beta 1/2).
struct HardSigmoid {
  DP_HOST_DEVICE static float forward(float x) { return fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
  DP_HOST_DEVICE static float backward(float x, float dy) {
    return x > -3.0f && x < 3.0f ? dy / 6.0f : 0.0f;
  }
};

/// Hard swish: x * relu6(x + 3) / 6 (PyTorch's Hardswish, ONNX's HardSwish; MobileNetV3's).
struct HardSwish {
  DP_HOST_DEVICE static float forward(float x) {
    return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
  }
  /// 0 below -3, 1 above 3, (2x + 3) / 6 between (PyTorch's rule at the kinks).
  DP_HOST_DEVICE static float backward(float x, float dy) {
    return x < -3.0f ? 0.0f : x > 3.0f ? dy : dy * (x / 3.0f + 0.5f);
  }
};

} // namespace dp::rt::pointwise
