// Load-time validation by the CPU backend: kernels whose shapes, dtypes, attributes or buffer
// overlaps make no sense are rejected with a Plan error that names the kernel and the problem.
#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

TEST(KernelValidationTest, ErrorsNameTheKernelAndItsLocation) {
  PlanBuilder b(2);
  uint32_t x = b.buffer({2, 3}), w = b.buffer({3}), y = b.buffer({2, 4});
  b.kernel(StepKind::Eval, KernelKind::Fill, {}, {y}).attrF("value", 0);
  b.kernel(StepKind::Eval, KernelKind::Dense, {x, w}, {y}).at("model.py:9");
  EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                  "eval kernel #1 (dense) at model.py:9: input 1 (w) (buffer 1) has rank 1, "
                  "expected 2");
}

TEST(KernelValidationTest, DenseShapes) {
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 3}), w = b.buffer({3, 4}), bias = b.buffer({3}), y = b.buffer({2, 4});
    b.kernel(StepKind::Train, KernelKind::Dense, {x, w, bias}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "input 2 (b) (buffer 2) has 3 elements, expected 4");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 5}), w = b.buffer({3, 4}), y = b.buffer({2, 4});
    b.kernel(StepKind::Train, KernelKind::Dense, {x, w}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "input 0 (x) (buffer 0) has 10 elements, expected 6");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({3, 3}), w = b.buffer({3, 4}), y = b.buffer({2, 4});
    b.kernel(StepKind::Train, KernelKind::Dense, {x, w}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "input 0 (x) has 3 rows but y has 2");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 3}), w = b.buffer({3, 4}), y = b.buffer({2, 5});
    b.kernel(StepKind::Train, KernelKind::Dense, {x, w}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "output 0 (y) has 5 columns but w has 4");
  }
}

TEST(KernelValidationTest, MatMulShapes) {
  {
    PlanBuilder b(1);
    uint32_t a = b.buffer({2, 3}), bb = b.buffer({4, 5}), c = b.buffer({2, 5});
    b.kernel(StepKind::Train, KernelKind::MatMul, {a, bb}, {c});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "inner dimensions differ: op(a) has 3 columns, op(b) has 4 rows");
  }
  {
    PlanBuilder b(1);
    uint32_t a = b.buffer({3, 2}), bb = b.buffer({3, 5}), c = b.buffer({5, 2});
    b.kernel(StepKind::Train, KernelKind::MatMul, {a, bb}, {c}).attrI("transpose_a", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "output 0 (c) is [5, 2], expected [2, 5]");
  }
  {
    PlanBuilder b(1);
    uint32_t a = b.buffer({2, 2}), c = b.buffer({2, 2});
    b.kernel(StepKind::Train, KernelKind::MatMul, {a, a}, {c}).attrI("transpose_b", 2);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "transpose_b must be 0 or 1, not 2");
  }
}

TEST(KernelValidationTest, BatchMatMulShapes) {
  struct Case {
    std::vector<int64_t> a, b, c;
    std::vector<std::pair<const char *, double>> attrs;
    const char *message;
  };
  const Case cases[] = {
      {{2, 3},
       {3, 4},
       {2, 4},
       {{"alpha", 1}},
       "input 0 (a) (buffer 0) has rank 2, expected at least 3"},
      {{2, 5, 3}, {2, 3, 4, 1}, {2, 5, 4}, {{"alpha", 1}}, "input 1 (b)"},
      {{2, 5, 3},
       {3, 3, 4},
       {2, 5, 4},
       {{"alpha", 1}},
       "the sizes on axis 0 differ: a has 2, b 3, c 2"},
      {{2, 5, 3},
       {2, 4, 3},
       {2, 5, 4},
       {{"alpha", 1}},
       "inner dimensions differ: op(a) has 3 columns, op(b) has 4 rows"},
      {{2, 5, 3}, {2, 3, 4}, {2, 4, 5}, {{"alpha", 1}}, "output 0 (c) is [4, 5], expected [5, 4]"},
      {{2, 5, 3}, {2, 3, 4}, {2, 5, 4}, {}, "(batch_matmul): missing attribute 'alpha'"},
  };
  for (const Case &c : cases) {
    PlanBuilder b(2);
    uint32_t a = b.buffer(c.a), bb = b.buffer(c.b), out = b.buffer(c.c);
    auto &kernel = b.kernel(StepKind::Train, KernelKind::BatchMatMul, {a, bb}, {out});
    for (auto [name, value] : c.attrs)
      kernel.attrF(name, value);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, c.message);
  }
}

TEST(KernelValidationTest, DTypes) {
  {
    PlanBuilder b(2);
    uint32_t logits = b.buffer({2, 3}), labels = b.buffer({2}), loss = b.buffer({});
    b.kernel(StepKind::Train, KernelKind::SoftmaxXent, {logits, labels}, {loss});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "input 1 (labels) (buffer 1) is f32, expected i32");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({4}, DType::I32), y = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::Add, {x, y}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "input 0 (buffer 0) is i32, expected f32");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({4}, DType::I32), y = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::Copy, {x}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "output 0 (y) (buffer 1) is f32, expected i32");
  }
}

TEST(KernelValidationTest, LossShapes) {
  {
    PlanBuilder b(2);
    uint32_t logits = b.buffer({2, 3}), labels = b.buffer({3}, DType::I32), loss = b.buffer({});
    b.kernel(StepKind::Train, KernelKind::CountCorrect, {logits, labels}, {loss});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "input 1 (labels) (buffer 1) has 3 elements, expected 2");
  }
  {
    PlanBuilder b(2);
    uint32_t logits = b.buffer({2, 3}), labels = b.buffer({2}, DType::I32), loss = b.buffer({2});
    b.kernel(StepKind::Train, KernelKind::SoftmaxXent, {logits, labels}, {loss});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "output 0 (loss) (buffer 2) has 2 elements, expected 1");
  }
}

TEST(KernelValidationTest, Attributes) {
  {
    PlanBuilder b(1);
    uint32_t x = b.buffer({4}), y = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::Activation, {x}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "(activation): missing attribute 'activation'");
  }
  {
    PlanBuilder b(1);
    uint32_t x = b.buffer({4}), y = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::ActivationGrad, {x, x}, {y}).attrI("activation", 9);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "unknown activation 9");
  }
  {
    PlanBuilder b(1);
    uint32_t g = b.buffer({4}), p = b.persistentBuffer({4});
    b.kernel(StepKind::Train, KernelKind::SgdUpdate, {g}, {p});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "(sgd_update): missing attribute 'lr'");
  }
  {
    // Names outside the kind's contract (Kernels.def) are refused by the plan verifier.
    PlanBuilder b(1);
    uint32_t g = b.buffer({4}), p = b.persistentBuffer({4});
    b.kernel(StepKind::Train, KernelKind::SgdUpdate, {g}, {p}).attrF("learning_rate", 0.1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "train kernel #0 (sgd_update) has unknown attribute 'learning_rate'");
  }
  {
    PlanBuilder b(1);
    uint32_t g = b.buffer({4}), p = b.persistentBuffer({4}), m = b.persistentBuffer({4}),
             v = b.persistentBuffer({4});
    b.kernel(StepKind::Train, KernelKind::AdamUpdate, {g}, {p, m, v})
        .attrF("lr", 0.1)
        .attrF("beta1", 1.0)
        .attrF("beta2", 0.9)
        .attrF("epsilon", 1e-7);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "adam betas must lie in [0, 1)");
  }
  {
    PlanBuilder b(1);
    uint32_t y = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::Fill, {}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "missing attribute 'value'");
  }
  {
    PlanBuilder b(2);
    uint32_t logits = b.buffer({2, 3}), labels = b.buffer({2}, DType::I32), loss = b.buffer({});
    b.kernel(StepKind::Train, KernelKind::SoftmaxXent, {logits, labels}, {loss})
        .attrF("label_smoothing", 1.5);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "label_smoothing must lie in [0, 1], got 1.5");
  }
  {
    // An update's scale is one element.
    PlanBuilder b(1);
    uint32_t g = b.buffer({4}), scale = b.buffer({2}), p = b.persistentBuffer({4});
    b.kernel(StepKind::Train, KernelKind::SgdUpdate, {g, scale}, {p}).attrF("lr", 0.1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "input 1 (scale) (buffer 1) has 2 elements, expected 1");
  }
  {
    PlanBuilder b(1);
    uint32_t g = b.buffer({4}), f = b.buffer({});
    b.kernel(StepKind::Train, KernelKind::ClipFactor, {g}, {f}).attrF("max_norm", 0.0);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "max_norm must be positive, got 0");
  }
  {
    PlanBuilder b(1);
    uint32_t g = b.buffer({4}), f = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::ClipFactor, {g}, {f}).attrF("max_norm", 1.0);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "output 0 (factor) (buffer 1) has 4 elements, expected 1");
  }
}

TEST(KernelValidationTest, ImageKernelShapesAndAttributes) {
  auto conv = [](PlanBuilder &b, KernelKind kind, std::vector<uint32_t> ins, uint32_t out) {
    return &b.kernel(StepKind::Train, kind, std::move(ins), {out})
                .attrI("stride_h", 1)
                .attrI("stride_w", 1)
                .attrI("pad_top", 0)
                .attrI("pad_left", 0)
                .attrI("pad_bottom", 0)
                .attrI("pad_right", 0);
  };
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 6, 6, 2}), w = b.buffer({3, 3, 3, 4}), y = b.buffer({2, 4, 4, 4});
    conv(b, KernelKind::Conv2d, {x, w}, y);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "input 1 (w) expects 3 input channels, the image has 2");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 6, 6, 2}), w = b.buffer({3, 3, 2, 4}), y = b.buffer({2, 6, 6, 4});
    conv(b, KernelKind::Conv2d, {x, w}, y);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "output 0 (y) (buffer 2) is [2x6x6x4], expected [2x4x4x4]");
  }
  {
    // Grouped: the kernel holds the channels of one group, the groups divide both sides.
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 6, 6, 4}), w = b.buffer({3, 3, 4, 4}), y = b.buffer({2, 4, 4, 4});
    conv(b, KernelKind::Conv2d, {x, w}, y)->attrI("groups", 2);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "input 1 (w) expects 4 input channels per group, the image has 4 in 2 groups");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 6, 6, 4}), w = b.buffer({3, 3, 1, 6}), y = b.buffer({2, 4, 4, 6});
    conv(b, KernelKind::Conv2d, {x, w}, y)->attrI("groups", 4);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "4 groups do not divide 4 channels and 6 filters");
  }
  {
    // The stored weights are readable as such only in one group, through a dense window of
    // live taps: not grouped, not the middle column of a 3x3 kernel (a 3x1 image padded by
    // one on each side, whose outer columns read only padding).
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 6, 6, 4}), w = b.buffer({3, 3, 2, 4}), y = b.buffer({2, 4, 4, 4});
    conv(b, KernelKind::Conv2d, {x, w}, y)->attrI("groups", 2).attrI("plain_weights", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "plain_weights needs one group and a dense window of live taps");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 3, 1, 2}), w = b.buffer({3, 3, 2, 4}), dy = b.buffer({2, 3, 1, 4});
    conv(b, KernelKind::Conv2dGradInput, {dy, w}, x)
        ->attrI("pad_top", 1)
        .attrI("pad_bottom", 1)
        .attrI("pad_left", 1)
        .attrI("pad_right", 1)
        .attrI("plain_weights", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "plain_weights needs one group and a dense window of live taps");
  }
  for (int64_t bad : {int64_t(0), int64_t(-3)}) {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 6, 6, 2}), w = b.buffer({3, 3, 2, 4}), y = b.buffer({2, 4, 4, 4});
    conv(b, KernelKind::Conv2dGradFilter, {x, y}, w)->attrI("dilation_w", bad);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "groups and dilations must be positive");
  }
  {
    // A hostile dilation: refused before the window's extent is computed (no overflow).
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 6, 6, 2}), w = b.buffer({3, 3, 2, 4}), y = b.buffer({2, 4, 4, 4});
    conv(b, KernelKind::Conv2d, {x, w}, y)->attrI("dilation_h", INT64_MAX);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "the kernel does not fit the padded image");
  }
  {
    // Dilated 2, the 3x3 window spans 5x5: a 6x6 image gives 2x2.
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 6, 6, 2}), w = b.buffer({3, 3, 2, 4}), y = b.buffer({2, 4, 4, 4});
    conv(b, KernelKind::Conv2d, {x, w}, y)->attrI("dilation_h", 2).attrI("dilation_w", 2);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "output 0 (y) (buffer 2) is [2x4x4x4], expected [2x2x2x4]");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 36, 2}), w = b.buffer({3, 3, 2, 4}), y = b.buffer({2, 4, 4, 4});
    conv(b, KernelKind::Conv2dGradFilter, {x, y}, w);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "input 0 (x) (buffer 0) has rank 3, expected 4");
  }
  {
    PlanBuilder b(2);
    uint32_t dy = b.buffer({2, 4, 4, 4}), w = b.buffer({3, 3, 2, 4}), dx = b.buffer({2, 6, 6, 2});
    b.kernel(StepKind::Train, KernelKind::Conv2dGradInput, {dy, w}, {dx}).attrI("stride_h", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "(conv2d_grad_input): missing attribute 'stride_w'");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 5, 5, 3}), y = b.buffer({2, 3, 3, 3});
    b.kernel(StepKind::Train, KernelKind::MaxPool2d, {x}, {y})
        .attrI("window_h", 2)
        .attrI("window_w", 2)
        .attrI("stride_h", 2)
        .attrI("stride_w", 2);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "output 0 (y) (buffer 1) is [2x3x3x3], expected [2x2x2x3]");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 4}), y = b.buffer({2, 4}), mask = b.buffer({2, 4});
    b.kernel(StepKind::Train, KernelKind::Dropout, {x}, {y, mask})
        .attrF("rate", 1.0)
        .attrI("stream", 0);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "rate 1.000000 is not in [0, 1)");
  }
  {
    PlanBuilder b(2);
    uint32_t mask = b.buffer({2, 3}), dy = b.buffer({2, 4}), dx = b.buffer({2, 4});
    b.kernel(StepKind::Train, KernelKind::DropoutGrad, {mask, dy}, {dx});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "input 0 (mask) (buffer 0) has 6 elements, expected 8");
  }
}

TEST(KernelValidationTest, OverlappingBuffers) {
  {
    // A matmul cannot write over its own input.
    PlanBuilder b(1);
    uint32_t a = b.buffer({3, 3}), bb = b.buffer({3, 3});
    b.kernel(StepKind::Train, KernelKind::MatMul, {a, bb}, {a});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "output 0 (buffer 0) overlaps input 0 (buffer 0)");
  }
  {
    // An elementwise kernel may update in place, but not shifted by part of a row.
    PlanBuilder b(1);
    uint32_t x = b.buffer({64}), y = b.buffer({48});
    b.setOffset(y, 64);
    b.kernel(StepKind::Train, KernelKind::Add, {x, x}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "overlaps input 0 (buffer 0) without being the same");
  }
  {
    PlanBuilder b(1);
    uint32_t g = b.buffer({4}), p = b.persistentBuffer({4}), v = b.alias(p, {4});
    b.kernel(StepKind::Train, KernelKind::MomentumUpdate, {g}, {p, v})
        .attrF("lr", 0.1)
        .attrF("momentum", 0.9);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "outputs 0 and 1 overlap");
  }
}

} // namespace
} // namespace dp::rt
