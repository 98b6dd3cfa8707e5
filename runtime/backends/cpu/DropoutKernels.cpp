// dropout and its gradient as loops: each element's mask value drawn from (seed, step, dropout
// number, global row, column) by the counter-based generator of base/Rng.h, so any split of the
// batch over replicas, and the CUDA backend, draw the same masks.
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"
#include "runtime/base/Rng.h"

#include <memory>

namespace dp::rt::cpu {
namespace {

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

std::unique_ptr<Kernel> makeDropout(const KernelSite &site, const DropoutAttrs &attrs, Rows rows) {
  return std::make_unique<DropoutKernel>(site.input(0), site.output(0), site.output(1), rows,
                                         attrs.rate, attrs.stream);
}

std::unique_ptr<Kernel> makeDropoutGrad(const KernelSite &site, const NoAttrs &, int64_t n) {
  return std::make_unique<DropoutGradKernel>(site.input(0).f32(), site.input(1).f32(),
                                             site.output(0).f32(), n);
}

} // namespace dp::rt::cpu
