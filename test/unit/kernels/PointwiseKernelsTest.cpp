// The pointwise kernels (runtime/kernels/Pointwise.h, generic over the function): gelu and
// gelu_grad on the CPU against the formula in double precision, the gradient kernel against
// central finite differences of that formula, over shapes small and large enough for the
// loops to run on threads, and the contract's load-time checks.
#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

/// A plan with gelu and gelu_grad on x of `shape`.
struct GeluPlan {
  explicit GeluPlan(const std::vector<int64_t> &shape) : b(shape[0]) {
    x = b.buffer(shape), y = b.buffer(shape), dy = b.buffer(shape), dx = b.buffer(shape);
    b.kernel(StepKind::Train, KernelKind::Gelu, {x}, {y});
    b.kernel(StepKind::Train, KernelKind::GeluGrad, {x, dy}, {dx});
    program = b.load();
  }
  PlanBuilder b;
  uint32_t x, y, dy, dx;
  std::unique_ptr<Program> program;
};

class GeluTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(GeluTest, KernelsMatchTheFormula) {
  const std::vector<int64_t> shape = GetParam();
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  GeluPlan plan(shape);
  RandomData rd(static_cast<uint32_t>(n));
  // Both tails and the curved middle: GELU is ~0 far left, ~x far right.
  auto xs = rd.uniform(n, -6.0f, 6.0f), dys = rd.uniform(n, -2.0f, 2.0f);
  put(*plan.program, plan.x, xs);
  put(*plan.program, plan.dy, dys);
  plan.program->run(StepKind::Train, stepContext(shape[0]));

  std::vector<double> y(n), dx(n);
  for (int64_t i = 0; i < n; ++i) {
    const double x = xs[i];
    y[i] = gelu(x);
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    dx[i] = dys[i] * (0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * pdf);
  }
  EXPECT_TRUE(allNear(get(*plan.program, plan.y), y, 1e-6, 1e-5));
  EXPECT_TRUE(allNear(get(*plan.program, plan.dx), dx, 1e-6, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Shapes, GeluTest,
                         ::testing::Values(std::vector<int64_t>{8, 16},
                                           std::vector<int64_t>{2, 3, 5, 7}, // any rank
                                           std::vector<int64_t>{1, 1},
                                           std::vector<int64_t>{64, 4096})); // threads

// L = sum(r * gelu(x)): dL/dx from gelu_grad of r against finite differences of the formula.
TEST(GeluGradFdTest, MatchesFiniteDifferences) {
  const int64_t rows = 4, c = 9;
  GeluPlan plan({rows, c});
  RandomData rd(11);
  auto xs = rd.uniform(rows * c, -3.0f, 3.0f), rs = rd.uniform(rows * c);
  put(*plan.program, plan.x, xs);
  put(*plan.program, plan.dy, rs);
  plan.program->run(StepKind::Train, stepContext(rows));
  const std::vector<double> x = toDouble(xs), r = toDouble(rs);
  auto loss = [&](const std::vector<double> &xv) {
    double sum = 0;
    for (size_t i = 0; i < xv.size(); ++i)
      sum += r[i] * gelu(xv[i]);
    return sum;
  };
  EXPECT_TRUE(allNear(get(*plan.program, plan.dx), numericGradient(x, loss), 2e-4, 2e-3));
}

/// A pointwise function and its derivative in double precision, as PyTorch defines them, and
/// the kernels that compute them.
struct HardCase {
  const char *name;
  KernelKind forward, backward;
  double (*f)(double);
  double (*df)(double);
  std::vector<double> kinks;
};

double relu6(double x) { return std::min(std::max(x, 0.0), 6.0); }
double hardSigmoid(double x) { return relu6(x + 3) / 6; }
double hardSwish(double x) { return x * relu6(x + 3) / 6; }

std::vector<HardCase> hardCases() {
  return {
      {"relu6",
       KernelKind::Relu6,
       KernelKind::Relu6Grad,
       relu6,
       [](double x) { return x > 0 && x < 6 ? 1.0 : 0.0; },
       {0, 6}},
      {"hard_sigmoid",
       KernelKind::HardSigmoid,
       KernelKind::HardSigmoidGrad,
       hardSigmoid,
       [](double x) { return x > -3 && x < 3 ? 1.0 / 6 : 0.0; },
       {-3, 3}},
      {"hard_swish",
       KernelKind::HardSwish,
       KernelKind::HardSwishGrad,
       hardSwish,
       [](double x) { return x < -3  ? 0.0
                             : x > 3 ? 1.0
                                     : x / 3 + 0.5; },
       {-3, 3}},
  };
}

// The kernels against the formulas over [-8, 8] (both sides of every kink), and the gradient
// kernels against central finite differences away from the kinks.
TEST(HardPointwiseTest, KernelsMatchTheFormulasAndFiniteDifferences) {
  for (const HardCase &c : hardCases()) {
    const int64_t rows = 64, cols = 257;
    PlanBuilder b(rows);
    uint32_t x = b.buffer({rows, cols}), y = b.buffer({rows, cols}), dy = b.buffer({rows, cols}),
             dx = b.buffer({rows, cols});
    b.kernel(StepKind::Train, c.forward, {x}, {y});
    b.kernel(StepKind::Train, c.backward, {x, dy}, {dx});
    auto program = b.load();
    const int64_t n = rows * cols;
    RandomData rd(29);
    auto xs = rd.uniform(n, -8.0f, 8.0f), dys = rd.uniform(n, -2.0f, 2.0f);
    put(*program, x, xs);
    put(*program, dy, dys);
    program->run(StepKind::Train, stepContext(rows));
    std::vector<double> yRef(n), dxRef(n);
    for (int64_t i = 0; i < n; ++i) {
      yRef[i] = c.f(xs[i]);
      dxRef[i] = dys[i] * c.df(xs[i]);
    }
    EXPECT_TRUE(allNear(get(*program, y), yRef, 1e-6, 1e-5)) << c.name;
    EXPECT_TRUE(allNear(get(*program, dx), dxRef, 1e-6, 1e-5)) << c.name;
    // Finite differences of the formula where no kink lies within the step.
    const std::vector<float> got = get(*program, dx);
    int checked = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double h = 1e-3, at = xs[i];
      if (std::any_of(c.kinks.begin(), c.kinks.end(),
                      [&](double k) { return std::abs(at - k) < 2 * h; }))
        continue;
      const double fd = dys[i] * (c.f(at + h) - c.f(at - h)) / (2 * h);
      EXPECT_NEAR(got[i], fd, 1e-4 + 1e-3 * std::abs(fd)) << c.name << " at x = " << at;
      ++checked;
    }
    EXPECT_GT(checked, n / 2) << c.name;
  }
}

TEST(PointwiseValidationTest, RefusesBadPlans) {
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 6}), y = b.buffer({4, 5});
    b.kernel(StepKind::Train, KernelKind::Gelu, {x}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(gelu): output 0 (y) (buffer 1) has 20 elements, expected 24");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4}, DType::I32), y = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::Gelu, {x}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "(gelu): input 0 (x) (buffer 0) is i32, expected f32");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 6}), dy = b.buffer({4, 3}), dx = b.buffer({4, 6});
    b.kernel(StepKind::Train, KernelKind::GeluGrad, {x, dy}, {dx});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(gelu_grad): input 1 (dy) (buffer 1) has 12 elements, expected 24");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 6}), dx = b.buffer({4, 6});
    b.kernel(StepKind::Train, KernelKind::GeluGrad, {x}, {dx});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "gelu_grad");
  }
}

} // namespace
} // namespace dp::rt
