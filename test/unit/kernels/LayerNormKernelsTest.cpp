// Layer normalisation: the oneDNN kernels against the naive reference of LayerNorm.h, the
// gradient kernel against central finite differences of the reference forward in double (the
// statistics' dependence on the input included), and the load-time validation.
#include "runtime/kernels/reference/LayerNorm.h"
#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <vector>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

/// A plan with layer_norm and layer_norm_grad on x of `shape` (last axis the channels).
struct LayerNormPlan {
  explicit LayerNormPlan(const std::vector<int64_t> &shape, double epsilon) : b(shape[0]) {
    const int64_t c = shape.back();
    x = b.buffer(shape), gamma = b.buffer({c}), beta = b.buffer({c}), y = b.buffer(shape);
    dy = b.buffer(shape), dx = b.buffer(shape), dgamma = b.buffer({c}), dbeta = b.buffer({c});
    b.kernel(StepKind::Train, KernelKind::LayerNorm, {x, gamma, beta}, {y})
        .attrF("epsilon", epsilon);
    b.kernel(StepKind::Train, KernelKind::LayerNormGrad, {x, gamma, dy}, {dx, dgamma, dbeta})
        .attrF("epsilon", epsilon);
    program = b.load();
  }
  PlanBuilder b;
  uint32_t x, gamma, beta, y, dy, dx, dgamma, dbeta;
  std::unique_ptr<Program> program;
};

class LayerNormTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(LayerNormTest, KernelsMatchReference) {
  const std::vector<int64_t> shape = GetParam();
  const int64_t c = shape.back();
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  const int64_t rows = n / c;
  LayerNormPlan plan(shape, 1e-3);
  RandomData rd(static_cast<uint32_t>(n));
  // An offset and a scale per row, so that the statistics matter.
  auto xs = rd.uniform(n, -2.0f, 3.0f), gs = rd.uniform(c, 0.5f, 1.5f), bs = rd.uniform(c);
  auto dys = rd.uniform(n);
  put(*plan.program, plan.x, xs);
  put(*plan.program, plan.gamma, gs);
  put(*plan.program, plan.beta, bs);
  put(*plan.program, plan.dy, dys);
  plan.program->run(StepKind::Train, stepContext(shape[0]));

  std::vector<double> y(n), dx(n), dg(c), db(c);
  ref::layerNorm(toDouble(xs).data(), toDouble(gs).data(), toDouble(bs).data(), y.data(), rows, c,
                 1e-3);
  ref::layerNormGrad(toDouble(xs).data(), toDouble(gs).data(), toDouble(dys).data(), dx.data(),
                     dg.data(), db.data(), rows, c, 1e-3);
  EXPECT_TRUE(allNear(get(*plan.program, plan.y), y, 1e-5, 1e-5));
  EXPECT_TRUE(allNear(get(*plan.program, plan.dx), dx, 1e-4, 1e-4));
  EXPECT_TRUE(allNear(get(*plan.program, plan.dgamma), dg, 1e-4, 1e-4));
  EXPECT_TRUE(allNear(get(*plan.program, plan.dbeta), db, 1e-4, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormTest,
                         ::testing::Values(std::vector<int64_t>{8, 16},
                                           std::vector<int64_t>{3, 5, 7},    // [N, T, F]
                                           std::vector<int64_t>{2, 1},       // one channel
                                           std::vector<int64_t>{256, 512})); // large: threads

// L = sum(r * layer_norm(x)): dL/dx, dL/dgamma and dL/dbeta from layer_norm_grad of r.
TEST(LayerNormGradFdTest, MatchesFiniteDifferences) {
  const int64_t rows = 4, c = 6;
  LayerNormPlan plan({rows, c}, 1e-3);
  RandomData rd(9);
  auto xs = rd.uniform(rows * c, -1.0f, 2.0f), gs = rd.uniform(c, 0.5f, 1.5f);
  auto bs = rd.uniform(c), rs = rd.uniform(rows * c);
  put(*plan.program, plan.x, xs);
  put(*plan.program, plan.gamma, gs);
  put(*plan.program, plan.beta, bs);
  put(*plan.program, plan.dy, rs);
  plan.program->run(StepKind::Train, stepContext(rows));
  const std::vector<double> x = toDouble(xs), g = toDouble(gs), b = toDouble(bs), r = toDouble(rs);
  auto lossOf = [&](const std::vector<double> &xv, const std::vector<double> &gv,
                    const std::vector<double> &bv) {
    std::vector<double> y(x.size());
    ref::layerNorm(xv.data(), gv.data(), bv.data(), y.data(), rows, c, 1e-3);
    return dot(y, r);
  };
  EXPECT_TRUE(allNear(get(*plan.program, plan.dx),
                      numericGradient(x, [&](const auto &v) { return lossOf(v, g, b); }), 2e-4,
                      2e-3));
  EXPECT_TRUE(allNear(get(*plan.program, plan.dgamma),
                      numericGradient(g, [&](const auto &v) { return lossOf(x, v, b); }), 2e-4,
                      2e-3));
  EXPECT_TRUE(allNear(get(*plan.program, plan.dbeta),
                      numericGradient(b, [&](const auto &v) { return lossOf(x, g, v); }), 2e-4,
                      2e-3));
}

TEST(LayerNormValidationTest, RefusesBadPlans) {
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 6}), g = b.buffer({5}), y = b.buffer({4, 6});
    b.kernel(StepKind::Train, KernelKind::LayerNorm, {x, g, g}, {y}).attrF("epsilon", 1e-3);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(layer_norm): input 1 (gamma) (buffer 1) has 5 elements, expected 6");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({24}), g = b.buffer({24}), y = b.buffer({24});
    b.kernel(StepKind::Train, KernelKind::LayerNorm, {x, g, g}, {y}).attrF("epsilon", 1e-3);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "input 0 (x) (buffer 0) needs rows and a non-empty last axis");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 6}), g = b.buffer({6}), y = b.buffer({4, 6});
    b.kernel(StepKind::Train, KernelKind::LayerNorm, {x, g, g}, {y}).attrF("epsilon", 0.0);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "(layer_norm): epsilon 0.000000 must be positive");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 6}), g = b.buffer({6}), dx = b.buffer({4, 5});
    uint32_t dg = b.buffer({6}), db = b.buffer({6});
    b.kernel(StepKind::Train, KernelKind::LayerNormGrad, {x, g, x}, {dx, dg, db})
        .attrF("epsilon", 1e-3);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(layer_norm_grad): output 0 (dx) (buffer 2) is [4x5], expected [4x6]");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 6}), g = b.buffer({6}), y = b.buffer({4, 6});
    b.kernel(StepKind::Train, KernelKind::LayerNorm, {x, g, g}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "(layer_norm): missing attribute 'epsilon'");
  }
}

} // namespace
} // namespace dp::rt
