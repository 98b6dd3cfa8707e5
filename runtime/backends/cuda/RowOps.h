// The CUDA backend's own row kernels, written once as host-and-device code: what one thread
// does for one row of a softmax, a loss or a layer normalisation, and for one column of a sum
// over rows. OwnKernels.cu runs these a thread per row (or column); the host tests run the
// same functions over every row against the reference kernels.
#pragma once

#include "runtime/base/HostDevice.h"
#include "runtime/base/Rng.h"
#include "runtime/kernels/ValidRows.h"

#include <cmath>
#include <cstdint>

namespace dp::rt::cuda {

// --------------------------------------------------------------------------------- softmax

/// Largest element of z[0, n); n > 0.
DP_HOST_DEVICE inline float rowMaximum(const float *z, int64_t n) {
  float m = z[0];
  for (int64_t j = 1; j < n; ++j)
    m = z[j] > m ? z[j] : m;
  return m;
}

/// y = softmax(x) over one row of n, the row max subtracted first so large logits cannot
/// overflow. y may be x (each x[j] is read before y[j] is written).
DP_HOST_DEVICE inline void softmaxRow(const float *x, float *y, int64_t n) {
  const float m = rowMaximum(x, n);
  float sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    const float e = expf(x[j] - m);
    y[j] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j)
    y[j] *= inv;
}

/// dx = y * (dy - <y, dy>) over one row of n, through the softmax's output y. dx may be dy.
DP_HOST_DEVICE inline void softmaxGradRow(const float *y, const float *dy, float *dx, int64_t n) {
  float dot = 0;
  for (int64_t j = 0; j < n; ++j)
    dot += y[j] * dy[j];
  for (int64_t j = 0; j < n; ++j)
    dx[j] = y[j] * (dy[j] - dot);
}

// ---------------------------------------------------------------------------------- losses

/// -log softmax(z)[label] for one row of `classes`, or NaN for a label outside [0, classes).
/// With label smoothing s: the cross-entropy against (1 - s) onehot(label) + s / classes,
/// -((1 - s) log p[label] + s mean_j log p[j]) (PyTorch's and Keras's label_smoothing).
DP_HOST_DEVICE inline float xentRow(const float *z, int32_t label, int64_t classes,
                                    float smoothing = 0) {
  if (label < 0 || label >= classes)
    return NAN;
  const float m = rowMaximum(z, classes);
  float sum = 0;
  for (int64_t j = 0; j < classes; ++j)
    sum += expf(z[j] - m);
  // (z[label] - m) first: adding m to the log-sum would round it to the precision of m.
  if (smoothing == 0)
    return logf(sum) - (z[label] - m);
  float mean = 0;
  for (int64_t j = 0; j < classes; ++j)
    mean += z[j] - m;
  mean /= static_cast<float>(classes);
  return logf(sum) - ((1 - smoothing) * (z[label] - m) + smoothing * mean);
}

/// The sum over the valid rows r = first, first + stride, ... < rows of xentRow: the share of
/// one of `stride` threads of the loss's sum (the kernel adds the shares and divides by the
/// valid rows).
DP_HOST_DEVICE inline double xentShare(const float *logits, const int32_t *labels, int64_t rows,
                                       int64_t classes, const ValidRows &valid, int64_t first,
                                       int64_t stride, float smoothing = 0) {
  double sum = 0;
  for (int64_t r = first; r < rows; r += stride)
    if (valid(r))
      sum += xentRow(logits + r * classes, labels[r], classes, smoothing);
  return sum;
}

/// The loss from the sum of the valid rows' losses.
DP_HOST_DEVICE inline float xentLoss(double sum, const ValidRows &valid, int64_t rows) {
  const int64_t count = valid.count(rows);
  return count > 0 ? static_cast<float>(sum / count) : 0.0f;
}

/// Row r of softmax_xent_grad: (softmax(z) - onehot(label)) * dloss / valid rows, zero past the
/// valid rows, NaN for a bad label; with label smoothing s the target is (1 - s) onehot(label)
/// + s / classes. g may be z.
DP_HOST_DEVICE inline void xentGradRow(const float *z, int32_t label, float dloss, float *g,
                                       int64_t classes, const ValidRows &valid, int64_t rows,
                                       int64_t r, float smoothing = 0) {
  if (!valid(r)) {
    for (int64_t j = 0; j < classes; ++j)
      g[j] = 0.0f;
    return;
  }
  if (label < 0 || label >= classes) {
    for (int64_t j = 0; j < classes; ++j)
      g[j] = NAN;
    return;
  }
  // The loss is a mean over the valid rows, so each row's share of dloss is dloss / valid.
  const float scale = dloss / static_cast<float>(valid.count(rows));
  const float m = rowMaximum(z, classes);
  float sum = 0;
  for (int64_t j = 0; j < classes; ++j)
    sum += expf(z[j] - m);
  const float factor = scale / sum;
  // Without smoothing the spread is 0 and the label's share the whole scale: the same bits.
  // (A spread of +0 without smoothing: -0 * scale would turn a -0 gradient into +0.)
  const float spread = smoothing == 0 ? 0.0f : smoothing / static_cast<float>(classes) * scale;
  for (int64_t j = 0; j < classes; ++j)
    g[j] = expf(z[j] - m) * factor - spread;
  g[label] -= (1 - smoothing) * scale;
}

/// 1 when row r is valid and its first largest logit is its label, else 0; -1 for a valid row
/// with a bad label (the count becomes NaN).
DP_HOST_DEVICE inline int correctRow(const float *z, int32_t label, int64_t classes,
                                     const ValidRows &valid, int64_t r) {
  if (!valid(r))
    return 0;
  if (label < 0 || label >= classes)
    return -1;
  // The first maximum wins ties, as argmax does in numpy and PyTorch.
  int64_t best = 0;
  for (int64_t j = 1; j < classes; ++j)
    if (z[j] > z[best])
      best = j;
  return best == label ? 1 : 0;
}

/// count_correct's output from the count of correct rows and whether a label was bad: a
/// stacked batch counts each sample once per block, so the count is their mean.
DP_HOST_DEVICE inline float correctCount(int64_t correct, bool badLabel, const ValidRows &valid,
                                         int64_t rows) {
  const int64_t blocks = valid.blocks(rows);
  return badLabel ? NAN : blocks > 0 ? static_cast<float>(double(correct) / double(blocks)) : 0.0f;
}

// --------------------------------------------------------------------------------- dropout

/// One row of dropout: the row's mask drawn as every backend draws it (Rng.h: from the run's
/// seed, the step, the dropout's number and the row's global index), y = x * mask.
DP_HOST_DEVICE inline void dropoutRow(const float *x, float *y, float *mask, int64_t cols,
                                      double rate, uint64_t seed, int64_t step, int64_t stream,
                                      int64_t globalRow) {
  dropoutMaskRow(mask, cols, rate, seed, step, stream, globalRow);
  for (int64_t j = 0; j < cols; ++j)
    y[j] = x[j] * mask[j];
}

/// Element i of a rows x cols dropout on its own (the GPU's one thread per element): the same
/// mask and output as dropoutRow of its row.
DP_HOST_DEVICE inline void dropoutElement(const float *x, float *y, float *mask, int64_t i,
                                          int64_t cols, double rate, uint64_t seed, int64_t step,
                                          int64_t stream, int64_t firstRow) {
  const int64_t r = i / cols;
  const float m =
      DropoutDraw(rate).value(dropoutRowKey(seed, step, stream, firstRow + r), i - r * cols);
  mask[i] = m;
  y[i] = x[i] * m;
}

// ----------------------------------------------------------------------- layer normalisation

/// Mean and 1 / sqrt(variance + epsilon) of one row of c, in double, two passes.
struct RowStats {
  float mean, inv;
};
DP_HOST_DEVICE inline RowStats layerRowStats(const float *x, int64_t c, double epsilon) {
  double sum = 0;
  for (int64_t j = 0; j < c; ++j)
    sum += x[j];
  const double mean = sum / c;
  double squares = 0;
  for (int64_t j = 0; j < c; ++j) {
    const double d = x[j] - mean;
    squares += d * d;
  }
  return {static_cast<float>(mean), static_cast<float>(1.0 / sqrt(squares / c + epsilon))};
}

/// y = gamma * (x - mean) * inv + beta over one row of c.
DP_HOST_DEVICE inline void layerNormRow(const float *x, const float *gamma, const float *beta,
                                        float *y, int64_t c, double epsilon) {
  const RowStats s = layerRowStats(x, c, epsilon);
  for (int64_t j = 0; j < c; ++j)
    y[j] = gamma[j] * (x[j] - s.mean) * s.inv + beta[j];
}

/// dx of one row of a layer normalisation: with g = dy * gamma and xhat = (x - mean) * inv,
/// dx = inv * (g - mean(g) - xhat * mean(g * xhat)). Also returns the row's statistics (the
/// parameter gradients' column sums read them).
DP_HOST_DEVICE inline RowStats layerNormGradRow(const float *x, const float *gamma, const float *dy,
                                                float *dx, int64_t c, double epsilon) {
  const RowStats s = layerRowStats(x, c, epsilon);
  double sumG = 0, sumGX = 0;
  for (int64_t j = 0; j < c; ++j) {
    const double g = double(dy[j]) * gamma[j];
    sumG += g;
    sumGX += g * ((x[j] - s.mean) * s.inv);
  }
  const float meanG = static_cast<float>(sumG / c), meanGX = static_cast<float>(sumGX / c);
  for (int64_t j = 0; j < c; ++j) {
    const float xhat = (x[j] - s.mean) * s.inv;
    dx[j] = s.inv * (dy[j] * gamma[j] - meanG - xhat * meanGX);
  }
  return s;
}

// ---------------------------------------------------------------- sums over rows, by column

/// How a sum over the rows of a [rows, cols] matrix is split for the GPU: `chunks` blocks of
/// consecutive rows (each `rowsPerChunk`, the last shorter) summed per column in parallel,
/// then the chunks' partial sums added per column in chunk order. The split depends only on
/// the shape, so the result is the same on every run.
struct ColumnChunks {
  int64_t chunks, rowsPerChunk;
};
/// At most 1024 chunks and at most 2^18 partial sums, each chunk at least 32 rows.
DP_HOST_DEVICE inline ColumnChunks columnChunks(int64_t rows, int64_t cols) {
  int64_t maxChunks = cols > 0 ? (int64_t(1) << 18) / cols : 1;
  maxChunks = maxChunks < 1 ? 1 : maxChunks > 1024 ? 1024 : maxChunks;
  int64_t per = (rows + maxChunks - 1) / maxChunks;
  per = per < 32 ? 32 : per;
  const int64_t chunks = rows > 0 ? (rows + per - 1) / per : 1;
  return {chunks, per};
}

/// Sums over rows [begin, end) of column `col` of the K values that `term(row, col, out)` adds
/// into out[0, K), in row order, in double: one thread's part of a chunk.
template <int K, typename Term>
DP_HOST_DEVICE inline void columnPartial(const Term &term, int64_t begin, int64_t end, int64_t col,
                                         double *out) {
  for (int k = 0; k < K; ++k)
    out[k] = 0;
  for (int64_t r = begin; r < end; ++r)
    term(r, col, out);
}

/// The terms of the sums over rows that the kernels take.

/// reduce_rows: x itself.
struct SumTerm {
  const float *x;
  int64_t cols;
  DP_HOST_DEVICE void operator()(int64_t r, int64_t c, double *out) const {
    out[0] += x[r * cols + c];
  }
};

/// batch_moments: x and x^2.
struct MomentsTerm {
  const float *x;
  int64_t cols;
  DP_HOST_DEVICE void operator()(int64_t r, int64_t c, double *out) const {
    const double v = x[r * cols + c];
    out[0] += v;
    out[1] += v * v;
  }
};

/// batch_norm_grad_params: dy * xhat and dy, xhat from the batch statistics (mean, mean of
/// squares) of `cols` channels.
struct BatchNormParamsTerm {
  const float *x, *stats, *dy;
  int64_t cols;
  double epsilon;
  DP_HOST_DEVICE void operator()(int64_t r, int64_t c, double *out) const {
    const double mean = stats[c];
    double var = double(stats[cols + c]) - mean * mean;
    var = var < 0 ? 0 : var;
    const double xhat = (x[r * cols + c] - mean) / sqrt(var + epsilon);
    const double g = dy[r * cols + c];
    out[0] += g * xhat;
    out[1] += g;
  }
};

/// layer_norm_grad's parameter gradients: dy * xhat and dy, xhat from each row's statistics
/// (`rowStats`, kept by the rows' pass).
struct LayerNormParamsTerm {
  const float *x, *dy;
  const RowStats *rowStats;
  int64_t cols;
  DP_HOST_DEVICE void operator()(int64_t r, int64_t c, double *out) const {
    const RowStats s = rowStats[r];
    const double g = dy[r * cols + c];
    out[0] += g * ((x[r * cols + c] - s.mean) * s.inv);
    out[1] += g;
  }
};

} // namespace dp::rt::cuda
