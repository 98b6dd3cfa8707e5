// The CPU layer normalisation kernels on oneDNN's layer_normalization primitives: forward with
// per-row statistics computed inside the primitive, backward (data, scale and shift) from the
// per-row mean and variance that the gradient kernel computes itself (in double, two passes)
// before calling the primitive, so that the forward kernel keeps nothing between the steps.
#include "runtime/backends/cpu/Dnnl.h"
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"

#include "runtime/base/Bf16.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dp::rt::cpu {
namespace {

using dnnl::memory;

/// x[..., C] as rows of C values (the contract's normalisation shape).
using RowShape = NormShape;

dnnl::normalization_flags scaleShift() {
  return dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
}

dnnl::layer_normalization_forward::primitive_desc forwardDesc(const RowShape &s, float epsilon,
                                                              dnnl::prop_kind kind) {
  const memory::desc data = f32Desc({s.rows, s.c}, {s.c, 1});
  const memory::desc stats = f32Desc({s.rows}, {1});
  return dnnl::layer_normalization_forward::primitive_desc(
      dnnl::layer_normalization_forward::desc(kind, data, stats, epsilon, scaleShift()),
      userScratchpad(), cpuEngine());
}

/// The means and reciprocal standard deviations of R rows of c values, in one pass of f32
/// sums of each value's difference to a shift and of their squares. The shift, the mean of the
/// row's first (up to) 16 values, keeps the variance's cancellation small where the mean is far
/// from zero or the first value an outlier. The R rows' sums run interleaved, 16 lanes each, so
/// that their dependency chains overlap: one row at a time waited on its additions (2x the
/// library's f32 kernel; interleaved, it writes bf16 in about the time the library and a cast
/// take).
template <int R>
inline void rowStatistics(const float *x, int64_t c, float epsilon, float *mean, float *rstd) {
  constexpr int L = 16;
  alignas(64) float s1[R][L] = {}, s2[R][L] = {};
  float shift[R];
  const int64_t head = std::min<int64_t>(c, L);
  for (int r = 0; r < R; ++r) {
    float sum = 0;
    for (int64_t k = 0; k < head; ++k)
      sum += x[r * c + k];
    shift[r] = sum / static_cast<float>(head);
  }
  int64_t k = 0;
  for (; k + L <= c; k += L)
    for (int r = 0; r < R; ++r)
#pragma omp simd
      for (int j = 0; j < L; ++j) {
        const float d = x[r * c + k + j] - shift[r];
        s1[r][j] += d;
        s2[r][j] += d * d;
      }
  for (int r = 0; r < R; ++r) {
    for (int64_t t = k; t < c; ++t) {
      const float d = x[r * c + t] - shift[r];
      s1[r][t - k] += d;
      s2[r][t - k] += d * d;
    }
    for (int w = L / 2; w > 0; w /= 2)
      for (int j = 0; j < w; ++j)
        s1[r][j] += s1[r][j + w], s2[r][j] += s2[r][j + w];
    const float md = s1[r][0] / static_cast<float>(c);
    const float variance = s2[r][0] / static_cast<float>(c) - md * md;
    mean[r] = shift[r] + md;
    rstd[r] = 1.0f / std::sqrt((variance > 0 ? variance : 0.0f) + epsilon);
  }
}

/// layer_norm writing bf16: the cast that followed it, fused by the compiler
/// (plan-fuse-epilogues). oneDNN 2.6 normalises f32 into f32 only; this writes each row as it
/// is normalised, rounded once to bf16, and skips the f32 result and the cast's pass over it.
class LayerNormToBf16Kernel final : public Kernel {
public:
  LayerNormToBf16Kernel(const TensorView &x, const TensorView &gamma, const TensorView &beta,
                        const TensorView &y, const RowShape &s)
      : s_(s), x_(x.f32()), gamma_(gamma.f32()), beta_(beta.f32()),
        y_(static_cast<uint16_t *>(y.data)) {}

  void run(const StepContext &) override {
    const int64_t c = s_.c;
    const float *x = x_, *gamma = gamma_, *beta = beta_;
    uint16_t *y = y_;
    const float epsilon = static_cast<float>(s_.epsilon);
    parallelChunks(
        s_.rows,
        [&](int64_t begin, int64_t end) {
          constexpr int R = 4;
          for (int64_t r0 = begin; r0 < end; r0 += R) {
            float mean[R], rstd[R];
            const int64_t n = std::min<int64_t>(R, end - r0);
            if (n == R)
              rowStatistics<R>(x + r0 * c, c, epsilon, mean, rstd);
            else
              for (int64_t i = 0; i < n; ++i)
                rowStatistics<1>(x + (r0 + i) * c, c, epsilon, mean + i, rstd + i);
            for (int64_t i = 0; i < n; ++i) {
              const float *xr = x + (r0 + i) * c;
              uint16_t *yr = y + (r0 + i) * c;
              const float m = mean[i], s = rstd[i];
#pragma omp simd
              for (int64_t k = 0; k < c; ++k)
                yr[k] = toBf16((xr[k] - m) * s * gamma[k] + beta[k]);
            }
          }
        },
        s_.rows * c);
  }

private:
  RowShape s_;
  const float *x_, *gamma_, *beta_;
  uint16_t *y_;
};

class LayerNormGradKernel final : public Kernel {
public:
  LayerNormGradKernel(const KernelSite &site, const RowShape &s, const TensorView &x,
                      const TensorView &gamma, const TensorView &dy, const TensorView &dx,
                      const TensorView &dgamma, const TensorView &dbeta, float epsilon)
      : s_(s), x_(x.f32()), mean_(s.rows), variance_(s.rows), shift_(s.c, 0.0f) {
    if (fixedPartitions()) {
      chunked_ = chunkedCall(site, s, x, gamma, dy, dx, dgamma, dbeta, epsilon);
      return;
    }
    const memory::desc data = f32Desc({s.rows, s.c}, {s.c, 1});
    const memory::desc stats = f32Desc({s.rows}, {1});
    const memory::desc channels = f32Desc({s.c}, {1});
    const int threads = x.numel < kParallelMinWork ? 1 : 0;
    ThreadCap cap(threads);
    auto hint = forwardDesc(s, epsilon, dnnl::prop_kind::forward_training);
    dnnl::layer_normalization_backward::primitive_desc pd(
        dnnl::layer_normalization_backward::desc(dnnl::prop_kind::backward, data, data, stats,
                                                 epsilon, scaleShift()),
        userScratchpad(), cpuEngine(), hint);
    // oneDNN takes non-const handles; it only reads its inputs.
    auto mem = [&](const memory::desc &d, const void *p) {
      return memory(d, cpuEngine(), const_cast<void *>(p));
    };
    call_ = DnnlCall(pd, dnnl::layer_normalization_backward(pd),
                     {{DNNL_ARG_SRC, mem(data, x.data)},
                      {DNNL_ARG_MEAN, mem(stats, mean_.data())},
                      {DNNL_ARG_VARIANCE, mem(stats, variance_.data())},
                      {DNNL_ARG_DIFF_DST, mem(data, dy.data)},
                      {DNNL_ARG_SCALE, mem(channels, gamma.data)},
                      // The primitive asks for the shift although no gradient depends on it.
                      {DNNL_ARG_SHIFT, mem(channels, shift_.data())},
                      {DNNL_ARG_DIFF_SRC, mem(data, dx.data)},
                      {DNNL_ARG_DIFF_SCALE, mem(channels, dgamma.data)},
                      {DNNL_ARG_DIFF_SHIFT, mem(channels, dbeta.data)}},
                     site.where(), threads);
  }

  void run(const StepContext &ctx) override {
    const int64_t c = s_.c;
    const float *x = x_;
    float *mean = mean_.data(), *variance = variance_.data();
    parallelChunks(
        s_.rows,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const float *xr = x + r * c;
            // Vector lanes of doubles: each lane sums exactly what a scalar loop would to
            // within double rounding, far below the f32 results' precision.
            double sum = 0, sq = 0;
#pragma omp simd reduction(+ : sum)
            for (int64_t k = 0; k < c; ++k)
              sum += xr[k];
            const double m = sum / double(c);
#pragma omp simd reduction(+ : sq)
            for (int64_t k = 0; k < c; ++k)
              sq += (xr[k] - m) * (xr[k] - m);
            mean[r] = static_cast<float>(m);
            variance[r] = static_cast<float>(sq / double(c));
          }
        },
        s_.rows * c);
    if (chunked_)
      chunked_->run(ctx);
    else
      call_.run();
  }

private:
  /// Under fixed partitions (dprun --reproducible): the primitive over fixed chunks of the
  /// rows, one thread each, writing the rows' dx in place and partial sums of dgamma and
  /// dbeta, added in the tree (ChunkedSum).
  std::unique_ptr<ChunkedSum> chunkedCall(const KernelSite &site, const RowShape &s,
                                          const TensorView &x, const TensorView &gamma,
                                          const TensorView &dy, const TensorView &dx,
                                          const TensorView &dgamma, const TensorView &dbeta,
                                          float epsilon) {
    const memory::desc channels = f32Desc({s.c}, {1});
    auto mem = [&](const memory::desc &d, const void *p) {
      return memory(d, cpuEngine(), const_cast<void *>(p));
    };
    ThreadCap cap(1);
    std::vector<DnnlCall> chunks;
    for (const auto &[first, rows] : reduceChunks(s.rows)) {
      RowShape part = s;
      part.rows = rows;
      const memory::desc data = f32Desc({rows, s.c}, {s.c, 1});
      const memory::desc stats = f32Desc({rows}, {1});
      auto hint = forwardDesc(part, epsilon, dnnl::prop_kind::forward_training);
      dnnl::layer_normalization_backward::primitive_desc pd(
          dnnl::layer_normalization_backward::desc(dnnl::prop_kind::backward, data, data, stats,
                                                   epsilon, scaleShift()),
          userScratchpad(), cpuEngine(), hint);
      const int64_t at = first * s.c;
      chunks.emplace_back(pd, dnnl::layer_normalization_backward(pd),
                          std::vector<std::pair<int, memory>>{
                              {DNNL_ARG_SRC, mem(data, x.f32() + at)},
                              {DNNL_ARG_MEAN, mem(stats, mean_.data() + first)},
                              {DNNL_ARG_VARIANCE, mem(stats, variance_.data() + first)},
                              {DNNL_ARG_DIFF_DST, mem(data, dy.f32() + at)},
                              {DNNL_ARG_SCALE, mem(channels, gamma.data)},
                              {DNNL_ARG_SHIFT, mem(channels, shift_.data())},
                              {DNNL_ARG_DIFF_SRC, mem(data, dx.f32() + at)},
                              {DNNL_ARG_DIFF_SCALE, mem(channels, nullptr)},
                              {DNNL_ARG_DIFF_SHIFT, mem(channels, nullptr)}},
                          site.where(), 1);
    }
    std::vector<ChunkedSum::Output> outputs;
    for (auto [arg, to] :
         {std::pair{DNNL_ARG_DIFF_SCALE, dgamma.data}, std::pair{DNNL_ARG_DIFF_SHIFT, dbeta.data}})
      outputs.push_back(
          {arg, channels, reorderCall(mem(channels, nullptr), mem(channels, to), site.where(), 1)});
    return std::make_unique<ChunkedSum>(std::move(chunks), std::move(outputs));
  }

  RowShape s_;
  const float *x_;
  std::vector<float> mean_, variance_, shift_;
  DnnlCall call_;
  std::unique_ptr<ChunkedSum> chunked_;
};

} // namespace

std::unique_ptr<Kernel> makeLayerNorm(const KernelSite &site, const EpsilonAttrs &attrs,
                                      RowShape s) {
  const TensorView x = site.input(0), gamma = site.input(1), beta = site.input(2);
  const TensorView y = site.output(0);
  if (y.dtype == DType::BF16)
    return std::make_unique<LayerNormToBf16Kernel>(x, gamma, beta, y, s);
  const float epsilon = static_cast<float>(s.epsilon);
  const int threads = x.numel < kParallelMinWork ? 1 : 0;
  ThreadCap cap(threads);
  auto pd = forwardDesc(s, epsilon, dnnl::prop_kind::forward_inference);
  const memory::desc data = f32Desc({s.rows, s.c}, {s.c, 1});
  const memory::desc channels = f32Desc({s.c}, {1});
  auto mem = [&](const memory::desc &d, const void *p) {
    return memory(d, cpuEngine(), const_cast<void *>(p));
  };
  return std::make_unique<PrimitiveKernel>(DnnlCall(pd, dnnl::layer_normalization_forward(pd),
                                                    {{DNNL_ARG_SRC, mem(data, x.data)},
                                                     {DNNL_ARG_SCALE, mem(channels, gamma.data)},
                                                     {DNNL_ARG_SHIFT, mem(channels, beta.data)},
                                                     {DNNL_ARG_DST, mem(data, y.data)}},
                                                    site.where(), threads));
}

std::unique_ptr<Kernel> makeLayerNormGrad(const KernelSite &site, const EpsilonAttrs &attrs,
                                          RowShape s) {
  const TensorView x = site.input(0), gamma = site.input(1), dy = site.input(2);
  const TensorView dx = site.output(0), dgamma = site.output(1), dbeta = site.output(2);
  return std::make_unique<LayerNormGradKernel>(site, s, x, gamma, dy, dx, dgamma, dbeta,
                                               static_cast<float>(s.epsilon));
}

} // namespace dp::rt::cpu
