// The FLOPs that MFU counts (runtime/format/Flops.h), each kind against a count by hand: 2 per
// multiply-add of its product, whatever its layout attributes; 0 for the kernels that are not
// products and for shapes outside a kind's contract.
#include "runtime/format/Flops.h"
#include "runtime/format/Plan.h"

#include <gtest/gtest.h>

namespace dp::rt {
namespace {

TEST(Flops, DenseAndMatMulCountTwicePerMultiplyAdd) {
  // y[8,5] = x[8,3] w[3,5]: 8 x 5 outputs of 3 multiply-adds each.
  EXPECT_EQ(kernelFlops(KernelKind::Dense, {{8, 3}, {3, 5}, {5}}, {{8, 5}}), 2.0 * 8 * 5 * 3);
  // c[4,6] = a[4,7] b[7,6], and with a given as [7,4] (op(a) = a^T).
  EXPECT_EQ(kernelFlops(KernelKind::MatMul, {{4, 7}, {7, 6}}, {{4, 6}}), 2.0 * 4 * 6 * 7);
  EXPECT_EQ(kernelFlops(KernelKind::MatMul, {{7, 4}, {7, 6}}, {{4, 6}}, /*transposeA=*/true),
            2.0 * 4 * 6 * 7);
  // 3 x 2 products of [4,7] x [7,6].
  EXPECT_EQ(kernelFlops(KernelKind::BatchMatMul, {{3, 2, 4, 7}, {3, 2, 7, 6}}, {{3, 2, 4, 6}}),
            2.0 * 6 * 4 * 6 * 7);
  EXPECT_EQ(kernelFlops(KernelKind::BatchMatMul, {{3, 7, 4}, {3, 6, 7}}, {{3, 4, 6}},
                        /*transposeA=*/true),
            2.0 * 3 * 4 * 6 * 7);
}

TEST(Flops, ConvolutionsAndTheirGradientsCountTheSameProducts) {
  // x[2,9,9,4] * w[3,3,4,6] (stride 2, padding 1) -> y[2,5,5,6]: 2 x 5 x 5 x 6 outputs, each
  // of 3 x 3 x 4 taps.
  const double forward = 2.0 * (2 * 5 * 5 * 6) * (3 * 3 * 4);
  EXPECT_EQ(kernelFlops(KernelKind::Conv2d, {{2, 9, 9, 4}, {3, 3, 4, 6}, {6}}, {{2, 5, 5, 6}}),
            forward);
  EXPECT_EQ(kernelFlops(KernelKind::Conv2dGradInput, {{2, 5, 5, 6}, {3, 3, 4, 6}}, {{2, 9, 9, 4}}),
            forward);
  EXPECT_EQ(kernelFlops(KernelKind::Conv2dGradFilter, {{2, 9, 9, 4}, {2, 5, 5, 6}}, {{3, 3, 4, 6}}),
            forward);
  // Two groups: each output reads half the channels.
  EXPECT_EQ(kernelFlops(KernelKind::Conv2d, {{2, 9, 9, 4}, {3, 3, 2, 6}}, {{2, 9, 9, 6}}),
            2.0 * (2 * 9 * 9 * 6) * (3 * 3 * 2));
}

TEST(Flops, AnLstmCountsItsGatesAndItsGradientTwice) {
  // x[2,5,3] through 4 units: per sample and time step the 4 gates' [3 + 4] x 4 products.
  const double forward = 2.0 * 2 * 5 * (3 + 4) * (4 * 4);
  EXPECT_EQ(kernelFlops(KernelKind::Lstm, {{2, 5, 3}, {3, 16}, {4, 16}, {16}}, {{2, 5, 4}}),
            forward);
  EXPECT_EQ(kernelFlops(KernelKind::LstmGrad,
                        {{2, 5, 3}, {3, 16}, {4, 16}, {16}, {2, 5, 4}, {2, 5, 4}},
                        {{2, 5, 3}, {3, 16}, {4, 16}, {16}}),
            2 * forward);
}

TEST(Flops, OtherKernelsAndMalformedShapesCountNothing) {
  EXPECT_FALSE(isProduct(KernelKind::Add));
  EXPECT_TRUE(isProduct(KernelKind::Conv2dGradFilter));
  EXPECT_EQ(kernelFlops(KernelKind::Add, {{8, 3}, {8, 3}}, {{8, 3}}), 0);
  EXPECT_EQ(kernelFlops(KernelKind::SoftmaxXent, {{8, 10}, {8}}, {{}}), 0);
  EXPECT_EQ(kernelFlops(KernelKind::Dense, {{8, 3}}, {{8, 5}}), 0);
  EXPECT_EQ(kernelFlops(KernelKind::Conv2d, {{2, 9, 9, 4}, {3, 3, 4, 0}}, {{2, 9, 9, 0}}), 0);
  EXPECT_EQ(kernelFlops(KernelKind::Lstm, {{2, 5}, {3, 16}, {4, 16}, {16}}, {{2, 4}}), 0);
}

TEST(Flops, AStepSumsItsProductsOverItsDevices) {
  Plan plan;
  auto buffer = [&](std::vector<int64_t> shape, DType dtype = DType::F32) {
    BufferDesc b;
    b.shape = shape;
    b.dtype = dtype;
    plan.buffers.push_back(b);
    return uint32_t(plan.buffers.size() - 1);
  };
  const uint32_t x = buffer({8, 3}, DType::BF16), w = buffer({3, 5}, DType::BF16),
                 y = buffer({8, 5}), z = buffer({8, 5});
  KernelDesc dense;
  dense.kind = KernelKind::Dense;
  dense.inputs = {x, w};
  dense.outputs = {y};
  dense.attrs = FusedActivationAttrs{};
  KernelDesc add;
  add.kind = KernelKind::Add;
  add.inputs = {y, y};
  add.outputs = {z};
  add.attrs = NoAttrs{};
  plan.train.kernels = {dense, add, dense}; // two replicas' dense and an add
  plan.eval.kernels = {dense};
  EXPECT_EQ(plan.stepFlops(StepKind::Train), 2 * 2.0 * 8 * 5 * 3);
  EXPECT_EQ(plan.stepFlops(StepKind::Eval), 2.0 * 8 * 5 * 3);
  EXPECT_TRUE(plan.computesInBf16());
  plan.buffers[x].dtype = plan.buffers[w].dtype = DType::F32;
  EXPECT_FALSE(plan.computesInBf16());
}

} // namespace
} // namespace dp::rt
