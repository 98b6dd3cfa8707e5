// Backward kernels against central finite differences of the forward computation. The forward
// is the reference evaluated in double, so the differences are accurate to ~1e-9 and any real
// error of the f32 CPU kernels stands out.
#include "runtime/kernels/reference/Reference.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <functional>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;


// Keeps inputs away from relu's kink, where a finite difference straddles two slopes.
std::vector<float> awayFromZero(std::vector<float> v) {
  for (float &x : v)
    if (std::fabs(x) < 0.05f)
      x = x < 0 ? -0.05f : 0.05f;
  return v;
}

class ActivationGradFdTest : public ::testing::TestWithParam<Activation> {};

TEST_P(ActivationGradFdTest, MatchesFiniteDifferences) {
  const Activation act = GetParam();
  const int64_t rows = 6, cols = 7;
  PlanBuilder b(rows);
  uint32_t y = b.buffer({rows, cols}), dy = b.buffer({rows, cols}), dx = b.buffer({rows, cols});
  b.kernel(StepKind::Train, KernelKind::ActivationGrad, {y, dy}, {dx}).activation(act);
  auto program = b.load();

  RandomData rd(21);
  const std::vector<double> x = toDouble(awayFromZero(rd.uniform(rows * cols, -2.5f, 2.5f)));
  const std::vector<double> r = toDouble(rd.uniform(rows * cols));
  // L(x) = sum(r * act(x)), so dL/dx is activation_grad(act(x), dy = r).
  auto loss = [&](const std::vector<double> &v) {
    std::vector<double> out(v.size());
    ref::activation(v.data(), out.data(), rows, cols, act);
    return dot(out, r);
  };
  std::vector<double> yd(x.size());
  ref::activation(x.data(), yd.data(), rows, cols, act);
  put(*program, y, std::vector<float>(yd.begin(), yd.end()));
  put(*program, dy, std::vector<float>(r.begin(), r.end()));
  program->run(StepKind::Train, stepContext(rows));
  EXPECT_TRUE(allNear(get(*program, dx), numericGradient(x, loss), 1e-5, 1e-4));
}

std::string nameOf(const ::testing::TestParamInfo<Activation> &info) {
  return activationName(info.param);
}

INSTANTIATE_TEST_SUITE_P(All, ActivationGradFdTest,
                         ::testing::Values(Activation::None, Activation::Relu, Activation::Sigmoid,
                                           Activation::Tanh, Activation::Softmax),
                         nameOf);

// For c = alpha op(a) . op(b) and L = sum(r * c), the gradients of the stored a and b are
// themselves products with transposes: this checks all four transpose combinations of the
// matmul kernel (alpha 1) and of batch_matmul (3 products, alpha 0.5) in the roles the
// compiler gives them.
class MatMulGradFdTest : public ::testing::TestWithParam<std::tuple<bool, bool, bool>> {};

TEST_P(MatMulGradFdTest, TransposedMatMulsGiveTheGradients) {
  const auto [ta, tb, batched] = GetParam();
  const int64_t m = 5, k = 4, n = 3, batch = batched ? 3 : 1;
  const double alpha = batched ? 0.5 : 1.0;
  PlanBuilder b(1);
  auto shape = [&](int64_t rows, int64_t cols) {
    return batched ? std::vector<int64_t>{batch, rows, cols} : std::vector<int64_t>{rows, cols};
  };
  std::vector<int64_t> aShape = ta ? shape(k, m) : shape(m, k);
  std::vector<int64_t> bShape = tb ? shape(n, k) : shape(k, n);
  uint32_t a = b.buffer(aShape), bb = b.buffer(bShape), r = b.buffer(shape(m, n));
  uint32_t da = b.buffer(aShape), db = b.buffer(bShape);
  auto product = [&](uint32_t x, uint32_t y, uint32_t out, bool tx, bool ty) {
    auto &kernel = b.kernel(StepKind::Train, batched ? KernelKind::BatchMatMul : KernelKind::MatMul,
                            {x, y}, {out});
    kernel.attrI("transpose_a", tx).attrI("transpose_b", ty);
    if (batched)
      kernel.attrF("alpha", alpha);
  };
  // da (stored like a) and db (stored like b), each a single product of r with the other operand.
  if (!ta)
    product(r, bb, da, false, !tb);
  else
    product(bb, r, da, tb, true);
  if (!tb)
    product(a, r, db, !ta, false);
  else
    product(r, a, db, true, ta);
  auto program = b.load();

  RandomData rd(5);
  const auto as = rd.uniform(batch * m * k), bs = rd.uniform(batch * k * n),
             rs = rd.uniform(batch * m * n);
  put(*program, a, as);
  put(*program, bb, bs);
  put(*program, r, rs);
  program->run(StepKind::Train, stepContext(1));

  const std::vector<double> ad = toDouble(as), bd = toDouble(bs), rd64 = toDouble(rs);
  auto loss = [&](const std::vector<double> &av, const std::vector<double> &bv) {
    std::vector<double> c(batch * m * n);
    ref::batchMatMul(av.data(), bv.data(), c.data(), batch, m, k, n, ta, tb, alpha);
    return dot(c, rd64);
  };
  auto lossOfA = [&](const std::vector<double> &v) { return loss(v, bd); };
  auto lossOfB = [&](const std::vector<double> &v) { return loss(ad, v); };
  EXPECT_TRUE(allNear(get(*program, da), numericGradient(ad, lossOfA), 1e-5, 1e-4));
  EXPECT_TRUE(allNear(get(*program, db), numericGradient(bd, lossOfB), 1e-5, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(All, MatMulGradFdTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(),
                                            ::testing::Bool()));

// The whole backward pass of a dense layer as the compiler lowers it: activation_grad, then
// matmuls for dx and dw and reduce_rows for db, against finite differences of y = act(xw + b).
class DenseBackwardFdTest : public ::testing::TestWithParam<Activation> {};

TEST_P(DenseBackwardFdTest, MatchesFiniteDifferences) {
  const Activation act = GetParam();
  const int64_t n = 6, k = 5, m = 4;
  PlanBuilder b(n);
  uint32_t x = b.buffer({n, k}), w = b.buffer({k, m}), bias = b.buffer({m}), y = b.buffer({n, m});
  uint32_t r = b.buffer({n, m}), dz = b.buffer({n, m});
  uint32_t dx = b.buffer({n, k}), dw = b.buffer({k, m}), db = b.buffer({m});
  b.kernel(StepKind::Train, KernelKind::Dense, {x, w, bias}, {y}).activation(act);
  b.kernel(StepKind::Train, KernelKind::ActivationGrad, {y, r}, {dz}).activation(act);
  b.kernel(StepKind::Train, KernelKind::MatMul, {dz, w}, {dx}).attrI("transpose_b", 1);
  b.kernel(StepKind::Train, KernelKind::MatMul, {x, dz}, {dw}).attrI("transpose_a", 1);
  b.kernel(StepKind::Train, KernelKind::ReduceRows, {dz}, {db});
  auto program = b.load();

  RandomData rd(8);
  auto xs = rd.uniform(n * k), ws = rd.uniform(k * m), bs = rd.uniform(m), rs = rd.uniform(n * m);
  if (act == Activation::Relu) {
    // Keep pre-activations away from 0 so relu is differentiable at every sample point.
    std::vector<float> z(n * m);
    ref::dense(xs.data(), ws.data(), static_cast<const float *>(nullptr), z.data(), n, k, m,
               Activation::None);
    for (int64_t j = 0; j < m; ++j) {
      bs[j] = 0.3f;
      for (int64_t i = 0; i < n; ++i)
        if (std::fabs(z[i * m + j] + bs[j]) < 0.05f)
          bs[j] += 0.1f;
    }
  }
  put(*program, x, xs);
  put(*program, w, ws);
  put(*program, bias, bs);
  put(*program, r, rs);
  program->run(StepKind::Train, stepContext(n));

  const auto xd = toDouble(xs), wd = toDouble(ws), bd = toDouble(bs), rr = toDouble(rs);
  auto loss = [&](const std::vector<double> &xv, const std::vector<double> &wv,
                  const std::vector<double> &bv) {
    std::vector<double> out(n * m);
    ref::dense(xv.data(), wv.data(), bv.data(), out.data(), n, k, m, act);
    return dot(out, rr);
  };
  EXPECT_TRUE(allNear(get(*program, dx),
                      numericGradient(xd, [&](const auto &v) { return loss(v, wd, bd); }), 1e-5,
                      1e-4));
  EXPECT_TRUE(allNear(get(*program, dw),
                      numericGradient(wd, [&](const auto &v) { return loss(xd, v, bd); }), 1e-5,
                      1e-4));
  EXPECT_TRUE(allNear(get(*program, db),
                      numericGradient(bd, [&](const auto &v) { return loss(xd, wd, v); }), 1e-5,
                      1e-4));
}

INSTANTIATE_TEST_SUITE_P(All, DenseBackwardFdTest,
                         ::testing::Values(Activation::None, Activation::Relu, Activation::Sigmoid,
                                           Activation::Tanh, Activation::Softmax),
                         nameOf);

TEST(ReduceRowsFdTest, IsTheGradientOfABroadcastAdd) {
  // y[i, j] = x[i, j] + b[j]: dL/db = sum over rows of dL/dy.
  const int64_t n = 7, m = 5;
  PlanBuilder b(n);
  uint32_t dy = b.buffer({n, m}), db = b.buffer({m});
  b.kernel(StepKind::Train, KernelKind::ReduceRows, {dy}, {db});
  auto program = b.load();
  RandomData rd(13);
  const std::vector<double> xs = toDouble(rd.uniform(n * m));
  const std::vector<float> rs = rd.uniform(n * m);
  put(*program, dy, rs);
  program->run(StepKind::Train, stepContext(n));
  const auto rr = toDouble(rs);
  auto loss = [&](const std::vector<double> &bias) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        s += rr[i * m + j] * (xs[i * m + j] + bias[j]);
    return s;
  };
  EXPECT_TRUE(
      allNear(get(*program, db), numericGradient(std::vector<double>(m, 0.1), loss), 1e-5, 1e-4));
}

// The binary cross-entropy's gradient against finite differences of the mean loss, soft targets.
TEST(SigmoidXentGradFd, MatchesFiniteDifferencesOfTheMeanLoss) {
  const int64_t rows = 5, cols = 3, valid = 4;
  const float dloss = 0.9f;
  PlanBuilder b(rows);
  uint32_t x = b.buffer({rows, cols}), t = b.buffer({rows, cols}), dl = b.buffer({}),
           grad = b.buffer({rows, cols});
  b.kernel(StepKind::Train, KernelKind::SigmoidXentGrad, {x, t, dl}, {grad});
  auto program = b.load();
  RandomData rd(29);
  const auto xs = rd.uniform(rows * cols, -3, 3), ts = rd.uniform(rows * cols, 0, 1);
  put(*program, x, xs);
  put(*program, t, ts);
  put(*program, dl, std::vector<float>{dloss});
  program->run(StepKind::Train, stepContext(valid));
  const std::vector<double> td = toDouble(ts);
  auto loss = [&](const std::vector<double> &v) {
    return dloss * ref::sigmoidXent(v.data(), td.data(), rows, cols, valid);
  };
  EXPECT_TRUE(allNear(get(*program, grad), numericGradient(toDouble(xs), loss), 1e-6, 1e-4));
}

// (valid rows, label smoothing)
class SoftmaxXentGradFdTest : public ::testing::TestWithParam<std::tuple<int64_t, float>> {};

TEST_P(SoftmaxXentGradFdTest, MatchesFiniteDifferencesOfTheMeanLoss) {
  const int64_t rows = 6, classes = 5;
  const auto [valid, smoothing] = GetParam();
  const float dloss = 0.7f;
  PlanBuilder b(rows);
  uint32_t logits = b.buffer({rows, classes}), labels = b.buffer({rows}, DType::I32);
  uint32_t dl = b.buffer({}), grad = b.buffer({rows, classes});
  b.kernel(StepKind::Train, KernelKind::SoftmaxXentGrad, {logits, labels, dl}, {grad})
      .attrF("label_smoothing", smoothing);
  auto program = b.load();
  RandomData rd(17);
  const auto ls = rd.uniform(rows * classes, -3, 3);
  const auto lab = rd.labels(rows, classes);
  put(*program, logits, ls);
  put(*program, labels, lab);
  put(*program, dl, std::vector<float>{dloss});
  program->run(StepKind::Train, stepContext(valid));
  auto loss = [&](const std::vector<double> &v) {
    return dloss * ref::softmaxXent(v.data(), lab.data(), rows, classes, valid, double(smoothing));
  };
  // Rows past the valid count do not enter the loss: their finite differences are exactly 0.
  EXPECT_TRUE(allNear(get(*program, grad), numericGradient(toDouble(ls), loss), 1e-6, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(ValidRowsAndSmoothing, SoftmaxXentGradFdTest,
                         ::testing::Values(std::make_tuple(int64_t(6), 0.0f),
                                           std::make_tuple(int64_t(4), 0.0f),
                                           std::make_tuple(int64_t(1), 0.0f),
                                           std::make_tuple(int64_t(5), 0.3f)));

} // namespace
} // namespace dp::rt
