// softmax cross-entropy, its gradient, and the count of correct predictions; the mean squared
// error, the binary cross-entropy and their gradients, and the binary accuracy's count
// (runtime/kernels/SquaredError.h, SigmoidXent.h), in two generic kernels. Only the step's
// valid rows count; labels are validated by the data loader, so an out-of-range label is a
// broken precondition that shows up as NaN rather than an out-of-bounds read.
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"
#include "runtime/kernels/SigmoidXent.h"
#include "runtime/kernels/SquaredError.h"
#include "runtime/kernels/ValidRows.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace dp::rt::cpu {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// -log softmax(z)[label] for one row, or NaN for a label outside [0, classes); with label
// smoothing s, -((1 - s) log p[label] + s mean_j log p[j]).
float rowXent(const float *z, int32_t label, int64_t classes, float smoothing) {
  if (label < 0 || label >= classes)
    return kNaN;
  const float m = rowMax(z, classes);
  // (z[label] - m) first: adding m to the log-sum would round it to the precision of m.
  const float logSum = std::log(sumExpShifted(z, classes, m));
  if (smoothing == 0)
    return logSum - (z[label] - m);
  float mean = 0;
  for (int64_t j = 0; j < classes; ++j)
    mean += z[j] - m;
  mean /= static_cast<float>(classes);
  return logSum - ((1 - smoothing) * (z[label] - m) + smoothing * mean);
}

class SoftmaxXentKernel final : public Kernel {
public:
  SoftmaxXentKernel(const KernelSite &site, XentShape shape, float smoothing)
      : logits_(site.input(0).f32()), labels_(site.input(1).i32()), loss_(site.output(0).f32()),
        shape_(shape), smoothing_(smoothing) {}

  void run(const StepContext &ctx) override {
    const int64_t rows = shape_.rows, classes = shape_.classes;
    const ValidRows isValid(ctx, rows);
    const int64_t valid = isValid.count(rows);
    const float *logits = logits_;
    const int32_t *labels = labels_;
    const float s = smoothing_;
    // Blocks of rows fixed by the size alone: the same loss whatever the thread count.
    const int blocks = rows * classes >= kParallelMinWork ? kSumBlocks : 1;
    const double total = orderedSum(blocks, [&](int k, int n) {
      double sum = 0;
      for (int64_t r = rows * k / n; r < rows * (k + 1) / n; ++r)
        if (isValid(r))
          sum += rowXent(logits + r * classes, labels[r], classes, s);
      return sum;
    });
    loss_[0] = valid > 0 ? static_cast<float>(total / valid) : 0.0f;
  }

private:
  const float *logits_;
  const int32_t *labels_;
  float *loss_;
  XentShape shape_;
  float smoothing_;
};

class SoftmaxXentGradKernel final : public Kernel {
public:
  SoftmaxXentGradKernel(const KernelSite &site, XentShape shape, float smoothing)
      : logits_(site.input(0).f32()), labels_(site.input(1).i32()), dloss_(site.input(2).f32()),
        dlogits_(site.output(0).f32()), shape_(shape), smoothing_(smoothing) {}

  void run(const StepContext &ctx) override {
    const int64_t rows = shape_.rows, classes = shape_.classes;
    const ValidRows isValid(ctx, rows);
    const int64_t valid = isValid.count(rows);
    const float *logits = logits_;
    const int32_t *labels = labels_;
    float *dlogits = dlogits_;
    // The loss is a mean over the valid rows, so each row's share of dloss is dloss / valid.
    const float scale = valid > 0 ? dloss_[0] / static_cast<float>(valid) : 0.0f;
    // The smoothed target: (1 - s) onehot + s / classes (s = 0: the same bits as onehot).
    // (A spread of +0 without smoothing: -0 * scale would turn a -0 gradient into +0.)
    const float spread = smoothing_ == 0 ? 0.0f : smoothing_ / static_cast<float>(classes) * scale,
                labelShare = (1 - smoothing_) * scale;
    parallelChunks(
        rows,
        [=](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const float *z = logits + r * classes;
            float *g = dlogits + r * classes;
            if (!isValid(r)) {
              std::fill(g, g + classes, 0.0f);
              continue;
            }
            const int32_t label = labels[r];
            if (label < 0 || label >= classes) {
              std::fill(g, g + classes, kNaN);
              continue;
            }
            // g may be z: expShifted reads each z[j] before writing g[j].
            const float factor = scale / expShifted(z, g, classes, rowMax(z, classes));
            for (int64_t j = 0; j < classes; ++j)
              g[j] = g[j] * factor - spread;
            g[label] -= labelShare;
          }
        },
        rows * classes);
  }

private:
  const float *logits_;
  const int32_t *labels_;
  const float *dloss_;
  float *dlogits_;
  XentShape shape_;
  float smoothing_;
};

class CountCorrectKernel final : public Kernel {
public:
  CountCorrectKernel(const KernelSite &site, XentShape shape)
      : logits_(site.input(0).f32()), labels_(site.input(1).i32()), out_(site.output(0).f32()),
        shape_(shape) {}

  void run(const StepContext &ctx) override {
    const int64_t rows = shape_.rows, classes = shape_.classes;
    const ValidRows isValid(ctx, rows);
    int64_t correct = 0;
    bool badLabel = false;
    for (int64_t r = 0; r < rows; ++r) {
      if (!isValid(r))
        continue;
      const float *z = logits_ + r * classes;
      const int32_t label = labels_[r];
      badLabel |= label < 0 || label >= classes;
      // The first maximum wins ties, as argmax does in numpy and PyTorch.
      int64_t best = 0;
      for (int64_t j = 1; j < classes; ++j)
        if (z[j] > z[best])
          best = j;
      correct += best == label;
    }
    // A stacked batch counts each sample once per block: report the mean over the blocks, so
    // that the count stays a number of samples.
    const int64_t blocks = isValid.blocks(rows);
    out_[0] = badLabel ? kNaN : static_cast<float>(double(correct) / double(blocks));
  }

private:
  const float *logits_;
  const int32_t *labels_;
  float *out_;
  XentShape shape_;
};

/// A sum over the valid rows' elements of [rows, cols] values and targets (a loss, a count):
/// Fns::share's of a number of workers fixed by the size alone (every n-th row each), added in
/// worker order so that any thread count gives the same bits, then Fns::finish's output of the
/// total.
template <typename Fns> class ElementSumKernel final : public Kernel {
public:
  ElementSumKernel(const KernelSite &site, contract::Rows shape)
      : values_(site.input(0).f32()), target_(site.input(1).f32()), out_(site.output(0).f32()),
        shape_(shape) {}

  void run(const StepContext &ctx) override {
    const int64_t rows = shape_.rows, cols = shape_.cols;
    const ValidRows valid(ctx, rows);
    const float *values = values_, *target = target_;
    // Shares fixed by the size alone: the same total whatever the thread count.
    const int blocks = shape_.elements() >= kParallelMinWork ? kSumBlocks : 1;
    const double total = orderedSum(
        blocks, [&](int k, int n) { return Fns::share(values, target, rows, cols, valid, k, n); });
    out_[0] = Fns::finish(total, valid, rows, cols);
  }

private:
  const float *values_, *target_;
  float *out_;
  contract::Rows shape_;
};

/// The gradient of an ElementSumKernel loss: Fns::gradElement of every element.
template <typename Fns> class ElementLossGradKernel final : public Kernel {
public:
  ElementLossGradKernel(const KernelSite &site, contract::Rows shape)
      : values_(site.input(0).f32()), target_(site.input(1).f32()), dloss_(site.input(2).f32()),
        dvalues_(site.output(0).f32()), shape_(shape) {}

  void run(const StepContext &ctx) override {
    const int64_t rows = shape_.rows, cols = shape_.cols;
    const ValidRows valid(ctx, rows);
    const float scale = Fns::gradScale(dloss_[0], valid, rows, cols);
    const float *values = values_, *target = target_;
    float *g = dvalues_;
    parallelChunks(shape_.elements(), [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        Fns::gradElement(values, target, scale, g, cols, valid, i);
    });
  }

private:
  const float *values_, *target_, *dloss_;
  float *dvalues_;
  contract::Rows shape_;
};

} // namespace

std::unique_ptr<Kernel> makeSoftmaxXent(const KernelSite &site, const XentAttrs &attrs,
                                        XentShape geometry) {
  return std::make_unique<SoftmaxXentKernel>(site, geometry,
                                             static_cast<float>(attrs.label_smoothing));
}

std::unique_ptr<Kernel> makeSoftmaxXentGrad(const KernelSite &site, const XentAttrs &attrs,
                                            XentShape geometry) {
  return std::make_unique<SoftmaxXentGradKernel>(site, geometry,
                                                 static_cast<float>(attrs.label_smoothing));
}

std::unique_ptr<Kernel> makeCountCorrect(const KernelSite &site, const NoAttrs &,
                                         XentShape geometry) {
  return std::make_unique<CountCorrectKernel>(site, geometry);
}

std::unique_ptr<Kernel> makeSquaredError(const KernelSite &site, const NoAttrs &,
                                         contract::Rows geometry) {
  return std::make_unique<ElementSumKernel<SquaredErrorFns>>(site, geometry);
}

std::unique_ptr<Kernel> makeSquaredErrorGrad(const KernelSite &site, const NoAttrs &,
                                             contract::Rows geometry) {
  return std::make_unique<ElementLossGradKernel<SquaredErrorFns>>(site, geometry);
}

std::unique_ptr<Kernel> makeSigmoidXent(const KernelSite &site, const NoAttrs &,
                                        contract::Rows geometry) {
  return std::make_unique<ElementSumKernel<SigmoidXentFns>>(site, geometry);
}

std::unique_ptr<Kernel> makeSigmoidXentGrad(const KernelSite &site, const NoAttrs &,
                                            contract::Rows geometry) {
  return std::make_unique<ElementLossGradKernel<SigmoidXentFns>>(site, geometry);
}

std::unique_ptr<Kernel> makeCountBinaryCorrect(const KernelSite &site, const NoAttrs &,
                                               contract::Rows geometry) {
  return std::make_unique<ElementSumKernel<BinaryCorrectFns>>(site, geometry);
}

} // namespace dp::rt::cpu
