// In-place optimizer updates of persistent parameters, with Keras 2 semantics: plain SGD,
// momentum (optionally Nesterov) and Adam with its bias correction folded into the step size.
// Each rate is the compiled one times the step's schedule factor (StepContext::lrScale). A
// weight decay first decays the parameter, decoupled from the gradient (decay()). An update
// with a scale (clip_factor's, in device memory the step wrote before) reads grad * scale: the
// factor of 1 of an update without one changes no bit. The clip factor is here too.

#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"

#include "runtime/kernels/Accumulate.h"
#include "runtime/kernels/ClipNorm.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace dp::rt::cpu {
namespace {

/// The gradient's scale of an update: *scale, 1 without one.
float scaleOf(const float *scale) { return scale ? *scale : 1.0f; }

/// Decoupled weight decay at the step's rate: p -= lr * decay * p, before the update (a pass
/// of its own, so that an update without decay keeps its arithmetic, and its bits).
void decay(float *p, int64_t n, float lr, float weightDecay) {
  if (weightDecay == 0)
    return;
  const float rate = lr * weightDecay;
  parallelChunks(n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      p[i] -= rate * p[i];
  });
}

class SgdKernel final : public Kernel {
public:
  SgdKernel(const float *grad, const float *scale, float *param, int64_t n, float lr,
            float weightDecay)
      : grad_(grad), scale_(scale), param_(param), n_(n), lr_(lr), weightDecay_(weightDecay) {}
  void run(const StepContext &ctx) override {
    const float *g = grad_;
    float *p = param_;
    const float lr = static_cast<float>(lr_ * ctx.lrScale), s = scaleOf(scale_);
    decay(p, n_, lr, weightDecay_);
    parallelChunks(n_, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        p[i] -= lr * (g[i] * s);
    });
  }

private:
  const float *grad_, *scale_;
  float *param_;
  int64_t n_;
  float lr_, weightDecay_;
};

class MomentumKernel final : public Kernel {
public:
  MomentumKernel(const float *grad, const float *scale, float *param, float *velocity, int64_t n,
                 float lr, float momentum, bool nesterov, float weightDecay)
      : grad_(grad), scale_(scale), param_(param), velocity_(velocity), n_(n), lr_(lr),
        momentum_(momentum), weightDecay_(weightDecay), nesterov_(nesterov) {}
  void run(const StepContext &ctx) override {
    const float *g = grad_;
    float *p = param_, *v = velocity_;
    const float lr = static_cast<float>(lr_ * ctx.lrScale), mu = momentum_, s = scaleOf(scale_);
    decay(p, n_, lr, weightDecay_);
    if (nesterov_)
      parallelChunks(n_, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const float gi = g[i] * s, vi = mu * v[i] - lr * gi;
          v[i] = vi;
          p[i] += mu * vi - lr * gi;
        }
      });
    else
      parallelChunks(n_, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const float vi = mu * v[i] - lr * (g[i] * s);
          v[i] = vi;
          p[i] += vi;
        }
      });
  }

private:
  const float *grad_, *scale_;
  float *param_, *velocity_;
  int64_t n_;
  float lr_, momentum_, weightDecay_;
  bool nesterov_;
};

class AdamKernel final : public Kernel {
public:
  AdamKernel(const float *grad, const float *scale, float *param, float *m, float *v, int64_t n,
             double lr, double beta1, double beta2, double epsilon, bool torchEpsilon,
             double weightDecay)
      : grad_(grad), scale_(scale), param_(param), m_(m), v_(v), n_(n), lr_(lr), beta1_(beta1),
        beta2_(beta2), epsilon_(epsilon), weightDecay_(weightDecay), torchEpsilon_(torchEpsilon) {}
  void run(const StepContext &ctx) override {
    const double t = static_cast<double>(ctx.step);
    // AdamW's decay takes the scheduled rate, not the bias-corrected step size.
    decay(param_, n_, static_cast<float>(lr_ * ctx.lrScale), static_cast<float>(weightDecay_));
    const float lrT = static_cast<float>(lr_ * ctx.lrScale * std::sqrt(1.0 - std::pow(beta2_, t)) /
                                         (1.0 - std::pow(beta1_, t)));
    // 1 - beta is formed in double: in f32, 1 - 0.999f is off by 1e-5 relative.
    const float b1 = static_cast<float>(beta1_), b2 = static_cast<float>(beta2_);
    const float c1 = static_cast<float>(1.0 - beta1_), c2 = static_cast<float>(1.0 - beta2_);
    // PyTorch's epsilon, added to the corrected sqrt(v_hat), is Keras's times sqrt(1 - b2^t).
    const float eps = static_cast<float>(
        torchEpsilon_ ? epsilon_ * std::sqrt(1.0 - std::pow(beta2_, t)) : epsilon_);
    const float *g = grad_;
    const float s = scaleOf(scale_);
    float *p = param_, *m = m_, *v = v_;
    parallelChunks(n_, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const float gi = g[i] * s;
        const float mi = b1 * m[i] + c1 * gi;
        const float vi = b2 * v[i] + c2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] -= lrT * mi / (std::sqrt(vi) + eps);
      }
    });
  }

private:
  const float *grad_, *scale_;
  float *param_, *m_, *v_;
  int64_t n_;
  double lr_, beta1_, beta2_, epsilon_, weightDecay_;
  bool torchEpsilon_;
};

/// The sum of x[i]^2 over [0, n) in double, in 8 lanes (lane j takes i = j mod 8, so that the
/// compiler vectorizes it) added in lane order: a fixed order.
double blockSquares(const float *x, int64_t n) {
  double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j)
      lanes[j] += double(x[i + j]) * double(x[i + j]);
  for (int j = 0; i + j < n; ++j)
    lanes[j] += double(x[i + j]) * double(x[i + j]);
  double sum = 0;
  for (double lane : lanes)
    sum += lane;
  return sum;
}

/// factor = clipFactor(the sum of squares of every input): each input in blocks of kClipBlock
/// elements summed in double (blockSquares, in parallel), the blocks' sums then added in order.
class ClipFactorKernel final : public Kernel {
public:
  ClipFactorKernel(const KernelSite &site, double maxNorm)
      : factor_(site.output(0).f32()), maxNorm_(maxNorm) {
    for (int i = 0; i < site.numInputs(); ++i) {
      const TensorView x = site.input(i);
      for (int64_t b = 0; b < x.numel; b += kClipBlock)
        blocks_.push_back({x.f32() + b, std::min(kClipBlock, x.numel - b)});
    }
    sums_.resize(blocks_.size());
  }
  void run(const StepContext &) override {
    const Block *blocks = blocks_.data();
    double *sums = sums_.data();
    const int64_t n = static_cast<int64_t>(blocks_.size());
    parallelChunks(
        n,
        [=](int64_t begin, int64_t end) {
          for (int64_t b = begin; b < end; ++b)
            sums[b] = blockSquares(blocks[b].data, blocks[b].size);
        },
        n * kClipBlock);
    double total = 0;
    for (double s : sums_)
      total += s;
    factor_[0] = clipFactor(total, maxNorm_);
  }

private:
  struct Block {
    const float *data;
    int64_t size;
  };
  std::vector<Block> blocks_;
  std::vector<double> sums_;
  float *factor_;
  double maxNorm_;
};

/// A gradient summed over a step's micro-shards (Kernels.def's accumulate, in the tree of
/// runtime/kernels/Accumulate.h): element-wise, so the chunks across threads do not change a
/// bit.
class AccumulateKernel final : public Kernel {
public:
  AccumulateKernel(const float *g, float *sum, float *partials, int64_t n, int64_t count)
      : g_(g), sum_(sum), partials_(partials), n_(n), count_(count) {}
  void run(const StepContext &ctx) override {
    const float *g = g_;
    float *sum = sum_, *partials = partials_;
    const int64_t n = n_, count = count_, m = ctx.microShard;
    if (m == 0) {
      std::memcpy(sum, g, size_t(n) * sizeof(float));
      return;
    }
    parallelChunks(n, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        accumulateElement(g[i], m, count, [&](int l) -> float & {
          return l == 0 ? sum[i] : partials[(l - 1) * n + i];
        });
    });
  }

private:
  const float *g_;
  float *sum_, *partials_;
  int64_t n_, count_;
};

/// An update's optional input 1, the gradient's scale (null without one).
const float *scaleInput(const KernelSite &site) {
  return site.numInputs() > 1 ? site.input(1).f32() : nullptr;
}

} // namespace

std::unique_ptr<Kernel> makeClipFactor(const KernelSite &site, const ClipAttrs &attrs, int64_t) {
  return std::make_unique<ClipFactorKernel>(site, attrs.max_norm);
}

std::unique_ptr<Kernel> makeAccumulate(const KernelSite &site, const AccumulateAttrs &attrs,
                                       int64_t n) {
  return std::make_unique<AccumulateKernel>(site.input(0).f32(), site.output(0).f32(),
                                            site.numOutputs() > 1 ? site.output(1).f32() : nullptr,
                                            n, attrs.count);
}

std::unique_ptr<Kernel> makeSgdUpdate(const KernelSite &site, const SgdAttrs &attrs, int64_t n) {
  return std::make_unique<SgdKernel>(site.input(0).f32(), scaleInput(site), site.output(0).f32(), n,
                                     static_cast<float>(attrs.lr),
                                     static_cast<float>(attrs.weight_decay));
}

std::unique_ptr<Kernel> makeMomentumUpdate(const KernelSite &site, const MomentumAttrs &attrs,
                                           int64_t n) {
  return std::make_unique<MomentumKernel>(
      site.input(0).f32(), scaleInput(site), site.output(0).f32(), site.output(1).f32(), n,
      static_cast<float>(attrs.lr), static_cast<float>(attrs.momentum), attrs.nesterov,
      static_cast<float>(attrs.weight_decay));
}

std::unique_ptr<Kernel> makeAdamUpdate(const KernelSite &site, const AdamAttrs &attrs, int64_t n) {
  return std::make_unique<AdamKernel>(site.input(0).f32(), scaleInput(site), site.output(0).f32(),
                                      site.output(1).f32(), site.output(2).f32(), n, attrs.lr,
                                      attrs.beta1, attrs.beta2, attrs.epsilon, attrs.torch_epsilon,
                                      attrs.weight_decay);
}

} // namespace dp::rt::cpu
