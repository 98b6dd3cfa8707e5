// Image kernels: conv2d and its two gradients on oneDNN convolution primitives (forward with the
// bias and a fused eltwise post-op, backward-data, backward-weights), created and bound to the
// arena at load.
//
// Images are NHWC and kernels HWIO (Keras's layouts). Images are plain strided descriptors for
// oneDNN. The weights' layout is the compiler's choice (plan-assign-layouts), carried by each
// kernel's plain_weights attribute: a kernel reads (or writes) the HWIO weights as stored, or
// lets oneDNN pick its layout (format_tag any, which lets it choose a jit implementation over
// gemm) and reorders into (or out of) a blocked copy on every call. Under mixed precision the
// tensors a pass reads are bf16, the one it writes f32.
//
// A kernel computes only the taps of its window that read the image (liveTaps: a 3x3
// convolution of a 1x1 image reads its centre), and the filter gradient of the others is set
// to zero. A convolution on plain weights whose live window is 1x1, at stride 1 and unpadded,
// is a product of matrices and runs on oneDNN's matmul (LiveTaps::isProduct), on the HWIO
// weights as they are: no reorder of the weights or of their gradient.
#include "runtime/backends/cpu/Dnnl.h"
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace dp::rt::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

/// oneDNN's descriptors of one convolution (contract::ConvShape), over the taps of its kernel
/// that read the image (contract::liveTaps): the others read only zero padding, so a kernel
/// of a small image skips them. ResNet50V2's 3x3 convolutions of its 1x1 images read their
/// centre tap alone: a ninth of the weights.
struct ConvShape : contract::ConvShape {
  explicit ConvShape(const contract::ConvShape &s) : ConvShape(s, liveTaps(s)) {}
  ConvShape(const contract::ConvShape &s, const LiveTaps &t)
      : contract::ConvShape(s), taps(t), tapOffset((t.row * t.kernelW + t.col) * (c / g) * f) {
    static_cast<ConvGeometry &>(*this) = t.shape;
  }
  LiveTaps taps;
  /// The first live tap's element in the HWIO kernel.
  int64_t tapOffset;
  /// Whether the kernel runs as a product of matrices on the plain weights.
  bool product() const { return plainWeights && taps.isProduct(); }

  memory::desc image(int64_t height, int64_t width, int64_t channels, DType t) const {
    return plainDesc({n, channels, height, width},
                     {height * width * channels, 1, width * channels, channels}, t);
  }
  /// The images and the kernel in type `t`: the compute type where the pass reads them, f32
  /// where it writes them (a bf16 convolution accumulates in f32).
  memory::desc src(DType t) const { return image(h, w, c, t); }
  memory::desc dst(DType t) const { return image(oh, ow, f, t); }
  /// oneDNN's weights are (O, I, KH, KW), or (G, O/G, I/G, KH, KW) in groups; HWIO storage
  /// puts O innermost (filter o of group g at g * O/G + o). The live taps are a window of the
  /// whole kernel (its rows taps.kernelW taps apart) at tapOffset; a window one row high takes
  /// the dense row stride, which lets oneDNN see a window of one tap as a plain matrix.
  memory::desc weights(DType t) const {
    const int64_t cg = c / g;
    const int64_t rowStride = (kh == 1 ? kw : taps.kernelW) * cg * f;
    if (g == 1)
      return plainDesc({f, c, kh, kw}, {1, f, rowStride, c * f}, t);
    return plainDesc({g, f / g, cg, kh, kw}, {f / g, 1, f, rowStride, cg * f}, t);
  }
  /// The live window's first element in kernel `w`, of `t` elements.
  void *window(void *w, DType t) const {
    return static_cast<char *>(w) + tapOffset * int64_t(dtypeSize(t));
  }
  /// The (offset, length) element ranges of the whole HWIO kernel outside the live window.
  std::vector<std::pair<int64_t, int64_t>> deadTaps() const {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    const int64_t tap = (c / g) * f;
    for (int64_t r = 0; r < taps.kernelH; ++r)
      for (int64_t col = 0; col < taps.kernelW; ++col) {
        if (r >= taps.row && r < taps.row + kh && col >= taps.col && col < taps.col + kw)
          continue;
        const int64_t at = (r * taps.kernelW + col) * tap;
        if (!ranges.empty() && ranges.back().first + ranges.back().second == at)
          ranges.back().second += tap;
        else
          ranges.emplace_back(at, tap);
      }
    return ranges;
  }
  /// The weights' dimensions in the layout oneDNN picks (format any).
  memory::dims weightDims() const {
    if (g == 1)
      return {f, c, kh, kw};
    return {g, f / g, c / g, kh, kw};
  }
  memory::dims strides() const { return {sh, sw}; }
  /// oneDNN counts the rows skipped between taps: 0 for a dense window.
  memory::dims dilates() const { return {dh - 1, dw - 1}; }
  memory::dims padL() const { return {pt, pl}; }
  memory::dims padR() const { return {pb, pr}; }
};

/// The weights as a primitive reads (writes) them: HWIO as stored where the compiler chose the
/// plain layout, else the blocked layout oneDNN picks (format_tag any), which lets it choose a
/// jit implementation over gemm. The blocked copy lives in a buffer owned by the kernel and is
/// reordered on every call: the optimizer changes the weights each step.
memory::desc primitiveWeights(const ConvShape &s, DType t) {
  if (s.plainWeights)
    return s.weights(t);
  return memory::desc(s.weightDims(), dnnlType(t), memory::format_tag::any);
}

dnnl::convolution_forward::primitive_desc forwardDesc(const ConvShape &s, bool bias,
                                                      const dnnl::primitive_attr &attr) {
  const memory::desc bd = f32Desc({s.f}, {1});
  const DType t = s.compute;
  const memory::desc wd = primitiveWeights(s, t);
  auto d = bias ? dnnl::convolution_forward::desc(
                      dnnl::prop_kind::forward_training, algorithm::convolution_direct, s.src(t),
                      wd, bd, s.dst(DType::F32), s.strides(), s.dilates(), s.padL(), s.padR())
                : dnnl::convolution_forward::desc(
                      dnnl::prop_kind::forward_training, algorithm::convolution_direct, s.src(t),
                      wd, s.dst(DType::F32), s.strides(), s.dilates(), s.padL(), s.padR());
  return dnnl::convolution_forward::primitive_desc(d, attr, cpuEngine());
}

class DnnlKernel final : public Kernel {
public:
  DnnlKernel(DnnlCall call, float *y, int64_t rows, int64_t cols, bool softmax,
             std::vector<DnnlCall> before = {}, std::vector<DnnlCall> after = {})
      : call_(std::move(call)), before_(std::move(before)), after_(std::move(after)), y_(y),
        rows_(rows), cols_(cols), softmax_(softmax) {}
  /// Ranges of `base` (f32 elements: offset, length) set to zero on every call: the gradient
  /// of the taps that read only padding.
  void zeroEachCall(float *base, std::vector<std::pair<int64_t, int64_t>> ranges) {
    zeroBase_ = base, zeros_ = std::move(ranges);
  }
  void run(const StepContext &) override {
    for (const auto &[at, len] : zeros_)
      std::fill_n(zeroBase_ + at, len, 0.0f);
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
  float *zeroBase_ = nullptr;
  std::vector<std::pair<int64_t, int64_t>> zeros_;
};

/// The [rows, cols] row-major matrix at `data` in type `t`, read transposed when `transposed`
/// (the stored matrix with swapped strides). A convolution that is a product on plain weights
/// (ConvShape::product) runs on a oneDNN matmul over such matrices: no reorders, the weights
/// and their gradient stay HWIO, which the convolution primitives only read through a blocked
/// copy. ResNet50V2's 1x1 stages at batch 16 (1x1 convolutions of 1x1 images, and 3x3 ones
/// whose centre tap alone reads the image).
memory::desc matrix(int64_t rows, int64_t cols, DType t, bool transposed = false) {
  return transposed ? plainDesc({cols, rows}, {1, cols}, t) : plainDesc({rows, cols}, {cols, 1}, t);
}

} // namespace

std::unique_ptr<Kernel> makeConv2d(const KernelSite &site, const Conv2dAttrs &attrs,
                                   contract::ConvShape geometry) {
  const TensorView x = site.input(0), w = site.input(1), y = site.output(0);
  const ConvShape s(geometry);
  const bool hasBias = s.bias;
  const Activation act = attrs.activation;
  dnnl::primitive_attr attr = userScratchpad(act);
  if (s.product()) { // y[r, f] = x[r, c] w[c, f]
    const int64_t rows = s.n * s.h * s.w;
    DnnlCall call = matmulCall(matrix(rows, s.c, s.compute), x.data, matrix(s.c, s.f, s.compute),
                               s.window(w.data, s.compute), matrix(rows, s.f, DType::F32), y.data,
                               hasBias ? site.input(2).data : nullptr, attr, site.where());
    return std::make_unique<DnnlKernel>(std::move(call), y.f32(), rows, s.f,
                                        act == Activation::Softmax);
  }
  const int threads = threadsFor(s.macs());
  ThreadCap cap(threads);
  auto pd = forwardDesc(s, hasBias, attr);
  const memory userW(s.weights(s.compute), cpuEngine(), s.window(w.data, s.compute));
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
  if (s.product()) { // dx[r, c] = dy[r, f] w[c, f]^T
    const int64_t rows = s.n * s.h * s.w;
    DnnlCall call =
        matmulCall(matrix(rows, s.f, s.compute), dy.data,
                   matrix(s.c, s.f, s.compute, /*transposed=*/true), s.window(w.data, s.compute),
                   matrix(rows, s.c, DType::F32), dx.data, nullptr, userScratchpad(), site.where());
    return std::make_unique<DnnlKernel>(std::move(call), nullptr, 0, 0, false);
  }
  const int threads = threadsFor(s.macs());
  ThreadCap cap(threads);
  // dy and w in the compute type, dx f32.
  const DType t = s.compute;
  const memory::desc wd = primitiveWeights(s, t);
  dnnl::convolution_forward::primitive_desc hint(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_training, algorithm::convolution_direct, s.src(t), wd,
          s.dst(DType::F32), s.strides(), s.dilates(), s.padL(), s.padR()),
      cpuEngine());
  dnnl::convolution_backward_data::primitive_desc pd(
      dnnl::convolution_backward_data::desc(algorithm::convolution_direct, s.src(DType::F32), wd,
                                            s.dst(t), s.strides(), s.dilates(), s.padL(), s.padR()),
      userScratchpad(), cpuEngine(), hint);
  const memory userW(s.weights(t), cpuEngine(), s.window(w.data, t));
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

namespace {

/// conv2d_grad_filter under fixed partitions (dprun --reproducible), cut by the filters where
/// the gradient is large for its rows (cutByColumns): chunk j computes filters [f0, f0 + w)
/// over all the rows, each chunk's primitives made for one thread, nothing to add. A product
/// reads its slice of dy in place and writes its slice of dw; a convolution copies its slice
/// of dy dense, computes into its own buffer and reorders into the HWIO slice.
std::unique_ptr<Kernel> filterChunks(const KernelSite &site, const ConvShape &s) {
  const TensorView x = site.input(0), dy = site.input(1), dw = site.output(0);
  const DType t = s.compute;
  const int64_t es = int64_t(dtypeSize(t));
  char *dyData = static_cast<char *>(dy.data);
  float *dwWindow = static_cast<float *>(s.window(dw.data, DType::F32));
  ThreadCap cap(1);
  std::vector<std::vector<DnnlCall>> chunks;
  std::shared_ptr<float> own;
  if (s.product()) { // dw[c, f0 + j] = x[r, c]^T dy[r, f0 + j]
    const int64_t rows = s.n * s.h * s.w;
    for (const auto &[first, width] : columnChunks(s.f)) {
      chunks.emplace_back();
      chunks.back().push_back(matmulCall(matrix(rows, s.c, t, /*transposed=*/true), x.data,
                                         plainDesc({rows, width}, {s.f, 1}, t), dyData + first * es,
                                         f32Desc({s.c, width}, {s.f, 1}), dwWindow + first, nullptr,
                                         userScratchpad(), site.where(), 1));
    }
  } else {
    const std::vector<std::pair<int64_t, int64_t>> cuts = columnChunks(s.f);
    // The dense slices of dy, one after another, then each chunk's gradient as its primitive
    // lays it out.
    std::vector<dnnl::convolution_backward_weights::primitive_desc> pds;
    int64_t floats = (s.n * s.oh * s.ow * s.f * es + 63) / 4 / 16 * 16 + 16;
    for (const auto &[first, width] : cuts) {
      ConvShape c = s;
      c.f = width;
      auto hint = forwardDesc(c, false, dnnl::primitive_attr());
      pds.emplace_back(
          dnnl::convolution_backward_weights::desc(
              algorithm::convolution_direct, c.src(t),
              memory::desc(c.weightDims(), memory::data_type::f32, memory::format_tag::any),
              c.dst(t), c.strides(), c.dilates(), c.padL(), c.padR()),
          userScratchpad(), cpuEngine(), hint);
      floats += (int64_t(pds.back().diff_weights_desc().get_size()) / 4 + 15) / 16 * 16;
    }
    own = alignedFloats(floats);
    char *slices = reinterpret_cast<char *>(own.get());
    float *grads = own.get() + (s.n * s.oh * s.ow * s.f * es + 63) / 4 / 16 * 16 + 16;
    for (size_t j = 0; j < cuts.size(); ++j) {
      const auto &[first, width] = cuts[j];
      ConvShape c = s;
      c.f = width;
      char *slice = slices + s.n * s.oh * s.ow * first * es;
      const memory::desc strided =
          plainDesc({s.n, width, s.oh, s.ow}, {s.oh * s.ow * s.f, 1, s.ow * s.f, s.f}, t);
      const memory::desc gradDesc = pds[j].diff_weights_desc();
      // The HWIO gradient's filters [first, first + width): the whole kernel's strides.
      const int64_t rowStride = (s.kh == 1 ? s.kw : s.taps.kernelW) * s.c * s.f;
      const memory::desc hwio =
          plainDesc({width, s.c, s.kh, s.kw}, {1, s.f, rowStride, s.c * s.f}, DType::F32);
      chunks.emplace_back();
      chunks.back().push_back(reorderCall(memory(strided, cpuEngine(), dyData + first * es),
                                          memory(c.dst(t), cpuEngine(), slice), site.where(), 1));
      chunks.back().emplace_back(pds[j], dnnl::convolution_backward_weights(pds[j]),
                                 std::vector<std::pair<int, memory>>{
                                     {DNNL_ARG_SRC, memory(c.src(t), cpuEngine(), x.data)},
                                     {DNNL_ARG_DIFF_DST, memory(c.dst(t), cpuEngine(), slice)},
                                     {DNNL_ARG_DIFF_WEIGHTS, memory(gradDesc, cpuEngine(), grads)}},
                                 site.where(), 1);
      chunks.back().push_back(reorderCall(memory(gradDesc, cpuEngine(), grads),
                                          memory(hwio, cpuEngine(), dwWindow + first), site.where(),
                                          1));
      grads += (int64_t(gradDesc.get_size()) / 4 + 15) / 16 * 16;
    }
  }
  auto kernel = std::make_unique<ChunkedSum>(std::move(chunks), std::vector<ChunkedSum::Output>{});
  if (own)
    kernel->keep(own);
  kernel->zeroEachCall(dw.f32(), s.deadTaps());
  return kernel;
}

/// conv2d_grad_filter under fixed partitions (dprun --reproducible): a ChunkedSum over the
/// images (a product's rows where the convolution is one), each chunk's primitive made for one
/// thread; the sum is reordered into the live window of the HWIO gradient. Or cut by the
/// filters (filterChunks) where the gradient is large for its rows.
std::unique_ptr<Kernel> chunkedGradFilter(const KernelSite &site, const ConvShape &s) {
  const TensorView x = site.input(0), dy = site.input(1), dw = site.output(0);
  const DType t = s.compute;
  const int64_t es = int64_t(dtypeSize(t));
  if (s.product() ? cutByColumns(double(s.n * s.h * s.w), double(s.c), double(s.c * s.f))
                  : s.g == 1 && cutByColumns(double(s.n), double(s.h * s.w * s.c),
                                             double(s.kh * s.kw * s.c * s.f)))
    return filterChunks(site, s);
  ThreadCap cap(1);
  std::vector<DnnlCall> chunks;
  memory::desc partial;
  if (s.product()) { // dw[c, f] = x[r, c]^T dy[r, f] over chunks of the rows
    partial = matrix(s.c, s.f, DType::F32);
    for (const auto &[first, rows] : reduceChunks(s.n * s.h * s.w))
      chunks.push_back(matmulCall(
          matrix(rows, s.c, t, /*transposed=*/true), static_cast<char *>(x.data) + first * s.c * es,
          matrix(rows, s.f, t), static_cast<char *>(dy.data) + first * s.f * es, partial, nullptr,
          nullptr, userScratchpad(), site.where(), 1));
  } else {
    for (const auto &[first, images] : reduceChunks(s.n)) {
      ConvShape c = s;
      c.n = images;
      // The first chunk's primitive picks the partial sums' layout; the others take it.
      const memory::desc wd = partial.is_zero() ? primitiveWeights(c, DType::F32) : partial;
      auto hint = forwardDesc(c, false, dnnl::primitive_attr());
      dnnl::convolution_backward_weights::primitive_desc pd(
          dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, c.src(t), wd,
                                                   c.dst(t), c.strides(), c.dilates(), c.padL(),
                                                   c.padR()),
          userScratchpad(), cpuEngine(), hint);
      if (partial.is_zero())
        partial = pd.diff_weights_desc();
      chunks.emplace_back(
          pd, dnnl::convolution_backward_weights(pd),
          std::vector<std::pair<int, memory>>{
              {DNNL_ARG_SRC, memory(c.src(t), cpuEngine(),
                                    static_cast<char *>(x.data) + first * s.h * s.w * s.c * es)},
              {DNNL_ARG_DIFF_DST,
               memory(c.dst(t), cpuEngine(),
                      static_cast<char *>(dy.data) + first * s.oh * s.ow * s.f * es)},
              {DNNL_ARG_DIFF_WEIGHTS, memory(partial, cpuEngine(), nullptr)}},
          site.where(), 1);
    }
  }
  const int outArg = s.product() ? DNNL_ARG_DST : DNNL_ARG_DIFF_WEIGHTS;
  const memory::desc target = s.product() ? matrix(s.c, s.f, DType::F32) : s.weights(DType::F32);
  DnnlCall finish =
      reorderCall(memory(partial, cpuEngine(), nullptr),
                  memory(target, cpuEngine(), s.window(dw.data, DType::F32)), site.where(), 1);
  auto kernel = std::make_unique<ChunkedSum>(std::move(chunks), outArg, partial, std::move(finish));
  kernel->zeroEachCall(dw.f32(), s.deadTaps());
  return kernel;
}

} // namespace

std::unique_ptr<Kernel> makeConv2dGradFilter(const KernelSite &site, const ConvAttrs &attrs,
                                             contract::ConvShape geometry) {
  const TensorView x = site.input(0), dy = site.input(1), dw = site.output(0);
  const ConvShape s(geometry);
  if (fixedPartitions())
    return chunkedGradFilter(site, s);
  if (s.product()) { // dw[c, f] = x[r, c]^T dy[r, f]
    const int64_t rows = s.n * s.h * s.w;
    DnnlCall call =
        matmulCall(matrix(rows, s.c, s.compute, /*transposed=*/true), x.data,
                   matrix(rows, s.f, s.compute), dy.data, matrix(s.c, s.f, DType::F32),
                   s.window(dw.data, DType::F32), nullptr, userScratchpad(), site.where());
    auto kernel = std::make_unique<DnnlKernel>(std::move(call), nullptr, 0, 0, false);
    kernel->zeroEachCall(dw.f32(), s.deadTaps());
    return kernel;
  }
  const int threads = threadsFor(s.macs());
  ThreadCap cap(threads);
  // x and dy in the compute type, dw f32.
  const DType t = s.compute;
  auto hint = forwardDesc(s, false, dnnl::primitive_attr());
  dnnl::convolution_backward_weights::primitive_desc pd(
      dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, s.src(t),
                                               primitiveWeights(s, DType::F32), s.dst(t),
                                               s.strides(), s.dilates(), s.padL(), s.padR()),
      userScratchpad(), cpuEngine(), hint);
  const memory userDw(s.weights(DType::F32), cpuEngine(), s.window(dw.data, DType::F32));
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
  auto kernel = std::make_unique<DnnlKernel>(std::move(call), nullptr, 0, 0, false,
                                             std::vector<DnnlCall>{}, std::move(after));
  kernel->zeroEachCall(dw.f32(), s.deadTaps());
  return kernel;
}

} // namespace dp::rt::cpu
