// Kernel lowering of the graph ops (KernelLoweringOpInterface): which runtime kernels of the
// contract table (runtime/format/Kernels.def) each op becomes, with typed attributes. The
// conversion to the plan dialect knows none of these ops; it calls these rules.
#include "dialect/Graph/IR/GraphDialect.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

namespace {

int64_t at(ArrayAttr array, unsigned i) { return cast<IntegerAttr>(array[i]).getInt(); }

rt::Activation runtimeActivation(Activation a) {
  rt::Activation act = rt::Activation::None;
  rt::activationByName(stringifyActivation(a), act);
  return act;
}

/// The geometry of a convolution of `input` (NHWC) by `kernel` (HWIO), as the attributes of
/// any of the convolution kernels.
template <typename Attrs>
Attrs convGeometry(Type input, Type kernel, ArrayAttr strides, StringRef padding) {
  auto in = cast<RankedTensorType>(input).getShape();
  auto k = cast<RankedTensorType>(kernel).getShape();
  Attrs a;
  a.stride_h = at(strides, 0), a.stride_w = at(strides, 1);
  WindowAxis h = windowAxis(in[1], k[0], a.stride_h, padding == "same");
  WindowAxis w = windowAxis(in[2], k[1], a.stride_w, padding == "same");
  a.pad_top = h.padBefore, a.pad_bottom = h.padAfter;
  a.pad_left = w.padBefore, a.pad_right = w.padAfter;
  return a;
}

rt::PoolAttrs pool(int64_t wh, int64_t ww, int64_t sh, int64_t sw) {
  rt::PoolAttrs a;
  a.window_h = wh, a.window_w = ww, a.stride_h = sh, a.stride_w = sw;
  return a;
}
rt::PoolAttrs pool(ArrayAttr window, ArrayAttr strides) {
  return pool(at(window, 0), at(window, 1), at(strides, 0), at(strides, 1));
}

rt::PadAttrs padding(ArrayAttr p) {
  rt::PadAttrs a;
  a.pad_top = at(p, 0), a.pad_bottom = at(p, 1), a.pad_left = at(p, 2), a.pad_right = at(p, 3);
  return a;
}

rt::EpsilonAttrs epsilon(APFloat e) { return {e.convertToDouble()}; }

} // namespace

LogicalResult DenseOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Dense, rt::FusedActivationAttrs{runtimeActivation(getActivation())});
  return success();
}

template <typename OpT> static LogicalResult lowerActivation(OpT op, KernelLowering &l) {
  l.kernel(op, KernelKind::Activation, rt::ActivationAttrs{runtimeActivation(OpT::kActivation)});
  return success();
}
#define DP_ACTIVATION_LOWERING(OpT)                                                                \
  LogicalResult OpT::lowerToKernels(KernelLowering &l) { return lowerActivation(*this, l); }
DP_ACTIVATION_LOWERING(ReluOp)
DP_ACTIVATION_LOWERING(SigmoidOp)
DP_ACTIVATION_LOWERING(TanhOp)
DP_ACTIVATION_LOWERING(SoftmaxOp)
#undef DP_ACTIVATION_LOWERING

// Reshapes move no data: the result is a view of the operand's buffer.
LogicalResult ReshapeOp::lowerToKernels(KernelLowering &l) {
  l.view(getResult(), getInput());
  return success();
}

LogicalResult FlattenOp::lowerToKernels(KernelLowering &l) {
  l.view(getResult(), getInput());
  return success();
}

LogicalResult Conv2DOp::lowerToKernels(KernelLowering &l) {
  auto attrs = convGeometry<rt::Conv2dAttrs>(getInput().getType(), getKernel().getType(),
                                             getStrides(), getPadding());
  attrs.activation = runtimeActivation(getActivation());
  l.kernel(*this, KernelKind::Conv2d, attrs);
  return success();
}

LogicalResult Conv2DGradInputOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Conv2dGradInput,
           convGeometry<rt::ConvAttrs>(getType(), getKernel().getType(), getStrides(),
                                       getPadding()));
  return success();
}

LogicalResult Conv2DGradFilterOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Conv2dGradFilter,
           convGeometry<rt::ConvAttrs>(getInput().getType(), getType(), getStrides(),
                                       getPadding()));
  return success();
}

LogicalResult MaxPool2DOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::MaxPool2d, pool(getWindow(), getStrides()));
  return success();
}

LogicalResult MaxPool2DGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::MaxPool2dGrad, pool(getWindow(), getStrides()));
  return success();
}

LogicalResult AvgPool2DOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::AvgPool2d, pool(getWindow(), getStrides()));
  return success();
}

LogicalResult AvgPool2DGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::AvgPool2dGrad, pool(getWindow(), getStrides()));
  return success();
}

// An average pool whose window is the whole image, writing [N, C].
LogicalResult GlobalAvgPool2DOp::lowerToKernels(KernelLowering &l) {
  auto in = cast<RankedTensorType>(getInput().getType()).getShape();
  l.kernel(*this, KernelKind::AvgPool2d, pool(in[1], in[2], in[1], in[2]));
  return success();
}

LogicalResult ZeroPad2DOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::ZeroPad2d, padding(getPadding()));
  return success();
}

LogicalResult ZeroPad2DGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::ZeroPad2dGrad, padding(getPadding()));
  return success();
}

LogicalResult BatchNormOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::BatchNormInfer, epsilon(getEpsilon()));
  return success();
}

LogicalResult BatchMomentsOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::BatchMoments);
  return success();
}

LogicalResult BatchNormTrainOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::BatchNormTrain, epsilon(getEpsilon()));
  return success();
}

LogicalResult BatchNormGradParamsOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::BatchNormGradParams, epsilon(getEpsilon()));
  return success();
}

LogicalResult BatchNormGradInputOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::BatchNormGradInput, epsilon(getEpsilon()));
  return success();
}

// The moving statistics are persistent: updated in place.
LogicalResult MovingStatsUpdateOp::lowerToKernels(KernelLowering &l) {
  l.emit(getLoc(), KernelKind::MovingStatsUpdate, {l.buffer(getStats())},
         {l.buffer(getMovingMean()), l.buffer(getMovingVar())},
         rt::MovingStatsAttrs{getMomentum().convertToDouble()});
  return success();
}

// A training LSTM keeps what its gradient kernel needs, found through its output.
LogicalResult LstmOp::lowerToKernels(KernelLowering &l) {
  rt::LstmAttrs attrs;
  attrs.return_sequences = getReturnSequences();
  attrs.training = llvm::any_of(getResult().getUsers(), [&](Operation *u) {
    auto grad = dyn_cast<LstmGradOp>(u);
    return grad && grad.getOutput() == getResult();
  });
  l.kernel(*this, KernelKind::Lstm, attrs);
  return success();
}

LogicalResult LstmGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::LstmGrad);
  return success();
}

// The mask is a buffer of the step, read again by the gradient. Each device numbers its
// dropouts in order, so that the replicas of one dropout draw from one stream.
LogicalResult DropoutOp::lowerToKernels(KernelLowering &l) {
  Value y = l.newBuffer(getResult());
  Value mask = l.scratch(*this, getType());
  l.remember(getResult(), mask);
  rt::DropoutAttrs attrs;
  attrs.rate = getRate().convertToDouble();
  attrs.stream = l.nextIndex(*this, "dropout");
  l.emit(getLoc(), KernelKind::Dropout, {l.buffer(getInput())}, {y, mask}, attrs);
  return success();
}

LogicalResult DropoutGradOp::lowerToKernels(KernelLowering &l) {
  Value mask = l.recall(getOutput());
  if (!mask)
    return emitOpError("has no mask: its graph.dropout was not lowered in this step");
  Value dx = l.newBuffer(getResult());
  l.emit(getLoc(), KernelKind::DropoutGrad, {mask, l.buffer(getGrad())}, {dx}, rt::NoAttrs{});
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::SoftmaxXent);
  return success();
}

LogicalResult SoftmaxCrossEntropyGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::SoftmaxXentGrad);
  return success();
}

LogicalResult CountCorrectOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::CountCorrect);
  return success();
}

LogicalResult AddOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Add);
  return success();
}

LogicalResult CastOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Cast);
  return success();
}

LogicalResult FillOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::Fill, rt::FillAttrs{getValue().convertToDouble()});
  return success();
}

LogicalResult MatMulOp::lowerToKernels(KernelLowering &l) {
  rt::MatMulAttrs attrs;
  attrs.transpose_a = getTransposeLhs(), attrs.transpose_b = getTransposeRhs();
  l.kernel(*this, KernelKind::MatMul, attrs);
  return success();
}

LogicalResult ReduceRowsOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::ReduceRows);
  return success();
}

LogicalResult ActivationGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, KernelKind::ActivationGrad,
           rt::ActivationAttrs{runtimeActivation(getActivation())});
  return success();
}

// Updates write the persistent parameter (and optimizer state) buffers in place.
LogicalResult SgdUpdateOp::lowerToKernels(KernelLowering &l) {
  l.emit(getLoc(), KernelKind::SgdUpdate, {l.buffer(getGradient())}, {l.buffer(getParam())},
         rt::SgdAttrs{getLr().convertToDouble()});
  return success();
}

LogicalResult MomentumUpdateOp::lowerToKernels(KernelLowering &l) {
  rt::MomentumAttrs attrs;
  attrs.lr = getLr().convertToDouble(), attrs.momentum = getMomentum().convertToDouble();
  attrs.nesterov = getNesterov();
  l.emit(getLoc(), KernelKind::MomentumUpdate, {l.buffer(getGradient())},
         {l.buffer(getParam()), l.buffer(getVelocity())}, attrs);
  return success();
}

LogicalResult AdamUpdateOp::lowerToKernels(KernelLowering &l) {
  rt::AdamAttrs attrs;
  attrs.lr = getLr().convertToDouble(), attrs.beta1 = getBeta1().convertToDouble();
  attrs.beta2 = getBeta2().convertToDouble(), attrs.epsilon = getEpsilon().convertToDouble();
  l.emit(getLoc(), KernelKind::AdamUpdate, {l.buffer(getGradient())},
         {l.buffer(getParam()), l.buffer(getM()), l.buffer(getV())}, attrs);
  return success();
}
