// dense and matmul on oneDNN matmul primitives, created and bound to the arena at load. The
// activation of dense is fused as an eltwise post-op where oneDNN has one; softmax follows as a
// row pass. matmul's transposes are strides in the memory descriptors, never copies.
#include "runtime/kernels/cpu/Dnnl.h"
#include "runtime/kernels/cpu/Internal.h"
#include "runtime/kernels/cpu/Parallel.h"

namespace dp::rt::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

void expectRank(const KernelSite &site, const TensorView &t, int rank, const char *role) {
  if (t.rank() != rank)
    site.fail(std::string(role) + " (buffer " + std::to_string(t.id) + ") has rank " +
              std::to_string(t.rank()) + ", expected " + std::to_string(rank));
}

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

std::unique_ptr<Kernel> makeDense(const KernelSite &site, const FusedActivationAttrs &attrs) {
  const TensorView x = site.input(0), w = site.input(1), y = site.output(0);
  const bool hasBias = site.numInputs() == 3;
  site.expectDType(x, DType::F32, "input 0 (x)");
  site.expectDType(w, DType::F32, "input 1 (w)");
  site.expectDType(y, DType::F32, "output 0 (y)");
  expectRank(site, w, 2, "input 1 (w)");
  expectRank(site, y, 2, "output 0 (y)");
  const int64_t k = w.dim(0), m = w.dim(1), n = y.dim(0);
  if (y.dim(1) != m)
    site.fail("output 0 (y) has " + std::to_string(y.dim(1)) + " columns but w has " +
              std::to_string(m));
  if (x.rank() < 1 || x.dim(0) != n)
    site.fail("input 0 (x) has " + std::to_string(x.rank() ? x.dim(0) : 0) + " rows but y has " +
              std::to_string(n));
  site.expectNumel(x, n * k, "input 0 (x)");
  const Activation act = attrs.activation;

  dnnl::primitive_attr attr = userScratchpad(act);

  const memory::desc xd = f32Desc({n, k}, {k, 1});
  const memory::desc wd = f32Desc({k, m}, {m, 1});
  const memory::desc yd = f32Desc({n, m}, {m, 1});
  std::vector<std::pair<int, memory>> args = {{DNNL_ARG_SRC, memory(xd, cpuEngine(), x.data)},
                                              {DNNL_ARG_WEIGHTS, memory(wd, cpuEngine(), w.data)},
                                              {DNNL_ARG_DST, memory(yd, cpuEngine(), y.data)}};
  memory::desc bd;
  if (hasBias) {
    const TensorView b = site.input(2);
    site.expectDType(b, DType::F32, "input 2 (b)");
    site.expectNumel(b, m, "input 2 (b)");
    bd = f32Desc({1, m}, {m, 1});
    args.emplace_back(DNNL_ARG_BIAS, memory(bd, cpuEngine(), b.data));
  }
  const int threads = threadsFor(double(n) * double(k) * double(m));
  ThreadCap cap(threads);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(xd, wd, bd, yd), attr, cpuEngine());
  DnnlCall call(pd, dnnl::matmul(pd), std::move(args), site.where(), threads);
  return std::make_unique<DenseKernel>(std::move(call), y.f32(), n, m, act == Activation::Softmax);
}

std::unique_ptr<Kernel> makeMatMul(const KernelSite &site, const MatMulAttrs &attrs) {
  const TensorView a = site.input(0), b = site.input(1), c = site.output(0);
  site.expectDType(a, DType::F32, "input 0 (a)");
  site.expectDType(b, DType::F32, "input 1 (b)");
  site.expectDType(c, DType::F32, "output 0 (c)");
  expectRank(site, a, 2, "input 0 (a)");
  expectRank(site, b, 2, "input 1 (b)");
  expectRank(site, c, 2, "output 0 (c)");
  const bool ta = attrs.transpose_a, tb = attrs.transpose_b;
  // op(a) is [m, k], op(b) is [k, n].
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t kb = tb ? b.dim(1) : b.dim(0), n = tb ? b.dim(0) : b.dim(1);
  if (k != kb)
    site.fail("inner dimensions differ: op(a) has " + std::to_string(k) + " columns, op(b) has " +
              std::to_string(kb) + " rows");
  if (c.dim(0) != m || c.dim(1) != n)
    site.fail("output 0 (c) is [" + std::to_string(c.dim(0)) + ", " + std::to_string(c.dim(1)) +
              "], expected [" + std::to_string(m) + ", " + std::to_string(n) + "]");

  // A transposed operand is the stored row-major matrix read with swapped strides.
  const memory::desc ad = f32Desc({m, k}, ta ? memory::dims{1, m} : memory::dims{k, 1});
  const memory::desc bd = f32Desc({k, n}, tb ? memory::dims{1, k} : memory::dims{n, 1});
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
