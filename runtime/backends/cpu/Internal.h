// Declarations shared by the CPU backend's source files: one factory per kernel kind, and the
// row-wise softmax helpers that several families use.
#pragma once

#include "runtime/device/Kernel.h"
#include "runtime/kernels/Contract.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

namespace dp::rt::cpu {

// One factory per kernel kind of the contract table, given its typed attributes and the
// geometry the contract's check of the kind returned (the factory dispatch checks first).
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                                         \
  std::unique_ptr<Kernel> make##Enum(const KernelSite &site, const Attrs &attrs,                   \
                                     contract::Geometry<KernelKind::Enum> geometry);
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#include "runtime/format/Kernels.def"

// The contract's geometries, which every factory gets from the contract's check of its kind.
using contract::ConcatShape;
using contract::DenseShape;
using contract::MatMulShape;
using contract::NormShape;
using contract::PadShape;
using contract::PoolShape;
using contract::Rows;
using contract::SliceShape;
using contract::XentShape;

/// Largest element of x[0, n); n > 0.
inline float rowMax(const float *x, int64_t n) {
  float m = x[0];
#pragma omp simd reduction(max : m)
  for (int64_t i = 1; i < n; ++i)
    m = x[i] > m ? x[i] : m;
  return m;
}

/// exp(x) for x <= 0, the arguments of a softmax once the row max is subtracted, within about
/// 2 ulp. Branch-free and libm-free so that loops over it vectorise (libm's expf does not);
/// arguments below -87 give about 1e-38 instead of underflowing further.
inline float expNonPositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  // exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln(2) / 2. Adding and subtracting
  // 1.5 * 2^23 rounds to the nearest integer without a libm call.
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  // ln 2 in two parts (Cody-Waite) keeps r exact to f32 precision.
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23; // 2^n; n >= -126 keeps it normal
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

/// sum(exp(x - shift)) over x[0, n), where shift >= max(x).
inline float sumExpShifted(const float *x, int64_t n, float shift) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i)
    s += expNonPositive(x[i] - shift);
  return s;
}

/// y[i] = exp(x[i] - shift) for i < n, returning their sum. y may be x.
inline float expShifted(const float *x, float *y, int64_t n, float shift) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) {
    const float e = expNonPositive(x[i] - shift);
    y[i] = e;
    s += e;
  }
  return s;
}

/// y = softmax(x) over one row of n; subtracts the row max so large logits cannot overflow.
/// y may be x.
inline void softmaxRow(const float *x, float *y, int64_t n) {
  const float inv = 1.0f / expShifted(x, y, n, rowMax(x, n));
  for (int64_t i = 0; i < n; ++i)
    y[i] *= inv;
}

/// Applies softmaxRow to each of `rows` rows of `cols`, in parallel when large. y may be x.
void softmaxRows(const float *x, float *y, int64_t rows, int64_t cols);

} // namespace dp::rt::cpu
