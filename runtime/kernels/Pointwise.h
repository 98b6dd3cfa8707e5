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

} // namespace dp::rt::pointwise
