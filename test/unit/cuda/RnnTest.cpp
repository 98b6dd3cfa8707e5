// The LSTM's weights between dp's layout and cuDNN's, checked on the host: packing dp's kernels
// and bias into a weight space and unpacking gives them back, and an LSTM written the way
// cuDNN defines it (per gate: W_g x + R_g h + b_g, in its gate order) over the packed weight
// space computes the reference LSTM.
#include "runtime/backends/cuda/Rnn.h"
#include "runtime/kernels/reference/Lstm.h"
#include "test/unit/cuda/HostTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace dp::rt::cuda {
namespace {

using namespace testing;

/// dp's w, r, b packed into a weight space of `layout`.
std::vector<float> pack(const std::vector<float> &w, const std::vector<float> &r,
                        const std::vector<float> &b, const RnnWeightLayout &layout, int64_t f,
                        int64_t u, size_t spaceSize) {
  std::vector<float> space(spaceSize, NAN);
  for (int64_t e = 0; e < 4 * u * f; ++e)
    packKernelElement(w.data(), space.data(), layout.input, f, u, e);
  for (int64_t e = 0; e < 4 * u * u; ++e)
    packKernelElement(r.data(), space.data(), layout.recurrent, u, u, e);
  for (int64_t e = 0; e < 4 * u; ++e)
    space[biasOffset(layout.bias, u, e)] = b[e];
  return space;
}

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

/// cuDNN's LSTM by its definition, from the weight space: h of every step, [n,t,u].
std::vector<float> cudnnLstm(const std::vector<float> &x, const std::vector<float> &space,
                             const RnnWeightLayout &l, int64_t n, int64_t t, int64_t f,
                             int64_t u) {
  std::vector<float> y(n * t * u);
  for (int64_t s = 0; s < n; ++s) {
    std::vector<double> h(u, 0), c(u, 0);
    for (int64_t step = 0; step < t; ++step) {
      std::vector<double> gate[4];
      for (int g = 0; g < 4; ++g) {
        gate[g].assign(u, 0);
        for (int64_t j = 0; j < u; ++j) {
          double z = space[l.bias[g] + j];
          for (int64_t i = 0; i < f; ++i)
            z += double(space[l.input[g] + j * f + i]) * x[(s * t + step) * f + i];
          for (int64_t k = 0; k < u; ++k)
            z += double(space[l.recurrent[g] + j * u + k]) * h[k];
          gate[g][j] = g == 2 ? std::tanh(z) : sigmoid(z);
        }
      }
      for (int64_t j = 0; j < u; ++j) {
        c[j] = gate[1][j] * c[j] + gate[0][j] * gate[2][j];
        h[j] = gate[3][j] * std::tanh(c[j]);
        y[(s * t + step) * u + j] = static_cast<float>(h[j]);
      }
    }
  }
  return y;
}

TEST(RnnWeights, PackingThenUnpackingGivesDpsTensorsBack) {
  const int64_t f = 5, u = 3;
  // A layout with gaps and another order than the canonical one, as cuDNN may choose.
  RnnWeightLayout l{};
  int64_t at = 7;
  for (int g : {2, 0, 3, 1}) {
    l.recurrent[g] = at, at += u * u + 1;
    l.input[g] = at, at += u * f + 2;
    l.bias[g] = at, at += u;
  }
  const std::vector<float> w = uniform(f * 4 * u, 1), r = uniform(u * 4 * u, 2),
                           b = uniform(4 * u, 3);
  const std::vector<float> space = pack(w, r, b, l, f, u, at);
  std::vector<float> w2(w.size()), r2(r.size()), b2(b.size());
  for (int64_t e = 0; e < f * 4 * u; ++e)
    w2[e] = kernelElement(space.data(), l.input, f, u, e);
  for (int64_t e = 0; e < u * 4 * u; ++e)
    r2[e] = kernelElement(space.data(), l.recurrent, u, u, e);
  for (int64_t e = 0; e < 4 * u; ++e)
    b2[e] = space[biasOffset(l.bias, u, e)];
  EXPECT_EQ(w2, w);
  EXPECT_EQ(r2, r);
  EXPECT_EQ(b2, b);
}

TEST(RnnWeights, LayoutsThatOverlapOrLeaveTheSpaceAreRefused) {
  const int64_t f = 4, u = 2, size = 4 * u * (f + u + 1);
  EXPECT_EQ(rnnLayoutProblem(canonicalLayout(f, u), f, u, size), "");
  EXPECT_NE(rnnLayoutProblem(canonicalLayout(f, u), f, u, size - 1).find("outside"),
            std::string::npos);
  RnnWeightLayout overlapping = canonicalLayout(f, u);
  overlapping.recurrent[1] = overlapping.recurrent[0] + 1;
  const std::string problem = rnnLayoutProblem(overlapping, f, u, size);
  EXPECT_NE(problem.find("overlap"), std::string::npos) << problem;
  EXPECT_NE(problem.find("recurrent"), std::string::npos) << problem;
}

TEST(RnnWeights, SizesBeyondThirtyTwoBitsAreRefused) {
  EXPECT_EQ(rnnProblem({128, 28, 28, 256, true}), "");
  EXPECT_NE(rnnProblem({int64_t(1) << 32, 28, 28, 256, true}), "");
}

TEST(RnnWeights, CanonicalLayoutIsDenseAndInGateOrder) {
  const RnnWeightLayout l = canonicalLayout(28, 256);
  EXPECT_EQ(l.input[0], 0);
  EXPECT_EQ(l.input[3], 3 * 256 * 28);
  EXPECT_EQ(l.recurrent[0], 4 * 256 * 28);
  EXPECT_EQ(l.bias[0], 4 * 256 * 28 + 4 * 256 * 256);
  EXPECT_EQ(l.bias[3] + 256, 4 * 256 * (28 + 256 + 1)) << "the seed LSTM's 4U(F+U+1) weights";
}

TEST(RnnWeights, CudnnsLstmOverThePackedWeightsIsTheReferenceLstm) {
  const int64_t n = 3, t = 4, f = 5, u = 6;
  const std::vector<float> x = uniform(n * t * f, 4), w = uniform(f * 4 * u, 5, -0.5f, 0.5f),
                           r = uniform(u * 4 * u, 6, -0.5f, 0.5f), b = uniform(4 * u, 7);
  const RnnWeightLayout l = canonicalLayout(f, u);
  const std::vector<float> space = pack(w, r, b, l, f, u, size_t(4 * u * (f + u + 1)));
  const std::vector<float> got = cudnnLstm(x, space, l, n, t, f, u);
  std::vector<float> want(n * t * u);
  ref::lstm(x.data(), w.data(), r.data(), b.data(), want.data(), {n, t, f, u, true});
  EXPECT_TRUE(near(got, want, 1e-5, 1e-6));
  // Without sequences the layer's output is the last step's h: what cuDNN returns as hy.
  std::vector<float> last(n * u);
  ref::lstm(x.data(), w.data(), r.data(), b.data(), last.data(), {n, t, f, u, false});
  for (int64_t s = 0; s < n; ++s)
    for (int64_t j = 0; j < u; ++j)
      EXPECT_NEAR(got[(s * t + t - 1) * u + j], last[s * u + j], 1e-5);
}

} // namespace
} // namespace dp::rt::cuda
