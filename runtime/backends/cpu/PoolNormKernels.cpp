// Zero padding, average pooling and batch normalisation, on NHWC images and channels-last
// tensors (for batch normalisation every axis but the last is a row).
//
// avg_pool2d and its gradient are oneDNN pooling primitives (the windows are valid, so whether
// padding is excluded from the mean does not matter), and batch_norm_infer and
// batch_norm_train oneDNN batch normalisation with given statistics (batch_norm_train first
// turns batch_moments' mean of squares into a variance). zero_pad2d, its gradient, the batch
// statistics, the batch-norm gradients and the moving averages are loops with the channels
// innermost and the rows split across threads. Sums over rows are taken per channel in double,
// in row chunks fixed at load and added in chunk order, so that a kernel's result does not
// depend on the threads it gets at run time.
#include "runtime/backends/cpu/Dnnl.h"
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace dp::rt::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

/// An NHWC image as oneDNN's logical (N, C, H, W) with channels-last strides.
memory::desc nhwcDesc(int64_t n, int64_t h, int64_t w, int64_t c) {
  return f32Desc({n, c, h, w}, {h * w * c, 1, w * c, c});
}

/// The thread cap for a memory-bound oneDNN primitive over `elements` elements (0: none).
int threadsForElements(int64_t elements) { return elements < kParallelMinWork ? 1 : 0; }

/// A kernel that is one oneDNN primitive bound at load.
// ---- zero padding --------------------------------------------------------------------------

class ZeroPadKernel final : public Kernel {
public:
  ZeroPadKernel(const PadShape &p, const float *x, float *y) : p_(p), x_(x), y_(y) {}
  void run(const StepContext &) override {
    const PadShape p = p_;
    const float *x = x_;
    float *y = y_;
    // One padded image row at a time: the padding value, or it around a copied row of x.
    const int64_t row = p.pw * p.c, left = p.pl * p.c, inner = p.w * p.c;
    const float value = p.value;
    parallelChunks(
        p.n * p.ph,
        [=](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            float *out = y + r * row;
            const int64_t i = r % p.ph - p.pt;
            if (i < 0 || i >= p.h) {
              std::fill(out, out + row, value);
              continue;
            }
            std::fill(out, out + left, value);
            std::memcpy(out + left, x + (r / p.ph * p.h + i) * inner, inner * sizeof(float));
            std::fill(out + left + inner, out + row, value);
          }
        },
        p.n * p.ph * row);
  }

private:
  PadShape p_;
  const float *x_;
  float *y_;
};

class ZeroPadGradKernel final : public Kernel {
public:
  ZeroPadGradKernel(const PadShape &p, const float *dy, float *dx) : p_(p), dy_(dy), dx_(dx) {}
  void run(const StepContext &) override {
    const PadShape p = p_;
    const float *dy = dy_;
    float *dx = dx_;
    const int64_t inner = p.w * p.c;
    parallelChunks(
        p.n * p.h,
        [=](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t n = r / p.h, i = r % p.h;
            std::memcpy(dx + r * inner, dy + ((n * p.ph + i + p.pt) * p.pw + p.pl) * p.c,
                        inner * sizeof(float));
          }
        },
        p.n * p.h * inner);
  }

private:
  PadShape p_;
  const float *dy_;
  float *dx_;
};

// ---- average pooling -----------------------------------------------------------------------

memory::desc poolSrc(const PoolShape &p) { return nhwcDesc(p.n, p.h, p.w, p.c); }
memory::desc poolDst(const PoolShape &p) { return nhwcDesc(p.n, p.oh, p.ow, p.c); }
dnnl::pooling_forward::desc avgPoolDesc(const PoolShape &p, dnnl::prop_kind prop) {
  return dnnl::pooling_forward::desc(prop, algorithm::pooling_avg_exclude_padding, poolSrc(p),
                                     poolDst(p), {p.sh, p.sw}, {p.kh, p.kw}, {0, 0}, {0, 0});
}

// ---- batch normalisation -------------------------------------------------------------------

/// Variance of channel `k` from batch statistics (mean, mean of squares) of `c` channels;
/// rounding can make mean of squares - mean^2 slightly negative, which is clamped to 0.
inline double statsVariance(const float *stats, int64_t c, int64_t k) {
  const double mean = stats[k];
  return std::max(double(stats[c + k]) - mean * mean, 0.0);
}

/// A oneDNN batch normalisation of x into y with given per-channel mean and variance, scale
/// gamma and shift beta: the forward of batch_norm_train and batch_norm_infer.
DnnlCall normCall(const KernelSite &site, const TensorView &x, const TensorView &y,
                  const NormShape &s, const float *mean, const float *variance, const float *gamma,
                  const float *beta, double epsilon) {
  // A fused relu (NormShape::relu) is oneDNN's fuse_norm_relu: inference (given statistics)
  // needs no workspace.
  const dnnl::normalization_flags relu =
      s.relu ? dnnl::normalization_flags::fuse_norm_relu : dnnl::normalization_flags::none;
  // Images keep their NHWC geometry; anything else is rows of 1x1 images. Either way the
  // layout is channels-last (acdb), which oneDNN's jit batch normalisation handles; a plain
  // (rows, C) descriptor would get its strided channels-first loops.
  const memory::desc data =
      x.rank() == 4 ? nhwcDesc(x.dim(0), x.dim(1), x.dim(2), s.c) : nhwcDesc(s.rows, 1, 1, s.c);
  const memory::desc channels = f32Desc({s.c}, {1});
  const int threads = threadsForElements(x.numel);
  ThreadCap cap(threads);
  dnnl::batch_normalization_forward::primitive_desc pd(
      dnnl::batch_normalization_forward::desc(
          dnnl::prop_kind::forward_inference, data, static_cast<float>(epsilon),
          dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
              dnnl::normalization_flags::use_shift | relu),
      userScratchpad(), cpuEngine());
  // oneDNN takes non-const handles; it only reads its inputs.
  auto in = [&](const float *p) { return memory(channels, cpuEngine(), const_cast<float *>(p)); };
  return DnnlCall(pd, dnnl::batch_normalization_forward(pd),
                  {{DNNL_ARG_SRC, memory(data, cpuEngine(), x.data)},
                   {DNNL_ARG_DST, memory(data, cpuEngine(), y.data)},
                   {DNNL_ARG_MEAN, in(mean)},
                   {DNNL_ARG_VARIANCE, in(variance)},
                   {DNNL_ARG_SCALE, in(gamma)},
                   {DNNL_ARG_SHIFT, in(beta)}},
                  site.where(), threads);
}

// The row loops below are memory-bound with AVX2 or AVX-512 but not with the SSE2 that the
// build targets (converting to double halves the vector width again): DP_VECTOR_CLONES
// (Parallel.h) compiles them for each, and the CPU picks at load.

/// sum[k] += x[r,k] and squares[k] += x[r,k]^2 over rows [begin, end) of x[.,c], in double.
DP_VECTOR_CLONES void addMoments(const float *x, int64_t begin, int64_t end, int64_t c, double *sum,
                                 double *squares) {
  for (int64_t r = begin; r < end; ++r) {
    const float *xr = x + r * c;
#pragma omp simd
    for (int64_t k = 0; k < c; ++k) {
      const double v = xr[k];
      sum[k] += v;
      squares[k] += v * v;
    }
  }
}

/// centred[k] += dy[r,k] * (x[r,k] - mean[k]) and plain[k] += dy[r,k] over rows [begin, end);
/// the products in float, the sums in double.
DP_VECTOR_CLONES void addGradParams(const float *x, const float *dy, const float *mean,
                                    int64_t begin, int64_t end, int64_t c, double *centred,
                                    double *plain) {
  for (int64_t r = begin; r < end; ++r) {
    const float *xr = x + r * c, *dyr = dy + r * c;
#pragma omp simd
    for (int64_t k = 0; k < c; ++k) {
      const float g = dyr[k];
      centred[k] += double(g * (xr[k] - mean[k]));
      plain[k] += double(g);
    }
  }
}

/// dx[r,k] = a[k] * dy[r,k] + b[k] * (x[r,k] - mean[k]) + d[k] over rows [begin, end).
DP_VECTOR_CLONES void gradInputRows(const float *x, const float *dy, const float *mean,
                                    const float *a, const float *b, const float *d, float *dx,
                                    int64_t begin, int64_t end, int64_t c) {
  for (int64_t r = begin; r < end; ++r) {
    const float *xr = x + r * c, *dyr = dy + r * c;
    float *dxr = dx + r * c;
#pragma omp simd
    for (int64_t k = 0; k < c; ++k)
      dxr[k] = a[k] * dyr[k] + b[k] * (xr[k] - mean[k]) + d[k];
  }
}

/// Per-channel sums over the rows of [rows, c] data, `sums` quantities per channel, in double.
/// The rows are split into chunks fixed at load by the size alone (kSumBlocks when the work is
/// large), each summed into its own accumulators allocated at load, then added in chunk
/// order: the same bits whatever the thread count.
class ChannelSums {
public:
  ChannelSums(int64_t rows, int64_t c, int sums) : rows_(rows), width_(sums * c) {
    chunks_ = rows * c < kParallelMinWork ? 1 : std::min<int64_t>(kSumBlocks, rows);
    // Each chunk's accumulators start a cache line of their own: threads writing every row
    // to a shared line would serialise on it.
    stride_ = (width_ + 7) / 8 * 8;
    storage_.assign(chunks_ * stride_ + 8, 0.0);
    void *base = storage_.data();
    size_t space = storage_.size() * sizeof(double);
    partial_ =
        static_cast<double *>(std::align(64, chunks_ * stride_ * sizeof(double), base, space));
  }

  /// Calls `body(begin, end, acc)` for each chunk of rows [begin, end) with its accumulators
  /// acc[sums * c] zeroed, and returns the totals (valid until the next call).
  template <typename Body> const double *run(Body body) {
    const int64_t chunks = chunks_, rows = rows_, width = width_, stride = stride_;
    double *partial = partial_;
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (int64_t k = 0; k < chunks; ++k) {
      double *acc = partial + k * stride;
      std::fill(acc, acc + width, 0.0);
      body(rows * k / chunks, rows * (k + 1) / chunks, acc);
    }
    for (int64_t k = 1; k < chunks; ++k)
      for (int64_t j = 0; j < width; ++j)
        partial[j] += partial[k * stride + j];
    return partial;
  }

private:
  int64_t rows_, width_, chunks_, stride_;
  std::vector<double> storage_;
  double *partial_; // the first 64-byte boundary in storage_
};

class BatchMomentsKernel final : public Kernel {
public:
  BatchMomentsKernel(const NormShape &s, const float *x, float *stats)
      : s_(s), x_(x), stats_(stats), sums_(s.rows, s.c, 2) {}
  void run(const StepContext &) override {
    const int64_t c = s_.c;
    const float *x = x_;
    const double *total = sums_.run([=](int64_t begin, int64_t end, double *acc) {
      addMoments(x, begin, end, c, acc, acc + c);
    });
    const double inv = 1.0 / double(s_.rows);
    for (int64_t k = 0; k < c; ++k) {
      stats_[k] = static_cast<float>(total[k] * inv);
      stats_[c + k] = static_cast<float>(total[c + k] * inv);
    }
  }

private:
  NormShape s_;
  const float *x_;
  float *stats_;
  ChannelSums sums_;
};

class BatchNormTrainKernel final : public Kernel {
public:
  BatchNormTrainKernel(const KernelSite &site, const NormShape &s, const TensorView &x,
                       const TensorView &stats, const TensorView &gamma, const TensorView &beta,
                       const TensorView &y, double epsilon)
      : stats_(stats.f32()), c_(s.c), variance_(s.c) {
    // The mean is the first row of the statistics; the variance is derived into variance_.
    call_ = normCall(site, x, y, s, stats_, variance_.data(), gamma.f32(), beta.f32(), epsilon);
  }
  void run(const StepContext &) override {
    for (int64_t k = 0; k < c_; ++k)
      variance_[k] = static_cast<float>(statsVariance(stats_, c_, k));
    call_.run();
  }

private:
  const float *stats_;
  int64_t c_;
  std::vector<float> variance_;
  DnnlCall call_;
};

class BatchNormGradParamsKernel final : public Kernel {
public:
  BatchNormGradParamsKernel(const NormShape &s, const float *x, const float *stats, const float *dy,
                            float *dgamma, float *dbeta, double epsilon)
      : s_(s), x_(x), stats_(stats), dy_(dy), dgamma_(dgamma), dbeta_(dbeta), epsilon_(epsilon),
        sums_(s.rows, s.c, 2) {}
  void run(const StepContext &) override {
    const int64_t c = s_.c;
    const float *x = x_, *dy = dy_, *mean = stats_;
    // Sums of dy * (x - mean) and of dy; the first is scaled by 1 / sqrt(var + epsilon) after.
    const double *total = sums_.run([=](int64_t begin, int64_t end, double *acc) {
      addGradParams(x, dy, mean, begin, end, c, acc, acc + c);
    });
    for (int64_t k = 0; k < c; ++k) {
      const double invStd = 1.0 / std::sqrt(statsVariance(stats_, c, k) + epsilon_);
      dgamma_[k] = static_cast<float>(total[k] * invStd);
      dbeta_[k] = static_cast<float>(total[c + k]);
    }
  }

private:
  NormShape s_;
  const float *x_, *stats_, *dy_;
  float *dgamma_, *dbeta_;
  double epsilon_;
  ChannelSums sums_;
};

class BatchNormGradInputKernel final : public Kernel {
public:
  BatchNormGradInputKernel(const NormShape &s, const float *x, const float *stats,
                           const float *gamma, const float *dgamma, const float *dbeta,
                           const float *dy, float *dx, double epsilon)
      : s_(s), x_(x), stats_(stats), gamma_(gamma), dgamma_(dgamma), dbeta_(dbeta), dy_(dy),
        dx_(dx), epsilon_(epsilon), coef_(3 * s.c) {}
  void run(const StepContext &) override {
    // dx = a * dy + b * (x - mean) + d per channel, with a = gamma * invstd,
    // b = -a * invstd * dgamma / rows and d = -a * dbeta / rows.
    const int64_t c = s_.c;
    const double rows = double(s_.rows);
    float *a = coef_.data(), *b = a + c, *d = b + c;
    for (int64_t k = 0; k < c; ++k) {
      const double invStd = 1.0 / std::sqrt(statsVariance(stats_, c, k) + epsilon_);
      const double scale = double(gamma_[k]) * invStd;
      a[k] = static_cast<float>(scale);
      b[k] = static_cast<float>(-scale * invStd * double(dgamma_[k]) / rows);
      d[k] = static_cast<float>(-scale * double(dbeta_[k]) / rows);
    }
    const float *x = x_, *dy = dy_, *mean = stats_;
    float *dx = dx_;
    parallelChunks(
        s_.rows,
        [=](int64_t begin, int64_t end) { gradInputRows(x, dy, mean, a, b, d, dx, begin, end, c); },
        s_.rows * c);
  }

private:
  NormShape s_;
  const float *x_, *stats_, *gamma_, *dgamma_, *dbeta_, *dy_;
  float *dx_;
  double epsilon_;
  std::vector<float> coef_;
};

class MovingStatsKernel final : public Kernel {
public:
  MovingStatsKernel(const float *stats, float *mean, float *variance, int64_t c, double momentum)
      : stats_(stats), mean_(mean), variance_(variance), c_(c), momentum_(momentum) {}
  void run(const StepContext &) override {
    const double mu = momentum_, rest = 1.0 - momentum_;
    for (int64_t k = 0; k < c_; ++k) {
      mean_[k] = static_cast<float>(mu * mean_[k] + rest * stats_[k]);
      variance_[k] = static_cast<float>(mu * variance_[k] + rest * statsVariance(stats_, c_, k));
    }
  }

private:
  const float *stats_;
  float *mean_, *variance_;
  int64_t c_;
  double momentum_;
};

} // namespace

std::unique_ptr<Kernel> makeZeroPad2d(const KernelSite &site, const PadAttrs &attrs, PadShape p) {
  return std::make_unique<ZeroPadKernel>(p, site.input(0).f32(), site.output(0).f32());
}

std::unique_ptr<Kernel> makeZeroPad2dGrad(const KernelSite &site, const PadAttrs &attrs,
                                          PadShape p) {
  return std::make_unique<ZeroPadGradKernel>(p, site.input(0).f32(), site.output(0).f32());
}

std::unique_ptr<Kernel> makeAvgPool2d(const KernelSite &site, const PoolAttrs &attrs, PoolShape p) {
  const TensorView x = site.input(0), y = site.output(0);
  const int threads = threadsForElements(x.numel);
  ThreadCap cap(threads);
  dnnl::pooling_forward::primitive_desc pd(avgPoolDesc(p, dnnl::prop_kind::forward_inference),
                                           userScratchpad(), cpuEngine());
  return std::make_unique<PrimitiveKernel>(
      DnnlCall(pd, dnnl::pooling_forward(pd),
               {{DNNL_ARG_SRC, memory(poolSrc(p), cpuEngine(), x.data)},
                {DNNL_ARG_DST, memory(poolDst(p), cpuEngine(), y.data)}},
               site.where(), threads));
}

std::unique_ptr<Kernel> makeAvgPool2dGrad(const KernelSite &site, const PoolAttrs &attrs,
                                          PoolShape p) {
  const TensorView dy = site.input(0), dx = site.output(0);
  const int threads = threadsForElements(dx.numel);
  ThreadCap cap(threads);
  dnnl::pooling_forward::primitive_desc hint(avgPoolDesc(p, dnnl::prop_kind::forward_training),
                                             cpuEngine());
  dnnl::pooling_backward::primitive_desc pd(
      dnnl::pooling_backward::desc(algorithm::pooling_avg_exclude_padding, poolSrc(p), poolDst(p),
                                   {p.sh, p.sw}, {p.kh, p.kw}, {0, 0}, {0, 0}),
      userScratchpad(), cpuEngine(), hint);
  return std::make_unique<PrimitiveKernel>(
      DnnlCall(pd, dnnl::pooling_backward(pd),
               {{DNNL_ARG_DIFF_DST, memory(poolDst(p), cpuEngine(), dy.data)},
                {DNNL_ARG_DIFF_SRC, memory(poolSrc(p), cpuEngine(), dx.data)}},
               site.where(), threads));
}

std::unique_ptr<Kernel> makeBatchMoments(const KernelSite &site, const NoAttrs &, NormShape s) {
  return std::make_unique<BatchMomentsKernel>(s, site.input(0).f32(), site.output(0).f32());
}

std::unique_ptr<Kernel> makeBatchNormTrain(const KernelSite &site, const NormAttrs &attrs,
                                           NormShape s) {
  return std::make_unique<BatchNormTrainKernel>(site, s, site.input(0), site.input(1),
                                                site.input(2), site.input(3), site.output(0),
                                                s.epsilon);
}

std::unique_ptr<Kernel> makeBatchNormInfer(const KernelSite &site, const NormAttrs &attrs,
                                           NormShape s) {
  const TensorView x = site.input(0), gamma = site.input(1), beta = site.input(2),
                   mean = site.input(3), variance = site.input(4), y = site.output(0);
  return std::make_unique<PrimitiveKernel>(
      normCall(site, x, y, s, mean.f32(), variance.f32(), gamma.f32(), beta.f32(), s.epsilon));
}

std::unique_ptr<Kernel> makeBatchNormGradParams(const KernelSite &site, const EpsilonAttrs &attrs,
                                                NormShape s) {
  return std::make_unique<BatchNormGradParamsKernel>(s, site.input(0).f32(), site.input(1).f32(),
                                                     site.input(2).f32(), site.output(0).f32(),
                                                     site.output(1).f32(), s.epsilon);
}

std::unique_ptr<Kernel> makeBatchNormGradInput(const KernelSite &site, const EpsilonAttrs &attrs,
                                               NormShape s) {
  return std::make_unique<BatchNormGradInputKernel>(
      s, site.input(0).f32(), site.input(1).f32(), site.input(2).f32(), site.input(3).f32(),
      site.input(4).f32(), site.input(5).f32(), site.output(0).f32(), s.epsilon);
}

std::unique_ptr<Kernel> makeMovingStatsUpdate(const KernelSite &site, const MovingStatsAttrs &attrs,
                                              int64_t c) {
  return std::make_unique<MovingStatsKernel>(site.input(0).f32(), site.output(0).f32(),
                                             site.output(1).f32(), c, attrs.momentum);
}

} // namespace dp::rt::cpu
