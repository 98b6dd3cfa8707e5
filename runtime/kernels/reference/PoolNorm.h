// Naive reference implementations of zero padding, average pooling and batch normalisation:
// the oracles that the CPU backend's kernels are tested against. Images are NHWC; the
// batch-norm functions see their input as `rows` rows of `c` channels (channels last, every
// other axis a row). Templated on the element type like Reference.h, so that tests can also
// evaluate forward passes in double for finite differences.
#pragma once

#include <cstdint>

namespace dp::rt::ref {

/// y[n, h+pt+pb, w+pl+pr, c] = x[n,h,w,c] surrounded by pt rows of `value` (zeros) above, pb
/// below, pl columns on the left and pr on the right.
template <typename T>
void zeroPad2d(const T *x, T *y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t pt, int64_t pb,
               int64_t pl, int64_t pr, T value = T(0));
/// Its gradient: dx[n,h,w,c] = the interior of dy[n, h+pt+pb, w+pl+pr, c].
template <typename T>
void zeroPad2dGrad(const T *dy, T *dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t pt,
                   int64_t pb, int64_t pl, int64_t pr);
/// Valid average pooling of x[n,h,w,c] with a kh x kw window and strides (sh, sw):
/// y[n,oh,ow,c] with oh = (h - kh) / sh + 1, ow = (w - kw) / sw + 1.
template <typename T>
void avgPool2d(const T *x, T *y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,
               int64_t sh, int64_t sw);
/// Its gradient: each dy[n,oh,ow,c] divided by kh * kw and added to every element of its
/// window of dx[n,h,w,c]; elements in no window get zero.
template <typename T>
void avgPool2dGrad(const T *dy, T *dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh,
                   int64_t kw, int64_t sh, int64_t sw);

/// stats[2,c] = (mean, mean of squares) over the rows of x[rows,c].
template <typename T> void batchMoments(const T *x, T *stats, int64_t rows, int64_t c);
/// y = gamma * (x - mean) / sqrt(var + epsilon) + beta on x[rows,c], with mean = stats[0] and
/// var = max(stats[1] - mean^2, 0); `relu`: y = max(0, ...) (the fused activation).
template <typename T>
void batchNormTrain(const T *x, const T *stats, const T *gamma, const T *beta, T *y, int64_t rows,
                    int64_t c, double epsilon, bool relu = false);
/// y = gamma * (x - movingMean) / sqrt(movingVar + epsilon) + beta on x[rows,c]; `relu`:
/// y = max(0, ...).
template <typename T>
void batchNormInfer(const T *x, const T *gamma, const T *beta, const T *movingMean,
                    const T *movingVar, T *y, int64_t rows, int64_t c, double epsilon,
                    bool relu = false);
/// dgamma[c] = sum over rows of dy * xhat, dbeta[c] = sum over rows of dy, where xhat =
/// (x - mean) / sqrt(var + epsilon) with the statistics of batchNormTrain.
template <typename T>
void batchNormGradParams(const T *x, const T *stats, const T *dy, T *dgamma, T *dbeta, int64_t rows,
                         int64_t c, double epsilon);
/// dx = gamma / sqrt(var + epsilon) * (dy - (dbeta + xhat * dgamma) / rows) on x[rows,c]: the
/// input gradient of batchNormTrain through the batch statistics too, given its parameter
/// gradients dgamma and dbeta.
template <typename T>
void batchNormGradInput(const T *x, const T *stats, const T *gamma, const T *dgamma, const T *dbeta,
                        const T *dy, T *dx, int64_t rows, int64_t c, double epsilon);
/// In place: movingMean = momentum * movingMean + (1 - momentum) * mean and movingVar likewise
/// with var = max(stats[1] - mean^2, 0), mean = stats[0], over c channels.
template <typename T>
void movingStatsUpdate(const T *stats, T *movingMean, T *movingVar, int64_t c, double momentum);

} // namespace dp::rt::ref
