// The pointwise kernels (DP_POINTWISE_KERNEL and DP_POINTWISE_GRAD_KERNEL of Kernels.def): one
// loop each over the function of runtime/kernels/Pointwise.h, and the factory of every such
// kind generated from the table, so a new pointwise kind needs nothing here.
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"
#include "runtime/kernels/Pointwise.h"

namespace dp::rt::cpu {
namespace {

/// Elements' worth of work one evaluation of a pointwise function costs (an erf or an exp):
/// the loops fork into threads from a few thousand elements on.
constexpr int64_t kPointwiseCost = 8;

template <typename Fn> class PointwiseKernel final : public Kernel {
public:
  PointwiseKernel(const KernelSite &site, int64_t n)
      : x_(site.input(0).f32()), y_(site.output(0).f32()), n_(n) {}
  void run(const StepContext &) override {
    const float *x = x_;
    float *y = y_;
    parallelChunks(
        n_,
        [=](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            y[i] = Fn::forward(x[i]);
        },
        n_ * kPointwiseCost);
  }

private:
  const float *x_;
  float *y_;
  int64_t n_;
};

template <typename Fn> class PointwiseGradKernel final : public Kernel {
public:
  PointwiseGradKernel(const KernelSite &site, int64_t n)
      : x_(site.input(0).f32()), dy_(site.input(1).f32()), dx_(site.output(0).f32()), n_(n) {}
  void run(const StepContext &) override {
    const float *x = x_, *dy = dy_;
    float *dx = dx_;
    parallelChunks(
        n_,
        [=](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            dx[i] = Fn::backward(x[i], dy[i]);
        },
        n_ * kPointwiseCost);
  }

private:
  const float *x_, *dy_;
  float *dx_;
  int64_t n_;
};

} // namespace

#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_POINTWISE_KERNEL(Enum, Name, Fn)                                                      \
  std::unique_ptr<Kernel> make##Enum(const KernelSite &site, const NoAttrs &, int64_t n) {       \
    return std::make_unique<PointwiseKernel<pointwise::Fn>>(site, n);                            \
  }
#define DP_POINTWISE_GRAD_KERNEL(Enum, Name, Fn)                                                 \
  std::unique_ptr<Kernel> make##Enum(const KernelSite &site, const NoAttrs &, int64_t n) {       \
    return std::make_unique<PointwiseGradKernel<pointwise::Fn>>(site, n);                        \
  }
#include "runtime/format/Kernels.def"

} // namespace dp::rt::cpu
