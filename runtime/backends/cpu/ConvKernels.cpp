// Image kernels: conv2d and its two gradients on oneDNN convolution primitives (forward with the
// bias and a fused eltwise post-op, backward-data, backward-weights), created and bound to the
// arena at load; max_pool2d and its gradient, and dropout with its gradient, as loops. A
// max_pool2d saves where each maximum was for its gradient, which then routes dy there in one
// vectorised pass instead of finding the maxima again (9.5 to 1.5 ms per mnist_cnn step).
//
// Images are NHWC and kernels HWIO (Keras's layouts). Images are plain strided descriptors for
// oneDNN; forward and backward-weights let it pick the kernels' layout (see anyWeights), while
// backward-data keeps plain HWIO for f32, where gemm beat the jit on the wide layers (blocked
// for bf16). Under mixed precision the tensors a pass reads are bf16, the one it writes f32.
#include "runtime/backends/cpu/Dnnl.h"
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"
#include "runtime/base/Rng.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace dp::rt::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

/// oneDNN's descriptors of one convolution (contract::ConvShape).
struct ConvShape : contract::ConvShape {
  explicit ConvShape(const contract::ConvShape &s) : contract::ConvShape(s) {}
  memory::desc image(int64_t height, int64_t width, int64_t channels, DType t) const {
    return plainDesc({n, channels, height, width},
                     {height * width * channels, 1, width * channels, channels}, t);
  }
  /// The images and the kernel in type `t`: the compute type where the pass reads them, f32
  /// where it writes them (a bf16 convolution accumulates in f32).
  memory::desc src(DType t) const { return image(h, w, c, t); }
  memory::desc dst(DType t) const { return image(oh, ow, f, t); }
  /// oneDNN's weights are (O, I, KH, KW); HWIO storage puts O innermost.
  memory::desc weights(DType t) const {
    return plainDesc({f, c, kh, kw}, {1, f, kw * c * f, c * f}, t);
  }
  memory::dims strides() const { return {sh, sw}; }
  memory::dims padL() const { return {pt, pl}; }
  memory::dims padR() const { return {pb, pr}; }
};

/// Kernels (weights) stay HWIO in the arena; the primitives get the blocked layout oneDNN picks
/// for them (format_tag any), which lets it choose a jit implementation over gemm. The blocked
/// copy lives in a buffer owned by the kernel and is reordered on every call: the optimizer
/// changes the weights each step.
memory::desc anyWeights(const ConvShape &s, DType t) {
  return memory::desc({s.f, s.c, s.kh, s.kw}, dnnlType(t), memory::format_tag::any);
}

/// Output rows (batch x height x width) up to which a f32 forward convolution reads the
/// plain weights (see forwardDesc). Backward-weights stays blocked: its gemm path on plain
/// weights was slower on every ResNet stage.
constexpr int64_t kPlainWeightRows = 64;

dnnl::convolution_forward::primitive_desc forwardDesc(const ConvShape &s, bool bias,
                                                      const dnnl::primitive_attr &attr) {
  const memory::desc bd = f32Desc({s.f}, {1});
  const DType t = s.compute;
  // A convolution with few output rows reads more weight than it computes: reordering its
  // weights into a blocked copy every step costs as much as the convolution itself, so it
  // runs on the plain HWIO weights (oneDNN's gemm). ResNet50V2 at 32x32, batch 16: the stages
  // at 2x2 and 1x1 went from 42 to 29 ms of forward per step.
  const memory::desc wd =
      t == DType::F32 && s.n * s.oh * s.ow <= kPlainWeightRows ? s.weights(t) : anyWeights(s, t);
  auto d =
      bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                             algorithm::convolution_direct, s.src(t), wd, bd,
                                             s.dst(DType::F32), s.strides(), s.padL(), s.padR())
           : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                             algorithm::convolution_direct, s.src(t), wd,
                                             s.dst(DType::F32), s.strides(), s.padL(), s.padR());
  return dnnl::convolution_forward::primitive_desc(d, attr, cpuEngine());
}

/// A reorder between `from` and `to` bound to their memory, run under `threads`.
DnnlCall reorderCall(const memory &from, const memory &to, const std::string &where, int threads) {
  dnnl::reorder::primitive_desc pd(cpuEngine(), from.get_desc(), cpuEngine(), to.get_desc(),
                                   userScratchpad());
  return DnnlCall(pd, dnnl::reorder(pd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, where,
                  threads);
}

class DnnlKernel final : public Kernel {
public:
  DnnlKernel(DnnlCall call, float *y, int64_t rows, int64_t cols, bool softmax,
             std::vector<DnnlCall> before = {}, std::vector<DnnlCall> after = {})
      : call_(std::move(call)), before_(std::move(before)), after_(std::move(after)), y_(y),
        rows_(rows), cols_(cols), softmax_(softmax) {}
  void run(const StepContext &) override {
    for (DnnlCall &c : before_)
      c.run();
    call_.run();
    for (DnnlCall &c : after_)
      c.run();
    if (softmax_)
      softmaxRows(y_, y_, rows_, cols_);
  }

private:
  DnnlCall call_;
  std::vector<DnnlCall> before_, after_;
  float *y_;
  int64_t rows_, cols_;
  bool softmax_;
};

/// Where each window's maximum of a max_pool2d was (its first largest element, as the offset
/// in row-major window order), for the max_pool2d_grad of the same x: the program-wide state
/// under x's buffer id, made by the pool and sized by a gradient that reads it (a pool no
/// gradient reads, as in the eval step, keeps no index). `fresh` says that the pool has run
/// since the gradient last read it; a gradient that finds it stale (run without its pool)
/// finds the maxima again.
struct PoolArgmax {
  PoolShape shape;
  const float *x = nullptr;
  // One per element of y once a gradient wants it, the offset as a float: selected by f32
  // compares, the loops vectorise even on SSE2 (an int32 index took branches there).
  std::vector<float> index;
  bool fresh = false;
};

/// The largest window the index serves (larger ones find their maxima again).
constexpr int64_t kMaxArgmaxWindow = 1 << 16; // exact as floats

bool samePool(const PoolShape &a, const PoolShape &b) {
  return a.n == b.n && a.h == b.h && a.w == b.w && a.c == b.c && a.kh == b.kh && a.kw == b.kw &&
         a.sh == b.sh && a.sw == b.sw && a.oh == b.oh && a.ow == b.ow;
}

class MaxPoolKernel final : public Kernel {
public:
  MaxPoolKernel(const PoolShape &p, const float *x, float *y, std::shared_ptr<PoolArgmax> argmax)
      : p_(p), x_(x), y_(y), argmax_(std::move(argmax)) {}
  void run(const StepContext &) override {
    const PoolShape p = p_;
    const float *x = x_;
    float *y = y_;
    float *index = argmax_ && !argmax_->index.empty() ? argmax_->index.data() : nullptr;
    parallelChunks(
        p.n * p.oh,
        [=](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const int64_t n = row / p.oh, oh = row % p.oh;
            for (int64_t ow = 0; ow < p.ow; ++ow) {
              const int64_t o = ((row * p.ow) + ow) * p.c;
              float *out = y + o;
              const float *first = x + ((n * p.h + oh * p.sh) * p.w + ow * p.sw) * p.c;
              std::copy(first, first + p.c, out);
              if (index) {
                // The first largest: a later element must be strictly larger to win.
                float *at = index + o;
                std::fill(at, at + p.c, 0.0f);
                float *__restrict best = out;
                float *__restrict where = at;
                for (int64_t i = 0; i < p.kh; ++i)
                  for (int64_t j = 0; j < p.kw; ++j) {
                    const float *__restrict in = first + (i * p.w + j) * p.c;
                    const float k = static_cast<float>(i * p.kw + j);
                    for (int64_t c = 0; c < p.c; ++c) {
                      const float v = in[c], m = best[c], w = where[c];
                      // A select of the offset as arithmetic (exact: the offsets are small
                      // integers), which GCC vectorises where it keeps `v > m ? k : w` a branch.
                      const float larger = v > m ? 1.0f : 0.0f;
                      best[c] = v > m ? v : m;
                      where[c] = w + larger * (k - w);
                    }
                  }
                continue;
              }
              for (int64_t i = 0; i < p.kh; ++i)
                for (int64_t j = 0; j < p.kw; ++j) {
                  const float *in = first + (i * p.w + j) * p.c;
                  for (int64_t c = 0; c < p.c; ++c)
                    out[c] = in[c] > out[c] ? in[c] : out[c];
                }
            }
          }
        },
        p.n * p.h * p.w * p.c);
    if (index)
      argmax_->fresh = true;
  }

private:
  PoolShape p_;
  const float *x_;
  float *y_;
  std::shared_ptr<PoolArgmax> argmax_;
};

class MaxPoolGradKernel final : public Kernel {
public:
  MaxPoolGradKernel(const PoolShape &p, const float *x, const float *dy, float *dx,
                    std::shared_ptr<PoolArgmax> argmax)
      : p_(p), x_(x), dy_(dy), dx_(dx), argmax_(std::move(argmax)) {}
  void run(const StepContext &) override {
    // The pool's index when it ran since the last gradient, else the maxima found again.
    const float *index = nullptr;
    if (argmax_ && argmax_->fresh) {
      argmax_->fresh = false;
      index = argmax_->index.data();
    }
    const int64_t image = p_.h * p_.w * p_.c;
    // Per image: windows of one image may overlap each other, never another image's.
    parallelChunks(
        p_.n,
        [=](int64_t begin, int64_t end) {
          std::fill(dx_ + begin * image, dx_ + end * image, 0.0f);
          if (index)
            routeByIndex(index, begin, end);
          else
            routeByMaxima(begin, end);
        },
        p_.n * image);
  }

private:
  /// dy of images [begin, end) to where the pool found each maximum: per window position,
  /// every channel whose maximum was there (branch-free, so that it vectorises).
  void routeByIndex(const float *index, int64_t begin, int64_t end) const {
    const PoolShape p = p_;
    for (int64_t n = begin; n < end; ++n)
      for (int64_t oh = 0; oh < p.oh; ++oh)
        for (int64_t ow = 0; ow < p.ow; ++ow) {
          const int64_t o = ((n * p.oh + oh) * p.ow + ow) * p.c;
          const float *g = dy_ + o;
          const float *at = index + o;
          float *first = dx_ + ((n * p.h + oh * p.sh) * p.w + ow * p.sw) * p.c;
          for (int64_t i = 0; i < p.kh; ++i)
            for (int64_t j = 0; j < p.kw; ++j) {
              float *__restrict to = first + (i * p.w + j) * p.c;
              const float *__restrict from = at;
              const float *__restrict grad = g;
              const float k = static_cast<float>(i * p.kw + j);
              for (int64_t c = 0; c < p.c; ++c) {
                const float gv = grad[c]; // loaded unconditionally: no branch
                to[c] += from[c] == k ? gv : 0.0f;
              }
            }
        }
  }

  /// Without the pool's index: each window's maximum of images [begin, end) found again from
  /// x. Channels in blocks, innermost and contiguous: the window's maximum first, then its
  /// first occurrence, in row-major window order, takes the gradient.
  void routeByMaxima(int64_t begin, int64_t end) const {
    const PoolShape p = p_;
    const float *x = x_, *dy = dy_;
    float *dx = dx_;
    constexpr int64_t kBlock = 64;
    float best[kBlock];
    bool routed[kBlock];
    for (int64_t n = begin; n < end; ++n)
      for (int64_t oh = 0; oh < p.oh; ++oh)
        for (int64_t ow = 0; ow < p.ow; ++ow) {
          const float *g = dy + ((n * p.oh + oh) * p.ow + ow) * p.c;
          for (int64_t c0 = 0; c0 < p.c; c0 += kBlock) {
            const int64_t cb = std::min(kBlock, p.c - c0);
            const int64_t first = ((n * p.h + oh * p.sh) * p.w + ow * p.sw) * p.c + c0;
            for (int64_t c = 0; c < cb; ++c)
              best[c] = x[first + c], routed[c] = false;
            for (int64_t i = 0; i < p.kh; ++i)
              for (int64_t j = 0; j < p.kw; ++j) {
                const float *in = x + first + (i * p.w + j) * p.c;
                for (int64_t c = 0; c < cb; ++c)
                  best[c] = in[c] > best[c] ? in[c] : best[c];
              }
            for (int64_t i = 0; i < p.kh; ++i)
              for (int64_t j = 0; j < p.kw; ++j) {
                const int64_t at = first + (i * p.w + j) * p.c;
                for (int64_t c = 0; c < cb; ++c)
                  if (!routed[c] && x[at + c] == best[c]) {
                    dx[at + c] += g[c0 + c];
                    routed[c] = true;
                  }
              }
          }
        }
  }

  PoolShape p_;
  const float *x_, *dy_;
  float *dx_;
  std::shared_ptr<PoolArgmax> argmax_;
};

class DropoutKernel final : public Kernel {
public:
  DropoutKernel(const TensorView &x, const TensorView &y, const TensorView &mask, Rows shape,
                double rate, int64_t stream)
      : x_(x.f32()), y_(y.f32()), mask_(mask.f32()), rows_(shape.rows), cols_(shape.cols),
        rate_(rate), stream_(stream) {}
  void run(const StepContext &ctx) override {
    // Rows across threads: a row's mask depends on its global row only, not on who draws it.
    const float *xs = x_;
    float *ys = y_, *masks = mask_;
    const int64_t cols = cols_, stream = stream_;
    const double rate = rate_;
    const uint64_t seed = ctx.seed;
    const int64_t step = ctx.step, firstRow = ctx.firstRow;
    parallelChunks(
        rows_,
        [=](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            float *mask = masks + r * cols;
            dropoutMaskRow(mask, cols, rate, seed, step, stream, firstRow + r);
            const float *x = xs + r * cols;
            float *y = ys + r * cols;
            for (int64_t i = 0; i < cols; ++i)
              y[i] = x[i] * mask[i];
          }
        },
        rows_ * cols_ * 8); // a draw costs several elementwise operations
  }

private:
  const float *x_;
  float *y_, *mask_;
  int64_t rows_, cols_;
  double rate_;
  int64_t stream_;
};

class DropoutGradKernel final : public Kernel {
public:
  DropoutGradKernel(const float *mask, const float *dy, float *dx, int64_t n)
      : mask_(mask), dy_(dy), dx_(dx), n_(n) {}
  void run(const StepContext &) override {
    const float *mask = mask_, *dy = dy_;
    float *dx = dx_;
    parallelChunks(n_, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        dx[i] = dy[i] * mask[i];
    });
  }

private:
  const float *mask_, *dy_;
  float *dx_;
  int64_t n_;
};

} // namespace

std::unique_ptr<Kernel> makeConv2d(const KernelSite &site, const Conv2dAttrs &attrs,
                                   contract::ConvShape geometry) {
  const TensorView x = site.input(0), w = site.input(1), y = site.output(0);
  const ConvShape s(geometry);
  const bool hasBias = s.bias;
  const Activation act = attrs.activation;
  dnnl::primitive_attr attr = userScratchpad(act);
  const int threads = threadsFor(s.macs());
  ThreadCap cap(threads);
  auto pd = forwardDesc(s, hasBias, attr);
  const memory userW(s.weights(s.compute), cpuEngine(), w.data);
  std::vector<DnnlCall> before;
  memory primW = userW;
  if (pd.weights_desc() != userW.get_desc()) {
    primW = memory(pd.weights_desc(), cpuEngine());
    before.push_back(reorderCall(userW, primW, site.where(), threads));
  }
  std::vector<std::pair<int, memory>> args = {
      {DNNL_ARG_SRC, memory(s.src(s.compute), cpuEngine(), x.data)},
      {DNNL_ARG_WEIGHTS, primW},
      {DNNL_ARG_DST, memory(s.dst(DType::F32), cpuEngine(), y.data)}};
  if (hasBias) {
    args.emplace_back(DNNL_ARG_BIAS, memory(f32Desc({s.f}, {1}), cpuEngine(), site.input(2).data));
  }
  DnnlCall call(pd, dnnl::convolution_forward(pd), std::move(args), site.where(), threads);
  return std::make_unique<DnnlKernel>(std::move(call), y.f32(), y.numel / s.f, s.f,
                                      act == Activation::Softmax, std::move(before));
}

std::unique_ptr<Kernel> makeConv2dGradInput(const KernelSite &site, const ConvAttrs &attrs,
                                            contract::ConvShape geometry) {
  const TensorView dy = site.input(0), w = site.input(1), dx = site.output(0);
  const ConvShape s(geometry);
  const int threads = threadsFor(s.macs());
  ThreadCap cap(threads);
  // dy and w in the compute type, dx f32. bf16 lets oneDNN pick the kernel's layout: its gemm
  // path on plain bf16 weights ran 2.7x slower than the jit on blocked ones (mnist_cnn's
  // second convolution, 7.6 against 2.8 ms). f32 keeps plain HWIO, where gemm won when
  // measured on an AMX Xeon (on an AVX-512 EPYC the jit is about 10% faster per step).
  const DType t = s.compute;
  const bool blocked = t == DType::BF16;
  const memory::desc wd = blocked ? anyWeights(s, t) : s.weights(t);
  dnnl::convolution_forward::primitive_desc hint(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                      algorithm::convolution_direct, s.src(t), wd,
                                      s.dst(DType::F32), s.strides(), s.padL(), s.padR()),
      cpuEngine());
  dnnl::convolution_backward_data::primitive_desc pd(
      dnnl::convolution_backward_data::desc(algorithm::convolution_direct, s.src(DType::F32), wd,
                                            s.dst(t), s.strides(), s.padL(), s.padR()),
      userScratchpad(), cpuEngine(), hint);
  const memory userW(s.weights(t), cpuEngine(), w.data);
  std::vector<DnnlCall> before;
  memory primW = userW;
  if (pd.weights_desc() != userW.get_desc()) {
    primW = memory(pd.weights_desc(), cpuEngine());
    before.push_back(reorderCall(userW, primW, site.where(), threads));
  }
  DnnlCall call(pd, dnnl::convolution_backward_data(pd),
                {{DNNL_ARG_DIFF_DST, memory(s.dst(t), cpuEngine(), dy.data)},
                 {DNNL_ARG_WEIGHTS, primW},
                 {DNNL_ARG_DIFF_SRC, memory(s.src(DType::F32), cpuEngine(), dx.data)}},
                site.where(), threads);
  return std::make_unique<DnnlKernel>(std::move(call), nullptr, 0, 0, false, std::move(before));
}

std::unique_ptr<Kernel> makeConv2dGradFilter(const KernelSite &site, const ConvAttrs &attrs,
                                             contract::ConvShape geometry) {
  const TensorView x = site.input(0), dy = site.input(1), dw = site.output(0);
  const ConvShape s(geometry);
  const int threads = threadsFor(s.macs());
  ThreadCap cap(threads);
  // x and dy in the compute type, dw f32.
  const DType t = s.compute;
  auto hint = forwardDesc(s, false, dnnl::primitive_attr());
  dnnl::convolution_backward_weights::primitive_desc pd(
      dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, s.src(t),
                                               anyWeights(s, DType::F32), s.dst(t), s.strides(),
                                               s.padL(), s.padR()),
      userScratchpad(), cpuEngine(), hint);
  const memory userDw(s.weights(DType::F32), cpuEngine(), dw.data);
  std::vector<DnnlCall> after;
  memory primDw = userDw;
  if (pd.diff_weights_desc() != userDw.get_desc()) {
    primDw = memory(pd.diff_weights_desc(), cpuEngine());
    after.push_back(reorderCall(primDw, userDw, site.where(), threads));
  }
  DnnlCall call(pd, dnnl::convolution_backward_weights(pd),
                {{DNNL_ARG_SRC, memory(s.src(t), cpuEngine(), x.data)},
                 {DNNL_ARG_DIFF_DST, memory(s.dst(t), cpuEngine(), dy.data)},
                 {DNNL_ARG_DIFF_WEIGHTS, primDw}},
                site.where(), threads);
  return std::make_unique<DnnlKernel>(std::move(call), nullptr, 0, 0, false,
                                      std::vector<DnnlCall>{}, std::move(after));
}

std::unique_ptr<Kernel> makeMaxPool2d(const KernelSite &site, const PoolAttrs &attrs, PoolShape p) {
  const TensorView x = site.input(0);
  // The pool leaves its maxima's places for a gradient of the same x, which sizes the index
  // when it is built (the state lives under x's id; no other kernel keeps state under a rank-4
  // buffer). A pool that no gradient reads computes no index.
  std::shared_ptr<PoolArgmax> argmax;
  if (site.hasSharedState() && p.kh * p.kw <= kMaxArgmaxWindow) {
    std::shared_ptr<void> &slot = site.sharedState(x.id);
    if (!slot) {
      auto made = std::make_shared<PoolArgmax>();
      made->shape = p, made->x = x.f32();
      slot = made;
    }
    auto found = std::static_pointer_cast<PoolArgmax>(slot);
    if (samePool(found->shape, p) && found->x == x.f32())
      argmax = std::move(found);
  }
  return std::make_unique<MaxPoolKernel>(p, x.f32(), site.output(0).f32(), std::move(argmax));
}

std::unique_ptr<Kernel> makeMaxPool2dGrad(const KernelSite &site, const PoolAttrs &attrs,
                                          PoolShape p) {
  const TensorView x = site.input(0);
  std::shared_ptr<PoolArgmax> argmax;
  if (site.hasSharedState()) {
    const std::shared_ptr<void> &slot = site.sharedState(x.id);
    if (slot) {
      auto found = std::static_pointer_cast<PoolArgmax>(slot);
      if (samePool(found->shape, p) && found->x == x.f32()) {
        found->index.resize(static_cast<size_t>(p.n * p.oh * p.ow * p.c));
        argmax = std::move(found);
      }
    }
  }
  return std::make_unique<MaxPoolGradKernel>(p, x.f32(), site.input(1).f32(), site.output(0).f32(),
                                             std::move(argmax));
}

std::unique_ptr<Kernel> makeDropout(const KernelSite &site, const DropoutAttrs &attrs, Rows rows) {
  return std::make_unique<DropoutKernel>(site.input(0), site.output(0), site.output(1), rows,
                                         attrs.rate, attrs.stream);
}

std::unique_ptr<Kernel> makeDropoutGrad(const KernelSite &site, const NoAttrs &, int64_t n) {
  return std::make_unique<DropoutGradKernel>(site.input(0).f32(), site.input(1).f32(),
                                             site.output(0).f32(), n);
}

} // namespace dp::rt::cpu
