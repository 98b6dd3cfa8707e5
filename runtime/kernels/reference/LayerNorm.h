// Naive reference implementation of layer normalisation and its gradients: the oracle of the
// CPU backend's layer_norm and layer_norm_grad kernels. x is `rows` rows of `c` values, each
// row normalised with its own statistics (two-pass mean and variance, in T).
#pragma once

#include <cmath>
#include <cstdint>

namespace dp::rt::ref {

/// The mean of a row of c values and 1 / sqrt(its variance + epsilon).
template <typename T> void rowStats(const T *xr, int64_t c, double epsilon, T &mean, T &inv) {
  T var = 0;
  mean = 0;
  for (int64_t k = 0; k < c; ++k)
    mean += xr[k];
  mean /= T(c);
  for (int64_t k = 0; k < c; ++k)
    var += (xr[k] - mean) * (xr[k] - mean);
  var /= T(c);
  inv = T(1) / std::sqrt(var + T(epsilon));
}

/// y = gamma * (x - mean) / sqrt(var + epsilon) + beta, per row of x[rows, c].
template <typename T>
void layerNorm(const T *x, const T *gamma, const T *beta, T *y, int64_t rows, int64_t c,
               double epsilon) {
  for (int64_t r = 0; r < rows; ++r) {
    const T *xr = x + r * c;
    T mean, inv;
    rowStats(xr, c, epsilon, mean, inv);
    for (int64_t k = 0; k < c; ++k)
      y[r * c + k] = gamma[k] * (xr[k] - mean) * inv + beta[k];
  }
}

/// The gradients of layerNorm from dy[rows, c]: dx (through each row's statistics too),
/// dgamma = sum over rows of dy * xhat, dbeta = sum over rows of dy.
template <typename T>
void layerNormGrad(const T *x, const T *gamma, const T *dy, T *dx, T *dgamma, T *dbeta,
                   int64_t rows, int64_t c, double epsilon) {
  for (int64_t k = 0; k < c; ++k)
    dgamma[k] = dbeta[k] = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T *xr = x + r * c, *dyr = dy + r * c;
    T mean, inv;
    rowStats(xr, c, epsilon, mean, inv);
    // g = dy * gamma; dx = inv * (g - mean(g) - xhat * mean(g * xhat)).
    T meanG = 0, meanGx = 0;
    for (int64_t k = 0; k < c; ++k) {
      const T xhat = (xr[k] - mean) * inv, g = dyr[k] * gamma[k];
      meanG += g, meanGx += g * xhat;
      dgamma[k] += dyr[k] * xhat;
      dbeta[k] += dyr[k];
    }
    meanG /= T(c), meanGx /= T(c);
    for (int64_t k = 0; k < c; ++k) {
      const T xhat = (xr[k] - mean) * inv;
      dx[r * c + k] = inv * (dyr[k] * gamma[k] - meanG - xhat * meanGx);
    }
  }
}

} // namespace dp::rt::ref
