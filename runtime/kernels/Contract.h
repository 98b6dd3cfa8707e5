// The kernel contract's checks, shared by every backend: for each kernel kind, one function
// that checks a kernel's buffers and attributes against what Kernels.def says the kind takes
// and returns the geometry its implementation needs. A backend's factory calls the check of a
// kind before it builds anything, so a plan that one backend refuses every backend refuses,
// with the same message (which names the kernel, the role of the buffer and both sizes).
#pragma once

#include "runtime/device/Kernel.h"
#include "runtime/format/ConvGeometry.h"
#include "runtime/kernels/Broadcast.h"
#include "runtime/kernels/Gather.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dp::rt::contract {

/// Every check of the contract for `site`'s kind (and checkOverlaps), without building
/// anything: what `dprun --inspect` runs over a whole plan. A training lstm leaves a plain
/// LstmForward in its state slot for its lstm_grad's check.
void checkKernel(const KernelSite &site);

/// checkKernel for every compute kernel of both steps of `plan` and of its servers' plans, on
/// arenas that are never touched (the checks read no data). Throws Error(Plan) at the first violation.
void checkPlanKernels(const Plan &plan);
/// checkPlanKernels for the steps of `plan` itself, not its servers' plans.
void checkStepKernels(const Plan &plan);

/// Kinds whose implementations read each element (or row) before writing the same position,
/// so that an output may be exactly the bytes of an input (DP_KERNEL_IN_PLACE of Kernels.def);
/// partial overlaps are never allowed.
bool allowsInPlace(KernelKind kind);
/// Fails unless every output is disjoint from every input (or the same bytes, where the kind
/// allows in place) and from the other outputs.
void checkOverlaps(const KernelSite &site);

/// A tensor as rows of its last axis (softmax, dropout, reductions over rows).
struct Rows {
  int64_t rows = 0, cols = 0;
  int64_t elements() const { return rows * cols; }
};

/// activation and activation_grad: f32, equal element counts; softmax's rows and columns
/// (other activations: one row of every element).
Rows checkActivation(const KernelSite &site, const ActivationAttrs &attrs);
Rows checkActivationGrad(const KernelSite &site, const ActivationAttrs &attrs);
/// add: f32, equal element counts; returns the count.
int64_t checkAdd(const KernelSite &site, const NoAttrs &);
/// add_rows: f32; x as rows of b's element count (cols), y x's element count.
Rows checkAddRows(const KernelSite &site, const NoAttrs &);
/// mul: f32; b of a's rank, each axis a's or 1; y a's shape. mul_reduce: dy and a of one
/// shape, db of its rank with each axis that or 1. Both return the merged geometry.
BroadcastShape checkMul(const KernelSite &site, const NoAttrs &);
BroadcastShape checkMulReduce(const KernelSite &site, const NoAttrs &);
/// copy: one dtype, equal element counts; returns the count.
int64_t checkCopy(const KernelSite &site, const NoAttrs &);
/// cast: f32 to bf16 or bf16 to f32, same element count; returns it.
int64_t checkCast(const KernelSite &site, const NoAttrs &);
/// fill: the 4-byte word every element of the output gets (the value as f32 or i32).
uint32_t checkFill(const KernelSite &site, const FillAttrs &attrs);
/// reduce_rows: x[rows, cols...] to y[cols...].
Rows checkReduceRows(const KernelSite &site, const NoAttrs &);

/// dense: y[n,m] = act(x[n,k] . w[k,m] + b[m]).
/// The product kernels (dense, matmul, the convolutions) read two factors of one `compute`
/// type, f32 or bf16, and write f32 (a bf16 product accumulates in f32).
struct DenseShape {
  int64_t n = 0, k = 0, m = 0;
  bool bias = false;
  DType compute = DType::F32;
};
DenseShape checkDense(const KernelSite &site, const FusedActivationAttrs &);
/// matmul: c[m,n] = op(a)[m,k] . op(b)[k,n].
/// matmul and batch_matmul: `batch` products (1 for matmul) of op(a) [m, k] by op(b) [k, n],
/// scaled by alpha (1 for matmul).
struct MatMulShape {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  bool ta = false, tb = false;
  double alpha = 1.0;
  DType compute = DType::F32;
};
MatMulShape checkMatMul(const KernelSite &site, const MatMulAttrs &attrs);
MatMulShape checkBatchMatMul(const KernelSite &site, const BatchMatMulAttrs &attrs);

/// softmax_xent, softmax_xent_grad and count_correct: logits [rows, classes], labels i32 [rows].
struct XentShape {
  int64_t rows = 0, classes = 0;
};
XentShape checkSoftmaxXent(const KernelSite &site, const XentAttrs &attrs);
XentShape checkSoftmaxXentGrad(const KernelSite &site, const XentAttrs &attrs);
XentShape checkCountCorrect(const KernelSite &site, const NoAttrs &);

/// squared_error and squared_error_grad: prediction and target f32 [rows, cols] (of one shape).
Rows checkSquaredError(const KernelSite &site, const NoAttrs &);
Rows checkSquaredErrorGrad(const KernelSite &site, const NoAttrs &);
/// sigmoid_xent and count_binary_correct: logits and targets f32 of one [N, K] shape, a scalar
/// output; sigmoid_xent_grad as squared_error_grad.
Rows checkSigmoidXent(const KernelSite &site, const NoAttrs &);
Rows checkSigmoidXentGrad(const KernelSite &site, const NoAttrs &);
Rows checkCountBinaryCorrect(const KernelSite &site, const NoAttrs &);

/// gather: table f32 [V, D], indices i32 (n values), out f32 of n x D values. gather_grad: dy
/// f32 of n x D values, indices i32, dtable f32 [V, D].
GatherShape checkGather(const KernelSite &site, const NoAttrs &);
GatherShape checkGatherGrad(const KernelSite &site, const NoAttrs &);

/// The optimizer updates: the gradient and every state output f32 of one size, returned; the
/// optional input 1 (the gradient's scale) f32 of one element.
int64_t checkSgdUpdate(const KernelSite &site, const SgdAttrs &);
int64_t checkMomentumUpdate(const KernelSite &site, const MomentumAttrs &);
/// Also fails unless both betas lie in [0, 1).
int64_t checkAdamUpdate(const KernelSite &site, const AdamAttrs &attrs);

/// clip_factor: every input f32, the output f32 of one element, max_norm > 0; returns the
/// inputs' element count.
int64_t checkClipFactor(const KernelSite &site, const ClipAttrs &attrs);

/// accumulate: g and sum f32 of one element count, returned; count at least 2; the partial
/// sums (f32, accumulatePartialLevels(count) times that count) given exactly when they are
/// needed.
int64_t checkAccumulate(const KernelSite &site, const AccumulateAttrs &attrs);

/// Window geometry of a valid pooling of x[N,H,W,C] into y[N,OH,OW,C].
struct PoolShape {
  int64_t n, h, w, c, kh, kw, sh, sw, oh, ow;
};
/// Reads the window and stride attributes and checks x against them and y against the pooled
/// shape: exactly [N,OH,OW,C] when `exactShape`, else any shape of N*OH*OW*C elements (a global
/// average pool writes [N,C]). `xRole` and `yRole` name them in errors.
PoolShape poolShape(const KernelSite &site, const PoolAttrs &attrs, const TensorView &x,
                    const TensorView &y, const char *xRole, const char *yRole, bool exactShape);
PoolShape checkMaxPool2d(const KernelSite &site, const PoolAttrs &attrs);
PoolShape checkMaxPool2dGrad(const KernelSite &site, const PoolAttrs &attrs);
PoolShape checkAvgPool2d(const KernelSite &site, const PoolAttrs &attrs);
PoolShape checkAvgPool2dGrad(const KernelSite &site, const PoolAttrs &attrs);

/// conv2d and its gradients (runtime/format/ConvGeometry.h), with what a kernel needs beyond
/// the geometry.
struct ConvShape : ConvGeometry {
  /// conv2d only: whether it adds a bias b[F].
  bool bias = false;
  /// The type of the two tensors the kernel reads (f32 or bf16).
  DType compute = DType::F32;
  /// Whether the kernel reads (writes) the HWIO weights as stored (the attribute
  /// plain_weights, set by the compiler's plan-assign-layouts); else through a copy in the
  /// library's blocked layout, reordered on every call.
  bool plainWeights = false;
};
using rt::liveTaps;
using rt::LiveTaps;
ConvShape checkConv2d(const KernelSite &site, const Conv2dAttrs &attrs);
ConvShape checkConv2dGradInput(const KernelSite &site, const ConvAttrs &attrs);
ConvShape checkConv2dGradFilter(const KernelSite &site, const ConvAttrs &attrs);

/// A zero padding: x[n,h,w,c] in the middle of y[n,ph,pw,c].
struct PadShape {
  int64_t n, h, w, c, pt, pb, pl, pr, ph, pw;
  /// What surrounds the image: 0, or the lowest float (PadAttrs::lowest).
  float value = 0.0f;
};
PadShape checkZeroPad2d(const KernelSite &site, const PadAttrs &attrs);
PadShape checkZeroPad2dGrad(const KernelSite &site, const PadAttrs &attrs);

/// dropout: x[N, ...] as N rows; also fails unless the rate lies in [0, 1).
Rows checkDropout(const KernelSite &site, const DropoutAttrs &attrs);
/// dropout_grad: f32 mask, dy and dx of one size, returned.
int64_t checkDropoutGrad(const KernelSite &site, const NoAttrs &);

/// A channels-last tensor x[..., C] as `rows` rows of `c` channels, and the epsilon of the
/// kernels that take one (finite, >= 0 for batch normalisation; > 0 for layer normalisation).
struct NormShape {
  int64_t rows = 0, c = 0;
  double epsilon = 0;
  /// batch_norm_train and batch_norm_infer: y = max(0, ...) (the fused relu).
  bool relu = false;
};
NormShape checkBatchMoments(const KernelSite &site, const NoAttrs &);
/// Also fails for an activation other than none or relu.
NormShape checkBatchNormTrain(const KernelSite &site, const NormAttrs &attrs);
NormShape checkBatchNormInfer(const KernelSite &site, const NormAttrs &attrs);
NormShape checkBatchNormGradParams(const KernelSite &site, const EpsilonAttrs &attrs);
NormShape checkBatchNormGradInput(const KernelSite &site, const EpsilonAttrs &attrs);
/// moving_stats_update: the channels; also fails unless the momentum lies in [0, 1].
int64_t checkMovingStatsUpdate(const KernelSite &site, const MovingStatsAttrs &attrs);
/// y f32, or bf16 (the cast that followed, fused by the compiler).
NormShape checkLayerNorm(const KernelSite &site, const EpsilonAttrs &attrs);
NormShape checkLayerNormGrad(const KernelSite &site, const EpsilonAttrs &attrs);

/// lstm and lstm_grad: x[N,T,F], w[F,4U], r[U,4U], b[4U]; y [N,T,U] (return_sequences) or
/// [N,U] (the last step's h).
struct LstmShape {
  int64_t n = 0, t = 0, f = 0, u = 0;
  bool returnSequences = false;
  /// The type of x, w, r and y (f32 or bf16); b, dy and the gradients are f32.
  DType compute = DType::F32;
  bool operator==(const LstmShape &o) const {
    return n == o.n && t == o.t && f == o.f && u == o.u &&
           returnSequences == o.returnSequences && compute == o.compute;
  }
  /// Multiply-adds of the forward pass (the backward does about twice as many).
  double macs() const { return double(n) * t * (f + u) * 4 * u; }
  std::vector<int64_t> yShape() const;
  /// "N=128 T=28 F=28 U=256 return_sequences=1".
  std::string str() const;
};
/// What a training lstm leaves for its lstm_grad (under y's buffer id, KernelSite::
/// sharedState): its buffers and shape. A backend's saved state derives from it.
struct LstmForward {
  TensorView x, w, r, b, y;
  LstmShape shape;
  virtual ~LstmForward() = default;
};
/// lstm: the shape. A training lstm's state slot under y's id (KernelSite::sharedState) must be
/// empty; the check leaves a plain LstmForward there for its lstm_grad's check, which a
/// backend's factory replaces with its own saved state (a class derived from LstmForward).
LstmShape checkLstm(const KernelSite &site, const LstmAttrs &attrs);
/// lstm_grad: the LstmForward of the training lstm that wrote y (the backend's saved state:
/// static_pointer_cast it), after checking that x, w, r, b and y are its buffers with its
/// shapes, and dy and the gradients' shapes.
std::shared_ptr<LstmForward> checkLstmGrad(const KernelSite &site, const NoAttrs &);

/// concat and slice as byte moves: for each of `blocks` indices before the axis, each input's
/// run of axis x trailing elements.
struct ConcatShape {
  int64_t blocks = 0;
  /// Bytes of each input per block, in input order, and their sum (the output's per block).
  std::vector<int64_t> partBytes;
  int64_t outBytes = 0;
};
ConcatShape checkConcat(const KernelSite &site, const AxisAttrs &attrs);
struct SliceShape {
  int64_t blocks = 0;
  /// Bytes of the input per block, where the slice starts in them, and the output's per block.
  int64_t inBytes = 0, offsetBytes = 0, outBytes = 0;
};
SliceShape checkSlice(const KernelSite &site, const SliceAttrs &attrs);

/// transpose: x viewed as [outer, da, middle, db, inner] elements of `elementBytes` bytes, y as
/// [outer, db, middle, da, inner] (axes axis_a and axis_b exchanged); y of x's type, or bf16
/// of an f32 x (the cast that followed, fused by the compiler).
struct TransposeShape {
  int64_t outer = 0, da = 0, middle = 0, db = 0, inner = 0, elementBytes = 0;
  int64_t elements() const { return outer * da * middle * db * inner; }
};
TransposeShape checkTranspose(const KernelSite &site, const TransposeAttrs &attrs);

/// The pointwise kinds (DP_POINTWISE_KERNEL of Kernels.def): x and y f32 of one element count,
/// returned.
int64_t checkPointwise(const KernelSite &site);
/// Their gradients (DP_POINTWISE_GRAD_KERNEL): x, dy and dx f32 of one element count, returned.
int64_t checkPointwiseGrad(const KernelSite &site);
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_POINTWISE_KERNEL(Enum, Name, Fn)                                                      \
  inline int64_t check##Enum(const KernelSite &site, const NoAttrs &) {                          \
    return checkPointwise(site);                                                                 \
  }
#define DP_POINTWISE_GRAD_KERNEL(Enum, Name, Fn)                                                 \
  inline int64_t check##Enum(const KernelSite &site, const NoAttrs &) {                          \
    return checkPointwiseGrad(site);                                                             \
  }
#include "runtime/format/Kernels.def"

/// The geometry the check of kind K returns, which a backend's factory of K receives:
/// `Geometry<KernelKind::Dense>` is DenseShape.
template <KernelKind K> struct GeometryOf;
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                                         \
  template <> struct GeometryOf<KernelKind::Enum> {                                                \
    using type =                                                                                   \
        decltype(check##Enum(std::declval<const KernelSite &>(), std::declval<const Attrs &>()));  \
  };
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#include "runtime/format/Kernels.def"
template <KernelKind K> using Geometry = typename GeometryOf<K>::type;

} // namespace dp::rt::contract
