// Mixed precision on the CPU backend: the bf16 rounding against oneDNN's own, the cast kernel,
// the products (dense, matmul, conv2d and its gradients) with bf16 factors against the f32
// reference (exactly the reference on the rounded factors, within bf16's error of it on the
// unrounded ones), a gradient check by finite differences, and the load-time checks.
#include "runtime/base/Bf16.h"
#include "runtime/kernels/reference/Concat.h"
#include "runtime/kernels/reference/LayerNorm.h"
#include "runtime/kernels/reference/Lstm.h"
#include "runtime/kernels/reference/Reference.h"
#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <limits>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

std::vector<uint16_t> toBf16(const std::vector<float> &v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = rt::toBf16(v[i]);
  return out;
}

std::vector<float> rounded(const std::vector<float> &v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = roundToBf16(v[i]);
  return out;
}

/// Whether oneDNN has bf16 kernels on this CPU (2.6: from AVX-512 on, AMX and the AVX-512 BF16
/// instructions where present); the product tests skip, visibly, where it has none.
bool cpuRunsBf16() {
  using dnnl::memory;
  try {
    const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    const memory::desc a({4, 4}, memory::data_type::bf16, memory::format_tag::ab);
    const memory::desc c({4, 4}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, a, c), engine);
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

#define SKIP_WITHOUT_BF16()                                                                      \
  if (!cpuRunsBf16())                                                                            \
  GTEST_SKIP() << "oneDNN has no bf16 kernels on this CPU (it needs AVX-512)"

float bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ---- rounding ------------------------------------------------------------------------------

TEST(Bf16Test, RoundsToNearestEven) {
  EXPECT_EQ(rt::toBf16(1.0f), 0x3f80);
  EXPECT_EQ(rt::toBf16(-2.0f), 0xc000);
  // Halfway between two bf16 values: to the even one, up or down.
  EXPECT_EQ(rt::toBf16(bits(0x3f808000)), 0x3f80);
  EXPECT_EQ(rt::toBf16(bits(0x3f818000)), 0x3f82);
  // Just past halfway: up.
  EXPECT_EQ(rt::toBf16(bits(0x3f808001)), 0x3f81);
  // The largest finite f32 rounds to infinity; infinities and NaN stay what they are.
  EXPECT_EQ(rt::toBf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(rt::toBf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(std::isnan(fromBf16(rt::toBf16(std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload sits in the low half must not become infinity.
  EXPECT_TRUE(std::isnan(fromBf16(rt::toBf16(bits(0x7f800001)))));
  EXPECT_EQ(fromBf16(0x3f80), 1.0f);
  // Subnormals round too: the largest one up to the smallest normal.
  EXPECT_EQ(rt::toBf16(bits(0x807fffff)), 0x8080);
}

TEST(Bf16Test, SumsOfAnAllreduceRoundEachAddition) {
  // What a bf16 allreduce's MPI operation computes: each sum in f32, rounded to bf16 (ties to
  // even: 1 + 2^-8 is a tie and stays 1, 1 + 3 * 2^-8 is one and goes up to 1 + 2^-6).
  const float a[] = {1.0f, 1.0f, -2.0f, 3.0f};
  const float b[] = {0x1p-8f, 3 * 0x1p-8f, 0.5f, -3.0f};
  uint16_t inout[4], in[4];
  dp::rt::toBf16(a, inout, 4);
  dp::rt::toBf16(b, in, 4);
  addBf16Into(inout, in, 4);
  float sum[4];
  dp::rt::fromBf16(inout, sum, 4);
  EXPECT_EQ(sum[0], 1.0f);
  EXPECT_EQ(sum[1], 1.0f + 0x1p-6f);
  EXPECT_EQ(sum[2], -1.5f);
  EXPECT_EQ(sum[3], 0.0f);
}

TEST(Bf16Test, RoundsAsOneDnnDoes) {
  SKIP_WITHOUT_BF16();
  // Random values and halfway cases, through a oneDNN reorder and through toBf16. Not
  // subnormals: the AVX-512 conversion oneDNN uses reads them as zero (0x807fffff becomes -0,
  // where rounding gives the smallest normal, 0x8080); toBf16 rounds them.
  RandomData rd(11);
  std::vector<float> values = rd.uniform(4096, -1e3f, 1e3f);
  for (uint32_t u = 0x3f808000; u < 0x3f808000 + 64 * 0x10000; u += 0x10000)
    values.push_back(bits(u)); // exact halves
  for (float v : rd.uniform(1024, -1e-30f, 1e-30f))
    values.push_back(v); // small but normal
  using dnnl::memory;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const memory::dims dims{int64_t(values.size())};
  memory from({dims, memory::data_type::f32, memory::format_tag::a}, engine, values.data());
  std::vector<uint16_t> theirs(values.size());
  memory to({dims, memory::data_type::bf16, memory::format_tag::a}, engine, theirs.data());
  dnnl::stream stream(engine);
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
  const std::vector<uint16_t> ours = toBf16(values);
  int differ = 0;
  for (size_t i = 0; i < values.size(); ++i)
    if (ours[i] != theirs[i] && differ++ < 5)
      ADD_FAILURE() << "[" << i << "] " << values[i] << ": ours " << ours[i] << ", oneDNN's "
                    << theirs[i];
  EXPECT_EQ(differ, 0);
}

// ---- the cast kernel -----------------------------------------------------------------------

TEST(CastKernelTest, NarrowsAndWidens) {
  const int64_t n = 100003; // odd, and large enough to take the threaded path
  PlanBuilder b(1);
  uint32_t x = b.buffer({n}), h = b.buffer({n}, DType::BF16), y = b.buffer({n});
  b.kernel(StepKind::Train, KernelKind::Cast, {x}, {h});
  b.kernel(StepKind::Train, KernelKind::Cast, {h}, {y});
  auto program = b.load();
  RandomData rd(3);
  const std::vector<float> xs = rd.uniform(n, -50, 50);
  put(*program, x, xs);
  program->run(StepKind::Train, stepContext(1));
  EXPECT_EQ(get<uint16_t>(*program, h), toBf16(xs));
  EXPECT_EQ(get(*program, y), rounded(xs));
}

// ---- producers writing bf16 (the cast after them, fused by plan-fuse-epilogues) -------------

// Attention's heads put back together, written as bf16: exactly the f32 transpose rounded as
// the cast kernel rounds.
TEST(FusedCastTest, TransposeWritesBf16) {
  const std::vector<int64_t> shape{4, 5, 3, 16}, out{4, 3, 5, 16};
  PlanBuilder b(4);
  const uint32_t x = b.buffer(shape), y = b.buffer(out, DType::BF16);
  b.kernel(StepKind::Train, KernelKind::Transpose, {x}, {y}).attrI("axis_a", 1).attrI("axis_b", 2);
  auto program = b.load();
  RandomData rd(5);
  const std::vector<float> xs = rd.uniform(4 * 5 * 3 * 16, -3, 3);
  put(*program, x, xs);
  program->run(StepKind::Train, stepContext(4));
  std::vector<float> want(xs.size());
  ref::transpose(xs.data(), shape, {0, 2, 1, 3}, want.data());
  EXPECT_EQ(get<uint16_t>(*program, y), toBf16(want));
}

// A layer normalisation written as bf16, over enough rows to split across threads, a row count
// that leaves a partial group of the kernel's four and a width that leaves a partial vector of
// 16, rows offset far from zero and rows whose first value is an outlier: within half a bf16
// unit of the reference in double (plus f32's error), and equal to the f32 kernel's result
// rounded but where that sits within f32 error of a rounding boundary.
TEST(FusedCastTest, LayerNormWritesBf16) {
  const int64_t rows = 303, c = 100;
  PlanBuilder b(rows);
  const uint32_t x = b.buffer({rows, c}), g = b.buffer({c}), beta = b.buffer({c});
  const uint32_t y = b.buffer({rows, c}, DType::BF16), y32 = b.buffer({rows, c});
  b.kernel(StepKind::Train, KernelKind::LayerNorm, {x, g, beta}, {y}).attrF("epsilon", 1e-5);
  b.kernel(StepKind::Train, KernelKind::LayerNorm, {x, g, beta}, {y32}).attrF("epsilon", 1e-5);
  auto program = b.load();
  RandomData rd(6);
  std::vector<float> xs = rd.uniform(rows * c, -2, 3);
  const std::vector<float> gs = rd.uniform(c, 0.5f, 1.5f), bs = rd.uniform(c, -1, 1);
  for (int64_t r = 0; r < rows; r += 7)
    for (int64_t k = 0; k < c; ++k)
      xs[r * c + k] += 1000.0f; // far from zero
  for (int64_t r = 3; r < rows; r += 11)
    xs[r * c] = 500.0f; // an outlier first
  put(*program, x, xs);
  put(*program, g, gs);
  put(*program, beta, bs);
  program->run(StepKind::Train, stepContext(rows));
  std::vector<double> want(xs.size());
  ref::layerNorm(toDouble(xs).data(), toDouble(gs).data(), toDouble(bs).data(), want.data(), rows,
                 c, 1e-5);
  const std::vector<uint16_t> got = get<uint16_t>(*program, y);
  const std::vector<float> f32 = get(*program, y32);
  int64_t differ = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double v = fromBf16(got[i]);
    ASSERT_LE(std::abs(v - want[i]), std::abs(want[i]) / 256 + 2e-4) << "element " << i;
    differ += got[i] != rt::toBf16(f32[i]);
  }
  EXPECT_LT(differ, static_cast<int64_t>(got.size()) / 100);
}

// Activation gradients written as bf16 (attention's score gradients for the bf16 batched
// products): exactly the f32 kernel's result rounded, for every activation.
TEST(FusedCastTest, ActivationGradWritesBf16) {
  const int64_t rows = 300, cols = 49; // the softmax's rows split across threads
  for (Activation act : {Activation::None, Activation::Relu, Activation::Sigmoid, Activation::Tanh,
                         Activation::Softmax}) {
    PlanBuilder b(rows);
    const uint32_t y = b.buffer({rows, cols}), dy = b.buffer({rows, cols});
    const uint32_t dx = b.buffer({rows, cols}, DType::BF16), dx32 = b.buffer({rows, cols});
    b.kernel(StepKind::Train, KernelKind::ActivationGrad, {y, dy}, {dx}).activation(act);
    b.kernel(StepKind::Train, KernelKind::ActivationGrad, {y, dy}, {dx32}).activation(act);
    auto program = b.load();
    RandomData rd(7);
    put(*program, y, rd.uniform(rows * cols, -1, 1));
    put(*program, dy, rd.uniform(rows * cols, -2, 2));
    program->run(StepKind::Train, stepContext(rows));
    EXPECT_EQ(get<uint16_t>(*program, dx), toBf16(get(*program, dx32)))
        << "activation " << static_cast<int>(act);
  }
}

// ---- products ------------------------------------------------------------------------------

/// Error bound of a product of bf16-rounded factors against the exact one: each factor is off
/// by at most 2^-8 of itself, so each term by about 2^-7; `scale` is sum |a| |b| per output.
constexpr double kBf16Relative = 1.0 / 128;

TEST(MixedPrecisionTest, DenseWithBf16Factors) {
  SKIP_WITHOUT_BF16();
  for (auto [n, k, m] : {std::tuple<int64_t, int64_t, int64_t>{5, 7, 3}, {33, 65, 17},
                         {128, 256, 100}}) {
    PlanBuilder b(n);
    uint32_t x = b.buffer({n, k}, DType::BF16), w = b.buffer({k, m}, DType::BF16),
             bias = b.buffer({m}), y = b.buffer({n, m});
    b.kernel(StepKind::Train, KernelKind::Dense, {x, w, bias}, {y}).activation(Activation::Relu);
    auto program = b.load();
    RandomData rd(static_cast<uint32_t>(n + k + m));
    auto xs = rd.uniform(n * k), ws = rd.uniform(k * m, -0.5f, 0.5f), bs = rd.uniform(m);
    put(*program, x, toBf16(xs));
    put(*program, w, toBf16(ws));
    put(*program, bias, bs);
    program->run(StepKind::Train, stepContext(n));
    const std::vector<float> got = get(*program, y);

    // Exactly the f32 product of the rounded factors (it accumulates in f32)...
    std::vector<float> want(n * m), exact(n * m);
    auto xr = rounded(xs), wr = rounded(ws);
    ref::dense(xr.data(), wr.data(), bs.data(), want.data(), n, k, m, Activation::Relu);
    EXPECT_TRUE(allNear(got, want, 2e-6 * k, 1e-5)) << n << "x" << k << "x" << m;
    // ...and within bf16's error of the f32 product of the factors as given: |x|, |w| < 1.
    ref::dense(xs.data(), ws.data(), bs.data(), exact.data(), n, k, m, Activation::Relu);
    EXPECT_TRUE(allNear(got, exact, kBf16Relative * 0.5 * k)) << n << "x" << k << "x" << m;
  }
}

TEST(MixedPrecisionTest, MatMulWithBf16Factors) {
  SKIP_WITHOUT_BF16();
  const int64_t m = 37, k = 129, n = 19;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      PlanBuilder b(1);
      uint32_t a = b.buffer(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k},
                            DType::BF16);
      uint32_t bb = b.buffer(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n},
                             DType::BF16);
      uint32_t c = b.buffer({m, n});
      b.kernel(StepKind::Train, KernelKind::MatMul, {a, bb}, {c})
          .attrI("transpose_a", ta)
          .attrI("transpose_b", tb);
      auto program = b.load();
      RandomData rd(5 + ta + 2 * tb);
      auto as = rd.uniform(m * k), bs = rd.uniform(k * n);
      put(*program, a, toBf16(as));
      put(*program, bb, toBf16(bs));
      program->run(StepKind::Train, stepContext(1));
      std::vector<float> want(m * n), exact(m * n);
      auto ar = rounded(as), br = rounded(bs);
      ref::matmul(ar.data(), br.data(), want.data(), m, k, n, ta, tb);
      ref::matmul(as.data(), bs.data(), exact.data(), m, k, n, ta, tb);
      const std::vector<float> got = get(*program, c);
      EXPECT_TRUE(allNear(got, want, 2e-6 * k, 1e-5)) << "ta " << ta << " tb " << tb;
      EXPECT_TRUE(allNear(got, exact, kBf16Relative * k)) << "ta " << ta << " tb " << tb;
    }
}

// Attention's batched products with bf16 factors (q . k^T scaled, and the weights' product with
// v): the reference on the rounded factors to f32 accuracy, for each transpose.
TEST(MixedPrecisionTest, BatchMatMulWithBf16Factors) {
  SKIP_WITHOUT_BF16();
  const int64_t batch = 6, m = 13, k = 32, n = 11;
  const double alpha = 0.17677669529663687;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      PlanBuilder b(2);
      uint32_t a = b.buffer(
          ta ? std::vector<int64_t>{2, 3, k, m} : std::vector<int64_t>{2, 3, m, k}, DType::BF16);
      uint32_t bb = b.buffer(
          tb ? std::vector<int64_t>{2, 3, n, k} : std::vector<int64_t>{2, 3, k, n}, DType::BF16);
      uint32_t c = b.buffer({2, 3, m, n});
      b.kernel(StepKind::Train, KernelKind::BatchMatMul, {a, bb}, {c})
          .attrI("transpose_a", ta)
          .attrI("transpose_b", tb)
          .attrF("alpha", alpha);
      auto program = b.load();
      RandomData rd(11 + ta + 2 * tb);
      auto as = rd.uniform(batch * m * k), bs = rd.uniform(batch * k * n);
      put(*program, a, toBf16(as));
      put(*program, bb, toBf16(bs));
      program->run(StepKind::Train, stepContext(2));
      std::vector<float> want(batch * m * n);
      auto ar = rounded(as), br = rounded(bs);
      ref::batchMatMul(ar.data(), br.data(), want.data(), batch, m, k, n, ta, tb,
                       static_cast<float>(alpha));
      EXPECT_TRUE(allNear(get(*program, c), want, 2e-6 * k, 1e-5)) << "ta " << ta << " tb " << tb;
    }
}

/// A convolution with stride s in `groups` groups, taps d apart, `pad` rows and columns of
/// zeros on every side.
struct Conv {
  int64_t n, h, w, c, kh, kw, f, s;
  int64_t groups = 1, d = 1, pad = 0;
  int64_t weights() const { return kh * kw * (c / groups) * f; }
  ref::ConvGeometry geometry() const {
    const int64_t eh = (kh - 1) * d + 1, ew = (kw - 1) * d + 1;
    return {n, h, w,   c,   kh,     kw, f, (h + 2 * pad - eh) / s + 1, (w + 2 * pad - ew) / s + 1,
            s, s, pad, pad, groups, d,  d};
  }
  /// Whether the kernels may read the stored weights (plain_weights): one group, a dense
  /// window of live taps.
  bool allowsPlain() const { return allowsPlainWeights(geometry(), pad, pad); }
};

/// Adds a convolution kernel of `kind` with the stride, padding, groups and dilation of `c`,
/// on the stored weights when `plain`.
void convKernel(PlanBuilder &b, KernelKind kind, std::vector<uint32_t> ins,
                std::vector<uint32_t> outs, const Conv &c, bool plain = false) {
  KernelSpec &k = b.kernel(StepKind::Train, kind, std::move(ins), std::move(outs))
                      .attrI("stride_h", c.s)
                      .attrI("stride_w", c.s)
                      .attrI("pad_top", c.pad)
                      .attrI("pad_left", c.pad)
                      .attrI("pad_bottom", c.pad)
                      .attrI("pad_right", c.pad);
  if (c.groups != 1)
    k.attrI("groups", c.groups);
  if (c.d != 1)
    k.attrI("dilation_h", c.d).attrI("dilation_w", c.d);
  if (plain)
    k.attrI("plain_weights", 1);
}

/// A plan of the three convolution kernels on bf16 factors, f32 results.
struct ConvPlan {
  explicit ConvPlan(const Conv &c, bool plain = false) {
    const ref::ConvGeometry g = c.geometry();
    PlanBuilder b(c.n);
    x = b.buffer({c.n, c.h, c.w, c.c}, DType::BF16);
    w = b.buffer({c.kh, c.kw, c.c / c.groups, c.f}, DType::BF16);
    dy = b.buffer({c.n, g.oh, g.ow, c.f}, DType::BF16);
    y = b.buffer({c.n, g.oh, g.ow, c.f});
    dx = b.buffer({c.n, c.h, c.w, c.c});
    dw = b.buffer({c.kh, c.kw, c.c / c.groups, c.f});
    convKernel(b, KernelKind::Conv2d, {x, w}, {y}, c, plain);
    convKernel(b, KernelKind::Conv2dGradInput, {dy, w}, {dx}, c, plain);
    convKernel(b, KernelKind::Conv2dGradFilter, {x, dy}, {dw}, c, plain);
    program = b.load();
  }
  std::unique_ptr<Program> program;
  uint32_t x, w, dy, y, dx, dw;
};

TEST(MixedPrecisionTest, ConvolutionsWithBf16Factors) {
  SKIP_WITHOUT_BF16();
  // Plain, strided, wide; grouped, depthwise (MobileNetV2's), dilated.
  for (const Conv &c :
       {Conv{2, 6, 6, 1, 3, 3, 4, 1}, Conv{2, 9, 8, 3, 3, 2, 5, 2},
        Conv{4, 13, 13, 32, 3, 3, 64, 1}, Conv{2, 8, 8, 4, 3, 3, 6, 1, 2},
        Conv{4, 16, 16, 48, 3, 3, 48, 2, 48}, Conv{2, 9, 9, 3, 3, 3, 4, 1, 1, 2},
        Conv{3, 5, 4, 16, 1, 1, 8, 1},
        // A product of matrices (1x1); taps that read only padding: the
        // centre of a 1x1 image (a product), a strided window, a row of taps
        // (more than 64 rows), a depthwise centre.
        Conv{3, 1, 1, 16, 3, 3, 8, 1, 1, 1, 1}, Conv{2, 2, 2, 8, 3, 3, 8, 2, 1, 1, 1},
        Conv{20, 1, 4, 8, 3, 3, 16, 1, 1, 1, 1}, Conv{2, 1, 1, 8, 3, 3, 8, 1, 8, 1, 1}})
    for (bool plain : {false, true}) {
      if (plain && !c.allowsPlain())
        continue;
      SCOPED_TRACE(plain ? "plain weights" : "blocked weights");
      const ref::ConvGeometry g = c.geometry();
      ConvPlan p(c, plain);
      RandomData rd(static_cast<uint32_t>(c.h * 7 + c.f));
      auto xs = rd.uniform(c.n * c.h * c.w * c.c), ws = rd.uniform(c.weights()),
           dys = rd.uniform(c.n * g.oh * g.ow * c.f);
      put(*p.program, p.x, toBf16(xs));
      put(*p.program, p.w, toBf16(ws));
      put(*p.program, p.dy, toBf16(dys));
      // What the results' memory held is overwritten (the dead taps' gradient with zeros).
      put(*p.program, p.dx, rd.uniform(xs.size()));
      put(*p.program, p.dw, rd.uniform(ws.size()));
      p.program->run(StepKind::Train, stepContext(c.n));

      auto xr = rounded(xs), wr = rounded(ws), dyr = rounded(dys);
      std::vector<float> y(dys.size()), dx(xs.size()), dw(ws.size());
      std::vector<float> ye(dys.size()), dxe(xs.size()), dwe(ws.size());
      ref::conv2d(xr.data(), wr.data(), static_cast<const float *>(nullptr), y.data(), g,
                  Activation::None);
      ref::conv2dGradInput(dyr.data(), wr.data(), dx.data(), g);
      ref::conv2dGradFilter(xr.data(), dyr.data(), dw.data(), g);
      ref::conv2d(xs.data(), ws.data(), static_cast<const float *>(nullptr), ye.data(), g,
                  Activation::None);
      ref::conv2dGradInput(dys.data(), ws.data(), dxe.data(), g);
      ref::conv2dGradFilter(xs.data(), dys.data(), dwe.data(), g);
      const double taps = double(c.kh * c.kw * c.c / c.groups),
                   outTaps = double(c.kh * c.kw * c.f / c.groups), rows = double(c.n * g.oh * g.ow);
      const auto gy = get(*p.program, p.y), gdx = get(*p.program, p.dx),
                 gdw = get(*p.program, p.dw);
      EXPECT_TRUE(allNear(gy, y, 2e-6 * taps, 1e-5)) << "forward, c " << c.c;
      EXPECT_TRUE(allNear(gdx, dx, 2e-6 * outTaps, 1e-5)) << "grad input, c " << c.c;
      EXPECT_TRUE(allNear(gdw, dw, 2e-6 * rows, 1e-5)) << "grad filter, c " << c.c;
      EXPECT_TRUE(allNear(gy, ye, kBf16Relative * taps)) << "forward, c " << c.c;
      EXPECT_TRUE(allNear(gdx, dxe, kBf16Relative * outTaps)) << "grad input, c " << c.c;
      EXPECT_TRUE(allNear(gdw, dwe, kBf16Relative * rows)) << "grad filter, c " << c.c;
    }
}

// L = sum(r * conv(x, w)) in double by central differences, against the bf16 gradient kernels
// fed r (rounded): they must agree within bf16's error.
TEST(MixedPrecisionTest, ConvolutionGradientsMatchFiniteDifferences) {
  SKIP_WITHOUT_BF16();
  const Conv c{2, 5, 6, 2, 3, 3, 3, 1};
  const ref::ConvGeometry g = c.geometry();
  ConvPlan p(c);
  RandomData rd(17);
  auto xs = rounded(rd.uniform(c.n * c.h * c.w * c.c)),
       ws = rounded(rd.uniform(c.kh * c.kw * c.c * c.f)),
       rs = rounded(rd.uniform(c.n * g.oh * g.ow * c.f));
  put(*p.program, p.x, toBf16(xs));
  put(*p.program, p.w, toBf16(ws));
  put(*p.program, p.dy, toBf16(rs));
  p.program->run(StepKind::Train, stepContext(c.n));

  const std::vector<double> r = toDouble(rs);
  auto loss = [&](const std::vector<double> &x, const std::vector<double> &w) {
    std::vector<double> y(r.size());
    ref::conv2d(x.data(), w.data(), static_cast<const double *>(nullptr), y.data(), g,
                Activation::None);
    return dot(r, y);
  };
  const std::vector<double> x = toDouble(xs), w = toDouble(ws);
  const auto numDx = numericGradient(x, [&](const std::vector<double> &v) { return loss(v, w); });
  const auto numDw = numericGradient(w, [&](const std::vector<double> &v) { return loss(x, v); });
  EXPECT_TRUE(allNear(get(*p.program, p.dx), numDx, 1e-4, kBf16Relative));
  EXPECT_TRUE(allNear(get(*p.program, p.dw), numDw, 1e-4, kBf16Relative));
}

// ---- the LSTM -------------------------------------------------------------------------------

/// Largest |got - want| over the largest |want|.
double relativeError(const std::vector<float> &got, const std::vector<double> &want) {
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < got.size(); ++i) {
    err = std::max(err, std::fabs(got[i] - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return err / scale;
}

// oneDNN's bf16 LSTM: x, w, r and y (every h) bf16, b, dy and the gradients f32. Against the
// reference in double on the rounded factors: h is rounded to bf16 at every step, so the
// errors are bf16's, growing with the steps (measured: y 0.0014-0.0027, dx 0.003-0.005).
TEST(MixedPrecisionTest, LstmWithBf16Factors) {
  SKIP_WITHOUT_BF16();
  for (auto [n, t, f, u] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{3, 4, 5, 6},
                            {16, 28, 28, 32}})
    for (bool returnSequences : {false, true}) {
      const ref::LstmShape s{n, t, f, u, returnSequences};
      const std::vector<int64_t> yShape = returnSequences ? std::vector<int64_t>{n, t, u}
                                                          : std::vector<int64_t>{n, u};
      PlanBuilder b(n);
      uint32_t x = b.buffer({n, t, f}, DType::BF16), w = b.buffer({f, 4 * u}, DType::BF16),
               r = b.buffer({u, 4 * u}, DType::BF16), bias = b.buffer({4 * u}),
               y = b.buffer(yShape, DType::BF16), dy = b.buffer(yShape),
               dx = b.buffer({n, t, f}), dw = b.buffer({f, 4 * u}), dr = b.buffer({u, 4 * u}),
               db = b.buffer({4 * u});
      b.kernel(StepKind::Train, KernelKind::Lstm, {x, w, r, bias}, {y})
          .attrI("return_sequences", returnSequences)
          .attrI("training", 1);
      b.kernel(StepKind::Train, KernelKind::LstmGrad, {x, w, r, bias, y, dy}, {dx, dw, dr, db});
      auto program = b.load();
      RandomData rd(static_cast<uint32_t>(t * 10 + u + returnSequences));
      auto xs = rounded(rd.uniform(n * t * f)), ws = rounded(rd.uniform(f * 4 * u, -0.5f, 0.5f)),
           rs = rounded(rd.uniform(u * 4 * u, -0.5f, 0.5f)), bs = rd.uniform(4 * u, -0.5f, 0.5f),
           dys = rd.uniform(s.outputSize());
      put(*program, x, toBf16(xs));
      put(*program, w, toBf16(ws));
      put(*program, r, toBf16(rs));
      put(*program, bias, bs);
      put(*program, dy, dys);
      program->run(StepKind::Train, stepContext(n));

      const auto xd = toDouble(xs), wd = toDouble(ws), rdd = toDouble(rs), bd = toDouble(bs),
                 dyd = toDouble(dys);
      std::vector<double> wantY(s.outputSize()), wantDx(xs.size()), wantDw(ws.size()),
          wantDr(rs.size()), wantDb(bs.size());
      ref::lstm(xd.data(), wd.data(), rdd.data(), bd.data(), wantY.data(), s);
      ref::lstmGrad(xd.data(), wd.data(), rdd.data(), bd.data(), dyd.data(), wantDx.data(),
                    wantDw.data(), wantDr.data(), wantDb.data(), s);
      std::vector<float> gotY;
      for (uint16_t h : get<uint16_t>(*program, y))
        gotY.push_back(fromBf16(h));
      const std::string what = "N" + std::to_string(n) + " T" + std::to_string(t) +
                               (returnSequences ? " sequences" : " last");
      EXPECT_LT(relativeError(gotY, wantY), 0.01) << what;
      EXPECT_LT(relativeError(get(*program, dx), wantDx), 0.03) << what << " dx";
      EXPECT_LT(relativeError(get(*program, dw), wantDw), 0.03) << what << " dw";
      EXPECT_LT(relativeError(get(*program, dr), wantDr), 0.03) << what << " dr";
      EXPECT_LT(relativeError(get(*program, db), wantDb), 0.03) << what << " db";
    }
}

// ---- load-time checks ----------------------------------------------------------------------

TEST(MixedPrecisionTest, RejectsMixedFactorsAndBadCasts) {
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 3}, DType::BF16), w = b.buffer({3, 4}), y = b.buffer({2, 4});
    b.kernel(StepKind::Train, KernelKind::Dense, {x, w}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "input 1 (w) (buffer 1) is f32, expected bf16");
  }
  {
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 3}, DType::BF16), w = b.buffer({3, 4}, DType::BF16),
             y = b.buffer({2, 4}, DType::BF16);
    b.kernel(StepKind::Train, KernelKind::Dense, {x, w}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "output 0 (y) (buffer 2) is bf16, expected f32");
  }
  {
    PlanBuilder b(1);
    uint32_t a = b.buffer({2, 3}, DType::I32), bb = b.buffer({3, 4}, DType::I32),
             c = b.buffer({2, 4});
    b.kernel(StepKind::Train, KernelKind::MatMul, {a, bb}, {c});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "input 0 (a) (buffer 0) is i32, expected f32 or bf16");
  }
  {
    PlanBuilder b(1);
    uint32_t x = b.buffer({4}), y = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::Cast, {x}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "casts f32 to bf16 or bf16 to f32, not f32 (buffer 0) to f32 (buffer 1)");
  }
  {
    PlanBuilder b(1);
    uint32_t x = b.buffer({4}), y = b.buffer({5}, DType::BF16);
    b.kernel(StepKind::Train, KernelKind::Cast, {x}, {y});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "output 0 (y) (buffer 1) has 5 elements, expected 4");
  }
  {
    PlanBuilder b(1);
    uint32_t y = b.buffer({4}, DType::BF16);
    b.kernel(StepKind::Train, KernelKind::Fill, {}, {y}).attrF("value", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "fills f32 or i32, not bf16 (buffer 0)");
  }
  {
    // A convolution's factors: the image bf16, the kernel f32.
    PlanBuilder b(1);
    uint32_t x = b.buffer({1, 4, 4, 1}, DType::BF16), w = b.buffer({3, 3, 1, 2}),
             y = b.buffer({1, 2, 2, 2});
    convKernel(b, KernelKind::Conv2d, {x, w}, {y}, Conv{1, 4, 4, 1, 3, 3, 2, 1});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "input 1 (w) (buffer 1) is f32, expected bf16");
  }
  {
    // A gradient's output must be f32 (dw written as bf16).
    PlanBuilder b(1);
    uint32_t x = b.buffer({1, 6, 6, 8}, DType::BF16), dy = b.buffer({1, 4, 4, 8}, DType::BF16),
             dw = b.buffer({3, 3, 8, 8}, DType::BF16);
    convKernel(b, KernelKind::Conv2dGradFilter, {x, dy}, {dw}, Conv{1, 6, 6, 8, 3, 3, 8, 1});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "output 0 (dw) (buffer 2) is bf16, expected f32");
  }
  {
    // A transpose narrows f32 to bf16, never widens.
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 3}, DType::BF16), y = b.buffer({3, 2});
    b.kernel(StepKind::Train, KernelKind::Transpose, {x}, {y})
        .attrI("axis_a", 0)
        .attrI("axis_b", 1);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(transpose): output 0 (y) (buffer 1) is f32, expected bf16");
  }
  {
    // A layer normalisation writes f32 or bf16.
    PlanBuilder b(2);
    uint32_t x = b.buffer({2, 3}), g = b.buffer({3}), y = b.buffer({2, 3}, DType::I32);
    b.kernel(StepKind::Train, KernelKind::LayerNorm, {x, g, g}, {y}).attrF("epsilon", 1e-3);
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "(layer_norm): output 0 (y) (buffer 2) is i32, expected f32");
  }
}

} // namespace
} // namespace dp::rt
