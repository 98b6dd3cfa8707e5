// The cuBLAS adapter's translation, checked on the host: the column-major GEMM that
// rowMajorGemm describes is evaluated from the BLAS definition (what cublasSgemm computes) on
// dp's row-major operands and compared with the reference product, for every transpose.
#include "runtime/backends/cuda/Blas.h"
#include "runtime/kernels/reference/Reference.h"

#include "test/unit/cuda/HostTestUtil.h"

#include <gtest/gtest.h>

#include <climits>
#include <random>
#include <vector>

namespace dp::rt::cuda {
namespace {

using namespace testing;

/// C = alpha op(A) . op(B) in column-major storage, as BLAS's sgemm defines it (beta 0).
void columnMajorGemm(const GemmArgs &g, const float *A, const float *B, float *C,
                     float alpha = 1.0f) {
  for (int64_t j = 0; j < g.n; ++j)
    for (int64_t i = 0; i < g.m; ++i) {
      double sum = 0;
      for (int64_t l = 0; l < g.k; ++l) {
        const float a = g.transA ? A[l + i * g.lda] : A[i + l * g.lda];
        const float b = g.transB ? B[j + l * g.ldb] : B[l + j * g.ldb];
        sum += double(a) * b;
      }
      C[i + j * g.ldc] = static_cast<float>(alpha * sum);
    }
}

struct Product {
  int64_t m, k, n;
};
class RowMajorGemm : public ::testing::TestWithParam<Product> {};

TEST_P(RowMajorGemm, ComputesTheRowMajorProductForEveryTranspose) {
  const Product p = GetParam();
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const std::vector<float> a = uniform(p.m * p.k, 1), b = uniform(p.k * p.n, 2);
      std::vector<float> c(p.m * p.n, -7.0f), want(p.m * p.n);
      const GemmArgs g = rowMajorGemm(p.m, p.k, p.n, ta, tb);
      EXPECT_EQ(gemmProblem(g), "");
      const float *operands[2] = {a.data(), b.data()};
      columnMajorGemm(g, operands[g.first], operands[g.second], c.data());
      ref::matmul(a.data(), b.data(), want.data(), p.m, p.k, p.n, ta, tb);
      for (size_t i = 0; i < c.size(); ++i)
        // The reference sums in f32, this GEMM in double: k roundings apart.
        ASSERT_NEAR(c[i], want[i], 1e-6 * double(p.k) + 1e-5) << "element " << i << (ta ? " ta" : "")
                                         << (tb ? " tb" : "");
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, RowMajorGemm,
                         ::testing::Values(Product{3, 4, 5}, Product{1, 7, 1}, Product{6, 1, 2},
                                           Product{8, 784, 10}, Product{1, 1, 1}));

// A batch of products (batch_matmul): cublasSgemmStridedBatched's definition, product i of
// A + i * strideA and B + i * strideB into C + i * strideC, times alpha, is the reference's.
TEST_P(RowMajorGemm, StridedBatchesAreTheBatchedProduct) {
  const Product p = GetParam();
  const int64_t batch = 3;
  const float alpha = 0.25f;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const std::vector<float> a = uniform(batch * p.m * p.k, 3), b = uniform(batch * p.k * p.n, 4);
      std::vector<float> c(batch * p.m * p.n, -7.0f), want(c.size());
      const GemmArgs g = rowMajorGemm(p.m, p.k, p.n, ta, tb, batch);
      EXPECT_EQ(gemmProblem(g), "");
      const float *operands[2] = {a.data(), b.data()};
      for (int64_t i = 0; i < g.batch; ++i)
        columnMajorGemm(g, operands[g.first] + i * g.strideA, operands[g.second] + i * g.strideB,
                        c.data() + i * g.strideC, alpha);
      ref::batchMatMul(a.data(), b.data(), want.data(), batch, p.m, p.k, p.n, ta, tb, alpha);
      for (size_t i = 0; i < c.size(); ++i)
        ASSERT_NEAR(c[i], want[i], 1e-6 * double(p.k) + 1e-5)
            << "element " << i << (ta ? " ta" : "") << (tb ? " tb" : "");
    }
}

TEST(RowMajorGemm, DenseIsTheProductOfTheBatchAndTheWeights) {
  // dense x[n,k] . w[k,m]: cuBLAS sees w as A (m x k, ld m) and x as B (k x n, ld k).
  const GemmArgs g = rowMajorGemm(128, 784, 100, false, false);
  EXPECT_EQ(g.first, 1);
  EXPECT_EQ(g.second, 0);
  EXPECT_FALSE(g.transA);
  EXPECT_FALSE(g.transB);
  EXPECT_EQ(g.m, 100);
  EXPECT_EQ(g.n, 128);
  EXPECT_EQ(g.k, 784);
  EXPECT_EQ(g.lda, 100);
  EXPECT_EQ(g.ldb, 784);
  EXPECT_EQ(g.ldc, 100);
}

TEST(GemmProblem, RefusesSizesBeyondThirtyTwoBitsAndBadLeadingDimensions) {
  EXPECT_EQ(gemmProblem(rowMajorGemm(int64_t(INT_MAX), 2, 3, false, false)), "");
  EXPECT_NE(gemmProblem(rowMajorGemm(int64_t(INT_MAX) + 1, 2, 3, false, false)).find("32-bit"),
            std::string::npos);
  EXPECT_NE(gemmProblem(rowMajorGemm(2, int64_t(1) << 33, 3, true, true)), "");
  GemmArgs bad = rowMajorGemm(4, 5, 6, false, false);
  bad.lda = 2;
  EXPECT_NE(gemmProblem(bad).find("leading dimension"), std::string::npos);
}

} // namespace
} // namespace dp::rt::cuda
