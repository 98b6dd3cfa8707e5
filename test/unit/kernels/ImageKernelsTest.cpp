// The image kernels (conv2d and its gradients, max_pool2d and its gradient, dropout and its
// gradient): the CPU kernels against the naive references, the backward kernels against
// central finite differences of the reference forward in double, and dropout's masks.
#include "runtime/base/Rng.h"
#include "runtime/kernels/Contract.h"
#include "runtime/kernels/reference/Reference.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <array>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <tuple>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

/// One convolution: image n x h x w x c, kernel kh x kw x (c / groups) x f, stride s, "same"
/// or "valid", `groups` groups, taps d apart; with `pad` >= 0, that many rows and columns of
/// zeros on every side instead (a zero padding folded into the convolution).
struct ConvCase {
  int64_t n, h, w, c, kh, kw, f, s;
  bool same;
  int64_t groups = 1, d = 1, pad = -1;

  int64_t weights() const { return kh * kw * (c / groups) * f; }

  /// The geometry as the compiler computes it (TensorFlow's "same": extra padding after).
  ref::ConvGeometry geometry(int64_t &pb, int64_t &pr) const {
    auto axis = [&](int64_t in, int64_t taps, int64_t &out, int64_t &before, int64_t &after) {
      const int64_t k = (taps - 1) * d + 1; // the dilated window's extent
      if (pad >= 0) {
        out = (in + 2 * pad - k) / s + 1, before = after = pad;
        return;
      }
      if (!same) {
        out = (in - k) / s + 1, before = after = 0;
        return;
      }
      out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>((out - 1) * s + k - in, 0);
      before = total / 2, after = total - before;
    };
    ref::ConvGeometry g{n, h, w, c, kh, kw, f, 0, 0, s, s, 0, 0, groups, d, d};
    axis(h, kh, g.oh, g.pt, pb);
    axis(w, kw, g.ow, g.pl, pr);
    return g;
  }
  /// Whether the kernels may read the stored weights (plain_weights): one group, a dense
  /// window of live taps (runtime/format/ConvGeometry.h).
  bool allowsPlain() const {
    int64_t pb, pr;
    const ref::ConvGeometry r = geometry(pb, pr);
    return allowsPlainWeights(r, pb, pr);
  }
};
void PrintTo(const ConvCase &c, std::ostream *os) {
  *os << c.n << "x" << c.h << "x" << c.w << "x" << c.c << "_k" << c.kh << "x" << c.kw << "x"
      << c.f << "_s" << c.s << (c.same ? "_same" : "_valid");
  if (c.groups != 1)
    *os << "_g" << c.groups;
  if (c.d != 1)
    *os << "_d" << c.d;
  if (c.pad >= 0)
    *os << "_p" << c.pad;
}

const ConvCase kConvCases[] = {
    {2, 6, 6, 1, 3, 3, 4, 1, false},
    {3, 7, 5, 3, 3, 3, 5, 1, true},
    {2, 9, 8, 2, 3, 2, 3, 2, false},
    {2, 8, 7, 4, 3, 3, 2, 2, true},
    {4, 13, 13, 32, 3, 3, 64, 1, false}, // the shape of mnist_small_cnn's second layer
    // Grouped, depthwise (MobileNetV2's: one channel per group, stride 2 on an even image) and
    // dilated.
    {2, 6, 6, 4, 3, 3, 6, 1, true, 2},
    {2, 8, 8, 8, 3, 3, 8, 2, true, 8},
    {3, 9, 7, 3, 3, 2, 4, 1, false, 1, 2},
    {2, 9, 9, 6, 3, 3, 12, 1, true, 3, 2},
    {4, 16, 16, 48, 3, 3, 48, 1, true, 48}, // a MobileNetV2 depthwise layer at 16x16
    // Images smaller than the window, where some taps read only padding (contract::liveTaps):
    // ResNet50V2's 3x3 convolutions of 1x1 images (the centre tap alone: a product) and its
    // strided one of 2x2 images (a 2x2 window of the 3x3 kernel, not one block of it); the
    // middle row of taps over a 1x4 image (an offset window on the plain weights); three rows
    // of a 5x3 kernel over a 2x1 image (whole rows: one block); dilated taps of which only
    // the middle reads the image; depthwise and grouped.
    {2, 1, 1, 8, 3, 3, 8, 1, false, 1, 1, 1},
    {2, 2, 2, 8, 3, 3, 8, 2, false, 1, 1, 1},
    {2, 1, 4, 8, 3, 3, 8, 1, false, 1, 1, 1},
    {2, 2, 1, 4, 5, 3, 6, 1, false, 1, 1, 2},
    {1, 2, 2, 4, 3, 3, 4, 1, false, 1, 2, 2},
    {2, 1, 1, 4, 3, 3, 4, 1, false, 4, 1, 1},
    {2, 2, 3, 6, 3, 3, 4, 2, false, 2, 1, 1},
    // More than 64 output rows (where the compiler's rules pick blocked weights for the
    // forward convolution): the strided 2x2 window, and the middle row of taps.
    {72, 2, 2, 8, 3, 3, 16, 2, false, 1, 1, 1},
    {20, 1, 4, 8, 3, 3, 16, 1, false, 1, 1, 1},
    // A 1x1 convolution: a product of matrices on plain weights (LiveTaps::isProduct).
    {3, 5, 4, 6, 1, 1, 7, 1, false},
    // ResNet50V2's at 32x32, batch 16: a 1x1 convolution and a 3x3 one of the 4x4 stage,
    // where the layouts' algorithms differ (the library's gemm on the stored weights, its jit
    // on blocked ones).
    {16, 4, 4, 128, 1, 1, 512, 1, false},
    {16, 4, 4, 128, 3, 3, 128, 1, true},
};

/// Adds a conv-family kernel with the geometry attributes of `c`, on the stored weights when
/// `plain` (the attribute plain_weights), else on a blocked copy.
KernelSpec &convKernel(PlanBuilder &b, KernelKind kind, const ConvCase &c,
                       std::vector<uint32_t> ins, std::vector<uint32_t> outs, bool plain) {
  int64_t pb, pr;
  const ref::ConvGeometry g = c.geometry(pb, pr);
  KernelSpec &k = b.kernel(StepKind::Train, kind, std::move(ins), std::move(outs))
                      .attrI("stride_h", c.s)
                      .attrI("stride_w", c.s)
                      .attrI("pad_top", g.pt)
                      .attrI("pad_left", g.pl)
                      .attrI("pad_bottom", pb)
                      .attrI("pad_right", pr);
  // Left out at 1, as the compiler does.
  if (c.groups != 1)
    k.attrI("groups", c.groups);
  if (c.d != 1)
    k.attrI("dilation_h", c.d).attrI("dilation_w", c.d);
  if (plain)
    k.attrI("plain_weights", 1);
  return k;
}

/// A case, its activation, whether it adds a bias, and whether the weights are read as stored.
class Conv2dTest : public ::testing::TestWithParam<std::tuple<ConvCase, Activation, bool, bool>> {};

TEST_P(Conv2dTest, ForwardMatchesReference) {
  const auto [c, act, withBias, plain] = GetParam();
  if (plain && !c.allowsPlain())
    GTEST_SKIP() << "the weights of this window are read through a blocked copy only";
  int64_t pb, pr;
  const ref::ConvGeometry g = c.geometry(pb, pr);
  PlanBuilder b(c.n);
  uint32_t x = b.buffer({c.n, c.h, c.w, c.c}), w = b.buffer({c.kh, c.kw, c.c / c.groups, c.f}),
           bias = b.buffer({c.f}), y = b.buffer({c.n, g.oh, g.ow, c.f});
  std::vector<uint32_t> ins = {x, w};
  if (withBias)
    ins.push_back(bias);
  convKernel(b, KernelKind::Conv2d, c, ins, {y}, plain).activation(act);
  auto program = b.load();

  RandomData rd(static_cast<uint32_t>(c.h * 100 + c.c * 10 + c.f));
  auto xs = rd.uniform(c.n * c.h * c.w * c.c), ws = rd.uniform(c.weights(), -0.5f, 0.5f),
       bs = rd.uniform(c.f);
  put(*program, x, xs);
  put(*program, w, ws);
  put(*program, bias, bs);
  program->run(StepKind::Train, stepContext(c.n));

  std::vector<float> want(c.n * g.oh * g.ow * c.f);
  ref::conv2d(xs.data(), ws.data(), withBias ? bs.data() : nullptr, want.data(), g, act);
  EXPECT_TRUE(allNear(get(*program, y), want, 2e-6 * c.kh * c.kw * c.c, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv2dTest,
                         ::testing::Combine(::testing::ValuesIn(kConvCases),
                                            ::testing::Values(Activation::None, Activation::Relu,
                                                              Activation::Sigmoid),
                                            ::testing::Bool(), ::testing::Bool()));

/// A plan running both backward kernels of `c`: dx from (dy, w) and dw from (x, dy).
struct ConvBackward {
  ConvBackward(const ConvCase &c, const ref::ConvGeometry &g, bool plain = false) {
    PlanBuilder b(c.n);
    x = b.buffer({c.n, c.h, c.w, c.c}), w = b.buffer({c.kh, c.kw, c.c / c.groups, c.f}),
    dy = b.buffer({c.n, g.oh, g.ow, c.f}), dx = b.buffer({c.n, c.h, c.w, c.c}),
    dw = b.buffer({c.kh, c.kw, c.c / c.groups, c.f});
    convKernel(b, KernelKind::Conv2dGradInput, c, {dy, w}, {dx}, plain);
    convKernel(b, KernelKind::Conv2dGradFilter, c, {x, dy}, {dw}, plain);
    program = b.load();
  }
  std::unique_ptr<Program> program;
  uint32_t x, w, dy, dx, dw;
};

/// A case, and whether the weights (the filter gradient) are read (written) as stored.
class Conv2dGradTest : public ::testing::TestWithParam<std::tuple<ConvCase, bool>> {};

TEST_P(Conv2dGradTest, BackwardKernelsMatchReference) {
  const auto [c, plain] = GetParam();
  if (plain && !c.allowsPlain())
    GTEST_SKIP() << "the weights of this window are read through a blocked copy only";
  int64_t pb, pr;
  const ref::ConvGeometry g = c.geometry(pb, pr);
  ConvBackward p(c, g, plain);
  auto &[program, x, w, dy, dx, dw] = p;

  RandomData rd(static_cast<uint32_t>(7 + c.h * 3 + c.f));
  auto xs = rd.uniform(c.n * c.h * c.w * c.c), ws = rd.uniform(c.weights()),
       dys = rd.uniform(c.n * g.oh * g.ow * c.f);
  put(*program, x, xs);
  put(*program, w, ws);
  put(*program, dy, dys);
  // Whatever the results' memory held before is overwritten, the gradient of the taps that
  // read only padding too (zero).
  put(*program, dx, rd.uniform(xs.size()));
  put(*program, dw, rd.uniform(ws.size()));
  program->run(StepKind::Train, stepContext(c.n));

  std::vector<float> wantDx(xs.size()), wantDw(ws.size());
  ref::conv2dGradInput(dys.data(), ws.data(), wantDx.data(), g);
  ref::conv2dGradFilter(xs.data(), dys.data(), wantDw.data(), g);
  EXPECT_TRUE(allNear(get(*program, dx), wantDx, 2e-6 * c.kh * c.kw * c.f, 1e-5));
  EXPECT_TRUE(allNear(get(*program, dw), wantDw, 2e-6 * c.n * g.oh * g.ow, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv2dGradTest,
                         ::testing::Combine(::testing::ValuesIn(kConvCases), ::testing::Bool()));

/// Under fixed partitions the filter gradient is a sum over fixed chunks of the images (of
/// the rows where the convolution is a product), one thread each, added in a fixed tree: it
/// matches the reference and has the same bits with 1, 2 and 3 threads. The cases, and 19
/// images of mnist_small_cnn's second layer (8 chunks of 3 or 2 images) and 37 rows of a 1x1
/// convolution (a product, chunks of 5 or 4 rows); or, where the rows are few for the
/// gradient's size, chunks of its filters, each a whole sum.
TEST_P(Conv2dGradTest, FixedPartitionsGiveTheSameBitsWithAnyThreadCount) {
  const auto [c, plain] = GetParam();
  if (plain && !c.allowsPlain())
    GTEST_SKIP() << "the weights of this window are read through a blocked copy only";
  int64_t pb, pr;
  const ref::ConvGeometry g = c.geometry(pb, pr);
  RandomData rd(static_cast<uint32_t>(11 + c.h * 3 + c.f));
  auto xs = rd.uniform(c.n * c.h * c.w * c.c), ws = rd.uniform(c.weights()),
       dys = rd.uniform(c.n * g.oh * g.ow * c.f);
  std::vector<float> wantDw(ws.size());
  ref::conv2dGradFilter(xs.data(), dys.data(), wantDw.data(), g);
  const Reproducible reproducible;
  std::vector<float> first;
  for (int threads : {1, 2, 3}) {
    const ComputeThreads computeThreads(threads);
    ConvBackward p(c, g, plain);
    put(*p.program, p.x, xs);
    put(*p.program, p.w, ws);
    put(*p.program, p.dy, dys);
    put(*p.program, p.dw, rd.uniform(ws.size()));
    p.program->run(StepKind::Train, stepContext(c.n));
    std::vector<float> dw = get(*p.program, p.dw);
    EXPECT_TRUE(allNear(dw, wantDw, 2e-6 * c.n * g.oh * g.ow, 1e-5)) << threads << " threads";
    if (first.empty())
      first = dw;
    else
      EXPECT_EQ(0, std::memcmp(first.data(), dw.data(), dw.size() * sizeof(float)))
          << threads << " threads";
  }
}

const ConvCase kChunkedConvCases[] = {
    {19, 13, 13, 32, 3, 3, 64, 1, false},
    {37, 1, 1, 16, 1, 1, 8, 1, true},
    // Few rows for the gradient's size: cut by the filters, 3 chunks of 16, 16 and 8 (a
    // product, and a convolution).
    {3, 2, 2, 24, 1, 1, 40, 1, true},
    {2, 4, 4, 16, 3, 3, 40, 1, true},
};
INSTANTIATE_TEST_SUITE_P(Chunked, Conv2dGradTest,
                         ::testing::Combine(::testing::ValuesIn(kChunkedConvCases),
                                            ::testing::Bool()));

// ---- live taps ---------------------------------------------------------------------------

/// contract::liveTaps of an h x w image under a kh x kw kernel with the given stride, dilation
/// and paddings (top, bottom, left, right).
contract::LiveTaps taps(int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t s, int64_t d,
                        std::array<int64_t, 4> pad) {
  contract::ConvShape c{};
  c.n = 1, c.h = h, c.w = w, c.c = 1, c.kh = kh, c.kw = kw, c.f = 1;
  c.sh = c.sw = s, c.dh = c.dw = d;
  c.pt = pad[0], c.pb = pad[1], c.pl = pad[2], c.pr = pad[3];
  c.oh = (h + c.pt + c.pb - (kh - 1) * d - 1) / s + 1;
  c.ow = (w + c.pl + c.pr - (kw - 1) * d - 1) / s + 1;
  return contract::liveTaps(c);
}

TEST(LiveTapsTest, TrimsTheTapsThatReadOnlyPaddingAndKeepsTheOutputSize) {
  // A 3x3 "same" convolution of a 1x1 image: the centre, unpadded.
  contract::LiveTaps t = taps(1, 1, 3, 3, 1, 1, {1, 1, 1, 1});
  EXPECT_EQ(t.row, 1);
  EXPECT_EQ(t.col, 1);
  EXPECT_EQ(t.shape.kh, 1);
  EXPECT_EQ(t.shape.kw, 1);
  EXPECT_EQ(t.shape.pt + t.shape.pb + t.shape.pl + t.shape.pr, 0);
  EXPECT_FALSE(t.whole());
  // One-sided: two columns of padding on the left only of a 1-wide image, 3 taps wide: the
  // last column alone.
  t = taps(1, 1, 1, 3, 1, 1, {0, 0, 2, 0});
  EXPECT_EQ(t.col, 2);
  EXPECT_EQ(t.shape.kw, 1);
  EXPECT_EQ(t.shape.pl, 0);
  EXPECT_EQ(t.shape.pr, 0);
  // Stride 2 over a padded 2x2 image: taps 1 and 2, the padding after them kept (the output
  // keeps its size).
  t = taps(2, 2, 3, 3, 2, 1, {1, 1, 1, 1});
  EXPECT_EQ(t.row, 1);
  EXPECT_EQ(t.shape.kh, 2);
  EXPECT_EQ(t.shape.pt, 0);
  EXPECT_EQ(t.shape.pb, 1);
  EXPECT_EQ((2 + t.shape.pt + t.shape.pb - t.shape.kh) / 2 + 1, 1);
  // Every tap reads the image somewhere: the whole kernel.
  EXPECT_TRUE(taps(5, 5, 3, 3, 1, 1, {1, 1, 1, 1}).whole());
  EXPECT_TRUE(taps(6, 6, 3, 3, 1, 1, {0, 0, 0, 0}).whole());
  // No tap reads the image (stride 2 steps over it): the whole kernel, untouched.
  t = taps(1, 1, 1, 1, 2, 1, {1, 1, 1, 1});
  EXPECT_TRUE(t.whole());
  EXPECT_EQ(t.shape.pt, 1);
}

// ---- finite differences ------------------------------------------------------------------

class Conv2dGradFdTest : public ::testing::TestWithParam<ConvCase> {};

// L = sum(r * conv(x, w)): dL/dx and dL/dw are the two backward kernels with dy = r.
TEST_P(Conv2dGradFdTest, MatchesFiniteDifferences) {
  const ConvCase c = GetParam();
  int64_t pb, pr;
  const ref::ConvGeometry g = c.geometry(pb, pr);
  ConvBackward p(c, g);
  auto &[program, x, w, dy, dx, dw] = p;

  RandomData rd(31);
  auto xs = rd.uniform(c.n * c.h * c.w * c.c), ws = rd.uniform(c.weights()),
       rs = rd.uniform(c.n * g.oh * g.ow * c.f);
  put(*program, x, xs);
  put(*program, w, ws);
  put(*program, dy, rs);
  program->run(StepKind::Train, stepContext(c.n));

  const std::vector<double> xd = toDouble(xs), wd = toDouble(ws), rd64 = toDouble(rs);
  auto lossOfX = [&](const std::vector<double> &v) {
    std::vector<double> y(rd64.size());
    ref::conv2d(v.data(), wd.data(), static_cast<const double *>(nullptr), y.data(), g,
                Activation::None);
    return dot(y, rd64);
  };
  auto lossOfW = [&](const std::vector<double> &v) {
    std::vector<double> y(rd64.size());
    ref::conv2d(xd.data(), v.data(), static_cast<const double *>(nullptr), y.data(), g,
                Activation::None);
    return dot(y, rd64);
  };
  EXPECT_TRUE(allNear(get(*program, dx), numericGradient(xd, lossOfX), 1e-5, 1e-4));
  EXPECT_TRUE(allNear(get(*program, dw), numericGradient(wd, lossOfW), 1e-5, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(Small, Conv2dGradFdTest,
                         ::testing::Values(ConvCase{2, 5, 5, 2, 3, 3, 3, 1, false},
                                           ConvCase{2, 6, 5, 2, 3, 3, 2, 2, true},
                                           ConvCase{1, 7, 7, 1, 2, 3, 2, 2, false},
                                           ConvCase{2, 6, 6, 4, 3, 3, 4, 2, true, 4},
                                           ConvCase{1, 7, 6, 4, 3, 2, 6, 1, true, 2, 2},
                                           ConvCase{2, 2, 2, 2, 3, 3, 3, 2, false, 1, 1, 1}));

// ---- max pooling ---------------------------------------------------------------------------

struct PoolCase {
  int64_t n, h, w, c, k, s;
};
void PrintTo(const PoolCase &p, std::ostream *os) {
  *os << p.n << "x" << p.h << "x" << p.w << "x" << p.c << "_k" << p.k << "_s" << p.s;
}

class MaxPoolTest : public ::testing::TestWithParam<PoolCase> {};

// The gradient follows its pool here: it routes by the places the pool saved (the other path,
// finding the maxima again, is MaxPoolGradFdTest's, which runs the gradient alone).
TEST_P(MaxPoolTest, ForwardAndBackwardMatchReference) {
  const PoolCase p = GetParam();
  const int64_t oh = (p.h - p.k) / p.s + 1, ow = (p.w - p.k) / p.s + 1;
  PlanBuilder b(p.n);
  uint32_t x = b.buffer({p.n, p.h, p.w, p.c}), y = b.buffer({p.n, oh, ow, p.c}),
           dy = b.buffer({p.n, oh, ow, p.c}), dx = b.buffer({p.n, p.h, p.w, p.c});
  b.kernel(StepKind::Train, KernelKind::MaxPool2d, {x}, {y})
      .attrI("window_h", p.k)
      .attrI("window_w", p.k)
      .attrI("stride_h", p.s)
      .attrI("stride_w", p.s);
  b.kernel(StepKind::Train, KernelKind::MaxPool2dGrad, {x, dy}, {dx})
      .attrI("window_h", p.k)
      .attrI("window_w", p.k)
      .attrI("stride_h", p.s)
      .attrI("stride_w", p.s);
  auto program = b.load();

  RandomData rd(static_cast<uint32_t>(p.h * 7 + p.c));
  auto xs = rd.uniform(p.n * p.h * p.w * p.c);
  // Ties (as after relu, many zeros) go to the first element of the window in both.
  for (size_t i = 0; i < xs.size(); i += 3)
    xs[i] = 0.0f;
  auto dys = rd.uniform(p.n * oh * ow * p.c);
  put(*program, x, xs);
  put(*program, dy, dys);
  program->run(StepKind::Train, stepContext(p.n));

  std::vector<float> wantY(dys.size()), wantDx(xs.size());
  ref::maxPool2d(xs.data(), wantY.data(), p.n, p.h, p.w, p.c, p.k, p.k, p.s, p.s);
  ref::maxPool2dGrad(xs.data(), dys.data(), wantDx.data(), p.n, p.h, p.w, p.c, p.k, p.k, p.s,
                     p.s);
  EXPECT_TRUE(allNear(get(*program, y), wantY, 0, 0));
  EXPECT_TRUE(allNear(get(*program, dx), wantDx, 1e-6, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Shapes, MaxPoolTest,
                         ::testing::Values(PoolCase{2, 4, 4, 3, 2, 2}, PoolCase{3, 7, 5, 2, 2, 2},
                                           PoolCase{2, 6, 6, 2, 3, 1}, PoolCase{2, 7, 7, 3, 3, 2},
                                           PoolCase{64, 26, 26, 32, 2, 2}));

TEST(MaxPoolGradFdTest, MatchesFiniteDifferences) {
  const int64_t n = 2, h = 5, w = 6, c = 2, k = 2, s = 2, oh = 2, ow = 3;
  PlanBuilder b(n);
  uint32_t x = b.buffer({n, h, w, c}), dy = b.buffer({n, oh, ow, c}), dx = b.buffer({n, h, w, c});
  b.kernel(StepKind::Train, KernelKind::MaxPool2dGrad, {x, dy}, {dx})
      .attrI("window_h", k)
      .attrI("window_w", k)
      .attrI("stride_h", s)
      .attrI("stride_w", s);
  auto program = b.load();
  // Distinct values keep every window's maximum unique, where max is differentiable.
  std::vector<float> xs(n * h * w * c);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<float>((i * 37) % xs.size()) * 0.01f;
  RandomData rd(3);
  auto rs = rd.uniform(n * oh * ow * c);
  put(*program, x, xs);
  put(*program, dy, rs);
  program->run(StepKind::Train, stepContext(n));
  const std::vector<double> rd64 = toDouble(rs);
  auto loss = [&](const std::vector<double> &v) {
    std::vector<double> y(rd64.size());
    ref::maxPool2d(v.data(), y.data(), n, h, w, c, k, k, s, s);
    return dot(y, rd64);
  };
  EXPECT_TRUE(allNear(get(*program, dx), numericGradient(toDouble(xs), loss), 1e-5, 1e-4));
}

// ---- dropout -------------------------------------------------------------------------------

/// A plan with dropout (x -> y, mask) and its gradient (mask, dy -> dx).
struct DropoutPlan {
  std::unique_ptr<Program> program;
  uint32_t x, y, mask, dy, dx;
};
DropoutPlan dropoutPlan(int64_t rows, int64_t cols, double rate, int64_t stream = 0) {
  PlanBuilder b(rows);
  DropoutPlan p;
  p.x = b.buffer({rows, cols}), p.y = b.buffer({rows, cols}), p.mask = b.buffer({rows, cols});
  p.dy = b.buffer({rows, cols}), p.dx = b.buffer({rows, cols});
  b.kernel(StepKind::Train, KernelKind::Dropout, {p.x}, {p.y, p.mask})
      .attrF("rate", rate)
      .attrI("stream", stream);
  b.kernel(StepKind::Train, KernelKind::DropoutGrad, {p.mask, p.dy}, {p.dx});
  p.program = b.load();
  return p;
}

StepContext dropoutContext(int64_t rows, int64_t step, uint64_t seed, int64_t firstRow) {
  StepContext ctx = stepContext(rows, step);
  ctx.seed = seed;
  ctx.firstRow = firstRow;
  return ctx;
}

TEST(DropoutTest, ScalesKeptElementsAndMasksTheGradient) {
  const int64_t rows = 64, cols = 50;
  const double rate = 0.5;
  DropoutPlan p = dropoutPlan(rows, cols, rate);
  RandomData rd(9);
  auto xs = rd.uniform(rows * cols), dys = rd.uniform(rows * cols);
  put(*p.program, p.x, xs);
  put(*p.program, p.dy, dys);
  p.program->run(StepKind::Train, dropoutContext(rows, 1, 7, 0));
  const auto y = get(*p.program, p.y), mask = get(*p.program, p.mask), dx = get(*p.program, p.dx);
  int64_t kept = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_TRUE(mask[i] == 0.0f || mask[i] == 2.0f) << "element " << i << ": " << mask[i];
    kept += mask[i] != 0.0f;
    EXPECT_EQ(y[i], xs[i] * mask[i]);
    // The gradient of y = x * mask with the mask held fixed.
    EXPECT_EQ(dx[i], dys[i] * mask[i]);
  }
  // 3200 Bernoulli(0.5) draws: the kept count is within 5 standard deviations (~141) of 1600.
  EXPECT_NEAR(static_cast<double>(kept), 1600.0, 141.0);
}

TEST(DropoutTest, MasksDependOnSeedStepStreamAndGlobalRowOnly) {
  const int64_t rows = 8, cols = 16;
  DropoutPlan whole = dropoutPlan(rows, cols, 0.5);
  put(*whole.program, whole.x, std::vector<float>(rows * cols, 1.0f));
  whole.program->run(StepKind::Train, dropoutContext(rows, 3, 11, 0));
  const auto wholeMask = get(*whole.program, whole.mask);

  // The second half of the batch, run as a replica whose first row is global row 4, draws
  // the same masks as rows 4..7 of the whole batch.
  DropoutPlan half = dropoutPlan(rows / 2, cols, 0.5);
  put(*half.program, half.x, std::vector<float>(rows / 2 * cols, 1.0f));
  half.program->run(StepKind::Train, dropoutContext(rows / 2, 3, 11, rows / 2));
  const auto halfMask = get(*half.program, half.mask);
  EXPECT_EQ(halfMask, std::vector<float>(wholeMask.begin() + rows / 2 * cols, wholeMask.end()));

  // Another step, seed or stream draws other masks.
  for (auto [step, seed, stream] : {std::tuple{4, 11, 0}, {3, 12, 0}, {3, 11, 1}}) {
    DropoutPlan other = dropoutPlan(rows, cols, 0.5, stream);
    put(*other.program, other.x, std::vector<float>(rows * cols, 1.0f));
    other.program->run(StepKind::Train, dropoutContext(rows, step, seed, 0));
    EXPECT_NE(get(*other.program, other.mask), wholeMask)
        << "step " << step << " seed " << seed << " stream " << stream;
  }
}

TEST(DropoutTest, RateZeroKeepsEverything) {
  DropoutPlan p = dropoutPlan(4, 5, 0.0);
  RandomData rd(2);
  auto xs = rd.uniform(20);
  put(*p.program, p.x, xs);
  p.program->run(StepKind::Train, dropoutContext(4, 1, 1, 0));
  EXPECT_EQ(get(*p.program, p.y), xs);
}

} // namespace
} // namespace dp::rt
