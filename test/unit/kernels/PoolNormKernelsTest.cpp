// Zero padding, average pooling and batch normalisation: the CPU kernels against the naive
// references of PoolNorm.h, the backward kernels (and the whole batch-norm training gradient,
// statistics included) against central finite differences of the reference forward in double,
// the moving statistics against hand-computed numbers, and the load-time validation of each
// family; plus a disabled timing run on ResNet50V2's shapes.
#include "runtime/kernels/reference/PoolNorm.h"
#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

// ---- zero padding --------------------------------------------------------------------------

/// An image n x h x w x c padded with pt, pb rows and pl, pr columns.
struct PadCase {
  int64_t n, h, w, c, pt, pb, pl, pr;
  int64_t ph() const { return h + pt + pb; }
  int64_t pw() const { return w + pl + pr; }
};
void PrintTo(const PadCase &p, std::ostream *os) {
  *os << p.n << "x" << p.h << "x" << p.w << "x" << p.c << "_t" << p.pt << "b" << p.pb << "l" << p.pl
      << "r" << p.pr;
}

KernelSpec &padKernel(PlanBuilder &b, KernelKind kind, const PadCase &p, uint32_t in,
                      uint32_t out) {
  return b.kernel(StepKind::Train, kind, {in}, {out})
      .attrI("pad_top", p.pt)
      .attrI("pad_bottom", p.pb)
      .attrI("pad_left", p.pl)
      .attrI("pad_right", p.pr);
}

/// A plan with zero_pad2d (x -> y) and zero_pad2d_grad (dy -> dx).
struct PadPlan {
  explicit PadPlan(const PadCase &p) {
    PlanBuilder b(p.n);
    x = b.buffer({p.n, p.h, p.w, p.c}), y = b.buffer({p.n, p.ph(), p.pw(), p.c});
    dy = b.buffer({p.n, p.ph(), p.pw(), p.c}), dx = b.buffer({p.n, p.h, p.w, p.c});
    padKernel(b, KernelKind::ZeroPad2d, p, x, y);
    padKernel(b, KernelKind::ZeroPad2dGrad, p, dy, dx);
    program = b.load();
  }
  std::unique_ptr<Program> program;
  uint32_t x, y, dy, dx;
};

class ZeroPadTest : public ::testing::TestWithParam<PadCase> {};

TEST_P(ZeroPadTest, ForwardAndBackwardMatchReference) {
  const PadCase p = GetParam();
  PadPlan plan(p);
  RandomData rd(static_cast<uint32_t>(p.h * 11 + p.c));
  auto xs = rd.uniform(p.n * p.h * p.w * p.c), dys = rd.uniform(p.n * p.ph() * p.pw() * p.c);
  // The output is fully written: stale values in it must not survive.
  put(*plan.program, plan.y, std::vector<float>(dys.size(), 7.0f));
  put(*plan.program, plan.x, xs);
  put(*plan.program, plan.dy, dys);
  plan.program->run(StepKind::Train, stepContext(p.n));

  std::vector<float> wantY(dys.size()), wantDx(xs.size());
  ref::zeroPad2d(xs.data(), wantY.data(), p.n, p.h, p.w, p.c, p.pt, p.pb, p.pl, p.pr);
  ref::zeroPad2dGrad(dys.data(), wantDx.data(), p.n, p.h, p.w, p.c, p.pt, p.pb, p.pl, p.pr);
  EXPECT_TRUE(allNear(get(*plan.program, plan.y), wantY, 0, 0));
  EXPECT_TRUE(allNear(get(*plan.program, plan.dx), wantDx, 0, 0));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ZeroPadTest,
                         ::testing::Values(PadCase{2, 5, 4, 3, 1, 1, 1, 1},
                                           PadCase{3, 4, 7, 2, 0, 2, 3, 0}, // asymmetric
                                           PadCase{1, 3, 3, 1, 0, 0, 0, 0}, // nothing to pad
                                           PadCase{2, 1, 1, 5, 2, 1, 0, 3},
                                           PadCase{4, 32, 32, 3, 3, 3, 3, 3},    // a ResNet stem
                                           PadCase{4, 56, 56, 64, 1, 1, 1, 1})); // large: threads

// With `lowest`, the pads hold the lowest float (a max pool's padding); the gradient refuses
// the flag, which only the forward kernel has a use for.
TEST(ZeroPadLowestTest, PadsWithTheLowestFloat) {
  const PadCase p{2, 5, 4, 3, 1, 2, 0, 1};
  PlanBuilder b(p.n);
  uint32_t x = b.buffer({p.n, p.h, p.w, p.c}), y = b.buffer({p.n, p.ph(), p.pw(), p.c});
  padKernel(b, KernelKind::ZeroPad2d, p, x, y).attrI("lowest", 1);
  auto program = b.load();
  auto xs = RandomData(3).uniform(p.n * p.h * p.w * p.c);
  put(*program, x, xs);
  program->run(StepKind::Train, stepContext(p.n));
  std::vector<float> want(p.n * p.ph() * p.pw() * p.c);
  ref::zeroPad2d(xs.data(), want.data(), p.n, p.h, p.w, p.c, p.pt, p.pb, p.pl, p.pr,
                 std::numeric_limits<float>::lowest());
  EXPECT_TRUE(allNear(get(*program, y), want, 0, 0));
  EXPECT_EQ(get(*program, y)[0], std::numeric_limits<float>::lowest());

  PlanBuilder g(p.n);
  uint32_t dy = g.buffer({p.n, p.ph(), p.pw(), p.c}), dx = g.buffer({p.n, p.h, p.w, p.c});
  padKernel(g, KernelKind::ZeroPad2dGrad, p, dy, dx).attrI("lowest", 1);
  EXPECT_DP_ERROR(g.load(), ErrorKind::Plan, "lowest is zero_pad2d's: its gradient only crops");
}

// L = sum(r * pad(x)): dL/dx is zero_pad2d_grad of r.
TEST(ZeroPadGradFdTest, MatchesFiniteDifferences) {
  const PadCase p{2, 3, 4, 2, 1, 0, 2, 1};
  PadPlan plan(p);
  RandomData rd(5);
  auto xs = rd.uniform(p.n * p.h * p.w * p.c), rs = rd.uniform(p.n * p.ph() * p.pw() * p.c);
  put(*plan.program, plan.x, xs);
  put(*plan.program, plan.dy, rs);
  plan.program->run(StepKind::Train, stepContext(p.n));
  const std::vector<double> r = toDouble(rs);
  auto loss = [&](const std::vector<double> &v) {
    std::vector<double> y(r.size());
    ref::zeroPad2d(v.data(), y.data(), p.n, p.h, p.w, p.c, p.pt, p.pb, p.pl, p.pr);
    return dot(y, r);
  };
  EXPECT_TRUE(
      allNear(get(*plan.program, plan.dx), numericGradient(toDouble(xs), loss), 1e-6, 1e-6));
}

// ---- average pooling -----------------------------------------------------------------------

/// Average pooling of n x h x w x c with a kh x kw window and strides sh, sw; `flat` stores the
/// output as [N, OH*OW*C] (a global pool's [N, C]) instead of [N, OH, OW, C].
struct AvgPoolCase {
  int64_t n, h, w, c, kh, kw, sh, sw;
  bool flat;
  int64_t oh() const { return (h - kh) / sh + 1; }
  int64_t ow() const { return (w - kw) / sw + 1; }
  std::vector<int64_t> outShape() const {
    return flat ? std::vector<int64_t>{n, oh() * ow() * c} : std::vector<int64_t>{n, oh(), ow(), c};
  }
};
void PrintTo(const AvgPoolCase &p, std::ostream *os) {
  *os << p.n << "x" << p.h << "x" << p.w << "x" << p.c << "_k" << p.kh << "x" << p.kw << "_s"
      << p.sh << "x" << p.sw << (p.flat ? "_flat" : "");
}

KernelSpec &avgPoolKernel(PlanBuilder &b, KernelKind kind, const AvgPoolCase &p, uint32_t in,
                          uint32_t out) {
  return b.kernel(StepKind::Train, kind, {in}, {out})
      .attrI("window_h", p.kh)
      .attrI("window_w", p.kw)
      .attrI("stride_h", p.sh)
      .attrI("stride_w", p.sw);
}

/// A plan with avg_pool2d (x -> y) and avg_pool2d_grad (dy -> dx).
struct AvgPoolPlan {
  explicit AvgPoolPlan(const AvgPoolCase &p) {
    PlanBuilder b(p.n);
    x = b.buffer({p.n, p.h, p.w, p.c}), y = b.buffer(p.outShape());
    dy = b.buffer(p.outShape()), dx = b.buffer({p.n, p.h, p.w, p.c});
    avgPoolKernel(b, KernelKind::AvgPool2d, p, x, y);
    avgPoolKernel(b, KernelKind::AvgPool2dGrad, p, dy, dx);
    program = b.load();
  }
  std::unique_ptr<Program> program;
  uint32_t x, y, dy, dx;
};

class AvgPoolTest : public ::testing::TestWithParam<AvgPoolCase> {};

TEST_P(AvgPoolTest, ForwardAndBackwardMatchReference) {
  const AvgPoolCase p = GetParam();
  AvgPoolPlan plan(p);
  RandomData rd(static_cast<uint32_t>(p.h * 13 + p.kh * 3 + p.c));
  auto xs = rd.uniform(p.n * p.h * p.w * p.c), dys = rd.uniform(p.n * p.oh() * p.ow() * p.c);
  put(*plan.program, plan.x, xs);
  put(*plan.program, plan.dy, dys);
  // dx is fully written, including the elements that no window covers.
  put(*plan.program, plan.dx, std::vector<float>(xs.size(), 7.0f));
  plan.program->run(StepKind::Train, stepContext(p.n));

  std::vector<float> wantY(dys.size()), wantDx(xs.size());
  ref::avgPool2d(xs.data(), wantY.data(), p.n, p.h, p.w, p.c, p.kh, p.kw, p.sh, p.sw);
  ref::avgPool2dGrad(dys.data(), wantDx.data(), p.n, p.h, p.w, p.c, p.kh, p.kw, p.sh, p.sw);
  EXPECT_TRUE(allNear(get(*plan.program, plan.y), wantY, 1e-6, 1e-5));
  EXPECT_TRUE(allNear(get(*plan.program, plan.dx), wantDx, 1e-6, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AvgPoolTest,
    ::testing::Values(AvgPoolCase{2, 4, 4, 3, 2, 2, 2, 2, false},
                      AvgPoolCase{3, 7, 5, 2, 2, 2, 2, 2, false}, // odd: the last row is unused
                      AvgPoolCase{2, 6, 7, 2, 3, 2, 1, 1, false}, // overlapping, non-square
                      AvgPoolCase{2, 7, 7, 3, 3, 3, 2, 2, false}, // overlapping, stride 2
                      AvgPoolCase{2, 9, 8, 4, 2, 3, 3, 2, false}, // stride > window: gaps
                      AvgPoolCase{2, 5, 6, 3, 5, 1, 1, 2, false}, // full-height window
                      AvgPoolCase{4, 7, 7, 64, 7, 7, 1, 1, true}, // global average pool [N, C]
                      AvgPoolCase{3, 2, 3, 5, 2, 3, 1, 1, true},
                      AvgPoolCase{16, 26, 26, 32, 2, 2, 2, 2, false})); // large: threads

// L = sum(r * avg_pool(x)): dL/dx is avg_pool2d_grad of r.
class AvgPoolGradFdTest : public ::testing::TestWithParam<AvgPoolCase> {};

TEST_P(AvgPoolGradFdTest, MatchesFiniteDifferences) {
  const AvgPoolCase p = GetParam();
  AvgPoolPlan plan(p);
  RandomData rd(17);
  auto xs = rd.uniform(p.n * p.h * p.w * p.c), rs = rd.uniform(p.n * p.oh() * p.ow() * p.c);
  put(*plan.program, plan.x, xs);
  put(*plan.program, plan.dy, rs);
  plan.program->run(StepKind::Train, stepContext(p.n));
  const std::vector<double> r = toDouble(rs);
  auto loss = [&](const std::vector<double> &v) {
    std::vector<double> y(r.size());
    ref::avgPool2d(v.data(), y.data(), p.n, p.h, p.w, p.c, p.kh, p.kw, p.sh, p.sw);
    return dot(y, r);
  };
  EXPECT_TRUE(
      allNear(get(*plan.program, plan.dx), numericGradient(toDouble(xs), loss), 1e-6, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Small, AvgPoolGradFdTest,
                         ::testing::Values(AvgPoolCase{2, 5, 5, 2, 3, 3, 1, 1, false},
                                           AvgPoolCase{2, 7, 6, 2, 2, 2, 3, 2, false},
                                           AvgPoolCase{2, 3, 4, 3, 3, 4, 1, 1, true}));

// ---- batch normalisation -------------------------------------------------------------------

constexpr double kEpsilon = 1e-3;

/// Rows (every axis but the last) and channels of a channels-last shape.
int64_t channelsOf(const std::vector<int64_t> &shape) { return shape.back(); }
int64_t rowsOf(const std::vector<int64_t> &shape) {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i)
    rows *= shape[i];
  return rows;
}

std::string shapeName(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

/// Random activations with a per-channel offset and scale, as batch norm sees them.
std::vector<float> activations(RandomData &rd, const std::vector<int64_t> &shape) {
  const int64_t c = channelsOf(shape), rows = rowsOf(shape);
  auto xs = rd.uniform(rows * c);
  const auto offset = rd.uniform(c, -2.0f, 2.0f), scale = rd.uniform(c, 0.2f, 3.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < c; ++k)
      xs[r * c + k] = xs[r * c + k] * scale[k] + offset[k];
  return xs;
}

/// Every batch-norm kernel in one plan: moments, the train and infer forwards, and the two
/// gradients (the input gradient with dgamma and dbeta given, as if averaged elsewhere).
struct NormPlan {
  explicit NormPlan(const std::vector<int64_t> &shape) {
    const int64_t c = channelsOf(shape);
    PlanBuilder b(shape[0]);
    x = b.buffer(shape), stats = b.buffer({2, c}), gamma = b.buffer({c}), beta = b.buffer({c});
    movingMean = b.buffer({c}), movingVar = b.buffer({c}), y = b.buffer(shape);
    yInfer = b.buffer(shape), dy = b.buffer(shape), dgamma = b.buffer({c});
    dbeta = b.buffer({c}), dgammaIn = b.buffer({c}), dbetaIn = b.buffer({c}), dx = b.buffer(shape);
    yRelu = b.buffer(shape), yInferRelu = b.buffer(shape);
    b.kernel(StepKind::Train, KernelKind::BatchMoments, {x}, {stats});
    b.kernel(StepKind::Train, KernelKind::BatchNormTrain, {x, stats, gamma, beta}, {y})
        .attrF("epsilon", kEpsilon);
    b.kernel(StepKind::Train, KernelKind::BatchNormInfer, {x, gamma, beta, movingMean, movingVar},
             {yInfer})
        .attrF("epsilon", kEpsilon);
    // The two forwards with the relu that plan-fuse-epilogues puts in them.
    b.kernel(StepKind::Train, KernelKind::BatchNormTrain, {x, stats, gamma, beta}, {yRelu})
        .attrF("epsilon", kEpsilon)
        .activation(Activation::Relu);
    b.kernel(StepKind::Train, KernelKind::BatchNormInfer, {x, gamma, beta, movingMean, movingVar},
             {yInferRelu})
        .attrF("epsilon", kEpsilon)
        .activation(Activation::Relu);
    b.kernel(StepKind::Train, KernelKind::BatchNormGradParams, {x, stats, dy}, {dgamma, dbeta})
        .attrF("epsilon", kEpsilon);
    b.kernel(StepKind::Train, KernelKind::BatchNormGradInput,
             {x, stats, gamma, dgammaIn, dbetaIn, dy}, {dx})
        .attrF("epsilon", kEpsilon);
    program = b.load();
  }
  std::unique_ptr<Program> program;
  uint32_t x, stats, gamma, beta, movingMean, movingVar, y, yInfer, dy, dgamma, dbeta, dgammaIn,
      dbetaIn, dx, yRelu, yInferRelu;
};

class BatchNormTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(BatchNormTest, KernelsMatchReference) {
  const std::vector<int64_t> shape = GetParam();
  const int64_t c = channelsOf(shape), rows = rowsOf(shape);
  NormPlan p(shape);
  RandomData rd(static_cast<uint32_t>(rows + c));
  const auto xs = activations(rd, shape), dys = rd.uniform(rows * c);
  const auto gammas = rd.uniform(c, 0.5f, 1.5f), betas = rd.uniform(c, -0.5f, 0.5f);
  const auto means = rd.uniform(c), vars = rd.uniform(c, 0.1f, 2.0f);
  const auto dgammaIn = rd.uniform(c, -5.0f, 5.0f), dbetaIn = rd.uniform(c, -5.0f, 5.0f);
  put(*p.program, p.x, xs);
  put(*p.program, p.dy, dys);
  put(*p.program, p.gamma, gammas);
  put(*p.program, p.beta, betas);
  put(*p.program, p.movingMean, means);
  put(*p.program, p.movingVar, vars);
  put(*p.program, p.dgammaIn, dgammaIn);
  put(*p.program, p.dbetaIn, dbetaIn);
  p.program->run(StepKind::Train, stepContext(shape[0]));

  // The statistics against double sums; the rest in double from the kernel's statistics, so
  // that each kernel is checked on its own.
  const auto xd = toDouble(xs), dyd = toDouble(dys), gd = toDouble(gammas), bd = toDouble(betas);
  std::vector<double> wantStats(2 * c);
  ref::batchMoments(xd.data(), wantStats.data(), rows, c);
  const auto stats = get(*p.program, p.stats);
  EXPECT_TRUE(allNear(stats, wantStats, 1e-7, 1e-6));
  const auto sd = toDouble(stats);

  std::vector<double> wantY(rows * c), wantYInfer(rows * c), wantDx(rows * c), wantDgamma(c),
      wantDbeta(c);
  ref::batchNormTrain(xd.data(), sd.data(), gd.data(), bd.data(), wantY.data(), rows, c, kEpsilon);
  ref::batchNormInfer(xd.data(), gd.data(), bd.data(), toDouble(means).data(),
                      toDouble(vars).data(), wantYInfer.data(), rows, c, kEpsilon);
  ref::batchNormGradParams(xd.data(), sd.data(), dyd.data(), wantDgamma.data(), wantDbeta.data(),
                           rows, c, kEpsilon);
  ref::batchNormGradInput(xd.data(), sd.data(), gd.data(), toDouble(dgammaIn).data(),
                          toDouble(dbetaIn).data(), dyd.data(), wantDx.data(), rows, c, kEpsilon);
  EXPECT_TRUE(allNear(get(*p.program, p.y), wantY, 1e-5, 1e-5));
  EXPECT_TRUE(allNear(get(*p.program, p.yInfer), wantYInfer, 1e-5, 1e-5));
  EXPECT_TRUE(allNear(get(*p.program, p.dgamma), wantDgamma, 1e-5, 1e-5));
  EXPECT_TRUE(allNear(get(*p.program, p.dbeta), wantDbeta, 1e-5, 1e-5));
  EXPECT_TRUE(allNear(get(*p.program, p.dx), wantDx, 1e-5, 1e-5));
  // The fused relu: against the reference's, and exactly max(0, y) of the unfused kernels (the
  // fusion changes no bit).
  std::vector<double> wantRelu(rows * c), wantInferRelu(rows * c);
  ref::batchNormTrain(xd.data(), sd.data(), gd.data(), bd.data(), wantRelu.data(), rows, c,
                      kEpsilon, /*relu=*/true);
  ref::batchNormInfer(xd.data(), gd.data(), bd.data(), toDouble(means).data(),
                      toDouble(vars).data(), wantInferRelu.data(), rows, c, kEpsilon,
                      /*relu=*/true);
  EXPECT_TRUE(allNear(get(*p.program, p.yRelu), wantRelu, 1e-5, 1e-5));
  EXPECT_TRUE(allNear(get(*p.program, p.yInferRelu), wantInferRelu, 1e-5, 1e-5));
  for (auto [plain, fused] : {std::pair{p.y, p.yRelu}, std::pair{p.yInfer, p.yInferRelu}}) {
    std::vector<float> want = get(*p.program, plain);
    for (float &v : want)
      v = v > 0 ? v : 0.0f;
    EXPECT_EQ(get(*p.program, fused), want);
  }
}

TEST(BatchNormTest, RefusesAnActivationOtherThanRelu) {
  PlanBuilder b(4);
  const uint32_t x = b.buffer({4, 3}), stats = b.buffer({2, 3}), gamma = b.buffer({3}),
                 beta = b.buffer({3}), y = b.buffer({4, 3});
  b.kernel(StepKind::Train, KernelKind::BatchNormTrain, {x, stats, gamma, beta}, {y})
      .attrF("epsilon", kEpsilon)
      .activation(Activation::Sigmoid);
  EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                  "activation sigmoid cannot follow a batch normalisation in its kernel");
}

INSTANTIATE_TEST_SUITE_P(Shapes, BatchNormTest,
                         ::testing::Values(std::vector<int64_t>{13, 5},      // rank 2
                                           std::vector<int64_t>{1, 1},       // one row
                                           std::vector<int64_t>{4, 3, 6},    // rank 3
                                           std::vector<int64_t>{2, 5, 3, 7}, // rank 4, odd sizes
                                           std::vector<int64_t>{512, 96},    // rank 2, threads
                                           std::vector<int64_t>{8, 28, 28, 64}), // threads
                         [](const auto &info) { return shapeName(info.param); });

// Many rows far from zero: float sums would lose about 1e-4 of the mean of squares.
TEST(BatchMomentsTest, AccumulatesInDouble) {
  const int64_t rows = 100000, c = 3;
  PlanBuilder b(rows);
  uint32_t x = b.buffer({rows, c}), stats = b.buffer({2, c});
  b.kernel(StepKind::Train, KernelKind::BatchMoments, {x}, {stats});
  auto program = b.load();
  RandomData rd(23);
  auto xs = rd.uniform(rows * c, 0.0f, 0.01f);
  for (float &v : xs)
    v += 3.0f;
  put(*program, x, xs);
  program->run(StepKind::Train, stepContext(rows));
  std::vector<double> want(2 * c);
  ref::batchMoments(toDouble(xs).data(), want.data(), rows, c);
  // The float result is the double one rounded: within an ulp (6e-8 relative) of it.
  EXPECT_TRUE(allNear(get(*program, stats), want, 0, 1.2e-7));
}

// mean of squares - mean^2 < 0 from rounding is a variance of zero, not a NaN.
TEST(BatchNormTrainTest, ClampsNegativeVarianceToZero) {
  const int64_t rows = 3, c = 2;
  PlanBuilder b(rows);
  uint32_t x = b.buffer({rows, c}), stats = b.buffer({2, c}), gamma = b.buffer({c}),
           beta = b.buffer({c}), y = b.buffer({rows, c});
  b.kernel(StepKind::Train, KernelKind::BatchNormTrain, {x, stats, gamma, beta}, {y})
      .attrF("epsilon", kEpsilon);
  auto program = b.load();
  const std::vector<float> xs = {2.0f, 1.0f, 2.0f, 0.0f, 2.0f, 2.0f};
  // Channel 0: mean 2, mean of squares just below 4; channel 1: mean 1, variance 2/3.
  const std::vector<float> statsIn = {2.0f, 1.0f, 3.9999f, 5.0f / 3.0f};
  const std::vector<float> gammas = {1.5f, 1.0f}, betas = {0.25f, -1.0f};
  put(*program, x, xs);
  put(*program, stats, statsIn);
  put(*program, gamma, gammas);
  put(*program, beta, betas);
  program->run(StepKind::Train, stepContext(rows));
  std::vector<float> want(rows * c);
  ref::batchNormTrain(xs.data(), statsIn.data(), gammas.data(), betas.data(), want.data(), rows, c,
                      kEpsilon);
  const auto got = get(*program, y);
  EXPECT_TRUE(allNear(got, want, 1e-6, 1e-6));
  for (int64_t r = 0; r < rows; ++r)
    EXPECT_EQ(got[r * c], 0.25f) << "row " << r;
}

/// The whole training gradient against finite differences: the plan computes the statistics
/// with batch_moments, then dgamma and dbeta with batch_norm_grad_params and dx with
/// batch_norm_grad_input from them; the loss is sum(r * batch_norm_train(x, moments(x), gamma,
/// beta)) in double, the statistics' dependence on x included.
class BatchNormGradFdTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(BatchNormGradFdTest, MatchesFiniteDifferences) {
  const std::vector<int64_t> shape = GetParam();
  const int64_t c = channelsOf(shape), rows = rowsOf(shape);
  PlanBuilder b(shape[0]);
  uint32_t x = b.buffer(shape), stats = b.buffer({2, c}), gamma = b.buffer({c}),
           dy = b.buffer(shape), dgamma = b.buffer({c}), dbeta = b.buffer({c}),
           dx = b.buffer(shape);
  b.kernel(StepKind::Train, KernelKind::BatchMoments, {x}, {stats});
  b.kernel(StepKind::Train, KernelKind::BatchNormGradParams, {x, stats, dy}, {dgamma, dbeta})
      .attrF("epsilon", kEpsilon);
  b.kernel(StepKind::Train, KernelKind::BatchNormGradInput, {x, stats, gamma, dgamma, dbeta, dy},
           {dx})
      .attrF("epsilon", kEpsilon);
  auto program = b.load();

  RandomData rd(static_cast<uint32_t>(41 + rows));
  const auto xs = activations(rd, shape), rs = rd.uniform(rows * c);
  const auto gammas = rd.uniform(c, 0.5f, 1.5f), betas = rd.uniform(c, -0.5f, 0.5f);
  put(*program, x, xs);
  put(*program, dy, rs);
  put(*program, gamma, gammas);
  program->run(StepKind::Train, stepContext(shape[0]));

  const std::vector<double> xd = toDouble(xs), gd = toDouble(gammas), bd = toDouble(betas),
                            r = toDouble(rs);
  auto loss = [&](const std::vector<double> &xv, const std::vector<double> &gv,
                  const std::vector<double> &bv) {
    std::vector<double> s(2 * c), y(rows * c);
    ref::batchMoments(xv.data(), s.data(), rows, c);
    ref::batchNormTrain(xv.data(), s.data(), gv.data(), bv.data(), y.data(), rows, c, kEpsilon);
    return dot(y, r);
  };
  const auto wantDx = numericGradient(xd, [&](const auto &v) { return loss(v, gd, bd); });
  const auto wantDgamma = numericGradient(gd, [&](const auto &v) { return loss(xd, v, bd); });
  const auto wantDbeta = numericGradient(bd, [&](const auto &v) { return loss(xd, gd, v); });
  EXPECT_TRUE(allNear(get(*program, dx), wantDx, 1e-5, 1e-4));
  EXPECT_TRUE(allNear(get(*program, dgamma), wantDgamma, 1e-5, 1e-4));
  EXPECT_TRUE(allNear(get(*program, dbeta), wantDbeta, 1e-5, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(Small, BatchNormGradFdTest,
                         ::testing::Values(std::vector<int64_t>{6, 3},
                                           std::vector<int64_t>{2, 3, 2, 4},
                                           std::vector<int64_t>{3, 5, 2}),
                         [](const auto &info) { return shapeName(info.param); });

// ---- moving statistics ---------------------------------------------------------------------

TEST(MovingStatsUpdateTest, MatchesHandComputedAverages) {
  const int64_t c = 3;
  PlanBuilder b(1);
  uint32_t stats = b.buffer({2, c}), mean = b.persistentBuffer({c}), var = b.persistentBuffer({c});
  b.kernel(StepKind::Train, KernelKind::MovingStatsUpdate, {stats}, {mean, var})
      .attrF("momentum", 0.9);
  auto program = b.load();
  // Batch means 1, -2, 2 and variances 3 - 1 = 2, 4.5 - 4 = 0.5 and 3.9 - 4 < 0, clamped to 0.
  put(*program, stats, std::vector<float>{1.0f, -2.0f, 2.0f, 3.0f, 4.5f, 3.9f});
  put(*program, mean, std::vector<float>{0.5f, 1.0f, 0.0f});
  put(*program, var, std::vector<float>{1.0f, 2.0f, 1.0f});
  program->run(StepKind::Train, stepContext(1));
  auto m = get(*program, mean), v = get(*program, var);
  EXPECT_FLOAT_EQ(m[0], 0.55f); // 0.9 * 0.5 + 0.1 * 1
  EXPECT_FLOAT_EQ(m[1], 0.7f);  // 0.9 * 1 + 0.1 * -2
  EXPECT_FLOAT_EQ(m[2], 0.2f);  // 0.9 * 0 + 0.1 * 2
  EXPECT_FLOAT_EQ(v[0], 1.1f);  // 0.9 * 1 + 0.1 * 2
  EXPECT_FLOAT_EQ(v[1], 1.85f); // 0.9 * 2 + 0.1 * 0.5
  EXPECT_FLOAT_EQ(v[2], 0.9f);  // 0.9 * 1 + 0.1 * 0
  // The update is in place: a second step averages into the first one's result.
  program->run(StepKind::Train, stepContext(1));
  m = get(*program, mean), v = get(*program, var);
  EXPECT_FLOAT_EQ(m[0], 0.595f); // 0.9 * 0.55 + 0.1 * 1
  EXPECT_FLOAT_EQ(m[1], 0.43f);  // 0.9 * 0.7 + 0.1 * -2
  EXPECT_FLOAT_EQ(v[0], 1.19f);  // 0.9 * 1.1 + 0.1 * 2
  EXPECT_FLOAT_EQ(v[1], 1.715f); // 0.9 * 1.85 + 0.1 * 0.5
  // And the reference agrees.
  std::vector<float> refMean = {0.5f, 1.0f, 0.0f}, refVar = {1.0f, 2.0f, 1.0f};
  const std::vector<float> s = {1.0f, -2.0f, 2.0f, 3.0f, 4.5f, 3.9f};
  for (int step = 0; step < 2; ++step)
    ref::movingStatsUpdate(s.data(), refMean.data(), refVar.data(), c, 0.9);
  EXPECT_TRUE(allNear(m, refMean, 1e-7, 1e-6));
  EXPECT_TRUE(allNear(v, refVar, 1e-7, 1e-6));
}

// ---- load-time validation ------------------------------------------------------------------

TEST(PoolNormValidationTest, ZeroPad) {
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 4, 4, 3}), y = b.buffer({2, 5, 6, 3});
    b.kernel(StepKind::Train, KernelKind::ZeroPad2d, {x}, {y})
        .attrI("pad_top", 2)
        .attrI("pad_bottom", -1)
        .attrI("pad_left", 1)
        .attrI("pad_right", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(zero_pad2d): paddings must be non-negative, got top 2, bottom -1, left 1, "
                    "right 1");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 4, 4, 3}), y = b.buffer({2, 6, 6, 3});
    padKernel(b, KernelKind::ZeroPad2d, PadCase{2, 4, 4, 3, 1, 1, 0, 1}, x, y);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "output 0 (y) (buffer 1) is [2x6x6x3], expected [2x6x5x3]");
  }
  {
    PlanBuilder b(2);
    uint32_t dy = b.buffer({2, 6, 6, 3}), dx = b.buffer({2, 16, 3});
    padKernel(b, KernelKind::ZeroPad2dGrad, PadCase{2, 4, 4, 3, 1, 1, 1, 1}, dy, dx);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(zero_pad2d_grad): output 0 (dx) (buffer 1) has rank 3, expected 4");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 4, 4, 3}), y = b.buffer({2, 4, 4, 3});
    b.kernel(StepKind::Train, KernelKind::ZeroPad2d, {x}, {y}).attrI("pad_top", 0);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "missing attribute 'pad_bottom'");
  }
}

TEST(PoolNormValidationTest, AvgPool) {
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 2, 5, 3}), y = b.buffer({2, 1, 1, 3});
    avgPoolKernel(b, KernelKind::AvgPool2d, AvgPoolCase{2, 2, 5, 3, 3, 3, 1, 1, false}, x, y);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(avg_pool2d): the 3x3 window is larger than the 2x5 image of input 0 (x) "
                    "(buffer 0)");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 4, 4, 3}), y = b.buffer({2, 2, 2, 3});
    avgPoolKernel(b, KernelKind::AvgPool2d, AvgPoolCase{2, 4, 4, 3, 2, 2, 0, 2, false}, x, y);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "window and strides must be positive, got window 2x2, strides 0x2");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 5, 5, 3}), y = b.buffer({2, 3, 3, 3});
    avgPoolKernel(b, KernelKind::AvgPool2d, AvgPoolCase{2, 5, 5, 3, 2, 2, 2, 2, false}, x, y);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "output 0 (y) (buffer 1) has 54 elements, expected 24");
  }
  {
    PlanBuilder b(2);
    uint32_t dy = b.buffer({2, 3}), dx = b.buffer({2, 4, 4, 3});
    avgPoolKernel(b, KernelKind::AvgPool2dGrad, AvgPoolCase{2, 4, 4, 3, 2, 2, 2, 2, false}, dy, dx);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(avg_pool2d_grad): input 0 (dy) (buffer 0) has 6 elements, expected 24");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 4, 4, 3}, DType::I32), y = b.buffer({2, 2, 2, 3});
    avgPoolKernel(b, KernelKind::AvgPool2d, AvgPoolCase{2, 4, 4, 3, 2, 2, 2, 2, false}, x, y);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "input 0 (x) (buffer 0) is i32, expected f32");
  }
}

TEST(PoolNormValidationTest, BatchNorm) {
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 3, 4}), stats = b.buffer({3, 4});
    b.kernel(StepKind::Train, KernelKind::BatchMoments, {x}, {stats});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(batch_moments): output 0 (stats) (buffer 1) is [3x4], expected [2x4]");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({4}), stats = b.buffer({2, 4}), gamma = b.buffer({4}),
             beta = b.buffer({4}), y = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::BatchNormTrain, {x, stats, gamma, beta}, {y})
        .attrF("epsilon", kEpsilon);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "input 0 (x) (buffer 0) has rank 1, expected at least 2 (rows and channels)");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 4}), stats = b.buffer({2, 4}), gamma = b.buffer({3}),
             beta = b.buffer({4}), y = b.buffer({2, 4});
    b.kernel(StepKind::Train, KernelKind::BatchNormTrain, {x, stats, gamma, beta}, {y})
        .attrF("epsilon", kEpsilon);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "input 2 (gamma) (buffer 2) has 3 elements, expected 4");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 4}), gamma = b.buffer({4}), beta = b.buffer({4}),
             mean = b.buffer({4}), var = b.buffer({4}), y = b.buffer({2, 4});
    b.kernel(StepKind::Eval, KernelKind::BatchNormInfer, {x, gamma, beta, mean, var}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "(batch_norm_infer): missing attribute 'epsilon'");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 4}), stats = b.buffer({2, 4}), dy = b.buffer({2, 4}),
             dgamma = b.buffer({4}), dbeta = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::BatchNormGradParams, {x, stats, dy}, {dgamma, dbeta})
        .attrF("epsilon", -1e-3);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "epsilon -0.001000 must be finite and non-negative");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 2, 2, 4}), stats = b.buffer({2, 4}), gamma = b.buffer({4}),
             dgamma = b.buffer({4}), dbeta = b.buffer({4}), dy = b.buffer({2, 2, 4}),
             dx = b.buffer({2, 2, 2, 4});
    b.kernel(StepKind::Train, KernelKind::BatchNormGradInput, {x, stats, gamma, dgamma, dbeta, dy},
             {dx})
        .attrF("epsilon", kEpsilon);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(batch_norm_grad_input): input 5 (dy) (buffer 5) has 16 elements, "
                    "expected 32");
  }
}

TEST(PoolNormValidationTest, MovingStats) {
  {
    PlanBuilder b(1);
    uint32_t stats = b.buffer({8}), mean = b.persistentBuffer({4}), var = b.persistentBuffer({4});
    b.kernel(StepKind::Train, KernelKind::MovingStatsUpdate, {stats}, {mean, var})
        .attrF("momentum", 0.99);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(moving_stats_update): input 0 (stats) (buffer 0) is [8], expected [2xC]");
  }
  {
    PlanBuilder b(1);
    uint32_t stats = b.buffer({2, 4}), mean = b.persistentBuffer({4}),
             var = b.persistentBuffer({5});
    b.kernel(StepKind::Train, KernelKind::MovingStatsUpdate, {stats}, {mean, var})
        .attrF("momentum", 0.99);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "output 1 (moving_var) (buffer 2) has 5 elements, expected 4");
  }
  {
    PlanBuilder b(1);
    uint32_t stats = b.buffer({2, 4}), mean = b.persistentBuffer({4}),
             var = b.persistentBuffer({4});
    b.kernel(StepKind::Train, KernelKind::MovingStatsUpdate, {stats}, {mean, var})
        .attrF("momentum", 1.5);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "momentum 1.500000 is not in [0, 1]");
  }
}

// ---- timing --------------------------------------------------------------------------------

/// Milliseconds per run of each kernel, alone in a plan, on ResNet50V2's activation shapes at
/// batch 8, and the bandwidth that its reads and writes of activations amount to. Run by hand:
/// --gtest_also_run_disabled_tests --gtest_filter='*PoolNormTiming*'.
TEST(PoolNormTimingTest, DISABLED_ResNetShapes) {
  struct Built {
    std::unique_ptr<Program> program;
    int64_t floatsMoved;
  };
  auto time = [](const char *name, const std::vector<int64_t> &shape, const Built &built) {
    RandomData rd(1);
    const Plan &plan = built.program->plan();
    for (uint32_t id = 0; id < plan.buffers.size(); ++id)
      put(*built.program, id, rd.uniform(plan.buffers[id].numel, 0.5f, 1.5f));
    const int iterations = 20;
    built.program->run(StepKind::Train, stepContext(shape[0])); // warm-up
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i)
      built.program->run(StepKind::Train, stepContext(shape[0]));
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    const double ms = elapsed.count() / iterations;
    std::printf("%-24s %-16s %8.3f ms %6.1f GB/s\n", name, shapeName(shape).c_str(), ms,
                built.floatsMoved * 4.0 / ms / 1e6);
  };
  auto normKernel = [](const std::vector<int64_t> &shape, KernelKind kind) {
    const int64_t c = channelsOf(shape), n = rowsOf(shape) * c;
    PlanBuilder b(shape[0]);
    uint32_t x = b.buffer(shape), stats = b.buffer({2, c}), gamma = b.buffer({c}),
             beta = b.buffer({c}), y = b.buffer(shape), dy = b.buffer(shape);
    uint32_t dgamma = b.buffer({c}), dbeta = b.buffer({c});
    int64_t moved = 2 * n;
    if (kind == KernelKind::BatchMoments) {
      b.kernel(StepKind::Train, kind, {x}, {stats});
      moved = n;
    } else if (kind == KernelKind::BatchNormTrain) {
      b.kernel(StepKind::Train, kind, {x, stats, gamma, beta}, {y}).attrF("epsilon", kEpsilon);
    } else if (kind == KernelKind::BatchNormInfer) {
      // dgamma and dbeta stand in for the moving mean and variance.
      b.kernel(StepKind::Train, kind, {x, gamma, beta, dgamma, dbeta}, {y})
          .attrF("epsilon", kEpsilon);
    } else if (kind == KernelKind::BatchNormGradParams) {
      b.kernel(StepKind::Train, kind, {x, stats, dy}, {dgamma, dbeta}).attrF("epsilon", kEpsilon);
    } else {
      b.kernel(StepKind::Train, kind, {x, stats, gamma, dgamma, dbeta, dy}, {y})
          .attrF("epsilon", kEpsilon);
      moved = 3 * n;
    }
    return Built{b.load(), moved};
  };
  const std::vector<std::vector<int64_t>> shapes = {
      {8, 112, 112, 64}, {8, 56, 56, 256}, {8, 28, 28, 512}, {8, 14, 14, 1024}, {8, 7, 7, 2048}};
  for (const auto &shape : shapes)
    for (auto [name, kind] : {std::pair{"batch_moments", KernelKind::BatchMoments},
                              {"batch_norm_train", KernelKind::BatchNormTrain},
                              {"batch_norm_infer", KernelKind::BatchNormInfer},
                              {"batch_norm_grad_params", KernelKind::BatchNormGradParams},
                              {"batch_norm_grad_input", KernelKind::BatchNormGradInput}})
      time(name, shape, normKernel(shape, kind));

  for (const PadCase &p :
       {PadCase{8, 224, 224, 3, 3, 3, 3, 3}, PadCase{8, 112, 112, 64, 1, 1, 1, 1}}) {
    const std::vector<int64_t> shape = {p.n, p.h, p.w, p.c};
    const int64_t moved = p.n * (p.h * p.w + p.ph() * p.pw()) * p.c;
    for (auto [name, kind] : {std::pair{"zero_pad2d", KernelKind::ZeroPad2d},
                              {"zero_pad2d_grad", KernelKind::ZeroPad2dGrad}}) {
      PlanBuilder b(p.n);
      uint32_t small = b.buffer(shape), big = b.buffer({p.n, p.ph(), p.pw(), p.c});
      if (kind == KernelKind::ZeroPad2d)
        padKernel(b, kind, p, small, big);
      else
        padKernel(b, kind, p, big, small);
      time(name, shape, Built{b.load(), moved});
    }
  }

  for (const AvgPoolCase &p : {AvgPoolCase{8, 7, 7, 2048, 7, 7, 1, 1, true},
                               AvgPoolCase{8, 56, 56, 256, 2, 2, 2, 2, false}}) {
    const std::vector<int64_t> shape = {p.n, p.h, p.w, p.c};
    const int64_t moved = p.n * (p.h * p.w + p.oh() * p.ow()) * p.c;
    for (auto [name, kind] : {std::pair{"avg_pool2d", KernelKind::AvgPool2d},
                              {"avg_pool2d_grad", KernelKind::AvgPool2dGrad}}) {
      PlanBuilder b(p.n);
      uint32_t image = b.buffer(shape), pooled = b.buffer(p.outShape());
      if (kind == KernelKind::AvgPool2d)
        avgPoolKernel(b, kind, p, image, pooled);
      else
        avgPoolKernel(b, kind, p, pooled, image);
      time(name, shape, Built{b.load(), moved});
    }
  }
}

} // namespace
} // namespace dp::rt
