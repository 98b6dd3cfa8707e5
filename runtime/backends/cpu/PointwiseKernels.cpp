// The pointwise kernels (DP_POINTWISE_KERNEL and DP_POINTWISE_GRAD_KERNEL of Kernels.def): one
// loop each over the function of runtime/kernels/Pointwise.h, and the factory of every such
// kind generated from the table, so a new pointwise kind needs nothing here.
#include "runtime/backends/cpu/Dnnl.h"
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

/// The oneDNN eltwise algorithm that computes `Fn` with vectorised code, where there is one:
/// libm's erff and expf run element by element (GELU and its gradient were 16% of the vision
/// transformer's f32 step, 23% of its bf16 one). The other functions run the loops above.
template <typename Fn> constexpr dnnl::algorithm dnnlAlgorithm() { return dnnl::algorithm::undef; }
template <> constexpr dnnl::algorithm dnnlAlgorithm<pointwise::Gelu>() {
  return dnnl::algorithm::eltwise_gelu_erf;
}

/// One oneDNN eltwise primitive over n f32 elements, bound to the arena: forward y = f(x), or
/// backward dx = f'(x) dy (ins x, dy).
class EltwiseKernel final : public Kernel {
public:
  EltwiseKernel(const KernelSite &site, int64_t n, dnnl::algorithm algorithm, bool backward) {
    const dnnl::memory::desc d = f32Desc({n}, {1});
    const int threads = n * kPointwiseCost < kParallelMinWork ? 1 : 0;
    ThreadCap cap(threads);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto memory = [&](const TensorView &t) { return dnnl::memory(d, cpuEngine(), t.data); };
    dnnl::eltwise_forward::primitive_desc forward(
        dnnl::eltwise_forward::desc(backward ? dnnl::prop_kind::forward_training
                                             : dnnl::prop_kind::forward_inference,
                                    algorithm, d, 0.0f, 0.0f),
        attr, cpuEngine());
    if (!backward) {
      call_ =
          DnnlCall(forward, dnnl::eltwise_forward(forward),
                   {{DNNL_ARG_SRC, memory(site.input(0))}, {DNNL_ARG_DST, memory(site.output(0))}},
                   site.where(), threads);
      return;
    }
    dnnl::eltwise_backward::primitive_desc pd(
        dnnl::eltwise_backward::desc(algorithm, d, d, 0.0f, 0.0f), attr, cpuEngine(), forward);
    call_ = DnnlCall(pd, dnnl::eltwise_backward(pd),
                     {{DNNL_ARG_SRC, memory(site.input(0))},
                      {DNNL_ARG_DIFF_DST, memory(site.input(1))},
                      {DNNL_ARG_DIFF_SRC, memory(site.output(0))}},
                     site.where(), threads);
  }
  void run(const StepContext &) override { call_.run(); }

private:
  DnnlCall call_;
};

template <typename Fn> std::unique_ptr<Kernel> makePointwise(const KernelSite &site, int64_t n) {
  if constexpr (dnnlAlgorithm<Fn>() != dnnl::algorithm::undef)
    return std::make_unique<EltwiseKernel>(site, n, dnnlAlgorithm<Fn>(), false);
  else
    return std::make_unique<PointwiseKernel<Fn>>(site, n);
}

template <typename Fn>
std::unique_ptr<Kernel> makePointwiseGrad(const KernelSite &site, int64_t n) {
  if constexpr (dnnlAlgorithm<Fn>() != dnnl::algorithm::undef)
    return std::make_unique<EltwiseKernel>(site, n, dnnlAlgorithm<Fn>(), true);
  else
    return std::make_unique<PointwiseGradKernel<Fn>>(site, n);
}

} // namespace

#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_POINTWISE_KERNEL(Enum, Name, Fn)                                                        \
  std::unique_ptr<Kernel> make##Enum(const KernelSite &site, const NoAttrs &, int64_t n) {         \
    return makePointwise<pointwise::Fn>(site, n);                                                  \
  }
#define DP_POINTWISE_GRAD_KERNEL(Enum, Name, Fn)                                                   \
  std::unique_ptr<Kernel> make##Enum(const KernelSite &site, const NoAttrs &, int64_t n) {         \
    return makePointwiseGrad<pointwise::Fn>(site, n);                                              \
  }
#include "runtime/format/Kernels.def"

} // namespace dp::rt::cpu
