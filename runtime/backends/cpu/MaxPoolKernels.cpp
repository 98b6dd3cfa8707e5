// max_pool2d and its gradient as loops. A max_pool2d saves where each maximum was for its
// gradient, which then routes dy there in one vectorised pass instead of finding the maxima
// again (9.5 to 1.5 ms per mnist_cnn step).
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace dp::rt::cpu {
namespace {

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

} // namespace

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

} // namespace dp::rt::cpu
