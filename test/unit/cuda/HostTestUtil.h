// Helpers of the CUDA backend's host tests: seeded inputs, tolerant comparison, and
// convolution geometries.
#pragma once

#include "runtime/kernels/Contract.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace dp::rt::cuda::testing {

/// n floats drawn uniformly from [low, high) with `seed`.
inline std::vector<float> uniform(size_t n, uint32_t seed, float low = -2.0f, float high = 2.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// Every element within atol + rtol * |want|; the first one that is not, named.
inline ::testing::AssertionResult near(const std::vector<float> &got,
                                       const std::vector<float> &want, double rtol,
                                       double atol = 1e-7) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(double(got[i]) - want[i]) <= atol + rtol * std::fabs(double(want[i]))))
      return ::testing::AssertionFailure()
             << "[" << i << "] got " << got[i] << ", want " << want[i];
  return ::testing::AssertionSuccess();
}

/// A convolution's geometry as the kernel contract returns it.
inline contract::ConvShape convShape(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh,
                                     int64_t kw, int64_t f, int64_t sh, int64_t sw, int64_t pt,
                                     int64_t pl, int64_t pb, int64_t pr, int64_t groups = 1,
                                     int64_t dh = 1, int64_t dw = 1) {
  contract::ConvShape s{};
  s.n = n, s.h = h, s.w = w, s.c = c, s.kh = kh, s.kw = kw, s.f = f;
  s.sh = sh, s.sw = sw, s.pt = pt, s.pl = pl, s.pb = pb, s.pr = pr;
  s.g = groups, s.dh = dh, s.dw = dw;
  s.oh = (h + pt + pb - (kh - 1) * dh - 1) / sh + 1;
  s.ow = (w + pl + pr - (kw - 1) * dw - 1) / sw + 1;
  return s;
}

/// The seed CNNs' and ResNet's convolution geometries and the awkward ones: valid, same with
/// odd and even kernels, TF's stride-2 same, 1x1 strided, asymmetric both ways; grouped,
/// depthwise (a group per channel, two filters each) and dilated.
inline std::vector<contract::ConvShape> convGeometries() {
  return {convShape(2, 28, 28, 1, 3, 3, 4, 1, 1, 0, 0, 0, 0),
          convShape(1, 8, 8, 3, 3, 3, 5, 1, 1, 1, 1, 1, 1),
          convShape(2, 8, 8, 2, 2, 2, 3, 1, 1, 0, 0, 1, 1),
          convShape(1, 9, 9, 2, 3, 3, 2, 2, 2, 0, 0, 1, 1),
          convShape(1, 7, 5, 3, 1, 1, 4, 2, 1, 0, 0, 0, 0),
          convShape(1, 6, 6, 2, 3, 2, 2, 1, 2, 2, 0, 1, 3),
          convShape(2, 6, 6, 4, 3, 3, 6, 1, 1, 1, 1, 1, 1, 2),
          convShape(1, 8, 8, 3, 3, 3, 6, 2, 2, 0, 0, 1, 1, 3),
          convShape(1, 9, 7, 2, 3, 2, 3, 1, 1, 2, 1, 2, 1, 1, 2, 3)};
}

} // namespace dp::rt::cuda::testing
