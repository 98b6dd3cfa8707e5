// The lstm and lstm_grad kernels: the CPU forward (training and eval) against the naive
// reference, the CPU gradients against the reference's backpropagation through time and
// against central finite differences of the reference forward in double, the hand-over of the
// training state from lstm to lstm_grad (stacked layers, repeated steps), and load-time checks.
#include "runtime/kernels/reference/Lstm.h"
#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <tuple>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

/// Sizes of one layer: batch n, steps t, features f, units u.
struct LstmCase {
  int64_t n, t, f, u;
  ref::LstmShape shape(bool returnSequences) const { return {n, t, f, u, returnSequences}; }
};
void PrintTo(const LstmCase &c, std::ostream *os) {
  *os << "N" << c.n << "_T" << c.t << "_F" << c.f << "_U" << c.u;
}

// One step or one row are edge cases (oneDNN 2.6 gets dr wrong for N = T = 1).
const LstmCase kLstmCases[] = {
    {3, 4, 5, 6}, {16, 28, 28, 32}, {1, 1, 2, 3}, {2, 1, 2, 3}, {1, 5, 7, 9}};

std::vector<int64_t> yShape(const ref::LstmShape &s) {
  return s.returnSequences ? std::vector<int64_t>{s.n, s.t, s.u} : std::vector<int64_t>{s.n, s.u};
}

/// Adds an lstm kernel to `step`.
KernelSpec &lstmKernel(PlanBuilder &b, StepKind step, const ref::LstmShape &s, bool training,
                       std::vector<uint32_t> ins, uint32_t y) {
  return b.kernel(step, KernelKind::Lstm, std::move(ins), {y})
      .attrI("return_sequences", s.returnSequences)
      .attrI("training", training);
}

/// A plan whose train step runs a training lstm and its lstm_grad, and whose eval step runs an
/// eval lstm on the same x, w, r, b into its own output.
struct LstmPlan {
  explicit LstmPlan(const ref::LstmShape &shape) : s(shape) {
    PlanBuilder b(s.n);
    x = b.buffer({s.n, s.t, s.f}), w = b.buffer({s.f, 4 * s.u}), r = b.buffer({s.u, 4 * s.u}),
    bias = b.buffer({4 * s.u}), y = b.buffer(yShape(s)), dy = b.buffer(yShape(s)),
    dx = b.buffer({s.n, s.t, s.f}), dw = b.buffer({s.f, 4 * s.u}), dr = b.buffer({s.u, 4 * s.u}),
    db = b.buffer({4 * s.u}), yEval = b.buffer(yShape(s));
    lstmKernel(b, StepKind::Train, s, true, {x, w, r, bias}, y);
    b.kernel(StepKind::Train, KernelKind::LstmGrad, {x, w, r, bias, y, dy}, {dx, dw, dr, db});
    lstmKernel(b, StepKind::Eval, s, false, {x, w, r, bias}, yEval);
    program = b.load();
  }

  /// Random inputs, weights and output gradient (weights scaled like Keras's initialisers).
  void fill(uint32_t seed) {
    RandomData rd(seed);
    xs = rd.uniform(s.n * s.t * s.f);
    ws = rd.uniform(s.f * 4 * s.u, -0.5f, 0.5f);
    rs = rd.uniform(s.u * 4 * s.u, -0.5f, 0.5f);
    bs = rd.uniform(4 * s.u, -0.5f, 0.5f);
    dys = rd.uniform(s.outputSize());
    put(*program, x, xs);
    put(*program, w, ws);
    put(*program, r, rs);
    put(*program, bias, bs);
    put(*program, dy, dys);
  }
  void train() { program->run(StepKind::Train, stepContext(s.n)); }
  void eval() { program->run(StepKind::Eval, stepContext(s.n)); }

  ref::LstmShape s;
  std::unique_ptr<Program> program;
  uint32_t x, w, r, bias, y, dy, dx, dw, dr, db, yEval;
  std::vector<float> xs, ws, rs, bs, dys;
};

/// The reference gradients, in double, of the inputs held by `p`.
struct RefGrads {
  explicit RefGrads(const LstmPlan &p) {
    const ref::LstmShape &s = p.s;
    dx.resize(p.xs.size()), dw.resize(p.ws.size()), dr.resize(p.rs.size()), db.resize(p.bs.size());
    const auto xd = toDouble(p.xs), wd = toDouble(p.ws), rd = toDouble(p.rs), bd = toDouble(p.bs),
               dyd = toDouble(p.dys);
    ref::lstmGrad(xd.data(), wd.data(), rd.data(), bd.data(), dyd.data(), dx.data(), dw.data(),
                  dr.data(), db.data(), s);
  }
  std::vector<double> dx, dw, dr, db;
};

class LstmTest : public ::testing::TestWithParam<std::tuple<LstmCase, bool>> {};

TEST_P(LstmTest, ForwardMatchesReference) {
  const auto [c, returnSequences] = GetParam();
  LstmPlan p(c.shape(returnSequences));
  p.fill(static_cast<uint32_t>(c.t * 100 + c.u));
  p.train();
  p.eval();

  std::vector<double> want(p.s.outputSize());
  const auto xd = toDouble(p.xs), wd = toDouble(p.ws), rd = toDouble(p.rs), bd = toDouble(p.bs);
  ref::lstm(xd.data(), wd.data(), rd.data(), bd.data(), want.data(), p.s);
  EXPECT_TRUE(allNear(get(*p.program, p.y), want, 1e-5, 1e-4));
  EXPECT_TRUE(allNear(get(*p.program, p.yEval), want, 1e-5, 1e-4));
  // forward_inference computes what forward_training does.
  EXPECT_TRUE(allNear(get(*p.program, p.yEval), get(*p.program, p.y), 1e-6, 1e-6));
}

TEST_P(LstmTest, GradientsMatchReference) {
  const auto [c, returnSequences] = GetParam();
  LstmPlan p(c.shape(returnSequences));
  p.fill(static_cast<uint32_t>(7 + c.n * 3 + c.f));
  p.train();
  const RefGrads want(p);
  // Gradients sum over up to N*T terms of products of O(1) factors.
  const double atol = 1e-5 * std::sqrt(double(c.n * c.t)), rtol = 1e-4;
  const auto dx = get(*p.program, p.dx), dw = get(*p.program, p.dw), dr = get(*p.program, p.dr),
             db = get(*p.program, p.db);
  EXPECT_TRUE(allNear(dx, want.dx, atol, rtol)) << "dx";
  EXPECT_TRUE(allNear(dw, want.dw, atol, rtol)) << "dw";
  EXPECT_TRUE(allNear(dr, want.dr, atol, rtol)) << "dr";
  EXPECT_TRUE(allNear(db, want.db, atol, rtol)) << "db";

  // A second step over the same data gives the same gradients: oneDNN's accumulation into the
  // weight gradients starts from zero each step.
  p.train();
  p.train();
  EXPECT_TRUE(allNear(get(*p.program, p.dx), dx, 1e-6, 1e-6)) << "dx, third step";
  EXPECT_TRUE(allNear(get(*p.program, p.dw), dw, 1e-6, 1e-6)) << "dw, third step";
  EXPECT_TRUE(allNear(get(*p.program, p.dr), dr, 1e-6, 1e-6)) << "dr, third step";
  EXPECT_TRUE(allNear(get(*p.program, p.db), db, 1e-6, 1e-6)) << "db, third step";
}

INSTANTIATE_TEST_SUITE_P(Shapes, LstmTest,
                         ::testing::Combine(::testing::ValuesIn(kLstmCases), ::testing::Bool()));

// ---- finite differences ------------------------------------------------------------------

class LstmGradFdTest : public ::testing::TestWithParam<std::tuple<LstmCase, bool>> {};

// L = sum(r * lstm(x, w, r, b)): the four gradients of lstm_grad with dy = r, and those of the
// reference's backpropagation through time, against central differences in double.
TEST_P(LstmGradFdTest, MatchesFiniteDifferences) {
  const auto [c, returnSequences] = GetParam();
  LstmPlan p(c.shape(returnSequences));
  p.fill(31);
  p.train();
  const RefGrads bptt(p);

  const ref::LstmShape s = p.s;
  const auto xd = toDouble(p.xs), wd = toDouble(p.ws), rd = toDouble(p.rs), bd = toDouble(p.bs),
             dyd = toDouble(p.dys);
  // The loss with one of x, w, r, b (operand `which`) replaced by v.
  auto lossWith = [&](int which) {
    return [&, which](const std::vector<double> &v) {
      std::vector<double> y(s.outputSize());
      ref::lstm(which == 0 ? v.data() : xd.data(), which == 1 ? v.data() : wd.data(),
                which == 2 ? v.data() : rd.data(), which == 3 ? v.data() : bd.data(), y.data(), s);
      return dot(y, dyd);
    };
  };
  const std::vector<double> *operands[] = {&xd, &wd, &rd, &bd};
  const uint32_t grads[] = {p.dx, p.dw, p.dr, p.db};
  const std::vector<double> *refGrads[] = {&bptt.dx, &bptt.dw, &bptt.dr, &bptt.db};
  const char *names[] = {"dx", "dw", "dr", "db"};
  for (int i = 0; i < 4; ++i) {
    const std::vector<double> numeric = numericGradient(*operands[i], lossWith(i));
    EXPECT_TRUE(allNear(*refGrads[i], numeric, 1e-7, 1e-6)) << "reference " << names[i];
    EXPECT_TRUE(allNear(get(*p.program, grads[i]), numeric, 1e-5, 1e-4)) << "cpu " << names[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Small, LstmGradFdTest,
                         ::testing::Combine(::testing::Values(LstmCase{2, 3, 3, 4},
                                                              LstmCase{3, 4, 5, 6}),
                                            ::testing::Bool()));

// ---- two layers ----------------------------------------------------------------------------

// Two stacked training lstms (sequences, then the last step) with their gradients in reverse
// order, as a compiled model runs them: each lstm_grad finds the state of its own forward.
TEST(StackedLstmTest, GradientsFlowThroughBothLayers) {
  const ref::LstmShape s1{4, 5, 3, 6, true}, s2{4, 5, 6, 7, false};
  PlanBuilder b(s1.n);
  uint32_t x = b.buffer({s1.n, s1.t, s1.f}), w1 = b.buffer({s1.f, 4 * s1.u}),
           r1 = b.buffer({s1.u, 4 * s1.u}), b1 = b.buffer({4 * s1.u}), h = b.buffer(yShape(s1)),
           w2 = b.buffer({s2.f, 4 * s2.u}), r2 = b.buffer({s2.u, 4 * s2.u}),
           b2 = b.buffer({4 * s2.u}), y = b.buffer(yShape(s2)), dy = b.buffer(yShape(s2)),
           dh = b.buffer(yShape(s1)), dw2 = b.buffer({s2.f, 4 * s2.u}),
           dr2 = b.buffer({s2.u, 4 * s2.u}), db2 = b.buffer({4 * s2.u}),
           dx = b.buffer({s1.n, s1.t, s1.f}), dw1 = b.buffer({s1.f, 4 * s1.u}),
           dr1 = b.buffer({s1.u, 4 * s1.u}), db1 = b.buffer({4 * s1.u});
  lstmKernel(b, StepKind::Train, s1, true, {x, w1, r1, b1}, h);
  lstmKernel(b, StepKind::Train, s2, true, {h, w2, r2, b2}, y);
  b.kernel(StepKind::Train, KernelKind::LstmGrad, {h, w2, r2, b2, y, dy}, {dh, dw2, dr2, db2});
  b.kernel(StepKind::Train, KernelKind::LstmGrad, {x, w1, r1, b1, h, dh}, {dx, dw1, dr1, db1});
  auto program = b.load();

  RandomData rd(5);
  auto xs = rd.uniform(s1.n * s1.t * s1.f), w1s = rd.uniform(s1.f * 4 * s1.u, -0.5f, 0.5f),
       r1s = rd.uniform(s1.u * 4 * s1.u, -0.5f, 0.5f), b1s = rd.uniform(4 * s1.u),
       w2s = rd.uniform(s2.f * 4 * s2.u, -0.5f, 0.5f),
       r2s = rd.uniform(s2.u * 4 * s2.u, -0.5f, 0.5f), b2s = rd.uniform(4 * s2.u),
       dys = rd.uniform(s2.outputSize());
  for (auto [id, values] : {std::pair{x, &xs},
                            {w1, &w1s},
                            {r1, &r1s},
                            {b1, &b1s},
                            {w2, &w2s},
                            {r2, &r2s},
                            {b2, &b2s},
                            {dy, &dys}})
    put(*program, id, *values);
  program->run(StepKind::Train, stepContext(s1.n));

  const auto xd = toDouble(xs), w1d = toDouble(w1s), r1d = toDouble(r1s), b1d = toDouble(b1s),
             w2d = toDouble(w2s), r2d = toDouble(r2s), b2d = toDouble(b2s), dyd = toDouble(dys);
  std::vector<double> hd(s1.outputSize()), yd(s2.outputSize()), dhd(hd.size()), dw2d(w2d.size()),
      dr2d(r2d.size()), db2d(b2d.size()), dxd(xd.size()), dw1d(w1d.size()), dr1d(r1d.size()),
      db1d(b1d.size());
  ref::lstm(xd.data(), w1d.data(), r1d.data(), b1d.data(), hd.data(), s1);
  ref::lstm(hd.data(), w2d.data(), r2d.data(), b2d.data(), yd.data(), s2);
  ref::lstmGrad(hd.data(), w2d.data(), r2d.data(), b2d.data(), dyd.data(), dhd.data(), dw2d.data(),
                dr2d.data(), db2d.data(), s2);
  ref::lstmGrad(xd.data(), w1d.data(), r1d.data(), b1d.data(), dhd.data(), dxd.data(), dw1d.data(),
                dr1d.data(), db1d.data(), s1);
  EXPECT_TRUE(allNear(get(*program, y), yd, 1e-5, 1e-4));
  for (auto [id, want, name] : {std::tuple{dh, &dhd, "dh"},
                                {dw2, &dw2d, "dw2"},
                                {dr2, &dr2d, "dr2"},
                                {db2, &db2d, "db2"},
                                {dx, &dxd, "dx"},
                                {dw1, &dw1d, "dw1"},
                                {dr1, &dr1d, "dr1"},
                                {db1, &db1d, "db1"}})
    EXPECT_TRUE(allNear(get(*program, id), *want, 1e-5, 1e-4)) << name;
}

// ---- load-time validation ------------------------------------------------------------------

/// Buffers of one layer for the validation tests; shapes are overridable.
struct LstmBuffers {
  LstmBuffers(PlanBuilder &b, const ref::LstmShape &s) {
    x = b.buffer({s.n, s.t, s.f}), w = b.buffer({s.f, 4 * s.u}), r = b.buffer({s.u, 4 * s.u}),
    bias = b.buffer({4 * s.u}), y = b.buffer(yShape(s)), dy = b.buffer(yShape(s)),
    dx = b.buffer({s.n, s.t, s.f}), dw = b.buffer({s.f, 4 * s.u}), dr = b.buffer({s.u, 4 * s.u}),
    db = b.buffer({4 * s.u});
  }
  std::vector<uint32_t> gradIns() const { return {x, w, r, bias, y, dy}; }
  std::vector<uint32_t> gradOuts() const { return {dx, dw, dr, db}; }
  uint32_t x, w, r, bias, y, dy, dx, dw, dr, db;
};

const ref::LstmShape kSmall{2, 3, 4, 5, true};

TEST(LstmValidationTest, GradNeedsTheOutputOfATrainingLstm) {
  {
    // No forward at all.
    PlanBuilder b(2);
    LstmBuffers l(b, kSmall);
    b.kernel(StepKind::Train, KernelKind::LstmGrad, l.gradIns(), l.gradOuts());
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "train kernel #0 (lstm_grad): input 4 (y) (buffer 4) is not the output of a "
                    "training lstm of this step");
  }
  {
    // An eval-mode forward keeps no workspace.
    PlanBuilder b(2);
    LstmBuffers l(b, kSmall);
    lstmKernel(b, StepKind::Train, kSmall, false, {l.x, l.w, l.r, l.bias}, l.y);
    b.kernel(StepKind::Train, KernelKind::LstmGrad, l.gradIns(), l.gradOuts());
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "is not the output of a training lstm");
  }
  {
    // The gradient comes before its forward.
    PlanBuilder b(2);
    LstmBuffers l(b, kSmall);
    b.kernel(StepKind::Train, KernelKind::LstmGrad, l.gradIns(), l.gradOuts());
    lstmKernel(b, StepKind::Train, kSmall, true, {l.x, l.w, l.r, l.bias}, l.y);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "is not the output of a training lstm");
  }
}

TEST(LstmValidationTest, GradReadsTheForwardsOperands) {
  PlanBuilder b(2);
  LstmBuffers l(b, kSmall);
  const uint32_t otherX = b.buffer({kSmall.n, kSmall.t, kSmall.f});
  lstmKernel(b, StepKind::Train, kSmall, true, {l.x, l.w, l.r, l.bias}, l.y);
  b.kernel(StepKind::Train, KernelKind::LstmGrad, {otherX, l.w, l.r, l.bias, l.y, l.dy},
           l.gradOuts());
  EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                  "input 0 (x) (buffer 10) is not the x of the training lstm that wrote y "
                  "(buffer 0)");
}

TEST(LstmValidationTest, TwoTrainingLstmsCannotShareAnOutput) {
  PlanBuilder b(2);
  LstmBuffers l(b, kSmall);
  lstmKernel(b, StepKind::Train, kSmall, true, {l.x, l.w, l.r, l.bias}, l.y);
  lstmKernel(b, StepKind::Train, kSmall, true, {l.x, l.w, l.r, l.bias}, l.y);
  EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                  "train kernel #1 (lstm): output 0 (y) (buffer 4) already holds the state of "
                  "another training lstm");
}

TEST(LstmValidationTest, Shapes) {
  const ref::LstmShape s = kSmall;
  struct Case {
    std::vector<int64_t> x, w, r, b, y;
    const char *message;
  };
  const Case cases[] = {
      {{2, 3, 4}, {4, 21}, {5, 20}, {20}, {2, 3, 5}, "input 1 (w) (buffer 1) must be [F,4U]"},
      {{2, 3, 4},
       {3, 20},
       {5, 20},
       {20},
       {2, 3, 5},
       "input 1 (w) (buffer 1) is [3x20], expected [4x20]"},
      {{2, 3, 4},
       {4, 20},
       {4, 20},
       {20},
       {2, 3, 5},
       "input 2 (r) (buffer 2) is [4x20], expected [5x20]"},
      {{2, 3, 4},
       {4, 20},
       {5, 20},
       {5, 4},
       {2, 3, 5},
       "input 3 (b) (buffer 3) is [5x4], expected [20]"},
      {{2, 3, 4},
       {4, 20},
       {5, 20},
       {20},
       {2, 5},
       "output 0 (y) (buffer 4) is [2x5], expected [2x3x5]"},
      {{6, 4}, {4, 20}, {5, 20}, {20}, {2, 3, 5}, "input 0 (x) (buffer 0) has rank 2, expected 3"},
  };
  for (const Case &c : cases) {
    PlanBuilder b(2);
    uint32_t x = b.buffer(c.x), w = b.buffer(c.w), r = b.buffer(c.r), bias = b.buffer(c.b),
             y = b.buffer(c.y);
    lstmKernel(b, StepKind::Train, s, true, {x, w, r, bias}, y);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, c.message);
  }
}

TEST(LstmValidationTest, Attributes) {
  {
    PlanBuilder b(2);
    LstmBuffers l(b, kSmall);
    b.kernel(StepKind::Train, KernelKind::Lstm, {l.x, l.w, l.r, l.bias}, {l.y})
        .attrI("training", 0);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "missing attribute 'return_sequences'");
  }
  {
    PlanBuilder b(2);
    LstmBuffers l(b, kSmall);
    b.kernel(StepKind::Train, KernelKind::Lstm, {l.x, l.w, l.r, l.bias}, {l.y})
        .attrI("return_sequences", 1)
        .attrI("training", 2);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "training must be 0 or 1, not 2");
  }
}

TEST(LstmValidationTest, GradOutputShapes) {
  PlanBuilder b(2);
  LstmBuffers l(b, kSmall);
  const uint32_t badDr = b.buffer({4 * kSmall.u, kSmall.u});
  lstmKernel(b, StepKind::Train, kSmall, true, {l.x, l.w, l.r, l.bias}, l.y);
  b.kernel(StepKind::Train, KernelKind::LstmGrad, l.gradIns(), {l.dx, l.dw, badDr, l.db});
  EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                  "output 2 (dr) (buffer 10) is [20x5], expected [5x20]");
}

// ---- timing --------------------------------------------------------------------------------

// One training step (forward_training + backward) and one eval forward of a layer of the size
// of an MNIST row-by-row classifier. Run with --gtest_also_run_disabled_tests.
TEST(LstmTimingTest, DISABLED_LstmTiming) {
  for (bool returnSequences : {true, false}) {
    LstmPlan p(ref::LstmShape{128, 28, 28, 256, returnSequences});
    p.fill(1);
    auto msPer = [](int iterations, const std::function<void()> &f) {
      f(); // warm-up
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iterations; ++i)
        f();
      const std::chrono::duration<double, std::milli> elapsed =
          std::chrono::steady_clock::now() - start;
      return elapsed.count() / iterations;
    };
    const double train = msPer(20, [&] { p.train(); });
    const double eval = msPer(20, [&] { p.eval(); });
    std::printf("N=128 T=28 F=28 U=256 return_sequences=%d: train step %.2f ms, eval forward "
                "%.2f ms\n",
                int(returnSequences), train, eval);
  }
}

} // namespace
} // namespace dp::rt
