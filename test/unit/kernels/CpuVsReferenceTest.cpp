// Every CPU kernel against the naive reference on random data, including odd sizes, sizes large
// enough to take the multi-threaded paths, in-place use and the valid-row handling of the losses.
#include "runtime/kernels/reference/Reference.h"
#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <limits>
#include <tuple>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

const Activation kAllActivations[] = {Activation::None, Activation::Relu, Activation::Sigmoid,
                                      Activation::Tanh, Activation::Softmax};

// ---- dense -------------------------------------------------------------------------------

struct DenseCase {
  int64_t n, k, m;
};
void PrintTo(const DenseCase &c, std::ostream *os) { *os << c.n << "x" << c.k << "x" << c.m; }

class DenseTest : public ::testing::TestWithParam<std::tuple<DenseCase, Activation, bool>> {};

TEST_P(DenseTest, MatchesReference) {
  const auto [shape, act, withBias] = GetParam();
  const auto [n, k, m] = shape;
  PlanBuilder b(n);
  uint32_t x = b.buffer({n, k}), w = b.buffer({k, m}), bias = b.buffer({m}), y = b.buffer({n, m});
  std::vector<uint32_t> ins = {x, w};
  if (withBias)
    ins.push_back(bias);
  b.kernel(StepKind::Train, KernelKind::Dense, ins, {y}).activation(act);
  auto program = b.load();

  RandomData rd(static_cast<uint32_t>(n * 1000 + k * 10 + m));
  auto xs = rd.uniform(n * k), ws = rd.uniform(k * m, -0.5f, 0.5f), bs = rd.uniform(m);
  put(*program, x, xs);
  put(*program, w, ws);
  put(*program, bias, bs);
  program->run(StepKind::Train, stepContext(n));

  std::vector<float> want(n * m);
  ref::dense(xs.data(), ws.data(), withBias ? bs.data() : nullptr, want.data(), n, k, m, act);
  EXPECT_TRUE(allNear(get(*program, y), want, 2e-6 * k, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DenseTest,
    ::testing::Combine(::testing::Values(DenseCase{1, 1, 1}, DenseCase{5, 7, 3},
                                         DenseCase{33, 65, 17}, DenseCase{100, 784, 100},
                                         DenseCase{100, 100, 10}),
                       ::testing::ValuesIn(kAllActivations), ::testing::Bool()),
    [](const auto &info) {
      const DenseCase &c = std::get<0>(info.param);
      return std::to_string(c.n) + "x" + std::to_string(c.k) + "x" + std::to_string(c.m) + "_" +
             activationName(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "_bias" : "_nobias");
    });

TEST(DenseInputTest, AcceptsAnInputOfHigherRank) {
  // An image batch [n, h, w] feeds a dense layer directly: only its element count matters.
  PlanBuilder b(3);
  uint32_t x = b.buffer({3, 4, 5}), w = b.buffer({20, 6}), y = b.buffer({3, 6});
  b.kernel(StepKind::Train, KernelKind::Dense, {x, w}, {y});
  auto program = b.load();
  RandomData rd(1);
  auto xs = rd.uniform(60), ws = rd.uniform(120);
  put(*program, x, xs);
  put(*program, w, ws);
  program->run(StepKind::Train, stepContext(3));
  std::vector<float> want(18);
  ref::dense(xs.data(), ws.data(), static_cast<const float *>(nullptr), want.data(), 3, 20, 6,
             Activation::None);
  EXPECT_TRUE(allNear(get(*program, y), want, 1e-5, 1e-5));
}

// ---- matmul ------------------------------------------------------------------------------

class MatMulTest : public ::testing::TestWithParam<
                       std::tuple<std::tuple<int64_t, int64_t, int64_t>, bool, bool>> {};

TEST_P(MatMulTest, MatchesReference) {
  const auto [dims, ta, tb] = GetParam();
  const auto [m, k, n] = dims;
  PlanBuilder b(4);
  uint32_t a = b.buffer(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k});
  uint32_t bb = b.buffer(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
  uint32_t c = b.buffer({m, n});
  b.kernel(StepKind::Train, KernelKind::MatMul, {a, bb}, {c})
      .attrI("transpose_a", ta)
      .attrI("transpose_b", tb);
  auto program = b.load();
  RandomData rd(static_cast<uint32_t>(m * 31 + k * 7 + n));
  auto as = rd.uniform(m * k), bs = rd.uniform(k * n);
  put(*program, a, as);
  put(*program, bb, bs);
  program->run(StepKind::Train, stepContext(1));
  std::vector<float> want(m * n);
  ref::matmul(as.data(), bs.data(), want.data(), m, k, n, ta, tb);
  EXPECT_TRUE(allNear(get(*program, c), want, 2e-6 * k, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatMulTest,
    ::testing::Combine(::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(3, 5, 7),
                                         std::make_tuple(17, 1, 9), std::make_tuple(784, 100, 100),
                                         std::make_tuple(100, 100, 10),
                                         std::make_tuple(63, 129, 31)),
                       ::testing::Bool(), ::testing::Bool()),
    [](const auto &info) {
      const auto &dims = std::get<0>(info.param);
      return std::to_string(std::get<0>(dims)) + "x" + std::to_string(std::get<1>(dims)) + "x" +
             std::to_string(std::get<2>(dims)) + (std::get<1>(info.param) ? "_ta" : "") +
             (std::get<2>(info.param) ? "_tb" : "");
    });

// ---- batch_matmul ------------------------------------------------------------------------

/// Products over leading axes `lead` of op(a) [m, k] by op(b) [k, n], scaled by alpha.
struct BatchProduct {
  std::vector<int64_t> lead;
  int64_t m, k, n;
  bool ta, tb;
  double alpha;
};

void PrintTo(const BatchProduct &p, std::ostream *os) {
  *os << p.lead.size() << " leading axes, " << p.m << "x" << p.k << "x" << p.n
      << (p.ta ? " ta" : "") << (p.tb ? " tb" : "") << " alpha " << p.alpha;
}

class BatchMatMulTest : public ::testing::TestWithParam<BatchProduct> {};

TEST_P(BatchMatMulTest, MatchesReference) {
  const BatchProduct p = GetParam();
  int64_t batch = 1;
  for (int64_t d : p.lead)
    batch *= d;
  auto shape = [&](int64_t rows, int64_t cols) {
    std::vector<int64_t> s = p.lead;
    s.push_back(rows), s.push_back(cols);
    return s;
  };
  PlanBuilder b(p.lead[0]);
  const uint32_t a = b.buffer(p.ta ? shape(p.k, p.m) : shape(p.m, p.k));
  const uint32_t bb = b.buffer(p.tb ? shape(p.n, p.k) : shape(p.k, p.n));
  const uint32_t c = b.buffer(shape(p.m, p.n));
  b.kernel(StepKind::Train, KernelKind::BatchMatMul, {a, bb}, {c})
      .attrI("transpose_a", p.ta)
      .attrI("transpose_b", p.tb)
      .attrF("alpha", p.alpha);
  auto program = b.load();
  RandomData rd(static_cast<uint32_t>(batch * 131 + p.m * 31 + p.k * 7 + p.n));
  auto as = rd.uniform(batch * p.m * p.k), bs = rd.uniform(batch * p.k * p.n);
  put(*program, a, as);
  put(*program, bb, bs);
  program->run(StepKind::Train, stepContext(p.lead[0]));
  std::vector<float> want(batch * p.m * p.n);
  ref::batchMatMul(as.data(), bs.data(), want.data(), batch, p.m, p.k, p.n, p.ta, p.tb,
                   static_cast<float>(p.alpha));
  EXPECT_TRUE(allNear(get(*program, c), want, 2e-6 * p.k, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Shapes, BatchMatMulTest,
                         ::testing::Values(
                             // Attention's scores and weighted values: [N, heads, T, d] . [N,
                             // heads, T, d]^T, then [N, heads, T, T] . [N, heads, T, d].
                             BatchProduct{{2, 4}, 49, 32, 49, false, true, 0.17677669529663687},
                             BatchProduct{{2, 4}, 49, 49, 32, false, false, 1.0},
                             // Their gradients' transposed forms.
                             BatchProduct{{2, 4}, 49, 49, 32, true, false, 0.5},
                             BatchProduct{{3}, 5, 7, 4, true, true, -2.0},
                             // One product per sample, and sizes of 1.
                             BatchProduct{{1}, 3, 5, 7, false, false, 1.0},
                             BatchProduct{{4, 1, 2}, 1, 1, 1, false, true, 3.0}));

// ---- activation and activation_grad ------------------------------------------------------

class ActivationTest
    : public ::testing::TestWithParam<std::tuple<Activation, std::pair<int64_t, int64_t>>> {};

TEST_P(ActivationTest, ForwardMatchesReference) {
  const auto [act, shape] = GetParam();
  const auto [rows, cols] = shape;
  PlanBuilder b(rows);
  uint32_t x = b.buffer({rows, cols}), y = b.buffer({rows, cols});
  b.kernel(StepKind::Train, KernelKind::Activation, {x}, {y}).activation(act);
  auto program = b.load();
  RandomData rd(static_cast<uint32_t>(rows + cols));
  auto xs = rd.uniform(rows * cols, -6.0f, 6.0f);
  put(*program, x, xs);
  program->run(StepKind::Train, stepContext(1));
  std::vector<float> want(rows * cols);
  ref::activation(xs.data(), want.data(), rows, cols, act);
  EXPECT_TRUE(allNear(get(*program, y), want, 1e-6, 1e-5));
}

TEST_P(ActivationTest, GradMatchesReference) {
  const auto [act, shape] = GetParam();
  const auto [rows, cols] = shape;
  PlanBuilder b(rows);
  uint32_t y = b.buffer({rows, cols}), dy = b.buffer({rows, cols}), dx = b.buffer({rows, cols});
  b.kernel(StepKind::Train, KernelKind::ActivationGrad, {y, dy}, {dx}).activation(act);
  auto program = b.load();
  RandomData rd(static_cast<uint32_t>(rows * cols));
  std::vector<float> ys(rows * cols);
  ref::activation(rd.uniform(rows * cols, -3.0f, 3.0f).data(), ys.data(), rows, cols, act);
  auto dys = rd.uniform(rows * cols);
  put(*program, y, ys);
  put(*program, dy, dys);
  program->run(StepKind::Train, stepContext(1));
  std::vector<float> want(rows * cols);
  ref::activationGrad(ys.data(), dys.data(), want.data(), rows, cols, act);
  EXPECT_TRUE(allNear(get(*program, dx), want, 1e-6, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ActivationTest,
    ::testing::Combine(::testing::ValuesIn(kAllActivations),
                       ::testing::Values(std::make_pair(1, 1), std::make_pair(7, 13),
                                         std::make_pair(100, 10), std::make_pair(300, 129))),
    [](const auto &info) {
      const auto &shape = std::get<1>(info.param);
      return std::string(activationName(std::get<0>(info.param))) + "_" +
             std::to_string(shape.first) + "x" + std::to_string(shape.second);
    });

TEST(ActivationInPlaceTest, EveryActivationWorksInPlace) {
  for (Activation act : kAllActivations) {
    PlanBuilder b(9);
    uint32_t x = b.buffer({9, 11}), dy = b.buffer({9, 11});
    b.kernel(StepKind::Train, KernelKind::Activation, {x}, {x}).activation(act);
    b.kernel(StepKind::Train, KernelKind::ActivationGrad, {x, dy}, {dy}).activation(act);
    auto program = b.load();
    RandomData rd(3);
    auto xs = rd.uniform(99, -4.0f, 4.0f), dys = rd.uniform(99);
    put(*program, x, xs);
    put(*program, dy, dys);
    program->run(StepKind::Train, stepContext(1));
    std::vector<float> ys(99), dxs(99);
    ref::activation(xs.data(), ys.data(), 9, 11, act);
    ref::activationGrad(ys.data(), dys.data(), dxs.data(), 9, 11, act);
    EXPECT_TRUE(allNear(get(*program, x), ys, 1e-6, 1e-5)) << activationName(act);
    EXPECT_TRUE(allNear(get(*program, dy), dxs, 1e-6, 1e-5)) << activationName(act);
  }
}

TEST(ActivationEdgeTest, SoftmaxIsStableForHugeLogits) {
  PlanBuilder b(2);
  uint32_t x = b.buffer({2, 3}), y = b.buffer({2, 3});
  b.kernel(StepKind::Train, KernelKind::Activation, {x}, {y}).activation(Activation::Softmax);
  auto program = b.load();
  put(*program, x, std::vector<float>{1000, 1000, -1000, -1e30f, 0, 1e30f});
  program->run(StepKind::Train, stepContext(1));
  EXPECT_TRUE(allNear(get(*program, y), std::vector<float>{0.5f, 0.5f, 0, 0, 0, 1}, 1e-7));
}

TEST(ActivationEdgeTest, SoftmaxIsOverTheLastAxisOfRank3) {
  PlanBuilder b(2);
  uint32_t x = b.buffer({2, 3, 5}), y = b.buffer({2, 3, 5});
  b.kernel(StepKind::Train, KernelKind::Activation, {x}, {y}).activation(Activation::Softmax);
  auto program = b.load();
  auto xs = RandomData(5).uniform(30, -3, 3);
  put(*program, x, xs);
  program->run(StepKind::Train, stepContext(1));
  std::vector<float> want(30);
  ref::activation(xs.data(), want.data(), 6, 5, Activation::Softmax);
  EXPECT_TRUE(allNear(get(*program, y), want, 1e-6, 1e-5));
}

// ---- reduce_rows, add, copy, fill ----------------------------------------------------------

TEST(ReduceRowsTest, MatchesReference) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1},
                            {7, 13},
                            {100, 100},
                            {300, 257},
                            {2, 40000},
                            {5000, 3}}) {
    PlanBuilder b(rows);
    uint32_t x = b.buffer({rows, cols}), y = b.buffer({cols});
    b.kernel(StepKind::Train, KernelKind::ReduceRows, {x}, {y});
    auto program = b.load();
    auto xs = RandomData(static_cast<uint32_t>(rows + cols)).uniform(rows * cols);
    put(*program, x, xs);
    program->run(StepKind::Train, stepContext(1));
    std::vector<float> want(cols);
    ref::reduceRows(xs.data(), want.data(), rows, cols);
    EXPECT_TRUE(allNear(get(*program, y), want, 1e-6 * rows, 1e-5)) << rows << "x" << cols;
  }
}

TEST(ReduceRowsTest, ReducesOnlyTheLeadingAxis) {
  PlanBuilder b(4);
  uint32_t x = b.buffer({4, 3, 2}), y = b.buffer({3, 2});
  b.kernel(StepKind::Train, KernelKind::ReduceRows, {x}, {y});
  auto program = b.load();
  std::vector<float> xs(24);
  for (int i = 0; i < 24; ++i)
    xs[i] = static_cast<float>(i);
  put(*program, x, xs);
  program->run(StepKind::Train, stepContext(1));
  // y[j] = j + (j + 6) + (j + 12) + (j + 18)
  EXPECT_EQ(get(*program, y), (std::vector<float>{36, 40, 44, 48, 52, 56}));
}

TEST(AddTest, MatchesReferenceAndWorksInPlace) {
  for (int64_t n : {1, 17, 1000, 70001}) {
    PlanBuilder b(1);
    uint32_t a = b.buffer({n}), bb = b.buffer({n}), c = b.buffer({n});
    b.kernel(StepKind::Train, KernelKind::Add, {a, bb}, {c});
    b.kernel(StepKind::Train, KernelKind::Add, {c, bb}, {c}); // c = a + 2b, in place
    auto program = b.load();
    RandomData rd(static_cast<uint32_t>(n));
    auto as = rd.uniform(n), bs = rd.uniform(n);
    put(*program, a, as);
    put(*program, bb, bs);
    program->run(StepKind::Train, stepContext(1));
    std::vector<float> want(n);
    ref::add(as.data(), bs.data(), want.data(), n);
    ref::add(want.data(), bs.data(), want.data(), n);
    EXPECT_TRUE(allNear(get(*program, c), want, 0)) << n;
  }
}

TEST(AddRowsTest, MatchesReference) {
  // x's shape and the bias's (x's trailing axes).
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{8, 49, 128}, {49, 128}}, {{8, 49, 128}, {128}}, {{3, 1}, {1}}, {{1000, 70}, {70}}};
  for (const auto &[xShape, bShape] : cases) {
    PlanBuilder b(xShape[0]);
    uint32_t x = b.buffer(xShape), bias = b.buffer(bShape), y = b.buffer(xShape);
    b.kernel(StepKind::Train, KernelKind::AddRows, {x, bias}, {y});
    auto program = b.load();
    int64_t n = 1, cols = 1;
    for (int64_t d : xShape)
      n *= d;
    for (int64_t d : bShape)
      cols *= d;
    RandomData rd(static_cast<uint32_t>(n + cols));
    auto xs = rd.uniform(n), bs = rd.uniform(cols);
    put(*program, x, xs);
    put(*program, bias, bs);
    program->run(StepKind::Train, stepContext(xShape[0]));
    std::vector<float> want(n);
    ref::addRows(xs.data(), bs.data(), want.data(), n / cols, cols);
    EXPECT_TRUE(allNear(get(*program, y), want, 0)) << n << " by " << cols;
  }
  PlanBuilder b(4);
  uint32_t x = b.buffer({4, 6}), bias = b.buffer({5}), y = b.buffer({4, 6});
  b.kernel(StepKind::Train, KernelKind::AddRows, {x, bias}, {y});
  EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                  "(add_rows): input 1 (b) (buffer 1) has 5 elements, which do not divide input 0 "
                  "(x)'s 24 into rows");
}

TEST(MulTest, MulAndMulReduceMatchReference) {
  // a's shape and b's: squeeze-and-excitation, equal shapes, a parameter broadcast over the
  // batch, several alternations, one element, and sizes that take the threaded paths.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{8, 4, 4, 16}, {8, 1, 1, 16}},
      {{5, 7}, {5, 7}},
      {{6, 3, 3, 4}, {1, 3, 1, 4}},
      {{2, 3, 4, 5, 6}, {2, 1, 4, 1, 6}},
      {{1, 1}, {1, 1}},
      {{64, 32, 32, 24}, {64, 1, 1, 24}},
      {{64, 3000}, {64, 1}},
      {{3, 1, 5}, {1, 1, 5}}};
  for (const auto &[aShape, bShape] : cases) {
    PlanBuilder pb(aShape[0]);
    uint32_t a = pb.buffer(aShape), b = pb.buffer(bShape), y = pb.buffer(aShape);
    uint32_t dy = pb.buffer(aShape), db = pb.buffer(bShape);
    pb.kernel(StepKind::Train, KernelKind::Mul, {a, b}, {y});
    pb.kernel(StepKind::Train, KernelKind::MulReduce, {dy, a}, {db});
    auto program = pb.load();
    int64_t n = 1, m = 1;
    for (int64_t d : aShape)
      n *= d;
    for (int64_t d : bShape)
      m *= d;
    RandomData rd(static_cast<uint32_t>(n + m));
    auto as = rd.uniform(n), bs = rd.uniform(m), dys = rd.uniform(n);
    put(*program, a, as);
    put(*program, b, bs);
    put(*program, dy, dys);
    program->run(StepKind::Train, stepContext(aShape[0]));
    std::vector<float> wantY(n), wantDb(m);
    ref::mul(as.data(), bs.data(), wantY.data(), aShape, bShape);
    ref::mulReduce(dys.data(), as.data(), wantDb.data(), aShape, bShape);
    EXPECT_TRUE(allNear(get(*program, y), wantY, 0)) << n << " by " << m;
    // The sums in one order on both sides, but the reference adds each term as it comes, and
    // the CPU's vector clones (Parallel.h) fuse each product into its addition: 1e-6 relative
    // for sums of up to 3,000 terms.
    EXPECT_TRUE(allNear(get(*program, db), wantDb, 1e-5, 1e-6)) << n << " to " << m;
  }
  // b of another rank, or an axis that is neither a's nor 1.
  for (std::vector<int64_t> bad : {std::vector<int64_t>{4}, std::vector<int64_t>{4, 3}}) {
    PlanBuilder pb(4);
    uint32_t a = pb.buffer({4, 6}), b = pb.buffer(bad), y = pb.buffer({4, 6});
    pb.kernel(StepKind::Train, KernelKind::Mul, {a, b}, {y});
    EXPECT_DP_ERROR(pb.load(), ErrorKind::Plan,
                    bad.size() == 1 ? "(mul): input 1 (b) (buffer 1) is [4], not of the rank of "
                                      "input 0 (a)'s [4x6]"
                                    : "(mul): input 1 (b) (buffer 1) [4x3] does not broadcast to "
                                      "input 0 (a)'s [4x6] along axis 1");
  }
  PlanBuilder pb(4);
  uint32_t dy = pb.buffer({4, 6}), a = pb.buffer({4, 6}), db = pb.buffer({4, 2});
  pb.kernel(StepKind::Train, KernelKind::MulReduce, {dy, a}, {db});
  EXPECT_DP_ERROR(pb.load(), ErrorKind::Plan,
                  "(mul_reduce): output 0 (db) (buffer 2) [4x2] does not broadcast to input 0 "
                  "(dy)'s [4x6] along axis 1");
}

TEST(CopyTest, CopiesAcrossShapesAndDTypes) {
  PlanBuilder b(2);
  uint32_t x = b.buffer({2, 6}), y = b.buffer({3, 4});
  uint32_t li = b.buffer({5}, DType::I32), lo = b.buffer({5, 1}, DType::I32);
  uint32_t aliasOfX = b.alias(x, {12});
  b.kernel(StepKind::Train, KernelKind::Copy, {x}, {y});
  b.kernel(StepKind::Train, KernelKind::Copy, {li}, {lo});
  b.kernel(StepKind::Train, KernelKind::Copy, {x}, {aliasOfX}); // same bytes: a no-op
  auto program = b.load();
  auto xs = RandomData(9).uniform(12);
  std::vector<int32_t> ls = {3, -1, 7, 0, 2147483647};
  put(*program, x, xs);
  put(*program, li, ls);
  program->run(StepKind::Train, stepContext(1));
  EXPECT_EQ(get(*program, y), xs);
  EXPECT_EQ(get<int32_t>(*program, lo), ls);
  EXPECT_EQ(get(*program, aliasOfX), xs);
}

TEST(FillTest, FillsF32AndI32) {
  PlanBuilder b(1);
  uint32_t f = b.buffer({3, 7}), i = b.buffer({5}, DType::I32), s = b.buffer({});
  b.kernel(StepKind::Train, KernelKind::Fill, {}, {f}).attrF("value", -0.25);
  b.kernel(StepKind::Train, KernelKind::Fill, {}, {i}).attrF("value", 42);
  b.kernel(StepKind::Train, KernelKind::Fill, {}, {s}).attrF("value", 1);
  auto program = b.load();
  program->run(StepKind::Train, stepContext(1));
  EXPECT_EQ(get(*program, f), std::vector<float>(21, -0.25f));
  EXPECT_EQ(get<int32_t>(*program, i), std::vector<int32_t>(5, 42));
  EXPECT_EQ(get(*program, s), std::vector<float>{1.0f});
}

// ---- losses --------------------------------------------------------------------------------

struct LossPlan {
  std::unique_ptr<Program> program;
  uint32_t logits, labels, dloss, loss, dlogits, correct;
};

// softmax_xent, softmax_xent_grad and count_correct over the same logits and labels.
LossPlan lossPlan(int64_t rows, int64_t classes) {
  PlanBuilder b(rows);
  LossPlan p;
  p.logits = b.buffer({rows, classes});
  p.labels = b.buffer({rows}, DType::I32);
  p.dloss = b.buffer({});
  p.loss = b.buffer({});
  p.dlogits = b.buffer({rows, classes});
  p.correct = b.buffer({});
  b.kernel(StepKind::Train, KernelKind::SoftmaxXent, {p.logits, p.labels}, {p.loss});
  b.kernel(StepKind::Train, KernelKind::SoftmaxXentGrad, {p.logits, p.labels, p.dloss},
           {p.dlogits});
  b.kernel(StepKind::Train, KernelKind::CountCorrect, {p.logits, p.labels}, {p.correct});
  p.program = b.load();
  return p;
}

class LossTest : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t>> {};

TEST_P(LossTest, MatchesReference) {
  const auto [rows, classes, valid] = GetParam();
  LossPlan p = lossPlan(rows, classes);
  RandomData rd(static_cast<uint32_t>(rows * classes + valid));
  auto logits = rd.uniform(rows * classes, -5.0f, 5.0f);
  auto labels = rd.labels(rows, static_cast<int32_t>(classes));
  // Make some rows right for sure, so count_correct has something to count.
  for (int64_t r = 0; r < rows; r += 3)
    logits[r * classes + labels[r]] = 6.0f;
  put(*p.program, p.logits, logits);
  put(*p.program, p.labels, labels);
  put(*p.program, p.dloss, std::vector<float>{0.75f});
  // Garbage in the gradient must be overwritten, including the rows past the valid ones.
  put(*p.program, p.dlogits, std::vector<float>(rows * classes, 123.0f));
  p.program->run(StepKind::Train, stepContext(valid));

  const double wantLoss =
      ref::softmaxXent(toDouble(logits).data(), labels.data(), rows, classes, valid);
  EXPECT_NEAR(get(*p.program, p.loss)[0], wantLoss, 1e-5 * std::fabs(wantLoss) + 1e-6);
  std::vector<float> wantGrad(rows * classes);
  ref::softmaxXentGrad(logits.data(), labels.data(), 0.75f, wantGrad.data(), rows, classes, valid);
  EXPECT_TRUE(allNear(get(*p.program, p.dlogits), wantGrad, 1e-7, 1e-5));
  EXPECT_EQ(get(*p.program, p.correct)[0],
            ref::countCorrect(logits.data(), labels.data(), rows, classes, valid));
}

// Label smoothing: the loss and its gradient against the reference's cross-entropy with the
// smoothed target written out, over the valid rows, on both sides of the threaded path; the
// smoothed loss is another than the plain one.
TEST(LabelSmoothing, LossAndGradientMatchTheReference) {
  for (auto [rows, classes, valid] : {std::make_tuple(8, 10, 5), std::make_tuple(4000, 10, 3999),
                                      std::make_tuple(37, 1001, 36)}) {
    const float s = 0.1f;
    PlanBuilder b(rows);
    uint32_t logits = b.buffer({rows, classes}), labels = b.buffer({rows}, DType::I32);
    uint32_t dloss = b.buffer({}), loss = b.buffer({}), dlogits = b.buffer({rows, classes});
    b.kernel(StepKind::Train, KernelKind::SoftmaxXent, {logits, labels}, {loss})
        .attrF("label_smoothing", s);
    b.kernel(StepKind::Train, KernelKind::SoftmaxXentGrad, {logits, labels, dloss}, {dlogits})
        .attrF("label_smoothing", s);
    auto program = b.load();
    RandomData rd(static_cast<uint32_t>(rows + classes));
    auto z = rd.uniform(rows * classes, -5.0f, 5.0f);
    auto y = rd.labels(rows, static_cast<int32_t>(classes));
    put(*program, logits, z);
    put(*program, labels, y);
    put(*program, dloss, std::vector<float>{0.75f});
    program->run(StepKind::Train, stepContext(valid));
    const double want =
        ref::softmaxXent(toDouble(z).data(), y.data(), rows, classes, valid, double(s));
    EXPECT_NEAR(get(*program, loss)[0], want, 1e-5 * std::fabs(want) + 1e-6) << rows;
    EXPECT_GT(
        std::fabs(want - ref::softmaxXent(toDouble(z).data(), y.data(), rows, classes, valid)),
        1e-3);
    std::vector<float> wantGrad(rows * classes);
    ref::softmaxXentGrad(z.data(), y.data(), 0.75f, wantGrad.data(), rows, classes, valid, s);
    EXPECT_TRUE(allNear(get(*program, dlogits), wantGrad, 1e-7, 1e-5)) << rows;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LossTest,
                         ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(1, 2, 1),
                                           std::make_tuple(8, 10, 8), std::make_tuple(8, 10, 5),
                                           std::make_tuple(100, 10, 100),
                                           std::make_tuple(100, 10, 37),
                                           std::make_tuple(4000, 10, 3999),
                                           std::make_tuple(37, 1001, 36)));

// squared_error and squared_error_grad (a regression's loss) against the reference, with
// rows past the valid count and sizes on both sides of the threaded path (the threads' shares
// are added in a fixed order).
class SquaredErrorTest : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t>> {};

TEST_P(SquaredErrorTest, MatchesReference) {
  const auto [rows, cols, valid] = GetParam();
  PlanBuilder b(rows);
  const uint32_t pred = b.buffer({rows, cols}), target = b.buffer({rows, cols}),
                 dloss = b.buffer({}), loss = b.buffer({}), dpred = b.buffer({rows, cols});
  b.kernel(StepKind::Train, KernelKind::SquaredError, {pred, target}, {loss});
  b.kernel(StepKind::Train, KernelKind::SquaredErrorGrad, {pred, target, dloss}, {dpred});
  std::unique_ptr<Program> program = b.load();
  RandomData rd(static_cast<uint32_t>(rows * cols + valid));
  auto p = rd.uniform(rows * cols, -2.0f, 2.0f), t = rd.uniform(rows * cols, -1.0f, 1.0f);
  put(*program, pred, p);
  put(*program, target, t);
  put(*program, dloss, std::vector<float>{0.75f});
  // Garbage in the gradient must be overwritten, including the rows past the valid ones.
  put(*program, dpred, std::vector<float>(rows * cols, 123.0f));
  program->run(StepKind::Train, stepContext(valid));

  const double want = ref::squaredError(toDouble(p).data(), toDouble(t).data(), rows, cols, valid);
  EXPECT_NEAR(get(*program, loss)[0], want, 1e-6 * want + 1e-7);
  std::vector<float> wantGrad(rows * cols);
  ref::squaredErrorGrad(p.data(), t.data(), 0.75f, wantGrad.data(), rows, cols, valid);
  EXPECT_TRUE(allNear(get(*program, dpred), wantGrad, 1e-9, 1e-5));
  // Twice the same bits: the threaded sum does not depend on timing.
  const float first = get(*program, loss)[0];
  program->run(StepKind::Train, stepContext(valid));
  EXPECT_EQ(get(*program, loss)[0], first);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SquaredErrorTest,
                         ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(8, 3, 8),
                                           std::make_tuple(8, 3, 5), std::make_tuple(100, 49, 37),
                                           std::make_tuple(2000, 49, 1999),
                                           std::make_tuple(3, 40000, 2)));

// sigmoid_xent, its gradient and count_binary_correct (binary cross-entropy on logits, binary
// accuracy) against the reference, with rows past the valid count and both sides of the
// threaded path; targets 0 and 1 and soft targets in between.
class SigmoidXentTest : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t>> {};

TEST_P(SigmoidXentTest, MatchesReference) {
  const auto [rows, cols, valid] = GetParam();
  PlanBuilder b(rows);
  const uint32_t x = b.buffer({rows, cols}), target = b.buffer({rows, cols}), dloss = b.buffer({}),
                 loss = b.buffer({}), dx = b.buffer({rows, cols}), correct = b.buffer({});
  b.kernel(StepKind::Train, KernelKind::SigmoidXent, {x, target}, {loss});
  b.kernel(StepKind::Train, KernelKind::SigmoidXentGrad, {x, target, dloss}, {dx});
  b.kernel(StepKind::Train, KernelKind::CountBinaryCorrect, {x, target}, {correct});
  std::unique_ptr<Program> program = b.load();
  RandomData rd(static_cast<uint32_t>(rows * cols + valid));
  auto z = rd.uniform(rows * cols, -6.0f, 6.0f), t = rd.uniform(rows * cols, 0.0f, 1.0f);
  for (size_t i = 0; i < t.size(); i += 3)
    t[i] = t[i] > 0.5f ? 1.0f : 0.0f;
  put(*program, x, z);
  put(*program, target, t);
  put(*program, dloss, std::vector<float>{0.75f});
  put(*program, dx, std::vector<float>(rows * cols, 123.0f));
  program->run(StepKind::Train, stepContext(valid));

  const double want = ref::sigmoidXent(toDouble(z).data(), toDouble(t).data(), rows, cols, valid);
  EXPECT_NEAR(get(*program, loss)[0], want, 1e-6 * want + 1e-7);
  std::vector<float> wantGrad(rows * cols);
  ref::sigmoidXentGrad(z.data(), t.data(), 0.75f, wantGrad.data(), rows, cols, valid);
  EXPECT_TRUE(allNear(get(*program, dx), wantGrad, 1e-9, 1e-5));
  EXPECT_NEAR(get(*program, correct)[0],
              ref::countBinaryCorrect(z.data(), t.data(), rows, cols, valid), 1e-6 * valid);
  const float first = get(*program, loss)[0];
  program->run(StepKind::Train, stepContext(valid));
  EXPECT_EQ(get(*program, loss)[0], first);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SigmoidXentTest,
                         ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(8, 3, 5),
                                           std::make_tuple(100, 10, 37),
                                           std::make_tuple(4000, 10, 3999)));

// Far logits: the loss is computed from the logit (no log of a rounded 0 or 1), finite and
// exact where the naive form gives infinity.
TEST(LossEdgeTest, SigmoidXentIsStableForFarLogits) {
  PlanBuilder b(1);
  const uint32_t x = b.buffer({1, 2}), target = b.buffer({1, 2}), loss = b.buffer({});
  b.kernel(StepKind::Train, KernelKind::SigmoidXent, {x, target}, {loss});
  std::unique_ptr<Program> program = b.load();
  put(*program, x, std::vector<float>{100.0f, -100.0f});
  put(*program, target, std::vector<float>{0.0f, 1.0f});
  program->run(StepKind::Train, stepContext(1));
  EXPECT_NEAR(get(*program, loss)[0], 100.0, 1e-4); // each term is 100 + log(1 + e^-100)
}

TEST(LossEdgeTest, SquaredErrorIgnoresRowsPastTheValidCount) {
  PlanBuilder b(3);
  const uint32_t pred = b.buffer({3, 2}), target = b.buffer({3, 2}), dloss = b.buffer({}),
                 loss = b.buffer({}), dpred = b.buffer({3, 2});
  b.kernel(StepKind::Train, KernelKind::SquaredError, {pred, target}, {loss});
  b.kernel(StepKind::Train, KernelKind::SquaredErrorGrad, {pred, target, dloss}, {dpred});
  std::unique_ptr<Program> program = b.load();
  // Row 2 is padding: a NaN there must not matter.
  put(*program, pred, std::vector<float>{1, 2, 3, 4, NAN, 1e30f});
  put(*program, target, std::vector<float>{0, 0, 3, 2, 0, 0});
  put(*program, dloss, std::vector<float>{1.0f});
  program->run(StepKind::Train, stepContext(2));
  // (1 + 4 + 0 + 4) / (2 rows x 2 values).
  EXPECT_FLOAT_EQ(get(*program, loss)[0], 9.0f / 4.0f);
  EXPECT_EQ(get(*program, dpred), (std::vector<float>{0.5f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f}));
}

// gather (an embedding lookup) and gather_grad (its table's scatter-add) against the reference:
// token ids that repeat (a small vocabulary) and ones outside the table (a NaN row; no
// contribution to the gradient); sizes on both sides of the threaded path. The scatter-add
// gives the same bits on a second run.
class GatherTest : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t>> {};

TEST_P(GatherTest, MatchesReference) {
  const auto [n, vocab, width] = GetParam();
  PlanBuilder b(n);
  const uint32_t table = b.buffer({vocab, width}), ids = b.buffer({n}, DType::I32),
                 rows = b.buffer({n, width}), dy = b.buffer({n, width}),
                 dtable = b.buffer({vocab, width});
  b.kernel(StepKind::Train, KernelKind::Gather, {table, ids}, {rows});
  b.kernel(StepKind::Train, KernelKind::GatherGrad, {dy, ids}, {dtable});
  std::unique_ptr<Program> program = b.load();
  RandomData rd(static_cast<uint32_t>(n * vocab + width));
  auto t = rd.uniform(vocab * width, -1.0f, 1.0f), g = rd.uniform(n * width, -1.0f, 1.0f);
  std::vector<int32_t> index = rd.labels(n, static_cast<int32_t>(vocab));
  index[0] = -1;
  if (n > 2)
    index[n - 1] = static_cast<int32_t>(vocab);
  put(*program, table, t);
  put(*program, ids, index);
  put(*program, dy, g);
  put(*program, dtable, std::vector<float>(vocab * width, 123.0f));
  program->run(StepKind::Train, stepContext(n));

  std::vector<float> want(n * width), wantGrad(vocab * width);
  ref::gather(t.data(), index.data(), want.data(), n, vocab, width);
  const std::vector<float> got = get(*program, rows);
  for (int64_t i = 0; i < n * width; ++i)
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
    else
      EXPECT_EQ(got[i], want[i]) << "element " << i;
  ref::gatherGrad(g.data(), index.data(), wantGrad.data(), n, vocab, width);
  const std::vector<float> first = get(*program, dtable);
  EXPECT_TRUE(allNear(first, wantGrad, 1e-6, 1e-5));
  program->run(StepKind::Train, stepContext(n));
  EXPECT_EQ(get(*program, dtable), first);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GatherTest,
                         ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(12, 5, 3),
                                           std::make_tuple(25088, 256, 8),
                                           std::make_tuple(300, 7, 200)));

TEST(LossEdgeTest, RowsPastTheValidCountAreIgnored) {
  LossPlan p = lossPlan(4, 3);
  // Rows 2 and 3 are padding: garbage logits and labels that must not matter.
  put(*p.program, p.logits, std::vector<float>{0, 0, 0, 5, 0, 0, 1e30f, -1e30f, 0, 0, 0, 0});
  put(*p.program, p.labels, std::vector<int32_t>{1, 0, -7, 99});
  put(*p.program, p.dloss, std::vector<float>{1.0f});
  p.program->run(StepKind::Train, stepContext(2));
  const double loss0 = std::log(3.0), loss1 = std::log(1 + 2 * std::exp(-5.0));
  EXPECT_NEAR(get(*p.program, p.loss)[0], (loss0 + loss1) / 2, 1e-6);
  EXPECT_EQ(get(*p.program, p.correct)[0], 1.0f);
  std::vector<float> grad = get(*p.program, p.dlogits);
  EXPECT_NEAR(grad[0], (1.0 / 3) / 2, 1e-7);
  EXPECT_NEAR(grad[1], (1.0 / 3 - 1) / 2, 1e-7);
  for (int i = 6; i < 12; ++i)
    EXPECT_EQ(grad[i], 0.0f) << i;
}

TEST(LossEdgeTest, StableForHugeLogits) {
  LossPlan p = lossPlan(2, 3);
  put(*p.program, p.logits, std::vector<float>{1e30f, 0, -1e30f, 1000, 1000, 1000});
  put(*p.program, p.labels, std::vector<int32_t>{0, 2});
  put(*p.program, p.dloss, std::vector<float>{1.0f});
  p.program->run(StepKind::Train, stepContext(2));
  EXPECT_NEAR(get(*p.program, p.loss)[0], std::log(3.0) / 2, 1e-6);
  EXPECT_TRUE(allNear(get(*p.program, p.dlogits),
                      std::vector<double>{0, 0, 0, 1.0 / 6, 1.0 / 6, 1.0 / 6 - 0.5}, 1e-7));
}

TEST(LossEdgeTest, ArgmaxTiesGoToTheFirstMaximum) {
  LossPlan p = lossPlan(3, 3);
  put(*p.program, p.logits, std::vector<float>{1, 1, 0, 2, 2, 2, 0, 3, 3});
  put(*p.program, p.labels, std::vector<int32_t>{0, 1, 1});
  put(*p.program, p.dloss, std::vector<float>{1.0f});
  p.program->run(StepKind::Train, stepContext(3));
  EXPECT_EQ(get(*p.program, p.correct)[0], 2.0f); // rows 0 and 2
}

TEST(LossEdgeTest, OutOfRangeLabelsGiveNaNNotACrash) {
  for (int32_t bad :
       {-1, 3, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}) {
    LossPlan p = lossPlan(2, 3);
    put(*p.program, p.logits, std::vector<float>{1, 2, 3, 4, 5, 6});
    put(*p.program, p.labels, std::vector<int32_t>{1, bad});
    put(*p.program, p.dloss, std::vector<float>{1.0f});
    p.program->run(StepKind::Train, stepContext(2));
    EXPECT_TRUE(std::isnan(get(*p.program, p.loss)[0])) << bad;
    EXPECT_TRUE(std::isnan(get(*p.program, p.correct)[0])) << bad;
    std::vector<float> grad = get(*p.program, p.dlogits);
    EXPECT_FALSE(std::isnan(grad[0])) << "the good row stays usable";
    for (int j = 3; j < 6; ++j)
      EXPECT_TRUE(std::isnan(grad[j])) << bad;
  }
}

TEST(LossEdgeTest, GradientInPlaceOverTheLogits) {
  PlanBuilder b(5);
  uint32_t logits = b.buffer({5, 4}), labels = b.buffer({5}, DType::I32), dloss = b.buffer({});
  b.kernel(StepKind::Train, KernelKind::SoftmaxXentGrad, {logits, labels, dloss}, {logits});
  auto program = b.load();
  RandomData rd(11);
  auto ls = rd.uniform(20, -3, 3);
  auto lab = rd.labels(5, 4);
  put(*program, logits, ls);
  put(*program, labels, lab);
  put(*program, dloss, std::vector<float>{2.0f});
  program->run(StepKind::Train, stepContext(4));
  std::vector<float> want(20);
  ref::softmaxXentGrad(ls.data(), lab.data(), 2.0f, want.data(), 5, 4, 4);
  EXPECT_TRUE(allNear(get(*program, logits), want, 1e-7, 1e-5));
}

} // namespace
} // namespace dp::rt
