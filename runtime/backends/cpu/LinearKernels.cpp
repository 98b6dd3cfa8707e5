// dense and matmul on oneDNN matmul primitives, created and bound to the arena at load. The
// activation of dense is fused as an eltwise post-op where oneDNN has one; softmax follows as a
// row pass. matmul's transposes are strides in the memory descriptors, never copies.
#include "runtime/backends/cpu/Dnnl.h"
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"

namespace dp::rt::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

class DenseKernel final : public Kernel {
public:
  DenseKernel(DnnlCall call, float *y, int64_t rows, int64_t cols, bool softmax)
      : call_(std::move(call)), y_(y), rows_(rows), cols_(cols), softmax_(softmax) {}
  void run(const StepContext &) override {
    call_.run();
    if (softmax_)
      softmaxRows(y_, y_, rows_, cols_);
  }

private:
  DnnlCall call_;
  float *y_;
  int64_t rows_, cols_;
  bool softmax_;
};

class MatMulKernel final : public Kernel {
public:
  explicit MatMulKernel(DnnlCall call) : call_(std::move(call)) {}
  void run(const StepContext &) override { call_.run(); }

private:
  DnnlCall call_;
};

} // namespace

std::unique_ptr<Kernel> makeDense(const KernelSite &site, const FusedActivationAttrs &attrs,
                                  DenseShape shape) {
  const TensorView x = site.input(0), w = site.input(1), y = site.output(0);
  const bool hasBias = shape.bias;
  const int64_t k = shape.k, m = shape.m, n = shape.n;
  const Activation act = attrs.activation;

  dnnl::primitive_attr attr = userScratchpad(act);

  // Factors in the compute type (bf16 products accumulate in f32); y and b are f32.
  const memory::desc xd = plainDesc({n, k}, {k, 1}, shape.compute);
  const memory::desc wd = plainDesc({k, m}, {m, 1}, shape.compute);
  const memory::desc yd = f32Desc({n, m}, {m, 1});
  std::vector<std::pair<int, memory>> args = {{DNNL_ARG_SRC, memory(xd, cpuEngine(), x.data)},
                                              {DNNL_ARG_WEIGHTS, memory(wd, cpuEngine(), w.data)},
                                              {DNNL_ARG_DST, memory(yd, cpuEngine(), y.data)}};
  memory::desc bd;
  if (hasBias) {
    const TensorView b = site.input(2);
    bd = f32Desc({1, m}, {m, 1});
    args.emplace_back(DNNL_ARG_BIAS, memory(bd, cpuEngine(), b.data));
  }
  const int threads = threadsFor(double(n) * double(k) * double(m));
  ThreadCap cap(threads);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(xd, wd, bd, yd), attr, cpuEngine());
  DnnlCall call(pd, dnnl::matmul(pd), std::move(args), site.where(), threads);
  return std::make_unique<DenseKernel>(std::move(call), y.f32(), n, m, act == Activation::Softmax);
}

std::unique_ptr<Kernel> makeMatMul(const KernelSite &site, const MatMulAttrs &attrs,
                                   MatMulShape shape) {
  const TensorView a = site.input(0), b = site.input(1), c = site.output(0);
  const bool ta = shape.ta, tb = shape.tb;
  const int64_t m = shape.m, k = shape.k, n = shape.n;

  // A transposed operand is the stored row-major matrix read with swapped strides.
  const memory::desc ad =
      plainDesc({m, k}, ta ? memory::dims{1, m} : memory::dims{k, 1}, shape.compute);
  const memory::desc bd =
      plainDesc({k, n}, tb ? memory::dims{1, k} : memory::dims{n, 1}, shape.compute);
  const memory::desc cd = f32Desc({m, n}, {n, 1});
  const int threads = threadsFor(double(m) * double(k) * double(n));
  ThreadCap cap(threads);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, bd, cd), userScratchpad(), cpuEngine());
  DnnlCall call(pd, dnnl::matmul(pd),
                {{DNNL_ARG_SRC, memory(ad, cpuEngine(), a.data)},
                 {DNNL_ARG_WEIGHTS, memory(bd, cpuEngine(), b.data)},
                 {DNNL_ARG_DST, memory(cd, cpuEngine(), c.data)}},
                site.where(), threads);
  return std::make_unique<MatMulKernel>(std::move(call));
}

} // namespace dp::rt::cpu
