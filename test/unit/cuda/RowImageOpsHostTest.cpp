// The CUDA backend's row, sum, image and data-movement kernels, checked on the host: RowOps.h
// and ImageOps.h are the source nvcc compiles into the device kernels (OwnKernels.cu runs them
// a thread per row, column or element); here the host compiler runs the same functions over
// every row, column or element, in the grid's order where the order matters, against the
// reference kernels.
#include "runtime/backends/cuda/ImageOps.h"
#include "runtime/backends/cuda/RowOps.h"
#include "runtime/kernels/Gather.h"
#include "runtime/kernels/SquaredError.h"
#include "runtime/kernels/ValidRows.h"
#include "runtime/kernels/reference/Concat.h"
#include "runtime/kernels/reference/LayerNorm.h"
#include "runtime/kernels/reference/PoolNorm.h"
#include "runtime/kernels/reference/Reference.h"

#include "test/unit/cuda/HostTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace dp::rt::cuda {
namespace {

using namespace testing;

std::vector<int32_t> labels(size_t n, int32_t classes, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<int32_t> v(n);
  for (int32_t &x : v)
    x = static_cast<int32_t>(gen() % classes);
  return v;
}

StepContext context(int64_t validRows, int64_t batchRows = 0) {
  StepContext ctx;
  ctx.validRows = validRows;
  ctx.batchRows = batchRows;
  return ctx;
}

/// The single-block sum of OwnKernels.cu: `threads` shares added in the kernel's fixed tree.
template <typename Share> double blockSum(int threads, const Share &share) {
  std::vector<double> sums(threads);
  for (int t = 0; t < threads; ++t)
    sums[t] = share(t, threads);
  for (int half = threads / 2; half > 0; half /= 2)
    for (int t = 0; t < half; ++t)
      sums[t] += sums[t + half];
  return sums[0];
}

/// The two-pass column sums of OwnKernels.cu: chunks of rows summed per column, then the
/// chunks' partials added in chunk order and scaled.
template <int K, typename Term>
void columnSums(const Term &term, int64_t rows, int64_t cols, double scale, float *out0,
                float *out1) {
  const ColumnChunks split = columnChunks(rows, cols);
  std::vector<double> partials(K * split.chunks * cols);
  for (int64_t chunk = 0; chunk < split.chunks; ++chunk) {
    const int64_t begin = chunk * split.rowsPerChunk;
    const int64_t end = std::min(begin + split.rowsPerChunk, rows);
    for (int64_t c = 0; c < cols; ++c) {
      double out[K];
      columnPartial<K>(term, begin, end, c, out);
      for (int k = 0; k < K; ++k)
        partials[(k * split.chunks + chunk) * cols + c] = out[k];
    }
  }
  for (int64_t c = 0; c < cols; ++c)
    for (int k = 0; k < K; ++k) {
      double sum = 0;
      for (int64_t b = 0; b < split.chunks; ++b)
        sum += partials[(k * split.chunks + b) * cols + c];
      (k == 0 ? out0 : out1)[c] = static_cast<float>(sum * scale);
    }
}

// ------------------------------------------------------------------------------ valid rows

TEST(ValidRowsTest, OneBlockUnlessStacked) {
  const ValidRows plain(context(5, 8), 8);
  EXPECT_EQ(plain.block, 8);
  EXPECT_EQ(plain.count(8), 5);
  EXPECT_EQ(plain.blocks(8), 1);
  EXPECT_TRUE(plain(4));
  EXPECT_FALSE(plain(5));
  // The batch stacked three times: the first 5 of every 8 rows count.
  const ValidRows stacked(context(5, 8), 24);
  EXPECT_EQ(stacked.count(24), 15);
  EXPECT_EQ(stacked.blocks(24), 3);
  EXPECT_TRUE(stacked(20));
  EXPECT_FALSE(stacked(21));
  // Rows that are not a multiple of the batch: one block of all of them.
  const ValidRows odd(context(5, 8), 10);
  EXPECT_EQ(odd.block, 10);
  EXPECT_EQ(odd.count(10), 5);
  // Out-of-range valid rows are clamped, an empty input counts nothing.
  EXPECT_EQ(ValidRows(context(-3, 8), 8).count(8), 0);
  EXPECT_EQ(ValidRows(context(100, 8), 8).count(8), 8);
  EXPECT_EQ(ValidRows(context(0, 0), 0).count(0), 0);
  EXPECT_EQ(ValidRows(context(0, 0), 0).blocks(0), 0);
}

// --------------------------------------------------------------------------------- softmax

TEST(RowOps, SoftmaxAndItsGradientMatchTheReference) {
  const int64_t rows = 37, cols = 10;
  const std::vector<float> x = uniform(rows * cols, 1, -30, 30), dy = uniform(rows * cols, 2);
  std::vector<float> y(x.size()), want(x.size()), dx(x.size()), wantDx(x.size());
  for (int64_t r = 0; r < rows; ++r)
    softmaxRow(x.data() + r * cols, y.data() + r * cols, cols);
  ref::activation(x.data(), want.data(), rows, cols, Activation::Softmax);
  EXPECT_TRUE(near(y, want, 1e-5, 1e-7));
  for (int64_t r = 0; r < rows; ++r)
    softmaxGradRow(y.data() + r * cols, dy.data() + r * cols, dx.data() + r * cols, cols);
  ref::activationGrad(want.data(), dy.data(), wantDx.data(), rows, cols, Activation::Softmax);
  EXPECT_TRUE(near(dx, wantDx, 1e-5, 1e-6));
  // In place, as the fused dense+softmax runs it.
  std::vector<float> inPlace = x;
  for (int64_t r = 0; r < rows; ++r)
    softmaxRow(inPlace.data() + r * cols, inPlace.data() + r * cols, cols);
  EXPECT_EQ(inPlace, y);
}

TEST(RowOps, SoftmaxOfHugeLogitsIsFinite) {
  const float x[3] = {1e30f, 1e30f, -1e30f};
  float y[3];
  softmaxRow(x, y, 3);
  EXPECT_FLOAT_EQ(y[0], 0.5f);
  EXPECT_FLOAT_EQ(y[1], 0.5f);
  EXPECT_EQ(y[2], 0.0f);
}

// ---------------------------------------------------------------------------------- losses

TEST(RowOps, CrossEntropyMatchesTheReferenceOverValidRows) {
  const int64_t rows = 53, classes = 10;
  const std::vector<float> z = uniform(rows * classes, 3, -5, 5);
  const std::vector<int32_t> y = labels(rows, classes, 4);
  for (int64_t valid : {int64_t(53), int64_t(40), int64_t(1), int64_t(0)}) {
    const ValidRows v(context(valid), rows);
    const double sum = blockSum(256, [&](int t, int threads) {
      return xentShare(z.data(), y.data(), rows, classes, v, t, threads);
    });
    const float loss = xentLoss(sum, v, rows);
    EXPECT_NEAR(loss, ref::softmaxXent(z.data(), y.data(), rows, classes, valid), 1e-5)
        << valid << " valid rows";
  }
}

TEST(RowOps, SmoothedCrossEntropyAndItsGradientMatchTheReference) {
  const int64_t rows = 21, classes = 6, valid = 17;
  const float s = 0.2f;
  const std::vector<float> z = uniform(rows * classes, 7, -4, 4);
  const std::vector<int32_t> y = labels(rows, classes, 8);
  const ValidRows v(context(valid), rows);
  const double sum = blockSum(256, [&](int t, int threads) {
    return xentShare(z.data(), y.data(), rows, classes, v, t, threads, s);
  });
  EXPECT_NEAR(xentLoss(sum, v, rows), ref::softmaxXent(z.data(), y.data(), rows, classes, valid, s),
              1e-5);
  std::vector<float> g(z.size()), want(z.size());
  for (int64_t r = 0; r < rows; ++r)
    xentGradRow(z.data() + r * classes, y[r], 0.5f, g.data() + r * classes, classes, v, rows, r, s);
  ref::softmaxXentGrad(z.data(), y.data(), 0.5f, want.data(), rows, classes, valid, s);
  EXPECT_TRUE(near(g, want, 1e-5, 1e-7));
}

TEST(RowOps, CrossEntropyGradientMatchesTheReferenceAndFiniteDifferences) {
  const int64_t rows = 9, classes = 7, valid = 6;
  const std::vector<float> z = uniform(rows * classes, 5, -3, 3);
  const std::vector<int32_t> y = labels(rows, classes, 6);
  const ValidRows v(context(valid), rows);
  std::vector<float> g(z.size()), want(z.size());
  for (int64_t r = 0; r < rows; ++r)
    xentGradRow(z.data() + r * classes, y[r], 0.5f, g.data() + r * classes, classes, v, rows, r);
  ref::softmaxXentGrad(z.data(), y.data(), 0.5f, want.data(), rows, classes, valid);
  EXPECT_TRUE(near(g, want, 1e-5, 1e-7));
  // d(0.5 * loss)/dz by central differences of the device loss itself, on a few entries.
  auto loss = [&](const std::vector<float> &zz) {
    double sum = 0;
    for (int64_t r = 0; r < rows; ++r)
      if (v(r))
        sum += xentRow(zz.data() + r * classes, y[r], classes);
    return 0.5 * xentLoss(sum, v, rows);
  };
  for (int64_t i : {int64_t(0), int64_t(8), int64_t(20), int64_t(41), int64_t(60)}) {
    std::vector<float> plus = z, minus = z;
    const float h = 1e-2f;
    plus[i] += h, minus[i] -= h;
    EXPECT_NEAR(g[i], (loss(plus) - loss(minus)) / (2 * h), 2e-3) << "entry " << i;
  }
}

// The mean squared error (runtime/kernels/SquaredError.h) as the device computes it: one
// block's shares summed in its fixed tree, the gradient an element per thread.
TEST(RowOps, SquaredErrorAndItsGradientMatchTheReferenceAndFiniteDifferences) {
  const int64_t rows = 53, cols = 7;
  const std::vector<float> p = uniform(rows * cols, 7, -2, 2), t = uniform(rows * cols, 8, -1, 1);
  for (int64_t valid : {int64_t(53), int64_t(40), int64_t(1), int64_t(0)}) {
    const ValidRows v(context(valid), rows);
    const double sum = blockSum(256, [&](int th, int threads) {
      return squaredErrorShare(p.data(), t.data(), rows, cols, v, th, threads);
    });
    EXPECT_NEAR(squaredErrorLoss(sum, v, rows, cols),
                ref::squaredError(p.data(), t.data(), rows, cols, valid), 1e-6)
        << valid << " valid rows";
    std::vector<float> g(p.size(), 123.0f), want(p.size());
    const float scale = squaredErrorGradScale(0.5f, v, rows, cols);
    for (int64_t i = 0; i < rows * cols; ++i)
      squaredErrorGradElement(p.data(), t.data(), scale, g.data(), cols, v, i);
    ref::squaredErrorGrad(p.data(), t.data(), 0.5f, want.data(), rows, cols, valid);
    EXPECT_TRUE(near(g, want, 1e-6, 1e-9)) << valid << " valid rows";
  }
  // d(0.5 * loss)/dp by central differences of the device loss, on a few entries.
  const ValidRows v(context(40), rows);
  auto loss = [&](const std::vector<float> &pp) {
    return 0.5 * squaredErrorLoss(squaredErrorShare(pp.data(), t.data(), rows, cols, v, 0, 1), v,
                                  rows, cols);
  };
  std::vector<float> g(p.size());
  for (int64_t i = 0; i < rows * cols; ++i)
    squaredErrorGradElement(p.data(), t.data(), squaredErrorGradScale(0.5f, v, rows, cols),
                            g.data(), cols, v, i);
  for (int64_t i : {int64_t(0), int64_t(9), int64_t(100), int64_t(279), int64_t(300)}) {
    std::vector<float> plus = p, minus = p;
    const float h = 1e-2f;
    plus[i] += h, minus[i] -= h;
    EXPECT_NEAR(g[i], (loss(plus) - loss(minus)) / (2 * h), 1e-5) << "entry " << i;
  }
}

// The embedding lookup as the device runs it (an element per thread) and its table's
// scatter-add (a thread per column, each summing its rows in the indices' order).
TEST(RowOps, GatherAndItsScatterAddMatchTheReference) {
  const int64_t n = 41, vocab = 6, width = 5;
  const GatherShape s{n, vocab, width};
  const std::vector<float> table = uniform(vocab * width, 9, -1, 1),
                           dy = uniform(n * width, 10, -1, 1);
  std::vector<int32_t> ids = labels(n, vocab, 11);
  ids[3] = -2, ids[7] = int32_t(vocab);
  std::vector<float> out(n * width), want(n * width);
  for (int64_t i = 0; i < n * width; ++i)
    gatherElement(table.data(), ids.data(), out.data(), s, i);
  ref::gather(table.data(), ids.data(), want.data(), n, vocab, width);
  for (int64_t i = 0; i < n * width; ++i)
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(out[i])) << i;
    else
      EXPECT_EQ(out[i], want[i]) << i;
  std::vector<float> dtable(vocab * width, 123.0f), wantGrad(vocab * width);
  for (int64_t k = 0; k < width; ++k)
    gatherGradColumns(dy.data(), ids.data(), dtable.data(), s, k, k + 1);
  ref::gatherGrad(dy.data(), ids.data(), wantGrad.data(), n, vocab, width);
  EXPECT_TRUE(near(dtable, wantGrad, 1e-6, 1e-6));
  // One worker over every column gives the same bits as a thread per column.
  std::vector<float> whole(vocab * width);
  gatherGradColumns(dy.data(), ids.data(), whole.data(), s, 0, width);
  EXPECT_EQ(whole, dtable);
}

TEST(RowOps, CrossEntropyOfABadLabelIsNaN) {
  const float z[3] = {0.1f, 0.2f, 0.3f};
  EXPECT_TRUE(std::isnan(xentRow(z, 3, 3)));
  EXPECT_TRUE(std::isnan(xentRow(z, -1, 3)));
  const ValidRows v(context(1), 1);
  float g[3];
  xentGradRow(z, 7, 1.0f, g, 3, v, 1, 0);
  EXPECT_TRUE(std::isnan(g[0]) && std::isnan(g[2]));
  EXPECT_EQ(correctRow(z, 7, 3, v, 0), -1);
  EXPECT_TRUE(std::isnan(correctCount(0, true, v, 1)));
}

TEST(RowOps, CountCorrectMatchesTheReferenceAndCountsStackedSamplesOnce) {
  const int64_t rows = 40, classes = 10;
  const std::vector<float> z = uniform(rows * classes, 7);
  std::vector<int32_t> y = labels(rows, classes, 8);
  // Make some rows right for sure: the label is the first argmax.
  for (int64_t r = 0; r < rows; r += 3)
    y[r] = static_cast<int32_t>(std::max_element(z.begin() + r * classes,
                                                 z.begin() + (r + 1) * classes) -
                                (z.begin() + r * classes));
  for (int64_t valid : {int64_t(40), int64_t(25)}) {
    const ValidRows v(context(valid), rows);
    int64_t correct = 0;
    for (int64_t r = 0; r < rows; ++r)
      correct += correctRow(z.data() + r * classes, y[r], classes, v, r);
    EXPECT_EQ(correctCount(correct, false, v, rows),
              ref::countCorrect(z.data(), y.data(), rows, classes, valid));
  }
  // Two copies of a 20-row batch with 15 valid: the count is per sample, the copies' mean.
  std::vector<float> stacked(z.begin(), z.begin() + 20 * classes);
  stacked.insert(stacked.end(), z.begin(), z.begin() + 20 * classes);
  std::vector<int32_t> stackedLabels(y.begin(), y.begin() + 20);
  stackedLabels.insert(stackedLabels.end(), y.begin(), y.begin() + 20);
  const ValidRows v(context(15, 20), 40);
  int64_t correct = 0;
  for (int64_t r = 0; r < 40; ++r)
    correct += correctRow(stacked.data() + r * classes, stackedLabels[r], classes, v, r);
  EXPECT_EQ(correctCount(correct, false, v, 40),
            ref::countCorrect(z.data(), y.data(), 20, classes, 15));
}

// --------------------------------------------------------------------------------- dropout

TEST(RowOps, DropoutDrawsEveryBackendsMaskPerGlobalRow) {
  const int64_t rows = 200, cols = 50;
  const double rate = 0.3;
  const std::vector<float> x = uniform(rows * cols, 35);
  std::vector<float> y(x.size()), mask(x.size());
  for (int64_t r = 0; r < rows; ++r)
    dropoutRow(x.data() + r * cols, y.data() + r * cols, mask.data() + r * cols, cols, rate, 9,
               4, 2, 100 + r);
  int64_t dropped = 0;
  const float keep = dropoutKeepScale(rate);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(mask[i] == 0.0f || mask[i] == keep) << i;
    ASSERT_EQ(y[i], x[i] * mask[i]) << i;
    dropped += mask[i] == 0.0f;
  }
  // 10,000 draws at rate 0.3: within 5 standard deviations (~0.023).
  EXPECT_NEAR(double(dropped) / double(x.size()), rate, 0.025);
  // A row's mask depends on its global row only: the same row split elsewhere draws the same.
  std::vector<float> again(cols), yAgain(cols);
  dropoutRow(x.data() + 17 * cols, yAgain.data(), again.data(), cols, rate, 9, 4, 2, 117);
  EXPECT_EQ(again, std::vector<float>(mask.begin() + 17 * cols, mask.begin() + 18 * cols));
  // Another step or another dropout draws another mask.
  std::vector<float> other(cols);
  dropoutRow(x.data(), yAgain.data(), other.data(), cols, rate, 9, 5, 2, 100);
  EXPECT_NE(other, std::vector<float>(mask.begin(), mask.begin() + cols));
  dropoutRow(x.data(), yAgain.data(), other.data(), cols, rate, 9, 4, 3, 100);
  EXPECT_NE(other, std::vector<float>(mask.begin(), mask.begin() + cols));
  // The GPU's one thread per element draws what the row loop draws, element by element.
  std::vector<float> yEach(x.size(), -1.0f), maskEach(x.size(), -1.0f);
  for (int64_t i = 0; i < rows * cols; ++i)
    dropoutElement(x.data(), yEach.data(), maskEach.data(), i, cols, rate, 9, 4, 2, 100);
  EXPECT_EQ(maskEach, mask);
  EXPECT_EQ(yEach, y);
  // The integer comparison is the uniform draw u = (bits >> 11) * 2^-53 compared with the rate,
  // exactly, at rates whose threshold is and is not a whole number.
  for (double r : {0.0, 0.1, 0.2, 0.25, 0.5, 1.0 / 3, 0.9, 0.999999}) {
    const DropoutDraw draw(r);
    const uint64_t key = dropoutRowKey(9, 4, 2, 100);
    for (int64_t i = 0; i < 4000; ++i) {
      uint64_t s = key + uint64_t(i) * 0x9e3779b97f4a7c15ULL;
      const double u = static_cast<double>(splitmix64(s) >> 11) * 0x1.0p-53;
      ASSERT_EQ(draw.value(key, i), u < r ? 0.0f : dropoutKeepScale(r)) << r << " " << i;
    }
    // The threshold is the least integer t with t * 2^-53 >= rate.
    if (r == 0) {
      ASSERT_EQ(draw.threshold, 0u);
    } else {
      ASSERT_LT(static_cast<double>(draw.threshold - 1) * 0x1.0p-53, r) << r;
      ASSERT_GE(static_cast<double>(draw.threshold) * 0x1.0p-53, r) << r;
    }
  }
  // Neighbouring draws are independent: a pair agrees with probability rate^2 + (1 - rate)^2
  // (0.58), along a row and down a column alike (9,950 and 9,800 pairs: within ~5 sd, 0.025).
  int64_t sameAlong = 0, sameDown = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j + 1 < cols; ++j)
      sameAlong += mask[r * cols + j] == mask[r * cols + j + 1];
  for (int64_t r = 0; r + 1 < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      sameDown += mask[r * cols + j] == mask[(r + 1) * cols + j];
  const double agree = rate * rate + (1 - rate) * (1 - rate);
  EXPECT_NEAR(double(sameAlong) / double(rows * (cols - 1)), agree, 0.025);
  EXPECT_NEAR(double(sameDown) / double((rows - 1) * cols), agree, 0.025);
}

// ----------------------------------------------------------------------- layer normalisation

TEST(RowOps, LayerNormAndItsGradientsMatchTheReference) {
  const int64_t rows = 70, c = 33; // more rows than one chunk of the column sums
  const double eps = 1e-5;
  const std::vector<float> x = uniform(rows * c, 9, -3, 5), gamma = uniform(c, 10),
                           beta = uniform(c, 11), dy = uniform(rows * c, 12);
  std::vector<float> y(x.size()), want(x.size());
  for (int64_t r = 0; r < rows; ++r)
    layerNormRow(x.data() + r * c, gamma.data(), beta.data(), y.data() + r * c, c, eps);
  ref::layerNorm(x.data(), gamma.data(), beta.data(), want.data(), rows, c, eps);
  EXPECT_TRUE(near(y, want, 1e-5, 1e-5));

  std::vector<float> dx(x.size()), dgamma(c), dbeta(c), wantDx(x.size()), wantDg(c), wantDb(c);
  std::vector<RowStats> stats(rows);
  for (int64_t r = 0; r < rows; ++r)
    stats[r] = layerNormGradRow(x.data() + r * c, gamma.data(), dy.data() + r * c,
                                dx.data() + r * c, c, eps);
  columnSums<2>(LayerNormParamsTerm{x.data(), dy.data(), stats.data(), c}, rows, c, 1.0,
                dgamma.data(), dbeta.data());
  ref::layerNormGrad(x.data(), gamma.data(), dy.data(), wantDx.data(), wantDg.data(),
                     wantDb.data(), rows, c, eps);
  EXPECT_TRUE(near(dx, wantDx, 1e-4, 1e-5));
  EXPECT_TRUE(near(dgamma, wantDg, 1e-4, 1e-4));
  EXPECT_TRUE(near(dbeta, wantDb, 1e-5, 1e-5));
}

TEST(RowOps, LayerNormGradientMatchesFiniteDifferences) {
  const int64_t c = 6;
  const double eps = 1e-3;
  const std::vector<float> x = uniform(c, 13), gamma = uniform(c, 14), beta = uniform(c, 15),
                           dy = uniform(c, 16);
  std::vector<float> dx(c);
  layerNormGradRow(x.data(), gamma.data(), dy.data(), dx.data(), c, eps);
  // d<dy, y>/dx in double through the reference.
  auto objective = [&](const std::vector<double> &xd) {
    std::vector<double> g(gamma.begin(), gamma.end()), b(beta.begin(), beta.end()), y(c);
    ref::layerNorm(xd.data(), g.data(), b.data(), y.data(), 1, c, eps);
    double sum = 0;
    for (int64_t j = 0; j < c; ++j)
      sum += y[j] * dy[j];
    return sum;
  };
  for (int64_t j = 0; j < c; ++j) {
    std::vector<double> plus(x.begin(), x.end()), minus = plus;
    plus[j] += 1e-4, minus[j] -= 1e-4;
    EXPECT_NEAR(dx[j], (objective(plus) - objective(minus)) / 2e-4, 1e-3) << "element " << j;
  }
}

// ---------------------------------------------------------------- sums over rows, by column

TEST(ColumnSums, SplitCoversEveryRowOnceWithBoundedPartials) {
  for (int64_t rows : {int64_t(0), int64_t(1), int64_t(31), int64_t(32), int64_t(33),
                       int64_t(1000), int64_t(100000), int64_t(3) << 30})
    for (int64_t cols : {int64_t(1), int64_t(10), int64_t(256), int64_t(5000),
                         int64_t(1) << 20}) {
      const ColumnChunks s = columnChunks(rows, cols);
      EXPECT_GE(s.chunks, 1);
      EXPECT_LE(s.chunks, 1024);
      EXPECT_GE(s.rowsPerChunk, 32);
      EXPECT_GE(s.chunks * s.rowsPerChunk, rows) << rows << " x " << cols;
      // No chunk is empty: the last one starts before the end.
      if (rows > 0) {
        EXPECT_LT((s.chunks - 1) * s.rowsPerChunk, rows) << rows << " x " << cols;
      }
      EXPECT_LE(s.chunks * cols, std::max<int64_t>(int64_t(1) << 18, cols));
    }
}

TEST(ColumnSums, ReduceRowsAndBatchMomentsMatchTheReference) {
  for (int64_t rows : {int64_t(1), int64_t(100), int64_t(5000)}) {
    const int64_t cols = 17;
    const std::vector<float> x = uniform(rows * cols, 17);
    std::vector<float> y(cols), want(cols), stats(2 * cols), wantStats(2 * cols);
    columnSums<1>(SumTerm{x.data(), cols}, rows, cols, 1.0, y.data(), nullptr);
    ref::reduceRows(x.data(), want.data(), rows, cols);
    EXPECT_TRUE(near(y, want, 1e-5, 1e-4)) << rows << " rows";
    columnSums<2>(MomentsTerm{x.data(), cols}, rows, cols, 1.0 / double(rows), stats.data(),
                  stats.data() + cols);
    ref::batchMoments(x.data(), wantStats.data(), rows, cols);
    EXPECT_TRUE(near(stats, wantStats, 1e-5, 1e-6)) << rows << " rows";
  }
}

TEST(ColumnSums, AreTheSameWhateverTheOrderTheChunksRunIn) {
  // The split depends on the shape alone and the totals add chunks in order: two runs agree
  // bit for bit (what makes the GPU's sums reproducible).
  const int64_t rows = 4096, cols = 9;
  const std::vector<float> x = uniform(rows * cols, 18, -1e3f, 1e3f);
  std::vector<float> a(cols), b(cols);
  columnSums<1>(SumTerm{x.data(), cols}, rows, cols, 1.0, a.data(), nullptr);
  columnSums<1>(SumTerm{x.data(), cols}, rows, cols, 1.0, b.data(), nullptr);
  EXPECT_EQ(a, b);
}

// ------------------------------------------------------------------- batch normalisation

TEST(BatchNorm, TrainInferAndGradientsMatchTheReference) {
  const int64_t rows = 2 * 5 * 5, c = 8; // NHWC [2,5,5,8] seen as rows of channels
  const double eps = 1e-3;
  const std::vector<float> x = uniform(rows * c, 19, -2, 4), gamma = uniform(c, 20),
                           beta = uniform(c, 21), dy = uniform(rows * c, 22);
  std::vector<float> stats(2 * c);
  ref::batchMoments(x.data(), stats.data(), rows, c);

  std::vector<float> y(x.size()), want(x.size());
  for (int64_t i = 0; i < rows * c; ++i)
    y[i] = batchNormTrainElement(x.data(), stats.data(), gamma.data(), beta.data(), c, eps, i);
  ref::batchNormTrain(x.data(), stats.data(), gamma.data(), beta.data(), want.data(), rows, c,
                      eps);
  EXPECT_TRUE(near(y, want, 1e-5, 1e-5));

  const std::vector<float> mean = uniform(c, 23), var = uniform(c, 24, 0.1f, 2.0f);
  for (int64_t i = 0; i < rows * c; ++i)
    y[i] = batchNormInferElement(x.data(), gamma.data(), beta.data(), mean.data(), var.data(), c,
                                 eps, i);
  ref::batchNormInfer(x.data(), gamma.data(), beta.data(), mean.data(), var.data(), want.data(),
                      rows, c, eps);
  EXPECT_TRUE(near(y, want, 1e-5, 1e-5));

  std::vector<float> dgamma(c), dbeta(c), wantDg(c), wantDb(c);
  columnSums<2>(BatchNormParamsTerm{x.data(), stats.data(), dy.data(), c, eps}, rows, c, 1.0,
                dgamma.data(), dbeta.data());
  ref::batchNormGradParams(x.data(), stats.data(), dy.data(), wantDg.data(), wantDb.data(), rows,
                           c, eps);
  EXPECT_TRUE(near(dgamma, wantDg, 1e-4, 1e-4));
  EXPECT_TRUE(near(dbeta, wantDb, 1e-5, 1e-5));

  std::vector<float> dx(x.size()), wantDx(x.size());
  for (int64_t i = 0; i < rows * c; ++i)
    dx[i] = batchNormGradInputElement(x.data(), stats.data(), gamma.data(), dgamma.data(),
                                      dbeta.data(), dy.data(), rows, c, eps, i);
  ref::batchNormGradInput(x.data(), stats.data(), gamma.data(), wantDg.data(), wantDb.data(),
                          dy.data(), wantDx.data(), rows, c, eps);
  EXPECT_TRUE(near(dx, wantDx, 1e-4, 1e-5));

  std::vector<float> movingMean = uniform(c, 25), movingVar = uniform(c, 26, 0, 1);
  std::vector<float> wantMean = movingMean, wantVar = movingVar;
  for (int64_t k = 0; k < c; ++k)
    movingStatsElement(stats.data(), movingMean.data(), movingVar.data(), c, 0.99, k);
  ref::movingStatsUpdate(stats.data(), wantMean.data(), wantVar.data(), c, 0.99);
  EXPECT_TRUE(near(movingMean, wantMean, 1e-6));
  EXPECT_TRUE(near(movingVar, wantVar, 1e-6));
}

TEST(BatchNorm, GradientThroughTheStatisticsMatchesFiniteDifferences) {
  // dx of batch_norm_train through its batch statistics: <dy, y(x)> differentiated in double.
  const int64_t rows = 6, c = 2;
  const double eps = 1e-3;
  const std::vector<float> x = uniform(rows * c, 27), gamma = uniform(c, 28),
                           beta = uniform(c, 29), dy = uniform(rows * c, 30);
  std::vector<float> stats(2 * c), dgamma(c), dbeta(c), dx(rows * c);
  ref::batchMoments(x.data(), stats.data(), rows, c);
  columnSums<2>(BatchNormParamsTerm{x.data(), stats.data(), dy.data(), c, eps}, rows, c, 1.0,
                dgamma.data(), dbeta.data());
  for (int64_t i = 0; i < rows * c; ++i)
    dx[i] = batchNormGradInputElement(x.data(), stats.data(), gamma.data(), dgamma.data(),
                                      dbeta.data(), dy.data(), rows, c, eps, i);
  auto objective = [&](const std::vector<double> &xd) {
    std::vector<double> s(2 * c), g(gamma.begin(), gamma.end()), b(beta.begin(), beta.end()),
        y(rows * c);
    ref::batchMoments(xd.data(), s.data(), rows, c);
    ref::batchNormTrain(xd.data(), s.data(), g.data(), b.data(), y.data(), rows, c, eps);
    double sum = 0;
    for (int64_t i = 0; i < rows * c; ++i)
      sum += y[i] * dy[i];
    return sum;
  };
  for (int64_t i = 0; i < rows * c; ++i) {
    std::vector<double> plus(x.begin(), x.end()), minus = plus;
    plus[i] += 1e-4, minus[i] -= 1e-4;
    EXPECT_NEAR(dx[i], (objective(plus) - objective(minus)) / 2e-4, 2e-3) << "element " << i;
  }
}

// -------------------------------------------------------------------------------- images

struct PoolCase {
  int64_t n, h, w, c, kh, kw, sh, sw;
};

Pool poolOf(const PoolCase &t) {
  return {t.n, t.h, t.w, t.c, t.kh, t.kw, t.sh, t.sw, (t.h - t.kh) / t.sh + 1,
          (t.w - t.kw) / t.sw + 1};
}

class Pooling : public ::testing::TestWithParam<PoolCase> {};

TEST_P(Pooling, MaxAndAverageAndTheirGradientsMatchTheReference) {
  const PoolCase t = GetParam();
  const Pool p = poolOf(t);
  const int64_t in = p.n * p.h * p.w * p.c, out = p.n * p.oh * p.ow * p.c;
  std::vector<float> x = uniform(in, 31);
  // Ties: the first largest element of a window takes the gradient, as in the reference.
  for (int64_t i = 0; i < in; i += 7)
    x[i] = 1.5f;
  const std::vector<float> dy = uniform(out, 32);
  std::vector<float> y(out), want(out), dx(in), wantDx(in);

  for (int64_t i = 0; i < out; ++i)
    y[i] = maxPoolElement(x.data(), p, i);
  ref::maxPool2d(x.data(), want.data(), t.n, t.h, t.w, t.c, t.kh, t.kw, t.sh, t.sw);
  EXPECT_EQ(y, want);
  for (int64_t i = 0; i < in; ++i)
    dx[i] = maxPoolGradElement(x.data(), dy.data(), p, i);
  ref::maxPool2dGrad(x.data(), dy.data(), wantDx.data(), t.n, t.h, t.w, t.c, t.kh, t.kw, t.sh,
                     t.sw);
  EXPECT_TRUE(near(dx, wantDx, 1e-6));

  for (int64_t i = 0; i < out; ++i)
    y[i] = avgPoolElement(x.data(), p, i);
  ref::avgPool2d(x.data(), want.data(), t.n, t.h, t.w, t.c, t.kh, t.kw, t.sh, t.sw);
  EXPECT_TRUE(near(y, want, 1e-6));
  for (int64_t i = 0; i < in; ++i)
    dx[i] = avgPoolGradElement(dy.data(), p, i);
  ref::avgPool2dGrad(dy.data(), wantDx.data(), t.n, t.h, t.w, t.c, t.kh, t.kw, t.sh, t.sw);
  EXPECT_TRUE(near(dx, wantDx, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(
    Windows, Pooling,
    ::testing::Values(PoolCase{2, 6, 6, 3, 2, 2, 2, 2},   // the seed CNNs' 2x2/2
                      PoolCase{1, 7, 7, 2, 3, 3, 2, 2},   // overlapping windows
                      PoolCase{2, 5, 9, 1, 3, 2, 1, 3},   // uneven, rows left over
                      PoolCase{1, 4, 4, 5, 4, 4, 1, 1},   // global
                      PoolCase{3, 3, 3, 2, 1, 1, 1, 1})); // identity

TEST(Images, CoveringListsExactlyTheWindowsThatContainARow) {
  for (int64_t size = 1; size <= 4; ++size)
    for (int64_t stride = 1; stride <= 3; ++stride)
      for (int64_t extent = size; extent <= 9; ++extent) {
        const int64_t outputs = (extent - size) / stride + 1;
        for (int64_t i = 0; i < extent; ++i) {
          const Covering cover = covering(i, size, stride, outputs);
          for (int64_t o = 0; o < outputs; ++o) {
            const bool contains = o * stride <= i && i < o * stride + size;
            EXPECT_EQ(contains, o >= cover.first && o <= cover.last)
                << "row " << i << " window " << o << " size " << size << " stride " << stride;
          }
        }
      }
}

TEST(Images, ZeroPaddingAndItsGradientMatchTheReference) {
  const int64_t n = 2, h = 3, w = 4, c = 3, pt = 1, pb = 2, pl = 0, pr = 3;
  const Pad p{n, h, w, c, pt, pl, h + pt + pb, w + pl + pr};
  const int64_t in = n * h * w * c, out = n * p.ph * p.pw * c;
  const std::vector<float> x = uniform(in, 33), dy = uniform(out, 34);
  std::vector<float> y(out), want(out), dx(in), wantDx(in);
  for (int64_t i = 0; i < out; ++i)
    y[i] = zeroPadElement(x.data(), p, i);
  ref::zeroPad2d(x.data(), want.data(), n, h, w, c, pt, pb, pl, pr);
  EXPECT_EQ(y, want);
  for (int64_t i = 0; i < in; ++i)
    dx[i] = zeroPadGradElement(dy.data(), p, i);
  ref::zeroPad2dGrad(dy.data(), wantDx.data(), n, h, w, c, pt, pb, pl, pr);
  EXPECT_EQ(dx, wantDx);
  // A max pool's padding: the lowest float around the image.
  Pad lowest = p;
  lowest.value = std::numeric_limits<float>::lowest();
  for (int64_t i = 0; i < out; ++i)
    y[i] = zeroPadElement(x.data(), lowest, i);
  ref::zeroPad2d(x.data(), want.data(), n, h, w, c, pt, pb, pl, pr, lowest.value);
  EXPECT_EQ(y, want);
}

// -------------------------------------------------------------------------- data movement

std::vector<uint32_t> words(const std::vector<float> &v) {
  std::vector<uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * 4);
  return out;
}

TEST(DataMovement, ConcatAndSliceMatchTheReferenceOnEveryAxis) {
  const std::vector<std::vector<int64_t>> shapes = {{2, 3, 4}, {2, 1, 4}, {2, 5, 4}};
  for (int64_t axis = 0; axis < 3; ++axis) {
    // Three parts equal but along `axis`.
    std::vector<std::vector<int64_t>> partShapes;
    for (const auto &s : shapes) {
      std::vector<int64_t> shape = {2, 3, 4};
      shape[axis] = s[1];
      partShapes.push_back(shape);
    }
    std::vector<std::vector<float>> parts;
    std::vector<const float *> partPtrs;
    for (size_t i = 0; i < partShapes.size(); ++i) {
      int64_t count = 1;
      for (int64_t d : partShapes[i])
        count *= d;
      parts.push_back(uniform(count, 40 + i));
      partPtrs.push_back(parts.back().data());
    }
    // The kernel's view: blocks = the product of the dims before the axis; each part's words
    // per block; their starts in an output block.
    int64_t blocks = 1;
    for (int64_t d = 0; d < axis; ++d)
      blocks *= partShapes[0][d];
    std::vector<const uint32_t *> wordParts;
    std::vector<std::vector<uint32_t>> partWordsData;
    std::vector<int64_t> starts, perBlock;
    int64_t outWords = 0, total = 0;
    for (const auto &part : parts) {
      partWordsData.push_back(words(part));
      wordParts.push_back(partWordsData.back().data());
      starts.push_back(outWords);
      perBlock.push_back(static_cast<int64_t>(part.size()) / blocks);
      outWords += perBlock.back();
      total += static_cast<int64_t>(part.size());
    }
    std::vector<uint32_t> got(total);
    for (int64_t wi = 0; wi < total; ++wi)
      got[wi] = concatWord(wordParts.data(), starts.data(), perBlock.data(), 3, outWords, wi);
    std::vector<float> want(total);
    ref::concat(partPtrs, partShapes, axis, want.data());
    EXPECT_EQ(got, words(want)) << "axis " << axis;

    // Slicing the middle part back out of the concatenation.
    std::vector<uint32_t> back(parts[1].size());
    for (int64_t wi = 0; wi < static_cast<int64_t>(back.size()); ++wi)
      back[wi] = sliceWord(got.data(), outWords, starts[1], perBlock[1], wi);
    EXPECT_EQ(back, words(parts[1])) << "axis " << axis;
  }
}

// Every exchange of two axes of a rank-4 tensor (the contract's view [outer, da, middle, db,
// inner]) gathers what the reference's permutation gives.
TEST(DataMovement, TransposeMatchesTheReferenceForEveryPairOfAxes) {
  const std::vector<int64_t> shape = {2, 3, 4, 5};
  const std::vector<float> x = uniform(120, 7);
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t b = a + 1; b < 4; ++b) {
      int64_t outer = 1, middle = 1, inner = 1;
      for (int64_t d = 0; d < a; ++d)
        outer *= shape[d];
      for (int64_t d = a + 1; d < b; ++d)
        middle *= shape[d];
      for (int64_t d = b + 1; d < 4; ++d)
        inner *= shape[d];
      std::vector<float> got(x.size());
      for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i)
        got[i] = x[transposeSource(shape[a], middle, shape[b], inner, i)];
      std::vector<int64_t> permutation = {0, 1, 2, 3};
      std::swap(permutation[a], permutation[b]);
      std::vector<float> want(x.size());
      ref::transpose(x.data(), shape, permutation, want.data());
      EXPECT_EQ(got, want) << "axes " << a << " and " << b << " (outer " << outer << ")";
    }
}

} // namespace
} // namespace dp::rt::cuda
