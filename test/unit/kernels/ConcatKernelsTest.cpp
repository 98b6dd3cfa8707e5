// Concat, slice and transpose: the CPU kernels against the naive references of Concat.h for f32
// and i32 along every axis (slice also round-trips concat; transposes chained as a graph
// transpose lowers them give the reference's permutation), their load-time validation, and the loss
// kernels' valid rows on a batch stacked along its axis (each block of batch rows keeps its own
// padding).
#include "runtime/kernels/reference/Concat.h"
#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

/// Inputs of the given shapes joined along `axis`.
struct ConcatCase {
  std::vector<std::vector<int64_t>> shapes;
  int64_t axis;
};

void PrintTo(const ConcatCase &c, std::ostream *os) {
  *os << "axis " << c.axis << " of " << c.shapes.size() << " inputs of rank " << c.shapes[0].size();
}

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<int64_t> joined(const ConcatCase &c) {
  std::vector<int64_t> out = c.shapes[0];
  out[c.axis] = 0;
  for (const auto &s : c.shapes)
    out[c.axis] += s[c.axis];
  return out;
}

class ConcatTest : public ::testing::TestWithParam<ConcatCase> {};

// concat, then slice every piece back out of the result.
template <typename T> void checkRoundTrip(const ConcatCase &c, DType dtype) {
  PlanBuilder b(static_cast<int64_t>(c.shapes[0][0]));
  std::vector<uint32_t> ins, pieces;
  for (const auto &s : c.shapes)
    ins.push_back(b.buffer(s, dtype));
  const uint32_t y = b.buffer(joined(c), dtype);
  b.kernel(StepKind::Train, KernelKind::Concat, ins, {y}).attrI("axis", c.axis);
  int64_t offset = 0;
  for (const auto &s : c.shapes) {
    pieces.push_back(b.buffer(s, dtype));
    b.kernel(StepKind::Train, KernelKind::Slice, {y}, {pieces.back()})
        .attrI("axis", c.axis)
        .attrI("offset", offset);
    offset += s[c.axis];
  }
  auto program = b.load();
  std::vector<std::vector<T>> values;
  std::vector<const T *> pointers;
  for (size_t i = 0; i < ins.size(); ++i) {
    std::vector<T> v(numel(c.shapes[i]));
    for (size_t j = 0; j < v.size(); ++j)
      v[j] = static_cast<T>(int64_t(i * 1000 + j) % 977 - 300);
    put(*program, ins[i], v);
    values.push_back(std::move(v));
  }
  for (const auto &v : values)
    pointers.push_back(v.data());
  program->run(StepKind::Train, stepContext(c.shapes[0][0]));
  std::vector<T> want(numel(joined(c)));
  ref::concat(pointers, c.shapes, c.axis, want.data());
  EXPECT_EQ(get<T>(*program, y), want);
  for (size_t i = 0; i < pieces.size(); ++i)
    EXPECT_EQ(get<T>(*program, pieces[i]), values[i]) << "piece " << i;
}

TEST_P(ConcatTest, F32MatchesReferenceAndSlicesRoundTrip) {
  checkRoundTrip<float>(GetParam(), DType::F32);
}

TEST_P(ConcatTest, I32MatchesReferenceAndSlicesRoundTrip) {
  checkRoundTrip<int32_t>(GetParam(), DType::I32);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConcatTest,
    ::testing::Values(ConcatCase{{{4, 3}, {4, 5}}, 1},             // features
                      ConcatCase{{{4, 3}, {2, 3}, {6, 3}}, 0},     // the batch, three inputs
                      ConcatCase{{{8}, {8}}, 0},                   // labels
                      ConcatCase{{{2, 3, 4, 5}, {2, 1, 4, 5}}, 1}, // a middle axis
                      ConcatCase{{{2, 3, 4, 5}, {2, 3, 4, 7}}, 3}, // channels
                      ConcatCase{{{3, 2}}, 1}));                   // a single input

// The reference itself on a hand-written case: [[1, 2], [3, 4]] and [[5], [6]] along axis 1.
TEST(ConcatReferenceTest, HandComputed) {
  const std::vector<float> a{1, 2, 3, 4}, b{5, 6};
  std::vector<float> y(6);
  ref::concat<float>({a.data(), b.data()}, {{2, 2}, {2, 1}}, 1, y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 2, 5, 3, 4, 6}));
  std::vector<float> piece(2);
  ref::slice(y.data(), {2, 3}, 1, 2, 1, piece.data());
  EXPECT_EQ(piece, b);
}

TEST(ConcatValidationTest, RefusesMismatches) {
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 3}), l = b.buffer({4, 3}, DType::I32), y = b.buffer({4, 6});
    b.kernel(StepKind::Train, KernelKind::Concat, {x, l}, {y}).attrI("axis", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(concat): input 1 (buffer 1) is i32 of rank 2, expected f32 of rank 2");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 3}), z = b.buffer({2, 3}), y = b.buffer({4, 6});
    b.kernel(StepKind::Train, KernelKind::Concat, {x, z}, {y}).attrI("axis", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "input 1 (buffer 1) has size 2 on axis 0, expected 4");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 3}), y = b.buffer({4, 7});
    b.kernel(StepKind::Train, KernelKind::Concat, {x, x}, {y}).attrI("axis", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "the inputs' sizes along axis 1 add up to 6, output 0 (buffer 1) has 7");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 3}), y = b.buffer({4, 6});
    b.kernel(StepKind::Train, KernelKind::Concat, {x, x}, {y}).attrI("axis", 2);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "axis 2 is outside rank 2");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 6}), y = b.buffer({4, 3});
    b.kernel(StepKind::Train, KernelKind::Slice, {x}, {y}).attrI("axis", 1).attrI("offset", 4);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(slice): elements [4, 7) along axis 1 are outside input 0's 6");
  }
  {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 6}), y = b.buffer({4, 3});
    b.kernel(StepKind::Train, KernelKind::Slice, {x}, {y}).attrI("axis", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "(slice): missing attribute 'offset'");
  }
}

/// x of `shape` through transpose kernels exchanging `swaps` in turn, against the reference's
/// permutation `permutation` (what those exchanges amount to).
struct TransposeCase {
  std::vector<int64_t> shape;
  std::vector<std::pair<int64_t, int64_t>> swaps;
  std::vector<int64_t> permutation;
};

void PrintTo(const TransposeCase &c, std::ostream *os) {
  *os << "rank " << c.shape.size() << ", " << c.swaps.size() << " exchange(s), permutation";
  for (int64_t a : c.permutation)
    *os << " " << a;
}

class TransposeTest : public ::testing::TestWithParam<TransposeCase> {};

template <typename T> void checkTranspose(const TransposeCase &c, DType dtype) {
  PlanBuilder b(c.shape[0]);
  const uint32_t x = b.buffer(c.shape, dtype);
  uint32_t current = x;
  std::vector<int64_t> shape = c.shape;
  for (auto [axisA, axisB] : c.swaps) {
    std::swap(shape[axisA], shape[axisB]);
    const uint32_t next = b.buffer(shape, dtype);
    b.kernel(StepKind::Train, KernelKind::Transpose, {current}, {next})
        .attrI("axis_a", axisA)
        .attrI("axis_b", axisB);
    current = next;
  }
  auto program = b.load();
  std::vector<T> v(numel(c.shape));
  for (size_t j = 0; j < v.size(); ++j)
    v[j] = static_cast<T>(int64_t(j * 7919) % 1009 - 500);
  put(*program, x, v);
  program->run(StepKind::Train, stepContext(c.shape[0]));
  std::vector<T> want(v.size());
  ref::transpose(v.data(), c.shape, c.permutation, want.data());
  EXPECT_EQ(get<T>(*program, current), want);
}

TEST_P(TransposeTest, F32MatchesReference) { checkTranspose<float>(GetParam(), DType::F32); }

TEST_P(TransposeTest, I32MatchesReference) { checkTranspose<int32_t>(GetParam(), DType::I32); }

INSTANTIATE_TEST_SUITE_P(
    Shapes, TransposeTest,
    ::testing::Values(
        // A matrix per sample: [N, T, D] -> [N, D, T].
        TransposeCase{{3, 5, 7}, {{1, 2}}, {0, 2, 1}},
        // Attention's heads: [N, T, H, d] -> [N, H, T, d] (middle and inner blocks of 1 and d).
        TransposeCase{{2, 7, 4, 3}, {{1, 2}}, {0, 2, 1, 3}},
        // Axes far apart with a middle: [N, a, b, c] -> [N, c, b, a].
        TransposeCase{{2, 3, 4, 5}, {{1, 3}}, {0, 3, 2, 1}},
        // A cycle in two exchanges, as graph.transpose [0, 2, 3, 1] lowers.
        TransposeCase{{2, 3, 4, 5}, {{1, 2}, {2, 3}}, {0, 2, 3, 1}},
        // Its inverse [0, 3, 1, 2] in two.
        TransposeCase{{2, 5, 3, 4}, {{1, 3}, {2, 3}}, {0, 3, 1, 2}},
        // The leading axis of a matrix without a batch, and sizes of 1.
        TransposeCase{{6, 4}, {{0, 1}}, {1, 0}},
        TransposeCase{{1, 1, 9, 1}, {{1, 3}}, {0, 3, 2, 1}}));

// The reference itself on a hand-written case: [[1, 2, 3], [4, 5, 6]] transposed.
TEST(TransposeReferenceTest, HandComputed) {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  std::vector<float> y(6);
  ref::transpose(x.data(), {2, 3}, {1, 0}, y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // [1, 2, 3] of shape [1, 3, 1] to [1, 1, 3]: the same order.
  ref::transpose(x.data(), {1, 3, 1}, {0, 2, 1}, y.data());
  EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + 3), (std::vector<float>{1, 2, 3}));
}

TEST(TransposeValidationTest, RefusesMismatches) {
  struct Case {
    std::vector<int64_t> yShape;
    DType yType;
    std::vector<std::pair<const char *, int64_t>> attrs;
    const char *message;
  };
  const Case cases[] = {
      {{4, 3, 2},
       DType::F32,
       {{"axis_a", 1}, {"axis_b", 2}},
       "(transpose): output 0 (y) (buffer 1) is [4x3x2], expected [4x2x3]"},
      {{4, 2, 3}, DType::F32, {{"axis_a", 2}, {"axis_b", 1}}, "axis_a 2 must come before axis_b 1"},
      {{4, 2, 3}, DType::F32, {{"axis_a", 1}, {"axis_b", 3}}, "axis 3 is outside rank 3"},
      {{4, 2, 3},
       DType::I32,
       {{"axis_a", 1}, {"axis_b", 2}},
       "(transpose): output 0 (y) (buffer 1) is i32, expected f32"},
      {{4, 2, 3}, DType::F32, {{"axis_a", 1}}, "(transpose): missing attribute 'axis_b'"},
  };
  for (const Case &c : cases) {
    PlanBuilder b(4);
    uint32_t x = b.buffer({4, 3, 2}), y = b.buffer(c.yShape, c.yType);
    auto &kernel = b.kernel(StepKind::Train, KernelKind::Transpose, {x}, {y});
    for (auto [name, value] : c.attrs)
      kernel.attrI(name, value);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, c.message);
  }
}

// Logits of a batch of 4 stacked twice (8 rows) with 3 valid rows: rows 3 and 7 are padding in
// the loss, its gradient and the correct count; the loss is the mean over the 6 others.
TEST(StackedBatchTest, ValidRowsPerBlock) {
  PlanBuilder b(4);
  const uint32_t z = b.buffer({8, 3}), l = b.buffer({8}, DType::I32);
  const uint32_t loss = b.buffer({}), one = b.buffer({}), dz = b.buffer({8, 3}),
                 correct = b.buffer({});
  b.kernel(StepKind::Train, KernelKind::SoftmaxXent, {z, l}, {loss});
  b.kernel(StepKind::Train, KernelKind::Fill, {}, {one}).attrF("value", 1.0);
  b.kernel(StepKind::Train, KernelKind::SoftmaxXentGrad, {z, l, one}, {dz});
  b.kernel(StepKind::Train, KernelKind::CountCorrect, {z, l}, {correct});
  auto program = b.load();
  std::vector<float> logits(24, 0.0f);
  for (int r = 0; r < 8; ++r)
    logits[r * 3] = 1.0f; // every row predicts class 0
  const std::vector<int32_t> labels{0, 0, 1, 0, 0, 1, 1, 0};
  put(*program, z, logits);
  put(*program, l, labels);
  StepContext ctx = stepContext(3);
  ctx.batchRows = 4;
  program->run(StepKind::Train, ctx);
  // Valid rows 0, 1, 2, 4, 5, 6: labels 0, 0, 1, 0, 1, 1 -> 3 correct rows of 2 blocks: 1.5
  // samples, so that an accuracy over the 3 samples stays at most 1.
  EXPECT_FLOAT_EQ(get(*program, correct)[0], 1.5f);
  const double p0 = std::exp(1.0) / (std::exp(1.0) + 2.0), p1 = 1.0 / (std::exp(1.0) + 2.0);
  EXPECT_NEAR(get(*program, loss)[0], (3 * -std::log(p0) + 3 * -std::log(p1)) / 6, 1e-6);
  const std::vector<float> g = get(*program, dz);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(g[3 * 3 + k], 0.0f) << "row 3 is padding";
    EXPECT_EQ(g[7 * 3 + k], 0.0f) << "row 7 is padding";
  }
  EXPECT_NEAR(g[0], (p0 - 1) / 6, 1e-6);
}

} // namespace
} // namespace dp::rt
