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

} // namespace

std::unique_ptr<Kernel> makeDense(const KernelSite &site, const FusedActivationAttrs &attrs,
                                  DenseShape shape) {
  const TensorView x = site.input(0), w = site.input(1), y = site.output(0);
  const bool hasBias = shape.bias;
  const int64_t k = shape.k, m = shape.m, n = shape.n;
  const Activation act = attrs.activation;

  dnnl::primitive_attr attr = userScratchpad(act);

  // Factors in the compute type (bf16 products accumulate in f32); y and b are f32.
  DnnlCall call =
      matmulCall(plainDesc({n, k}, {k, 1}, shape.compute), x.data,
                 plainDesc({k, m}, {m, 1}, shape.compute), w.data, f32Desc({n, m}, {m, 1}), y.data,
                 hasBias ? site.input(2).data : nullptr, attr, site.where());
  return std::make_unique<DenseKernel>(std::move(call), y.f32(), n, m, act == Activation::Softmax);
}

namespace {

/// matmul and batch_matmul: one oneDNN matmul over `batch` products (2-D descriptors for one,
/// 3-D for more), alpha as its output scale.
std::unique_ptr<Kernel> productKernel(const KernelSite &site, const MatMulShape &shape) {
  const TensorView a = site.input(0), b = site.input(1), c = site.output(0);
  const bool ta = shape.ta, tb = shape.tb;
  const int64_t m = shape.m, k = shape.k, n = shape.n, batch = shape.batch;

  // A transposed operand is the stored row-major matrix read with swapped strides.
  memory::dims ad{m, k}, as = ta ? memory::dims{1, m} : memory::dims{k, 1};
  memory::dims bd{k, n}, bs = tb ? memory::dims{1, k} : memory::dims{n, 1};
  memory::dims cd{m, n}, cs{n, 1};
  if (batch > 1 || site.input(0).rank() > 2) {
    ad.insert(ad.begin(), batch), as.insert(as.begin(), m * k);
    bd.insert(bd.begin(), batch), bs.insert(bs.begin(), k * n);
    cd.insert(cd.begin(), batch), cs.insert(cs.begin(), m * n);
  }
  dnnl::primitive_attr attr = userScratchpad();
  if (shape.alpha != 1.0)
    attr.set_output_scales(0, {static_cast<float>(shape.alpha)});
  if (fixedPartitions() && ta && !tb && cd.size() == 2) {
    // A weight gradient (x^T dy: the sum over the rows of both) under fixed partitions: a
    // ChunkedSum over the k rows, each chunk's product made for one thread; or, where the
    // rows are few for the product's size, chunks of its columns, each over all the rows.
    const int64_t es = int64_t(dtypeSize(shape.compute));
    const memory::desc partial = f32Desc(cd, cs);
    ThreadCap cap(1);
    if (cutByColumns(double(k), double(m), double(m * n))) {
      std::vector<DnnlCall> chunks;
      for (const auto &[first, width] : columnChunks(n))
        chunks.push_back(matmulCall(
            plainDesc({m, k}, {1, m}, shape.compute), a.data,
            plainDesc({k, width}, {n, 1}, shape.compute), static_cast<char *>(b.data) + first * es,
            f32Desc({m, width}, {n, 1}), c.f32() + first, nullptr, attr, site.where(), 1));
      return std::make_unique<ChunkedSum>(std::move(chunks), std::vector<ChunkedSum::Output>{});
    }
    std::vector<DnnlCall> chunks;
    for (const auto &[first, rows] : reduceChunks(k))
      chunks.push_back(matmulCall(
          plainDesc({m, rows}, {1, m}, shape.compute), static_cast<char *>(a.data) + first * m * es,
          plainDesc({rows, n}, {n, 1}, shape.compute), static_cast<char *>(b.data) + first * n * es,
          partial, nullptr, nullptr, attr, site.where(), 1));
    DnnlCall finish = reorderCall(memory(partial, cpuEngine(), nullptr),
                                  memory(partial, cpuEngine(), c.data), site.where(), 1);
    return std::make_unique<ChunkedSum>(std::move(chunks), DNNL_ARG_DST, partial,
                                        std::move(finish));
  }
  DnnlCall call =
      matmulCall(plainDesc(ad, as, shape.compute), a.data, plainDesc(bd, bs, shape.compute), b.data,
                 f32Desc(cd, cs), c.data, nullptr, attr, site.where());
  return std::make_unique<PrimitiveKernel>(std::move(call));
}

} // namespace

std::unique_ptr<Kernel> makeMatMul(const KernelSite &site, const MatMulAttrs &, MatMulShape shape) {
  return productKernel(site, shape);
}

std::unique_ptr<Kernel> makeBatchMatMul(const KernelSite &site, const BatchMatMulAttrs &,
                                        MatMulShape shape) {
  return productKernel(site, shape);
}

} // namespace dp::rt::cpu
