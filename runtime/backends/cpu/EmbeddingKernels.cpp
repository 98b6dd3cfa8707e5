// gather (an embedding lookup) and gather_grad (its table's gradient, a scatter-add), from the
// host-and-device functions of runtime/kernels/Gather.h.
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"
#include "runtime/kernels/Gather.h"

namespace dp::rt::cpu {
namespace {

class GatherKernel final : public Kernel {
public:
  GatherKernel(const KernelSite &site, GatherShape s)
      : table_(site.input(0).f32()), indices_(site.input(1).i32()), out_(site.output(0).f32()),
        s_(s) {}

  void run(const StepContext &) override {
    const float *table = table_;
    const int32_t *indices = indices_;
    float *out = out_;
    const GatherShape s = s_;
    parallelChunks(s.n * s.width, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        gatherElement(table, indices, out, s, i);
    });
  }

private:
  const float *table_;
  const int32_t *indices_;
  float *out_;
  GatherShape s_;
};

class GatherGradKernel final : public Kernel {
public:
  GatherGradKernel(const KernelSite &site, GatherShape s)
      : dy_(site.input(0).f32()), indices_(site.input(1).i32()), dtable_(site.output(0).f32()),
        s_(s) {}

  void run(const StepContext &) override {
    const float *dy = dy_;
    const int32_t *indices = indices_;
    float *dtable = dtable_;
    const GatherShape s = s_;
    // Each thread owns whole columns, so every element sums its rows in the indices' order.
    parallelChunks(
        s.width,
        [=](int64_t first, int64_t last) {
          gatherGradColumns(dy, indices, dtable, s, first, last);
        },
        s.n * s.width);
  }

private:
  const float *dy_;
  const int32_t *indices_;
  float *dtable_;
  GatherShape s_;
};

} // namespace

std::unique_ptr<Kernel> makeGather(const KernelSite &site, const NoAttrs &, GatherShape s) {
  return std::make_unique<GatherKernel>(site, s);
}

std::unique_ptr<Kernel> makeGatherGrad(const KernelSite &site, const NoAttrs &, GatherShape s) {
  return std::make_unique<GatherGradKernel>(site, s);
}

} // namespace dp::rt::cpu
