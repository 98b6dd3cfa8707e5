// The LSTM layer and its gradients on oneDNN's LSTM primitives (lstm_forward, lstm_backward),
// created and bound to the arena at load.
//
// oneDNN's LSTM has Keras's gate order (i, f, c~, o) and activations, so the layouts map
// without copies: x[N,T,F] is src_layer in format ntc, the kernels w[F,4U] and r[U,4U] are
// weights in format ldigo ([1,1,F,4,U] and [1,1,U,4,U]), the bias b[4U] is ldgo [1,1,4,U], and
// y is dst_layer in format ntc ([N,T,U], return_sequences = 1) or dst_iter in format ldnc
// ([1,1,N,U] = [N,U], the last h). The initial states are oneDNN's default zeros.
//
// A training lstm runs forward_training, which fills a workspace that the backward primitive
// needs. The workspace, the forward primitive descriptor (the backward's hint) and the states
// that are not arena buffers live in an LstmSaved, handed to the lstm_grad reading y through
// KernelSite::sharedState under y's buffer id.
#include "runtime/backends/cpu/Dnnl.h"
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"

#include <cstring>

namespace dp::rt::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

/// oneDNN's descriptors of one LSTM layer (contract::LstmShape).
struct LstmDims : contract::LstmShape {
  LstmDims() = default;
  explicit LstmDims(const contract::LstmShape &s) : contract::LstmShape(s) {}

  static memory::desc f32(const memory::dims &dims, Tag tag) {
    return memory::desc(dims, memory::data_type::f32, tag);
  }
  /// In the compute type (x, w, r, h: bf16 under mixed precision); the gradients, b and c
  /// are f32.
  memory::desc typed(const memory::dims &dims, Tag tag) const {
    return memory::desc(dims, dnnlType(compute), tag);
  }
  /// x, and dx: oneDNN's logical (T, N, F) stored batch-major.
  memory::desc src() const { return typed({t, n, f}, Tag::ntc); }
  memory::desc diffSrc() const { return f32({t, n, f}, Tag::ntc); }
  /// h of every step, (T, N, U) stored batch-major.
  memory::desc dstLayer() const { return typed({t, n, u}, Tag::ntc); }
  memory::desc diffDstLayer() const { return f32({t, n, u}, Tag::ntc); }
  /// h (typed) or c (f32) of the last step: (layers, directions, N, U) = [N,U].
  memory::desc state() const { return typed({1, 1, n, u}, Tag::ldnc); }
  memory::desc stateF32() const { return f32({1, 1, n, u}, Tag::ldnc); }
  memory::desc weightsLayer(Tag tag) const { return typed({1, 1, f, 4, u}, tag); }
  memory::desc weightsIter(Tag tag) const { return typed({1, 1, u, 4, u}, tag); }
  memory::desc diffWeightsLayer() const { return f32({1, 1, f, 4, u}, Tag::ldigo); }
  memory::desc diffWeightsIter() const { return f32({1, 1, u, 4, u}, Tag::ldigo); }
  memory::desc bias() const { return f32({1, 1, 4, u}, Tag::ldgo); }
  /// The forward's and the backward's weight layouts (see kForwardWeights).
  Tag forwardWeights() const;
  Tag backwardWeights() const;
};

/// Weights layouts for the primitives. The forward takes plain ldigo, the arena's layout, and
/// reads w and r in place: letting oneDNN pick (`any`: a packed gemm layout, reordered into
/// every step) measured no faster, for the forward or the backward, at N=128 T=28 F=28 U=256
/// (about 29-30 ms per training step on 2 cores either way). The backward accepts no ldigo
/// weights (oneDNN 2.6); it gets ldgoi (transposed) copies made each step, while its weight
/// gradients are written as ldigo straight into dw and dr.
constexpr Tag kForwardWeights = Tag::ldigo;
constexpr Tag kBackwardWeights = Tag::ldgoi;
/// bf16 lets oneDNN pick both (its bf16 brgemm kernels want packed weights; the casts are
/// copies made each step anyway): at N=128 T=28 F=256 U=256, 10.7 ms forward and 20.8 ms
/// backward against f32's 32.8 and 45.2 on the same 2 cores (AVX-512 BF16, no AMX).
Tag LstmDims::forwardWeights() const { return compute == DType::BF16 ? Tag::any : kForwardWeights; }
Tag LstmDims::backwardWeights() const {
  return compute == DType::BF16 ? Tag::any : kBackwardWeights;
}

/// The memory a primitive reads the weights `t` (stored as `user`) from when it wants them as
/// `wanted`: the arena's when the layouts agree, else a kernel-owned copy refreshed by a reorder
/// appended to `calls` (the optimizer changes the weights between steps).
memory primitiveWeights(const TensorView &t, const memory::desc &user, const memory::desc &wanted,
                        std::vector<DnnlCall> &calls, const std::string &where, int threads) {
  const memory userMemory(user, cpuEngine(), t.data);
  if (wanted == user)
    return userMemory;
  memory copy(wanted, cpuEngine());
  calls.push_back(reorderCall(userMemory, copy, where, threads));
  return copy;
}

/// Kernel-owned memory of `desc`, zero-filled.
memory zeroMemory(const memory::desc &desc) {
  memory m(desc, cpuEngine());
  std::memset(m.get_data_handle(), 0, desc.get_size());
  return m;
}

/// What a training lstm leaves for its lstm_grad (under y's buffer id).
struct LstmSaved : contract::LstmForward {
  /// The forward_training primitive descriptor: the backward's hint.
  dnnl::lstm_forward::primitive_desc pd;
  /// oneDNN's record of the forward pass, written by the forward and read by the backward.
  memory workspace;
  /// With return_sequences = 0: h of every step (y is only the last) and the last c, which
  /// the backward reads as dst_layer and dst_iter_c.
  memory dstLayer, dstIterC;
};

/// Byte ranges of arena buffers.
using ByteRanges = std::vector<std::pair<void *, size_t>>;

/// Runs oneDNN calls in order, clearing `zeroBefore` first (the backward accumulates into its
/// weight gradients) and `zeroAfter` last.
class LstmKernel final : public Kernel {
public:
  LstmKernel(std::vector<DnnlCall> calls, ByteRanges zeroBefore, ByteRanges zeroAfter,
             std::shared_ptr<LstmSaved> saved)
      : calls_(std::move(calls)), zeroBefore_(std::move(zeroBefore)),
        zeroAfter_(std::move(zeroAfter)), saved_(std::move(saved)) {}
  void run(const StepContext &) override {
    for (auto &[data, bytes] : zeroBefore_)
      std::memset(data, 0, bytes);
    for (DnnlCall &c : calls_)
      c.run();
    for (auto &[data, bytes] : zeroAfter_)
      std::memset(data, 0, bytes);
  }

private:
  std::vector<DnnlCall> calls_;
  ByteRanges zeroBefore_, zeroAfter_;
  std::shared_ptr<LstmSaved> saved_; // keeps the workspace alive
};

} // namespace

std::unique_ptr<Kernel> makeLstm(const KernelSite &site, const LstmAttrs &attrs,
                                 contract::LstmShape shape) {
  const TensorView x = site.input(0), w = site.input(1), r = site.input(2), b = site.input(3),
                   y = site.output(0);
  const bool returnSequences = attrs.return_sequences;
  const bool training = attrs.training;
  const LstmDims d(shape);

  const int threads = threadsFor(d.macs());
  ThreadCap cap(threads);
  const memory::desc none;
  const memory::desc iter = returnSequences ? none : d.state();
  const memory::desc iterC = returnSequences ? none : d.stateF32();
  dnnl::lstm_forward::primitive_desc pd(
      dnnl::lstm_forward::desc(
          training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference,
          dnnl::rnn_direction::unidirectional_left2right, d.src(), none, none,
          d.weightsLayer(d.forwardWeights()), d.weightsIter(d.forwardWeights()), d.bias(),
          d.dstLayer(), iter, iterC),
      userScratchpad(), cpuEngine());

  auto saved = std::make_shared<LstmSaved>();
  saved->shape = d;
  saved->x = x, saved->w = w, saved->r = r, saved->b = b, saved->y = y;
  saved->pd = pd;
  std::vector<DnnlCall> calls;
  auto weights = [&](const TensorView &t, const memory::desc &user, const memory::desc &wanted) {
    return primitiveWeights(t, user, wanted, calls, site.where(), threads);
  };
  std::vector<std::pair<int, memory>> args = {
      {DNNL_ARG_SRC_LAYER, memory(d.src(), cpuEngine(), x.data)},
      {DNNL_ARG_WEIGHTS_LAYER, weights(w, d.weightsLayer(Tag::ldigo), pd.weights_layer_desc())},
      {DNNL_ARG_WEIGHTS_ITER, weights(r, d.weightsIter(Tag::ldigo), pd.weights_iter_desc())},
      {DNNL_ARG_BIAS, memory(d.bias(), cpuEngine(), b.data)}};
  if (returnSequences) {
    args.emplace_back(DNNL_ARG_DST_LAYER, memory(d.dstLayer(), cpuEngine(), y.data));
  } else {
    saved->dstLayer = memory(d.dstLayer(), cpuEngine());
    saved->dstIterC = memory(d.stateF32(), cpuEngine());
    args.emplace_back(DNNL_ARG_DST_LAYER, saved->dstLayer);
    args.emplace_back(DNNL_ARG_DST_ITER, memory(d.state(), cpuEngine(), y.data));
    args.emplace_back(DNNL_ARG_DST_ITER_C, saved->dstIterC);
  }
  if (training) {
    saved->workspace = memory(pd.workspace_desc(), cpuEngine());
    args.emplace_back(DNNL_ARG_WORKSPACE, saved->workspace);
  }
  calls.emplace_back(pd, dnnl::lstm_forward(pd), std::move(args), site.where(), threads);
  if (training) // replaces the contract's plain LstmForward for this backend's lstm_grad
    site.sharedState(y.id) = std::shared_ptr<contract::LstmForward>(saved);
  return std::make_unique<LstmKernel>(std::move(calls), ByteRanges{}, ByteRanges{},
                                      std::move(saved));
}

std::unique_ptr<Kernel> makeLstmGrad(const KernelSite &site, const NoAttrs &,
                                     std::shared_ptr<contract::LstmForward> forward) {
  const TensorView x = site.input(0), w = site.input(1), r = site.input(2), b = site.input(3),
                   y = site.input(4), dy = site.input(5);
  const TensorView dx = site.output(0), dw = site.output(1), dr = site.output(2),
                   db = site.output(3);
  // The state is this backend's, left by makeLstm (the contract checked it is that lstm's).
  auto saved = std::static_pointer_cast<LstmSaved>(forward);
  const LstmDims d(saved->shape);
  const int threads = threadsFor(2 * d.macs());
  ThreadCap cap(threads);
  const memory::desc none;
  const memory::desc iter = d.returnSequences ? none : d.state();
  const memory::desc iterF32 = d.returnSequences ? none : d.stateF32();
  const memory::desc dwDesc = d.diffWeightsLayer(), drDesc = d.diffWeightsIter();
  dnnl::lstm_backward::primitive_desc pd(
      dnnl::lstm_backward::desc(
          dnnl::prop_kind::backward, dnnl::rnn_direction::unidirectional_left2right, d.src(), none,
          none, d.weightsLayer(d.backwardWeights()), d.weightsIter(d.backwardWeights()), d.bias(),
          d.dstLayer(), iter, iterF32, d.diffSrc(), none, none, dwDesc, drDesc, d.bias(),
          d.diffDstLayer(), iterF32, iterF32),
      userScratchpad(), cpuEngine(), saved->pd);

  // The weights in the backward's layout, copied from the arena's ldigo every step.
  std::vector<DnnlCall> calls;
  auto weights = [&](const TensorView &t, const memory::desc &user, const memory::desc &wanted) {
    return primitiveWeights(t, user, wanted, calls, site.where(), threads);
  };
  std::vector<std::pair<int, memory>> args = {
      {DNNL_ARG_SRC_LAYER, memory(d.src(), cpuEngine(), x.data)},
      {DNNL_ARG_WEIGHTS_LAYER, weights(w, d.weightsLayer(Tag::ldigo), pd.weights_layer_desc())},
      {DNNL_ARG_WEIGHTS_ITER, weights(r, d.weightsIter(Tag::ldigo), pd.weights_iter_desc())},
      {DNNL_ARG_BIAS, memory(d.bias(), cpuEngine(), b.data)},
      {DNNL_ARG_WORKSPACE, saved->workspace},
      {DNNL_ARG_DIFF_SRC_LAYER, memory(d.diffSrc(), cpuEngine(), dx.data)},
      {DNNL_ARG_DIFF_WEIGHTS_LAYER, memory(dwDesc, cpuEngine(), dw.data)},
      {DNNL_ARG_DIFF_WEIGHTS_ITER, memory(drDesc, cpuEngine(), dr.data)},
      {DNNL_ARG_DIFF_BIAS, memory(d.bias(), cpuEngine(), db.data)}};
  if (d.returnSequences) {
    args.emplace_back(DNNL_ARG_DST_LAYER, memory(d.dstLayer(), cpuEngine(), y.data));
    args.emplace_back(DNNL_ARG_DIFF_DST_LAYER, memory(d.diffDstLayer(), cpuEngine(), dy.data));
  } else {
    // Only the last h has a gradient: dy is diff_dst_iter, the other diffs are zeros.
    args.emplace_back(DNNL_ARG_DST_LAYER, saved->dstLayer);
    args.emplace_back(DNNL_ARG_DST_ITER, memory(d.state(), cpuEngine(), y.data));
    args.emplace_back(DNNL_ARG_DST_ITER_C, saved->dstIterC);
    args.emplace_back(DNNL_ARG_DIFF_DST_LAYER, zeroMemory(d.diffDstLayer()));
    args.emplace_back(DNNL_ARG_DIFF_DST_ITER, memory(d.stateF32(), cpuEngine(), dy.data));
    args.emplace_back(DNNL_ARG_DIFF_DST_ITER_C, zeroMemory(d.stateF32()));
  }
  calls.emplace_back(pd, dnnl::lstm_backward(pd), std::move(args), site.where(), threads);
  // oneDNN adds the weight and bias gradients to what the buffers hold. With a single step the
  // recurrent kernel only ever multiplies h_0 = 0, so dr is zero; oneDNN 2.6 gets it wrong
  // when N = T = 1 (it returns nonzero values), so it is cleared after the backward instead.
  ByteRanges zeroBefore = {{dw.data, dw.bytes()}, {db.data, db.bytes()}}, zeroAfter;
  (d.t == 1 ? zeroAfter : zeroBefore).emplace_back(dr.data, dr.bytes());
  return std::make_unique<LstmKernel>(std::move(calls), std::move(zeroBefore), std::move(zeroAfter),
                                      std::move(saved));
}

} // namespace dp::rt::cpu
