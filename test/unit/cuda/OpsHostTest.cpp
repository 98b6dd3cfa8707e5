// The CUDA backend's own kernels, checked on the host: Ops.h is the per-element source nvcc
// compiles into the device kernels, compiled here by the host compiler and run over arrays the
// way the grid-stride loops run it, against the reference kernels.
#include "runtime/backends/cuda/Ops.h"
#include "runtime/kernels/Broadcast.h"
#include "runtime/kernels/ClipNorm.h"
#include "runtime/kernels/reference/Reference.h"

#include "test/unit/cuda/HostTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace dp::rt::cuda {
namespace {

using namespace testing;

/// Runs `element(i)` for every i < n in the order of a grid of `blocks` x `threads` striding
/// over n, as the device kernels do (each thread's elements in turn).
template <typename F> void gridStride(int64_t n, int blocks, int threads, F element) {
  const int64_t stride = int64_t(blocks) * threads;
  for (int64_t t = 0; t < stride; ++t)
    for (int64_t i = t; i < n; i += stride)
      element(i);
}

class Activations : public ::testing::TestWithParam<Activation> {};

TEST_P(Activations, ForwardMatchesTheReference) {
  const Activation act = GetParam();
  const int64_t n = 1000;
  const std::vector<float> x = uniform(n, 1, -6, 6);
  std::vector<float> y(n), want(n);
  gridStride(n, 3, 32, [&](int64_t i) { y[i] = activate(act, x[i]); });
  ref::activation(x.data(), want.data(), 1, n, act);
  EXPECT_TRUE(near(y, want, 1e-6));
}

TEST_P(Activations, GradientMatchesTheReference) {
  const Activation act = GetParam();
  const int64_t n = 1000;
  const std::vector<float> x = uniform(n, 2, -6, 6), dy = uniform(n, 3);
  std::vector<float> y(n), dx(n), want(n);
  ref::activation(x.data(), y.data(), 1, n, act);
  gridStride(n, 2, 64, [&](int64_t i) { dx[i] = activationGrad(act, y[i], dy[i]); });
  ref::activationGrad(y.data(), dy.data(), want.data(), 1, n, act);
  EXPECT_TRUE(near(dx, want, 1e-6));
}

TEST_P(Activations, GradientMatchesFiniteDifferences) {
  const Activation act = GetParam();
  // Away from relu's kink, where the derivative is defined.
  for (float x : {-3.0f, -0.7f, -0.1f, 0.2f, 0.9f, 2.5f}) {
    const double h = 1e-3;
    const double fd = (double(activate(act, float(x + h))) - activate(act, float(x - h))) / (2 * h);
    EXPECT_NEAR(activationGrad(act, activate(act, x), 1.0f), fd, 2e-3) << "at " << x;
  }
}

INSTANTIATE_TEST_SUITE_P(Elementwise, Activations,
                         ::testing::Values(Activation::None, Activation::Relu,
                                           Activation::Sigmoid, Activation::Tanh),
                         [](const auto &info) { return std::string(activationName(info.param)); });

TEST(Elementwise, DenseEpilogueOverTheProductIsTheReferenceDense) {
  // What the cuBLAS dense computes: the product, then the bias and activation per element.
  const int64_t n = 7, k = 11, m = 5;
  const std::vector<float> x = uniform(n * k, 8), w = uniform(k * m, 9), b = uniform(m, 10);
  for (Activation act : {Activation::None, Activation::Relu, Activation::Sigmoid,
                         Activation::Tanh}) {
    std::vector<float> y(n * m), want(n * m);
    ref::matmul(x.data(), w.data(), y.data(), n, k, m, false, false);
    std::vector<float> out(n * m);
    gridStride(n * m, 2, 32,
               [&](int64_t i) { out[i] = biasActivationElement(y.data(), b.data(), m, act, i); });
    ref::dense(x.data(), w.data(), b.data(), want.data(), n, k, m, act);
    EXPECT_TRUE(near(out, want, 1e-5, 1e-6)) << activationName(act);
    gridStride(n * m, 2, 32,
               [&](int64_t i) { out[i] = biasActivationElement(y.data(), nullptr, m, act, i); });
    ref::dense(x.data(), w.data(), static_cast<const float *>(nullptr), want.data(), n, k, m, act);
    EXPECT_TRUE(near(out, want, 1e-5, 1e-6)) << activationName(act) << " without bias";
  }
}

TEST(Elementwise, AddRowsIsTheReference) {
  const int64_t rows = 13, cols = 7;
  const std::vector<float> x = uniform(rows * cols, 11), b = uniform(cols, 12);
  std::vector<float> out(rows * cols), want(rows * cols);
  gridStride(rows * cols, 2, 32,
             [&](int64_t i) { out[i] = addRowsElement(x.data(), b.data(), cols, i); });
  ref::addRows(x.data(), b.data(), want.data(), rows, cols);
  EXPECT_EQ(out, want);
}

TEST(Elementwise, BroadcastMulAndItsReductionAreTheReference) {
  // The geometry the contract makes of a [6, 3, 5, 4] image and [6, 1, 1, 4] weights: the
  // batch kept, H and W merged and broadcast, the channels kept.
  BroadcastShape s;
  s.rank = 3;
  s.dims[0] = 6, s.dims[1] = 15, s.dims[2] = 4;
  s.broadcast[1] = true;
  s.elements = 6 * 15 * 4, s.bElements = 6 * 4;
  const std::vector<int64_t> aShape{6, 3, 5, 4}, bShape{6, 1, 1, 4};
  const std::vector<float> a = uniform(s.elements, 21), b = uniform(s.bElements, 22),
                           dy = uniform(s.elements, 23);
  std::vector<float> y(s.elements), wantY(s.elements), db(s.bElements), wantDb(s.bElements);
  gridStride(s.elements, 2, 32,
             [&](int64_t i) { y[i] = broadcast::mulElement(s, a.data(), b.data(), i); });
  gridStride(s.bElements, 2, 8,
             [&](int64_t j) { db[j] = broadcast::mulReduceElement(s, dy.data(), a.data(), j); });
  ref::mul(a.data(), b.data(), wantY.data(), aShape, bShape);
  ref::mulReduce(dy.data(), a.data(), wantDb.data(), aShape, bShape);
  EXPECT_EQ(y, wantY);
  for (int64_t j = 0; j < s.bElements; ++j) // the same order; a multiply-add may round apart
    EXPECT_NEAR(db[j], wantDb[j], 1e-5f) << j;
}

TEST(Optimizers, SgdMatchesTheReference) {
  const int64_t n = 777;
  std::vector<float> p = uniform(n, 4), want = p;
  const std::vector<float> g = uniform(n, 5);
  gridStride(n, 4, 32, [&](int64_t i) { sgdElement(p.data(), g[i], i, 0.05f); });
  ref::sgdUpdate(want.data(), g.data(), n, 0.05f);
  EXPECT_EQ(p, want);
}

TEST(Optimizers, MomentumMatchesTheReferenceOverSteps) {
  for (bool nesterov : {false, true}) {
    const int64_t n = 300;
    std::vector<float> p = uniform(n, 6), v(n, 0.0f), wantP = p, wantV = v;
    for (int step = 0; step < 5; ++step) {
      const std::vector<float> g = uniform(n, 10 + step);
      gridStride(n, 2, 32, [&](int64_t i) {
        momentumElement(p.data(), v.data(), g[i], i, 0.1f, 0.9f, nesterov);
      });
      ref::momentumUpdate(wantP.data(), wantV.data(), g.data(), n, 0.1f, 0.9f, nesterov);
    }
    EXPECT_TRUE(near(p, wantP, 1e-6)) << (nesterov ? "nesterov" : "plain");
    EXPECT_TRUE(near(v, wantV, 1e-6)) << (nesterov ? "nesterov" : "plain");
  }
}

TEST(Optimizers, AdamMatchesTheReferenceOverSteps) {
  const int64_t n = 500;
  std::vector<float> p = uniform(n, 7), m(n, 0.0f), v(n, 0.0f);
  std::vector<float> wantP = p, wantM = m, wantV = v;
  for (int64_t t = 1; t <= 6; ++t) {
    const std::vector<float> g = uniform(n, 20 + t);
    const AdamStep s = adamStep(1e-3, 0.9, 0.999, 1e-7, t);
    gridStride(n, 3, 32, [&](int64_t i) { adamElement(p.data(), m.data(), v.data(), g[i], i, s); });
    ref::adamUpdate(wantP.data(), wantM.data(), wantV.data(), g.data(), n, 1e-3, 0.9, 0.999,
                    1e-7, t);
  }
  // The reference computes in double; f32 differs in the last bits.
  EXPECT_TRUE(near(p, wantP, 1e-5, 1e-6));
  EXPECT_TRUE(near(m, wantM, 1e-5, 1e-7));
  EXPECT_TRUE(near(v, wantV, 1e-4, 1e-9));
}

// PyTorch's epsilon (on the corrected sqrt(v_hat)) as the device's step constants fold it,
// against the reference written as PyTorch writes it, where epsilon matters (small gradients).
TEST(Ops, AdamWithPyTorchsEpsilonMatchesTheReference) {
  const int64_t n = 300;
  std::vector<float> p = uniform(n, 40), m(n, 0), v(n, 0);
  std::vector<float> wantP = p, wantM = m, wantV = v;
  for (int64_t t = 1; t <= 4; ++t) {
    std::vector<float> g = uniform(n, 41 + t);
    for (float &x : g)
      x *= 1e-3f;
    const AdamStep s = adamStep(1e-2, 0.9, 0.999, 1e-3, t, /*torchEpsilon=*/true);
    for (int64_t i = 0; i < n; ++i)
      adamElement(p.data(), m.data(), v.data(), g[i], i, s);
    ref::adamUpdate(wantP.data(), wantM.data(), wantV.data(), g.data(), n, 1e-2, 0.9, 0.999, 1e-3,
                    t, /*torchEpsilon=*/true);
  }
  EXPECT_TRUE(near(p, wantP, 1e-5, 1e-6));
}

/// A rule of `kind` at lr 0.1 with the other rules' constants (momentum 0.9, Adam's defaults).
UpdateRule ruleOf(UpdateRule::Kind kind) {
  UpdateRule rule;
  rule.kind = kind;
  rule.lr = 0.1;
  rule.momentum = 0.9;
  rule.beta1 = 0.9;
  rule.beta2 = 0.999;
  rule.epsilon = 1e-7;
  return rule;
}

TEST(Optimizers, TheScheduleFactorScalesEveryRule) {
  // The update kernels take the rule with its rate times the step's factor (scheduled()): the
  // same as the reference at the scaled rate, for each rule.
  const int64_t n = 64;
  const std::vector<float> g = uniform(n, 3);
  for (UpdateRule::Kind kind :
       {UpdateRule::Kind::Sgd, UpdateRule::Kind::Momentum, UpdateRule::Kind::Adam}) {
    UpdateRule rule = ruleOf(kind);
    const UpdateRule half = scheduled(rule, 0.5);
    EXPECT_EQ(half.lr, 0.05);
    EXPECT_EQ(scheduled(rule, 1.0).lr, rule.lr);
    std::vector<float> p = uniform(n, 9), s0(n, 0.0f), s1(n, 0.0f);
    std::vector<float> want = p, w0(n, 0.0f), w1(n, 0.0f);
    const TensorSegment seg{p.data(), g.data(), s0.data(), s1.data(), n};
    const AdamStep adam = stepOf(half, 2);
    for (int64_t i = 0; i < n; ++i)
      updateTensorElement(seg, i, half, adam);
    if (kind == UpdateRule::Kind::Sgd)
      ref::sgdUpdate(want.data(), g.data(), n, 0.05f);
    else if (kind == UpdateRule::Kind::Momentum)
      ref::momentumUpdate(want.data(), w0.data(), g.data(), n, 0.05f, 0.9f, false);
    else
      ref::adamUpdate(want.data(), w0.data(), w1.data(), g.data(), n, 0.05, 0.9, 0.999, 1e-7, 2);
    EXPECT_TRUE(near(p, want, 1e-5, 1e-7)) << int(kind);
  }
}

TEST(Optimizers, WeightDecayIsDecoupledAtTheScheduledRate) {
  // A rule with a weight decay first decays each element at the scheduled rate (not Adam's
  // bias-corrected step), then updates it: the reference's decay, then its update.
  const int64_t n = 64;
  const std::vector<float> g = uniform(n, 4);
  for (UpdateRule::Kind kind :
       {UpdateRule::Kind::Sgd, UpdateRule::Kind::Momentum, UpdateRule::Kind::Adam}) {
    UpdateRule rule = ruleOf(kind);
    rule.weightDecay = 0.25;
    const UpdateRule half = scheduled(rule, 0.5);
    std::vector<float> p = uniform(n, 11), s0(n, 0.0f), s1(n, 0.0f);
    std::vector<float> want = p, w0(n, 0.0f), w1(n, 0.0f);
    const TensorSegment seg{p.data(), g.data(), s0.data(), s1.data(), n};
    const AdamStep adam = stepOf(half, 3);
    for (int64_t i = 0; i < n; ++i)
      updateTensorElement(seg, i, half, adam);
    ref::decoupledDecay(want.data(), n, 0.05, 0.25);
    if (kind == UpdateRule::Kind::Sgd)
      ref::sgdUpdate(want.data(), g.data(), n, 0.05f);
    else if (kind == UpdateRule::Kind::Momentum)
      ref::momentumUpdate(want.data(), w0.data(), g.data(), n, 0.05f, 0.9f, false);
    else
      ref::adamUpdate(want.data(), w0.data(), w1.data(), g.data(), n, 0.05, 0.9, 0.999, 1e-7, 3);
    EXPECT_TRUE(near(p, want, 1e-5, 1e-7)) << int(kind);
  }
}

TEST(Optimizers, AScaleMultipliesTheGradientOfEveryRule) {
  // A segment with a scale (a clip_factor's) updates as the reference does on the gradient
  // times the scale, formed in f32; without one, as on the gradient itself.
  const int64_t n = 64;
  const std::vector<float> g = uniform(n, 5);
  const float scale = 0.37f;
  std::vector<float> scaled(n);
  for (int64_t i = 0; i < n; ++i)
    scaled[i] = g[i] * scale;
  for (UpdateRule::Kind kind :
       {UpdateRule::Kind::Sgd, UpdateRule::Kind::Momentum, UpdateRule::Kind::Adam}) {
    const UpdateRule rule = ruleOf(kind);
    std::vector<float> p = uniform(n, 12), s0(n, 0.0f), s1(n, 0.0f);
    std::vector<float> want = p, w0(n, 0.0f), w1(n, 0.0f);
    TensorSegment seg{p.data(), g.data(), s0.data(), s1.data(), n};
    seg.scale = &scale;
    const AdamStep adam = stepOf(rule, 1);
    for (int64_t i = 0; i < n; ++i)
      updateTensorElement(seg, i, rule, adam);
    if (kind == UpdateRule::Kind::Sgd)
      ref::sgdUpdate(want.data(), scaled.data(), n, 0.1f);
    else if (kind == UpdateRule::Kind::Momentum)
      ref::momentumUpdate(want.data(), w0.data(), scaled.data(), n, 0.1f, 0.9f, false);
    else
      ref::adamUpdate(want.data(), w0.data(), w1.data(), scaled.data(), n, 0.1, 0.9, 0.999, 1e-7,
                      1);
    EXPECT_TRUE(near(p, want, 1e-5, 1e-7)) << int(kind);
  }
}

TEST(ClipNorm, TheDeviceSharesGiveTheReferenceFactor) {
  // The CUDA kernel sums each gradient in the single block's strided shares; the factor is the
  // reference's, and is 1 when the norm is under the limit and NaN for a NaN gradient.
  const std::vector<float> a = uniform(1000, 8), b = uniform(77, 9);
  double sum = 0;
  for (const std::vector<float> *x : {&a, &b})
    for (int t = 0; t < 32; ++t)
      sum += sumOfSquares(x->data(), t, static_cast<int64_t>(x->size()), 32);
  const float want = ref::clipFactor({a.data(), b.data()}, {1000, 77}, 2.0);
  EXPECT_NEAR(clipFactor(sum, 2.0), want, 1e-7);
  EXPECT_LT(want, 1.0f);
  EXPECT_EQ(clipFactor(sum, 1e6), 1.0f);
  EXPECT_TRUE(std::isnan(clipFactor(std::nan(""), 1.0)));
}

} // namespace
} // namespace dp::rt::cuda
