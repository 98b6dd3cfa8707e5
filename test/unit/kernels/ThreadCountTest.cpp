// The CPU kernels that reduce across rows in parallel give the same bits whatever the thread
// count: their partial sums are cut by the problem's size alone and added in a fixed order
// (runtime/backends/cpu/Parallel.h, orderedSum and ChannelSums). The batch statistics, their
// gradients and the losses, each computed with 1, 2, 3 and 5 threads, on data whose sums
// cancel. (The losses add non-negative terms in double: no cancellation, so their thread
// dependence before was below f32's rounding but for sums within 1e-16 of a rounding
// boundary; the batch statistics' failed this test with 2 threads.)
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

/// The bytes of every output of one run of the kernels below with `threads` OpenMP threads.
std::vector<std::vector<float>> runWith(int threads) {
  const ComputeThreads computeThreads(threads);
  const int64_t rows = 4096, c = 24, classes = 10;
  PlanBuilder b(rows);
  const uint32_t x = b.buffer({rows, c}), stats = b.buffer({2, c}), dy = b.buffer({rows, c});
  const uint32_t dgamma = b.buffer({c}), dbeta = b.buffer({c});
  const uint32_t logits = b.buffer({rows, classes}), labels = b.buffer({rows}, DType::I32);
  const uint32_t xent = b.buffer({}), target = b.buffer({rows, c}), mse = b.buffer({});
  b.kernel(StepKind::Train, KernelKind::BatchMoments, {x}, {stats});
  b.kernel(StepKind::Train, KernelKind::BatchNormGradParams, {x, stats, dy}, {dgamma, dbeta})
      .attrF("epsilon", 1e-3);
  b.kernel(StepKind::Train, KernelKind::SoftmaxXent, {logits, labels}, {xent});
  b.kernel(StepKind::Train, KernelKind::SquaredError, {x, target}, {mse});
  auto program = b.load();
  RandomData rd(17);
  // Channel 0 cancels: 1e17 in the first row, -1e17 halfway, 1 in the last. Summed in one
  // order the 1 survives, split at the middle it is lost to the -1e17 (double keeps 53 bits):
  // a sum whose blocks follow the thread count gives another mean with 2 threads.
  std::vector<float> xs = rd.uniform(rows * c, -3.0f, 5.0f), dys = rd.uniform(rows * c);
  for (int64_t r = 0; r < rows; ++r)
    xs[r * c] = 0.0f, dys[r * c] = 0.0f;
  xs[0] = 1e17f, xs[(rows / 2) * c] = -1e17f, xs[(rows - 1) * c] = 1.0f;
  dys[0] = 1.0f, dys[(rows / 2) * c] = -1.0f, dys[(rows - 1) * c] = 1e-3f;
  put(*program, x, xs);
  put(*program, dy, dys);
  put(*program, logits, rd.uniform(rows * classes, -4.0f, 4.0f));
  put(*program, labels, rd.labels(rows, static_cast<int32_t>(classes)));
  put(*program, target, rd.uniform(rows * c));
  program->run(StepKind::Train, stepContext(rows));
  std::vector<std::vector<float>> out;
  for (uint32_t id : {stats, dgamma, dbeta, xent, mse})
    out.push_back(get(*program, id));
  return out;
}

TEST(ThreadCountTest, RowReductionsGiveTheSameBits) {
  const std::vector<std::vector<float>> one = runWith(1);
  const char *names[] = {"batch_moments", "batch_norm_grad_params dgamma",
                         "batch_norm_grad_params dbeta", "softmax_xent", "squared_error"};
  for (int threads : {2, 3, 5}) {
    const std::vector<std::vector<float>> other = runWith(threads);
    for (size_t i = 0; i < one.size(); ++i) {
      ASSERT_EQ(one[i].size(), other[i].size());
      EXPECT_EQ(0, std::memcmp(one[i].data(), other[i].data(), one[i].size() * sizeof(float)))
          << names[i] << " with " << threads << " threads";
    }
  }
}

/// matmul with transpose_a (x^T dy, a dense layer's weight gradient: the sum over the rows)
/// under fixed partitions (dprun --reproducible): chunks of the rows fixed by their count,
/// one thread each, added in a fixed tree. The same bits with 1, 2 and 3 threads, and the
/// products' values.
std::vector<float> weightGradientWith(int threads, const std::vector<float> &xs,
                                      const std::vector<float> &dys, int64_t rows, int64_t m,
                                      int64_t n) {
  const ComputeThreads computeThreads(threads);
  PlanBuilder b(rows);
  const uint32_t x = b.buffer({rows, m}), dy = b.buffer({rows, n}), dw = b.buffer({m, n});
  b.kernel(StepKind::Train, KernelKind::MatMul, {x, dy}, {dw}).attrI("transpose_a", 1);
  auto program = b.load();
  put(*program, x, xs);
  put(*program, dy, dys);
  program->run(StepKind::Train, stepContext(rows));
  return get(*program, dw);
}

TEST(ThreadCountTest, WeightGradientsUnderFixedPartitionsGiveTheSameBits) {
  const Reproducible reproducible;
  const int64_t rows = 4099, m = 24, n = 10;
  RandomData rd(5);
  const std::vector<float> xs = rd.uniform(rows * m), dys = rd.uniform(rows * n);
  std::vector<double> want(m * n, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        want[i * n + j] += double(xs[r * m + i]) * dys[r * n + j];
  const std::vector<float> one = weightGradientWith(1, xs, dys, rows, m, n);
  for (int64_t i = 0; i < m * n; ++i)
    EXPECT_NEAR(one[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << "element " << i;
  for (int threads : {2, 3}) {
    const std::vector<float> other = weightGradientWith(threads, xs, dys, rows, m, n);
    EXPECT_EQ(0, std::memcmp(one.data(), other.data(), one.size() * sizeof(float)))
        << threads << " threads";
  }
  // Few rows for a large product: chunks of its columns, each over all the rows.
  const int64_t few = 40, wide = 300, cols = 200;
  const std::vector<float> fx = rd.uniform(few * wide), fdy = rd.uniform(few * cols);
  const std::vector<float> columns = weightGradientWith(1, fx, fdy, few, wide, cols);
  for (int64_t i = 0; i < wide; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double w = 0;
      for (int64_t r = 0; r < few; ++r)
        w += double(fx[r * wide + i]) * fdy[r * cols + j];
      ASSERT_NEAR(columns[i * cols + j], w, 1e-4 * (1 + std::abs(w))) << i << ", " << j;
    }
  for (int threads : {2, 3}) {
    const std::vector<float> other = weightGradientWith(threads, fx, fdy, few, wide, cols);
    EXPECT_EQ(0, std::memcmp(columns.data(), other.data(), columns.size() * sizeof(float)))
        << threads << " threads, cut by columns";
  }
}

/// layer_norm_grad under fixed partitions: oneDNN's primitive over fixed chunks of the rows,
/// the sums of dgamma and dbeta over them in the tree. The same bits with 1, 2 and 3 threads.
std::vector<std::vector<float>> layerNormGradWith(int threads, const std::vector<float> &xs,
                                                  const std::vector<float> &gs,
                                                  const std::vector<float> &dys, int64_t rows,
                                                  int64_t c) {
  const ComputeThreads computeThreads(threads);
  PlanBuilder b(rows);
  const uint32_t x = b.buffer({rows, c}), gamma = b.buffer({c}), dy = b.buffer({rows, c});
  const uint32_t dx = b.buffer({rows, c}), dgamma = b.buffer({c}), dbeta = b.buffer({c});
  b.kernel(StepKind::Train, KernelKind::LayerNormGrad, {x, gamma, dy}, {dx, dgamma, dbeta})
      .attrF("epsilon", 1e-5);
  auto program = b.load();
  put(*program, x, xs);
  put(*program, gamma, gs);
  put(*program, dy, dys);
  program->run(StepKind::Train, stepContext(rows));
  return {get(*program, dx), get(*program, dgamma), get(*program, dbeta)};
}

TEST(ThreadCountTest, LayerNormGradientUnderFixedPartitionsGivesTheSameBits) {
  const Reproducible reproducible;
  const int64_t rows = 3137, c = 128;
  RandomData rd(9);
  const std::vector<float> xs = rd.uniform(rows * c, -2.0f, 3.0f), gs = rd.uniform(c),
                           dys = rd.uniform(rows * c);
  const auto one = layerNormGradWith(1, xs, gs, dys, rows, c);
  // dbeta is the column sum of dy.
  for (int64_t k = 0; k < c; ++k) {
    double want = 0;
    for (int64_t r = 0; r < rows; ++r)
      want += dys[r * c + k];
    EXPECT_NEAR(one[2][k], want, 1e-3) << "dbeta " << k;
  }
  for (int threads : {2, 3}) {
    const auto other = layerNormGradWith(threads, xs, gs, dys, rows, c);
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(0, std::memcmp(one[i].data(), other[i].data(), one[i].size() * sizeof(float)))
          << "output " << i << " with " << threads << " threads";
  }
}

} // namespace
} // namespace dp::rt
