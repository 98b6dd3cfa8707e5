// The cuDNN convolution adapter's translation, checked on the host: the plan's image, padding
// and KRSC filter, evaluated the way cuDNN defines its convolution (NHWC cross-correlation with
// symmetric padding), give the reference convolution for symmetric and asymmetric padding;
// the filter transposes are inverse permutations; the algorithm choice prefers determinism.
#include "runtime/backends/cuda/Conv.h"
#include "runtime/backends/cuda/ImageOps.h"
#include "runtime/kernels/reference/Reference.h"

#include "test/unit/cuda/HostTestUtil.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace dp::rt::cuda {
namespace {

using namespace testing;

/// cuDNN's forward convolution by its definition: NHWC image x[n, inH, inW, c] padded by
/// (padH, padW) on both sides, KRSC filter k[f, kh, kw, c / groups] (filter group g on
/// channel group g), cross-correlation with taps dilation apart, output
/// [n, (inH + 2 padH - ((kh - 1) dilationH + 1)) / strideH + 1, ...] NHWC.
std::vector<float> cudnnForward(const ConvPlan &p, const float *x, const float *k) {
  const int64_t oh = (p.inH + 2 * p.padH - (p.kh - 1) * p.dilationH - 1) / p.strideH + 1;
  const int64_t ow = (p.inW + 2 * p.padW - (p.kw - 1) * p.dilationW - 1) / p.strideW + 1;
  const int64_t cg = p.groupChannels();
  std::vector<float> y(p.n * oh * ow * p.f);
  for (int64_t b = 0; b < p.n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t o = 0; o < p.f; ++o) {
          double sum = 0;
          const int64_t c0 = o / (p.f / p.groups) * cg;
          for (int64_t r = 0; r < p.kh; ++r)
            for (int64_t q = 0; q < p.kw; ++q) {
              const int64_t row = i * p.strideH - p.padH + r * p.dilationH,
                            col = j * p.strideW - p.padW + q * p.dilationW;
              if (row < 0 || row >= p.inH || col < 0 || col >= p.inW)
                continue;
              for (int64_t ch = 0; ch < cg; ++ch)
                sum += double(x[((b * p.inH + row) * p.inW + col) * p.c + c0 + ch]) *
                       k[((o * p.kh + r) * p.kw + q) * cg + ch];
            }
          y[((b * oh + i) * ow + j) * p.f + o] = static_cast<float>(sum);
        }
  return y;
}

class Plans : public ::testing::TestWithParam<contract::ConvShape> {};

TEST_P(Plans, CudnnsConvolutionOfThePlanIsTheReferenceConvolution) {
  const contract::ConvShape s = GetParam();
  const ConvPlan p = convPlan(s);
  EXPECT_EQ(convProblem(p), "");
  EXPECT_EQ(p.explicitPad, s.pt != s.pb || s.pl != s.pr);
  const std::vector<float> x = uniform(s.n * s.h * s.w * s.c, 1);
  const std::vector<float> w = uniform(s.kh * s.kw * (s.c / s.g) * s.f, 2);
  const std::vector<float> b(s.f, 0.0f);

  // What the kernel hands cuDNN: the KRSC filter and, if asked for, the padded image.
  const int64_t rsc = s.kh * s.kw * (s.c / s.g);
  std::vector<float> k(s.f * rsc);
  for (int64_t i = 0; i < s.f * rsc; ++i)
    k[i] = hwioToKrscElement(w.data(), s.f, rsc, i);
  std::vector<float> image = x;
  if (p.explicitPad) {
    image.resize(p.paddedBytes() / sizeof(float));
    for (size_t i = 0; i < image.size(); ++i)
      image[i] = zeroPadElement(x.data(), p.pad, static_cast<int64_t>(i));
  }
  const std::vector<float> got = cudnnForward(p, image.data(), k.data());

  std::vector<float> want(s.n * s.oh * s.ow * s.f);
  const ref::ConvGeometry g{s.n,  s.h,  s.w,  s.c,  s.kh, s.kw, s.f,  s.oh,
                            s.ow, s.sh, s.sw, s.pt, s.pl, s.g,  s.dh, s.dw};
  ref::conv2d(x.data(), w.data(), b.data(), want.data(), g, Activation::None);
  ASSERT_EQ(got.size(), want.size()) << "cuDNN's output dimensions differ from dp's";
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Plans, ::testing::ValuesIn(convGeometries())); // asymmetric both ways

TEST(Plans, PaddedImageAndFilterSizes) {
  const ConvPlan sym = convPlan(convShape(2, 8, 8, 3, 3, 3, 5, 1, 1, 1, 1, 1, 1));
  EXPECT_FALSE(sym.explicitPad);
  EXPECT_EQ(sym.paddedBytes(), 0u);
  EXPECT_EQ(sym.padH, 1);
  EXPECT_EQ(sym.filterBytes(), 5u * 3 * 3 * 3 * 4);
  const ConvPlan asym = convPlan(convShape(2, 8, 8, 3, 2, 2, 5, 1, 1, 0, 0, 1, 1));
  EXPECT_TRUE(asym.explicitPad);
  EXPECT_EQ(asym.padH, 0);
  EXPECT_EQ(asym.inH, 9);
  EXPECT_EQ(asym.paddedBytes(), 2u * 9 * 9 * 3 * 4);
}

TEST(Plans, RefusesTensorsBeyondCudnnsThirtyTwoBitCounts) {
  // 65536 images of 256x256x1: 2^32 elements.
  const ConvPlan big = convPlan(convShape(65536, 256, 256, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1));
  EXPECT_NE(convProblem(big).find("32-bit"), std::string::npos);
}

TEST(Filters, TransposesAreInversePermutations) {
  const int64_t kh = 3, kw = 2, c = 4, f = 5, rsc = kh * kw * c;
  const std::vector<float> w = uniform(f * rsc, 3);
  std::vector<float> k(w.size()), back(w.size());
  for (int64_t i = 0; i < f * rsc; ++i)
    k[i] = hwioToKrscElement(w.data(), f, rsc, i);
  // k[o][r][q][ch] == w[r][q][ch][o].
  for (int64_t o = 0; o < f; ++o)
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t q = 0; q < kw; ++q)
        for (int64_t ch = 0; ch < c; ++ch)
          ASSERT_EQ(k[((o * kh + r) * kw + q) * c + ch], w[((r * kw + q) * c + ch) * f + o]);
  for (int64_t i = 0; i < f * rsc; ++i)
    back[i] = krscToHwioElement(k.data(), f, rsc, i);
  EXPECT_EQ(back, w);
}

TEST(Algorithms, TheFirstDeterministicOneThatFitsWins) {
  const size_t limit = 100;
  // Ranked fastest first: a non-deterministic fast one, an unsupported one, one too big, then
  // a deterministic one that fits.
  const std::vector<AlgoCandidate> ranked = {
      {7, true, 10, false}, {1, false, 0, true}, {2, true, 500, true}, {4, true, 50, true}};
  const AlgoChoice c = chooseAlgorithm(ranked, limit);
  EXPECT_EQ(c.index, 3);
  EXPECT_EQ(c.why, "");
}

TEST(Algorithms, NonDeterministicOnlyWhenNothingElseFits) {
  const std::vector<AlgoCandidate> ranked = {{7, true, 10, false}, {2, true, 500, true}};
  EXPECT_EQ(chooseAlgorithm(ranked, 100).index, 0);
}

TEST(Algorithms, NoneFitsSaysWhy) {
  const AlgoChoice tooBig = chooseAlgorithm({{2, true, size_t(300) << 20, true}}, size_t(256) << 20);
  EXPECT_EQ(tooBig.index, -1);
  EXPECT_NE(tooBig.why.find("256 MiB"), std::string::npos) << tooBig.why;
  EXPECT_NE(tooBig.why.find("300 MiB"), std::string::npos) << tooBig.why;
  const AlgoChoice unsupported = chooseAlgorithm({{2, false, 0, true}}, 100);
  EXPECT_EQ(unsupported.index, -1);
  EXPECT_NE(unsupported.why.find("supports"), std::string::npos) << unsupported.why;
  EXPECT_EQ(chooseAlgorithm({}, 100).index, -1);
}

} // namespace
} // namespace dp::rt::cuda
