// The reference padding, pooling and batch-norm kernels; see PoolNorm.h. Straight loops in
// textbook order: no blocking, no threads, statistics summed in T.
#include "runtime/kernels/reference/PoolNorm.h"

#include <algorithm>
#include <cmath>

namespace dp::rt::ref {

template <typename T>
void zeroPad2d(const T *x, T *y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t pt, int64_t pb,
               int64_t pl, int64_t pr, T value) {
  const int64_t ph = h + pt + pb, pw = w + pl + pr;
  std::fill(y, y + n * ph * pw * c, value);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j)
        for (int64_t k = 0; k < c; ++k)
          y[((b * ph + i + pt) * pw + j + pl) * c + k] = x[((b * h + i) * w + j) * c + k];
}

template <typename T>
void zeroPad2dGrad(const T *dy, T *dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t pt,
                   int64_t pb, int64_t pl, int64_t pr) {
  const int64_t ph = h + pt + pb, pw = w + pl + pr;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j)
        for (int64_t k = 0; k < c; ++k)
          dx[((b * h + i) * w + j) * c + k] = dy[((b * ph + i + pt) * pw + j + pl) * c + k];
}

template <typename T>
void avgPool2d(const T *x, T *y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,
               int64_t sh, int64_t sw) {
  const int64_t oh = (h - kh) / sh + 1, ow = (w - kw) / sw + 1;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t p = 0; p < oh; ++p)
      for (int64_t q = 0; q < ow; ++q)
        for (int64_t k = 0; k < c; ++k) {
          T sum = 0;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
              sum += x[((b * h + p * sh + i) * w + q * sw + j) * c + k];
          y[((b * oh + p) * ow + q) * c + k] = sum / T(kh * kw);
        }
}

template <typename T>
void avgPool2dGrad(const T *dy, T *dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh,
                   int64_t kw, int64_t sh, int64_t sw) {
  const int64_t oh = (h - kh) / sh + 1, ow = (w - kw) / sw + 1;
  std::fill(dx, dx + n * h * w * c, T(0));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t p = 0; p < oh; ++p)
      for (int64_t q = 0; q < ow; ++q)
        for (int64_t k = 0; k < c; ++k) {
          const T share = dy[((b * oh + p) * ow + q) * c + k] / T(kh * kw);
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
              dx[((b * h + p * sh + i) * w + q * sw + j) * c + k] += share;
        }
}

template <typename T> void batchMoments(const T *x, T *stats, int64_t rows, int64_t c) {
  for (int64_t k = 0; k < c; ++k) {
    T sum = 0, squares = 0;
    for (int64_t r = 0; r < rows; ++r) {
      sum += x[r * c + k];
      squares += x[r * c + k] * x[r * c + k];
    }
    stats[k] = sum / T(rows);
    stats[c + k] = squares / T(rows);
  }
}

namespace {

/// mean and 1 / sqrt(var + epsilon) of channel k from batch_moments' statistics.
template <typename T>
void channelStats(const T *stats, int64_t c, int64_t k, double epsilon, T &mean, T &invStd) {
  mean = stats[k];
  const T var = std::max(stats[c + k] - mean * mean, T(0));
  invStd = T(1) / std::sqrt(var + T(epsilon));
}

} // namespace

template <typename T>
void batchNormTrain(const T *x, const T *stats, const T *gamma, const T *beta, T *y, int64_t rows,
                    int64_t c, double epsilon, bool relu) {
  for (int64_t k = 0; k < c; ++k) {
    T mean, invStd;
    channelStats(stats, c, k, epsilon, mean, invStd);
    for (int64_t r = 0; r < rows; ++r) {
      const T v = gamma[k] * (x[r * c + k] - mean) * invStd + beta[k];
      // As the activation kernel's relu: NaN and -0 give +0.
      y[r * c + k] = relu && !(v > T(0)) ? T(0) : v;
    }
  }
}

template <typename T>
void batchNormInfer(const T *x, const T *gamma, const T *beta, const T *movingMean,
                    const T *movingVar, T *y, int64_t rows, int64_t c, double epsilon, bool relu) {
  for (int64_t k = 0; k < c; ++k) {
    const T invStd = T(1) / std::sqrt(movingVar[k] + T(epsilon));
    for (int64_t r = 0; r < rows; ++r) {
      const T v = gamma[k] * (x[r * c + k] - movingMean[k]) * invStd + beta[k];
      y[r * c + k] = relu && !(v > T(0)) ? T(0) : v;
    }
  }
}

template <typename T>
void batchNormGradParams(const T *x, const T *stats, const T *dy, T *dgamma, T *dbeta, int64_t rows,
                         int64_t c, double epsilon) {
  for (int64_t k = 0; k < c; ++k) {
    T mean, invStd;
    channelStats(stats, c, k, epsilon, mean, invStd);
    T g = 0, b = 0;
    for (int64_t r = 0; r < rows; ++r) {
      g += dy[r * c + k] * (x[r * c + k] - mean) * invStd;
      b += dy[r * c + k];
    }
    dgamma[k] = g;
    dbeta[k] = b;
  }
}

template <typename T>
void batchNormGradInput(const T *x, const T *stats, const T *gamma, const T *dgamma, const T *dbeta,
                        const T *dy, T *dx, int64_t rows, int64_t c, double epsilon) {
  for (int64_t k = 0; k < c; ++k) {
    T mean, invStd;
    channelStats(stats, c, k, epsilon, mean, invStd);
    for (int64_t r = 0; r < rows; ++r) {
      const T xhat = (x[r * c + k] - mean) * invStd;
      dx[r * c + k] = gamma[k] * invStd * (dy[r * c + k] - (dbeta[k] + xhat * dgamma[k]) / T(rows));
    }
  }
}

template <typename T>
void movingStatsUpdate(const T *stats, T *movingMean, T *movingVar, int64_t c, double momentum) {
  const T mu = T(momentum), rest = T(1 - momentum);
  for (int64_t k = 0; k < c; ++k) {
    const T mean = stats[k], var = std::max(stats[c + k] - mean * mean, T(0));
    movingMean[k] = mu * movingMean[k] + rest * mean;
    movingVar[k] = mu * movingVar[k] + rest * var;
  }
}

#define DP_REF_INSTANTIATE(T)                                                                      \
  template void zeroPad2d<T>(const T *, T *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, \
                             int64_t, int64_t, T);                                                 \
  template void zeroPad2dGrad<T>(const T *, T *, int64_t, int64_t, int64_t, int64_t, int64_t,      \
                                 int64_t, int64_t, int64_t);                                       \
  template void avgPool2d<T>(const T *, T *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, \
                             int64_t, int64_t);                                                    \
  template void avgPool2dGrad<T>(const T *, T *, int64_t, int64_t, int64_t, int64_t, int64_t,      \
                                 int64_t, int64_t, int64_t);                                       \
  template void batchMoments<T>(const T *, T *, int64_t, int64_t);                                 \
  template void batchNormTrain<T>(const T *, const T *, const T *, const T *, T *, int64_t,        \
                                  int64_t, double, bool);                                          \
  template void batchNormInfer<T>(const T *, const T *, const T *, const T *, const T *, T *,      \
                                  int64_t, int64_t, double, bool);                                 \
  template void batchNormGradParams<T>(const T *, const T *, const T *, T *, T *, int64_t,         \
                                       int64_t, double);                                           \
  template void batchNormGradInput<T>(const T *, const T *, const T *, const T *, const T *,       \
                                      const T *, T *, int64_t, int64_t, double);                   \
  template void movingStatsUpdate<T>(const T *, T *, T *, int64_t, double);
DP_REF_INSTANTIATE(float)
DP_REF_INSTANTIATE(double)
#undef DP_REF_INSTANTIATE

} // namespace dp::rt::ref
