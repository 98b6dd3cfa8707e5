// The CUDA backend's own image, normalisation and data-movement kernels, written once as
// host-and-device code: what one thread computes for one output element. Gradients gather
// (each input element sums what reaches it) rather than scatter, so they need no atomics and
// give the same result on every run. OwnKernels.cu runs these over grid-stride loops; the
// host tests run them over every element against the reference kernels.
#pragma once

#include "runtime/base/HostDevice.h"

#include <cmath>
#include <cstdint>

namespace dp::rt::cuda {

/// An NHWC image's geometry and a window over it: the plan's PoolShape and PadShape in the
/// plain form the device code takes.
struct Pool {
  int64_t n, h, w, c, kh, kw, sh, sw, oh, ow;
};
struct Pad {
  int64_t n, h, w, c, pt, pl, ph, pw;
  /// What surrounds the image (zero_pad2d's: 0, or the lowest float before a max pool).
  float value = 0.0f;
};

// -------------------------------------------------------------------------------- padding

/// Element i of y[n,ph,pw,c]: x's element where the image lies, p.value around it.
DP_HOST_DEVICE inline float zeroPadElement(const float *x, const Pad &p, int64_t i) {
  const int64_t ch = i % p.c, col = i / p.c % p.pw, row = i / (p.c * p.pw) % p.ph,
                img = i / (p.c * p.pw * p.ph);
  const int64_t r = row - p.pt, q = col - p.pl;
  if (r < 0 || r >= p.h || q < 0 || q >= p.w)
    return p.value;
  return x[((img * p.h + r) * p.w + q) * p.c + ch];
}

/// Element i of dx[n,h,w,c]: the interior of dy.
DP_HOST_DEVICE inline float zeroPadGradElement(const float *dy, const Pad &p, int64_t i) {
  const int64_t ch = i % p.c, col = i / p.c % p.w, row = i / (p.c * p.w) % p.h,
                img = i / (p.c * p.w * p.h);
  return dy[((img * p.ph + row + p.pt) * p.pw + col + p.pl) * p.c + ch];
}

// -------------------------------------------------------------------------------- pooling

/// The output window position (image, row, column, channel) of element i of y[n,oh,ow,c].
struct WindowAt {
  int64_t img, row, col, ch;
};
DP_HOST_DEVICE inline WindowAt windowAt(const Pool &p, int64_t i) {
  return {i / (p.c * p.ow * p.oh), i / (p.c * p.ow) % p.oh, i / p.c % p.ow, i % p.c};
}

/// Index into x of the first largest element of output window `at` (row-major window order).
DP_HOST_DEVICE inline int64_t windowArgmax(const float *x, const Pool &p, const WindowAt &at) {
  const int64_t top = at.row * p.sh, left = at.col * p.sw;
  int64_t best = ((at.img * p.h + top) * p.w + left) * p.c + at.ch;
  float bestValue = x[best];
  for (int64_t i = 0; i < p.kh; ++i)
    for (int64_t j = 0; j < p.kw; ++j) {
      const int64_t at2 = ((at.img * p.h + top + i) * p.w + left + j) * p.c + at.ch;
      if (x[at2] > bestValue) {
        bestValue = x[at2];
        best = at2;
      }
    }
  return best;
}

/// Element i of max_pool2d's y.
DP_HOST_DEVICE inline float maxPoolElement(const float *x, const Pool &p, int64_t i) {
  return x[windowArgmax(x, p, windowAt(p, i))];
}

/// The output rows (or columns) whose windows cover input row `i`: [first, last], empty when
/// first > last. Window o covers [o * stride, o * stride + size).
struct Covering {
  int64_t first, last;
};
DP_HOST_DEVICE inline Covering covering(int64_t i, int64_t size, int64_t stride, int64_t outputs) {
  // o * stride <= i  and  o * stride + size > i.
  const int64_t low = i - size + 1;
  int64_t first = low <= 0 ? 0 : (low + stride - 1) / stride;
  int64_t last = i / stride;
  last = last > outputs - 1 ? outputs - 1 : last;
  return {first, last};
}

/// The sum of dy over the windows that cover element i of dx[n,h,w,c], in window order; when
/// `ArgmaxOnly`, only over the windows of x whose first largest element is this one (a
/// template argument: a run-time test costs max pooling's kernel 8 registers).
template <bool ArgmaxOnly>
DP_HOST_DEVICE inline float coveringSum(const float *x, const float *dy, const Pool &p, int64_t i) {
  const int64_t ch = i % p.c, col = i / p.c % p.w, row = i / (p.c * p.w) % p.h,
                img = i / (p.c * p.w * p.h);
  const Covering rows = covering(row, p.kh, p.sh, p.oh), cols = covering(col, p.kw, p.sw, p.ow);
  float sum = 0;
  for (int64_t o = rows.first; o <= rows.last; ++o)
    for (int64_t q = cols.first; q <= cols.last; ++q)
      if (!ArgmaxOnly || windowArgmax(x, p, {img, o, q, ch}) == i)
        sum += dy[((img * p.oh + o) * p.ow + q) * p.c + ch];
  return sum;
}

/// Element i of max_pool2d_grad's dx[n,h,w,c]: dy of every window whose first largest element
/// is this one.
DP_HOST_DEVICE inline float maxPoolGradElement(const float *x, const float *dy, const Pool &p,
                                               int64_t i) {
  return coveringSum<true>(x, dy, p, i);
}

/// Element i of avg_pool2d's y (N*OH*OW*C elements in NHWC order).
DP_HOST_DEVICE inline float avgPoolElement(const float *x, const Pool &p, int64_t i) {
  const WindowAt at = windowAt(p, i);
  const int64_t top = at.row * p.sh, left = at.col * p.sw;
  float sum = 0;
  for (int64_t r = 0; r < p.kh; ++r)
    for (int64_t q = 0; q < p.kw; ++q)
      sum += x[((at.img * p.h + top + r) * p.w + left + q) * p.c + at.ch];
  return sum / static_cast<float>(p.kh * p.kw);
}

/// Element i of avg_pool2d_grad's dx[n,h,w,c]: each covering window's dy, spread evenly.
DP_HOST_DEVICE inline float avgPoolGradElement(const float *dy, const Pool &p, int64_t i) {
  return coveringSum<false>(nullptr, dy, p, i) / static_cast<float>(p.kh * p.kw);
}

// ------------------------------------------------------------------ convolution filters

/// Element i of a KRSC filter k[f, kh, kw, c] (cuDNN's NHWC filter format) from dp's HWIO
/// kernel w[kh, kw, c, f]; `rsc` is kh * kw * c.
DP_HOST_DEVICE inline float hwioToKrscElement(const float *w, int64_t f, int64_t rsc, int64_t i) {
  return w[(i % rsc) * f + i / rsc];
}

/// Element i of dp's HWIO kernel w[kh, kw, c, f] from a KRSC filter k[f, kh, kw, c].
DP_HOST_DEVICE inline float krscToHwioElement(const float *k, int64_t f, int64_t rsc, int64_t i) {
  return k[(i % f) * rsc + i / f];
}

// ------------------------------------------------------------------- batch normalisation

/// mean and 1 / sqrt(var + epsilon) of channel k from batch statistics (mean, mean of squares)
/// of c channels; a slightly negative variance from rounding counts as 0.
struct ChannelStats {
  float mean, inv;
};
DP_HOST_DEVICE inline ChannelStats channelStats(const float *stats, int64_t c, int64_t k,
                                                double epsilon) {
  const double mean = stats[k];
  double var = double(stats[c + k]) - mean * mean;
  var = var < 0 ? 0 : var;
  return {static_cast<float>(mean), static_cast<float>(1.0 / sqrt(var + epsilon))};
}

/// Element i of batch_norm_train's y over rows of c channels.
DP_HOST_DEVICE inline float batchNormTrainElement(const float *x, const float *stats,
                                                  const float *gamma, const float *beta, int64_t c,
                                                  double epsilon, int64_t i) {
  const int64_t k = i % c;
  const ChannelStats s = channelStats(stats, c, k, epsilon);
  return gamma[k] * (x[i] - s.mean) * s.inv + beta[k];
}

/// Element i of batch_norm_infer's y, with the moving statistics.
DP_HOST_DEVICE inline float batchNormInferElement(const float *x, const float *gamma,
                                                  const float *beta, const float *movingMean,
                                                  const float *movingVar, int64_t c, double epsilon,
                                                  int64_t i) {
  const int64_t k = i % c;
  const float inv = static_cast<float>(1.0 / sqrt(double(movingVar[k]) + epsilon));
  return gamma[k] * (x[i] - movingMean[k]) * inv + beta[k];
}

/// Element i of batch_norm_grad_input's dx: gamma * inv * (dy - (dbeta + xhat * dgamma) / rows).
DP_HOST_DEVICE inline float batchNormGradInputElement(const float *x, const float *stats,
                                                      const float *gamma, const float *dgamma,
                                                      const float *dbeta, const float *dy,
                                                      int64_t rows, int64_t c, double epsilon,
                                                      int64_t i) {
  const int64_t k = i % c;
  const ChannelStats s = channelStats(stats, c, k, epsilon);
  const float xhat = (x[i] - s.mean) * s.inv;
  return gamma[k] * s.inv * (dy[i] - (dbeta[k] + xhat * dgamma[k]) / static_cast<float>(rows));
}

/// Channel k of moving_stats_update, in place.
DP_HOST_DEVICE inline void movingStatsElement(const float *stats, float *movingMean,
                                              float *movingVar, int64_t c, double momentum,
                                              int64_t k) {
  const float mu = static_cast<float>(momentum), rest = static_cast<float>(1.0 - momentum);
  const float mean = stats[k];
  float var = stats[c + k] - mean * mean;
  var = var < 0 ? 0 : var;
  movingMean[k] = mu * movingMean[k] + rest * mean;
  movingVar[k] = mu * movingVar[k] + rest * var;
}

// -------------------------------------------------------------------------- data movement

/// Word w (4 bytes: f32 and i32 alike) of a concat's output: `blocks` blocks of `outWords`,
/// each the inputs' runs in order; part p's run is `partWords[p]` words starting at word
/// `partStarts[p]` of the block (ascending, partStarts[0] = 0).
DP_HOST_DEVICE inline uint32_t concatWord(const uint32_t *const *parts, const int64_t *partStarts,
                                          const int64_t *partWords, int count, int64_t outWords,
                                          int64_t w) {
  const int64_t block = w / outWords, within = w % outWords;
  int low = 0, high = count - 1; // the last part starting at or before `within`
  while (low < high) {
    const int mid = (low + high + 1) / 2;
    if (partStarts[mid] <= within)
      low = mid;
    else
      high = mid - 1;
  }
  return parts[low][block * partWords[low] + within - partStarts[low]];
}

/// Word w of a slice's output: block w / outWords of the input (inWords each), from word
/// `offsetWords` of it.
DP_HOST_DEVICE inline uint32_t sliceWord(const uint32_t *x, int64_t inWords, int64_t offsetWords,
                                         int64_t outWords, int64_t w) {
  return x[w / outWords * inWords + offsetWords + w % outWords];
}

/// The element of x [outer, da, middle, db, inner] that element i of its transpose y
/// [outer, db, middle, da, inner] is.
DP_HOST_DEVICE inline int64_t transposeSource(int64_t da, int64_t middle, int64_t db, int64_t inner,
                                              int64_t i) {
  const int64_t c = i % inner, rest = i / inner;
  const int64_t a = rest % da, m = rest / da % middle, b = rest / (da * middle) % db,
                o = rest / (da * middle * db);
  return (((o * da + a) * middle + m) * db + b) * inner + c;
}

} // namespace dp::rt::cuda
