// Verifiers of the graph dialect's ops. Messages name the operands and give expected versus found.
#include "dialect/Graph/IR/GraphDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace dp::graph;

#define GET_OP_CLASSES
#include "dialect/Graph/IR/GraphOps.cpp.inc"

static RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Checks that `value` has rank `rank`; `what` names it in the message.
static LogicalResult checkRank(Operation *op, Value value, int64_t rank, StringRef what) {
  auto type = tensorType(value);
  if (type.getRank() != rank)
    return op->emitOpError() << "expects " << what << " of rank " << rank << ", found " << type;
  return success();
}

/// Checks that the result has exactly `expected` as its shape.
LogicalResult dp::graph::checkResultShape(Operation *op, ArrayRef<int64_t> expected) {
  auto type = tensorType(op->getResult(0));
  if (type.getShape() != expected) {
    auto want = RankedTensorType::get(expected, type.getElementType());
    return op->emitOpError() << "result type should be " << want << ", found " << type;
  }
  return success();
}

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty name");
  if (!isInitializer(getInit()))
    return emitOpError() << "'init' must be an initialiser such as #graph.glorot_uniform, found "
                         << getInit();
  if (getOptimizerState() && getTrainable())
    return emitOpError("optimizer state cannot be trainable");
  if (isa<UnitForgetBiasAttr>(getInit()) &&
      (getType().getRank() != 1 || getType().getDimSize(0) % 4 != 0))
    return emitOpError() << "#graph.unit_forget_bias initialises an LSTM bias of shape [4U], "
                            "found "
                         << getType();
  if (isa<OrthogonalAttr>(getInit()) && getType().getRank() < 2)
    return emitOpError() << "#graph.orthogonal needs a tensor of rank 2 or more, found "
                         << getType();
  return success();
}

/// The two factors of a product share their element type (both f32, or both bf16).
static LogicalResult checkFactors(Operation *op, Value a, StringRef aName, Value b,
                                  StringRef bName) {
  Type ta = tensorType(a).getElementType(), tb = tensorType(b).getElementType();
  if (ta != tb)
    return op->emitOpError() << "multiplies " << aName << " of " << ta << " by " << bName
                             << " of " << tb << ": the factors must share an element type";
  return success();
}

LogicalResult CastOp::verify() {
  auto in = tensorType(getInput()), out = tensorType(getResult());
  if (in.getShape() != out.getShape())
    return emitOpError() << "changes the shape " << in << " to " << out
                         << ": a cast keeps it";
  if (in.getElementType() == out.getElementType())
    return emitOpError() << "casts " << in.getElementType()
                         << " to itself: it must convert f32 to bf16 or back";
  return success();
}

LogicalResult DenseOp::verify() {
  if (failed(checkFactors(*this, getInput(), "input", getKernel(), "kernel")))
    return failure();
  if (failed(checkRank(*this, getInput(), 2, "input")) ||
      failed(checkRank(*this, getKernel(), 2, "kernel")))
    return failure();
  auto in = tensorType(getInput()).getShape();
  auto k = tensorType(getKernel()).getShape();
  if (in[1] != k[0])
    return emitOpError() << "input has " << in[1] << " features but the kernel expects " << k[0];
  if (Value bias = getBias()) {
    if (failed(checkRank(*this, bias, 1, "bias")))
      return failure();
    if (tensorType(bias).getDimSize(0) != k[1])
      return emitOpError() << "bias has " << tensorType(bias).getDimSize(0)
                           << " elements but the kernel has " << k[1] << " units";
  }
  return checkResultShape(*this, {in[0], k[1]});
}

/// Checks a gradient op's `grad` against the forward result's shape `expected` (failure: the
/// forward shape was already found invalid). The message says `why`, then `result` if given.
static LogicalResult checkGradShape(Operation *op, Value grad,
                                    const FailureOr<SmallVector<int64_t>> &expected,
                                    StringRef why, Type result = {}) {
  if (failed(expected))
    return failure();
  auto dy = tensorType(grad);
  if (dy.getShape() == ArrayRef<int64_t>(*expected))
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "grad should be "
                            << RankedTensorType::get(*expected, dy.getElementType()) << why;
  if (result)
    diag << result;
  return diag << ", found " << dy;
}

/// Reads a two-element array of positive integers (`strides`, `window`) into `out`.
static LogicalResult pairAttr(Operation *op, ArrayAttr attr, StringRef what, int64_t out[2]) {
  if (attr.size() != 2)
    return op->emitOpError() << "expects '" << what << "' to have 2 elements, found "
                             << attr.size();
  for (int i = 0; i < 2; ++i) {
    auto v = dyn_cast<IntegerAttr>(attr[i]);
    if (!v || v.getInt() < 1)
      return op->emitOpError() << "expects '" << what << "' to hold positive integers, found "
                               << attr;
    out[i] = v.getInt();
  }
  return success();
}

/// The [N, OH, OW, F] result of convolving an [N, H, W, C] input with a [KH, KW, C, F] kernel,
/// after checking the ranks, channels and attributes.
static FailureOr<SmallVector<int64_t>> convOutput(Operation *op, Value input, Value kernel,
                                                  ArrayAttr stridesAttr, StringRef padding,
                                                  StringRef inputName = "input") {
  if (failed(checkRank(op, input, 4, inputName)) || failed(checkRank(op, kernel, 4, "kernel")))
    return failure();
  if (padding != "valid" && padding != "same")
    return op->emitOpError() << "expects padding \"valid\" or \"same\", found \"" << padding
                             << "\"";
  int64_t strides[2];
  if (failed(pairAttr(op, stridesAttr, "strides", strides)))
    return failure();
  auto in = tensorType(input).getShape();
  auto k = tensorType(kernel).getShape();
  if (in[3] != k[2])
    return op->emitOpError() << inputName << " has " << in[3]
                             << " channels but the kernel expects " << k[2];
  SmallVector<int64_t> out{in[0], 0, 0, k[3]};
  for (int i = 0; i < 2; ++i) {
    out[1 + i] = windowAxis(in[1 + i], k[i], strides[i], padding == "same").out;
    if (out[1 + i] < 1)
      return op->emitOpError() << "kernel of " << k[0] << "x" << k[1] << " does not fit an "
                               << inputName << " of " << in[1] << "x" << in[2]
                               << " without padding";
  }
  return out;
}

LogicalResult Conv2DOp::verify() {
  if (failed(checkFactors(*this, getInput(), "input", getKernel(), "kernel")))
    return failure();
  FailureOr<SmallVector<int64_t>> out =
      convOutput(*this, getInput(), getKernel(), getStrides(), getPadding());
  if (failed(out))
    return failure();
  if (Value bias = getBias()) {
    if (failed(checkRank(*this, bias, 1, "bias")))
      return failure();
    if (tensorType(bias).getDimSize(0) != (*out)[3])
      return emitOpError() << "bias has " << tensorType(bias).getDimSize(0)
                           << " elements but the kernel has " << (*out)[3] << " filters";
  }
  return checkResultShape(*this, *out);
}

LogicalResult Conv2DGradInputOp::verify() {
  if (failed(checkFactors(*this, getGrad(), "grad", getKernel(), "kernel")))
    return failure();
  // The result is the forward input: convolving it must give the shape of `grad`.
  return checkGradShape(
      *this, getGrad(),
      convOutput(*this, getResult(), getKernel(), getStrides(), getPadding(), "result"),
      " for a result of ", getResult().getType());
}

LogicalResult Conv2DGradFilterOp::verify() {
  if (failed(checkFactors(*this, getInput(), "input", getGrad(), "grad")))
    return failure();
  return checkGradShape(*this, getGrad(),
                        convOutput(*this, getInput(), getResult(), getStrides(), getPadding()),
                        " for a result of ", getResult().getType());
}

/// The [N, OH, OW, C] result of pooling an [N, H, W, C] input.
static FailureOr<SmallVector<int64_t>> poolOutput(Operation *op, Value input, ArrayAttr windowAttr,
                                                  ArrayAttr stridesAttr) {
  if (failed(checkRank(op, input, 4, "input")))
    return failure();
  int64_t window[2], strides[2];
  if (failed(pairAttr(op, windowAttr, "window", window)) ||
      failed(pairAttr(op, stridesAttr, "strides", strides)))
    return failure();
  auto in = tensorType(input).getShape();
  SmallVector<int64_t> out{in[0], 0, 0, in[3]};
  for (int i = 0; i < 2; ++i) {
    out[1 + i] = windowAxis(in[1 + i], window[i], strides[i], /*same=*/false).out;
    if (out[1 + i] < 1)
      return op->emitOpError() << "window of " << window[0] << "x" << window[1]
                               << " does not fit an input of " << in[1] << "x" << in[2];
  }
  return out;
}

/// A pooling op: its result is the pooled `input`.
static LogicalResult verifyPool(Operation *op, Value input, ArrayAttr window, ArrayAttr strides) {
  FailureOr<SmallVector<int64_t>> out = poolOutput(op, input, window, strides);
  if (failed(out))
    return failure();
  return checkResultShape(op, *out);
}

/// A pooling gradient: `grad` has the pooled shape of `input` (the forward input's shape).
static LogicalResult verifyPoolGrad(Operation *op, Value input, Value grad, ArrayAttr window,
                                    ArrayAttr strides) {
  return checkGradShape(op, grad, poolOutput(op, input, window, strides), " (the pooled shape)");
}

LogicalResult MaxPool2DOp::verify() {
  return verifyPool(*this, getInput(), getWindow(), getStrides());
}

LogicalResult MaxPool2DGradOp::verify() {
  return verifyPoolGrad(*this, getInput(), getGrad(), getWindow(), getStrides());
}

/// Dropout's rate is a probability below 1.
static LogicalResult checkRate(Operation *op, double rate) {
  if (!(rate >= 0.0 && rate < 1.0))
    return op->emitOpError() << "expects a rate in [0, 1), found " << rate;
  return success();
}

LogicalResult DropoutOp::verify() {
  // Masks are drawn per sample row.
  if (tensorType(getInput()).getRank() < 1)
    return emitOpError("expects an input with a batch axis");
  return checkRate(*this, getRate().convertToDouble());
}

LogicalResult DropoutGradOp::verify() {
  auto forward = getOutput().getDefiningOp<DropoutOp>();
  if (!forward)
    return emitOpError("expects output to be the result of a graph.dropout");
  if (forward.getRate() != getRate())
    return emitOpError() << "has rate " << getRate().convertToDouble()
                         << " but its graph.dropout has " << forward.getRate().convertToDouble();
  return checkRate(*this, getRate().convertToDouble());
}

LogicalResult ReshapeOp::verify() {
  auto in = tensorType(getInput());
  auto out = tensorType(getResult());
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << in << " (" << in.getNumElements()
                         << " elements) to " << out << " (" << out.getNumElements()
                         << " elements)";
  return success();
}

LogicalResult FlattenOp::verify() {
  auto in = tensorType(getInput());
  if (in.getRank() < 1)
    return emitOpError("expects an input with a batch axis");
  // The product of the non-batch axes; not the element count over the batch, which may be 0.
  int64_t features = 1;
  for (int64_t d : in.getShape().drop_front())
    features = ShapedType::isDynamic(d) || ShapedType::isDynamic(features) ? ShapedType::kDynamic
                                                                           : features * d;
  return checkResultShape(*this, {in.getDimSize(0), features});
}

/// Common checks of ops taking [N, C] logits and [N] labels.
static LogicalResult verifyLogitsAndLabels(Operation *op, Value logits, Value labels) {
  if (failed(checkRank(op, logits, 2, "logits")) || failed(checkRank(op, labels, 1, "labels")))
    return failure();
  int64_t n = tensorType(logits).getDimSize(0), m = tensorType(labels).getDimSize(0);
  if (n != m)
    return op->emitOpError() << "has " << n << " rows of logits but " << m << " labels";
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  return verifyLogitsAndLabels(*this, getLogits(), getLabels());
}

LogicalResult CountCorrectOp::verify() {
  return verifyLogitsAndLabels(*this, getLogits(), getLabels());
}

LogicalResult MatMulOp::verify() {
  if (failed(checkFactors(*this, getLhs(), "lhs", getRhs(), "rhs")))
    return failure();
  if (failed(checkRank(*this, getLhs(), 2, "lhs")) || failed(checkRank(*this, getRhs(), 2, "rhs")))
    return failure();
  auto a = tensorType(getLhs()).getShape();
  auto b = tensorType(getRhs()).getShape();
  int64_t m = getTransposeLhs() ? a[1] : a[0], ka = getTransposeLhs() ? a[0] : a[1];
  int64_t kb = getTransposeRhs() ? b[1] : b[0], n = getTransposeRhs() ? b[0] : b[1];
  if (ka != kb)
    return emitOpError() << "contracts " << ka << " columns of lhs with " << kb << " rows of rhs";
  return checkResultShape(*this, {m, n});
}

LogicalResult ReduceRowsOp::verify() {
  auto in = tensorType(getInput());
  if (in.getRank() < 1)
    return emitOpError("expects an input with a batch axis");
  return checkResultShape(*this, in.getShape().drop_front());
}

LogicalResult ActivationGradOp::verify() {
  if (getActivation() == Activation::none)
    return emitOpError("needs an activation other than none");
  return success();
}

LogicalResult SoftmaxCrossEntropyGradOp::verify() {
  if (failed(verifyLogitsAndLabels(*this, getLogits(), getLabels())))
    return failure();
  if (getType() != getLogits().getType())
    return emitOpError() << "result type should be " << getLogits().getType() << ", found "
                         << getType();
  return success();
}

/// Checks that `value` is a parameter declared by graph.param, with the wanted role.
static LogicalResult checkParam(Operation *op, Value value, StringRef what, bool optimizerState) {
  auto param = value.getDefiningOp<ParamOp>();
  if (!param)
    return op->emitOpError() << "expects " << what << " to be a graph.param";
  if (optimizerState && !param.getOptimizerState())
    return op->emitOpError() << "expects " << what << " to be optimizer state, found parameter '"
                             << param.getName() << "'";
  if (!optimizerState && !param.getTrainable())
    return op->emitOpError() << "expects " << what << " to be trainable, found parameter '"
                             << param.getName() << "'";
  return success();
}

/// Checks the update ops: a trainable param and its optimizer state (types match by trait).
static LogicalResult verifyUpdate(Operation *op, Value param, ValueRange state) {
  if (failed(checkParam(op, param, "the updated value", /*optimizerState=*/false)))
    return failure();
  for (Value s : state)
    if (failed(checkParam(op, s, "the optimizer state", /*optimizerState=*/true)))
      return failure();
  return success();
}

LogicalResult ApplyGradientOp::verify() {
  return verifyUpdate(*this, getParam(), {});
}

LogicalResult SgdUpdateOp::verify() {
  return verifyUpdate(*this, getParam(), {});
}

LogicalResult MomentumUpdateOp::verify() {
  return verifyUpdate(*this, getParam(), getVelocity());
}

LogicalResult AdamUpdateOp::verify() {
  return verifyUpdate(*this, getParam(), ValueRange{getM(), getV()});
}

//===----------------------------------------------------------------------===//
// Padding, average pooling, batch normalisation, LSTM
//===----------------------------------------------------------------------===//

/// The padded shape of an [N, H, W, C] tensor under `padding` = [top, bottom, left, right].
static FailureOr<SmallVector<int64_t>> paddedShape(Operation *op, Value input,
                                                   ArrayAttr padding, StringRef inputName) {
  if (failed(checkRank(op, input, 4, inputName)))
    return failure();
  if (padding.size() != 4)
    return op->emitOpError() << "expects 'padding' to be [top, bottom, left, right], found "
                             << padding;
  int64_t pad[4];
  for (int i = 0; i < 4; ++i) {
    auto v = dyn_cast<IntegerAttr>(padding[i]);
    if (!v || v.getInt() < 0)
      return op->emitOpError() << "expects 'padding' to hold non-negative integers, found "
                               << padding;
    pad[i] = v.getInt();
  }
  SmallVector<int64_t> out(tensorType(input).getShape());
  out[1] += pad[0] + pad[1];
  out[2] += pad[2] + pad[3];
  return out;
}

LogicalResult ZeroPad2DOp::verify() {
  FailureOr<SmallVector<int64_t>> out = paddedShape(*this, getInput(), getPadding(), "input");
  if (failed(out))
    return failure();
  return checkResultShape(*this, *out);
}

LogicalResult ZeroPad2DGradOp::verify() {
  return checkGradShape(*this, getGrad(),
                        paddedShape(*this, getResult(), getPadding(), "result"),
                        " (the padded shape)");
}

LogicalResult AvgPool2DOp::verify() {
  return verifyPool(*this, getInput(), getWindow(), getStrides());
}

LogicalResult AvgPool2DGradOp::verify() {
  return verifyPoolGrad(*this, getResult(), getGrad(), getWindow(), getStrides());
}

LogicalResult GlobalAvgPool2DOp::verify() {
  if (failed(checkRank(*this, getInput(), 4, "input")))
    return failure();
  auto in = tensorType(getInput()).getShape();
  return checkResultShape(*this, {in[0], in[3]});
}

/// Checks that `value` is a vector of `channels` elements; `what` names it.
LogicalResult dp::graph::checkChannels(Operation *op, Value value, int64_t channels, StringRef what) {
  auto type = tensorType(value);
  if (type.getRank() != 1 || type.getDimSize(0) != channels)
    return op->emitOpError() << "expects " << what << " of shape [" << channels
                             << "] (one per channel), found " << type;
  return success();
}

/// The channel count of a batch-normalised input: its last axis (rank >= 2).
FailureOr<int64_t> dp::graph::normChannels(Operation *op, Value input) {
  auto type = tensorType(input);
  if (type.getRank() < 2)
    return op->emitOpError() << "expects an input with a batch axis and a channel axis, found "
                             << type;
  return type.getShape().back();
}

LogicalResult dp::graph::checkEpsilon(Operation *op, double epsilon) {
  if (!(epsilon > 0.0))
    return op->emitOpError() << "expects a positive epsilon, found " << epsilon;
  return success();
}

/// Checks that `stats` is the [2, C] output of graph.batch_moments.
static LogicalResult checkStats(Operation *op, Value stats, int64_t channels) {
  auto type = tensorType(stats);
  if (type.getShape() != ArrayRef<int64_t>{2, channels})
    return op->emitOpError() << "expects stats of shape [2, " << channels
                             << "] (mean and mean of squares), found " << type;
  return success();
}

LogicalResult BatchNormOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c) || failed(checkChannels(*this, getGamma(), *c, "gamma")) ||
      failed(checkChannels(*this, getBeta(), *c, "beta")) ||
      failed(checkChannels(*this, getMovingMean(), *c, "moving_mean")) ||
      failed(checkChannels(*this, getMovingVar(), *c, "moving_var")) ||
      failed(checkEpsilon(*this, getEpsilon().convertToDouble())))
    return failure();
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError() << "expects a momentum in [0, 1], found " << momentum;
  return checkResultShape(*this, tensorType(getInput()).getShape());
}

LogicalResult BatchMomentsOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c))
    return failure();
  return checkResultShape(*this, {2, *c});
}

LogicalResult BatchNormTrainOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c) || failed(checkStats(*this, getStats(), *c)) ||
      failed(checkChannels(*this, getGamma(), *c, "gamma")) ||
      failed(checkChannels(*this, getBeta(), *c, "beta")))
    return failure();
  return checkEpsilon(*this, getEpsilon().convertToDouble());
}

LogicalResult MovingStatsUpdateOp::verify() {
  int64_t c = tensorType(getMovingMean()).getNumElements();
  if (failed(checkChannels(*this, getMovingMean(), c, "moving_mean")) ||
      failed(checkStats(*this, getStats(), c)))
    return failure();
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError() << "expects a momentum in [0, 1], found " << momentum;
  return success();
}

LogicalResult BatchNormGradParamsOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c) || failed(checkStats(*this, getStats(), *c)) ||
      failed(checkChannels(*this, getGammaGrad(), *c, "gamma_grad")) ||
      failed(checkChannels(*this, getBetaGrad(), *c, "beta_grad")))
    return failure();
  if (getGrad().getType() != getInput().getType())
    return emitOpError() << "expects grad of the input's type " << getInput().getType()
                         << ", found " << getGrad().getType();
  return checkEpsilon(*this, getEpsilon().convertToDouble());
}

LogicalResult BatchNormGradInputOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c) || failed(checkStats(*this, getStats(), *c)) ||
      failed(checkChannels(*this, getGamma(), *c, "gamma")) ||
      failed(checkChannels(*this, getGammaGrad(), *c, "gamma_grad")) ||
      failed(checkChannels(*this, getBetaGrad(), *c, "beta_grad")))
    return failure();
  return checkEpsilon(*this, getEpsilon().convertToDouble());
}

/// Checks an LSTM's operand shapes and returns its output shape.
static FailureOr<SmallVector<int64_t>> lstmOutput(Operation *op, Value input, Value kernel,
                                                  Value recurrent, Value bias,
                                                  bool returnSequences) {
  if (failed(checkRank(op, input, 3, "input")) || failed(checkRank(op, kernel, 2, "kernel")) ||
      failed(checkRank(op, recurrent, 2, "recurrent_kernel")))
    return failure();
  auto x = tensorType(input).getShape();
  auto w = tensorType(kernel).getShape();
  auto r = tensorType(recurrent).getShape();
  int64_t units = r[0];
  if (r[1] != 4 * units)
    return op->emitOpError() << "expects recurrent_kernel of shape [U, 4U], found "
                             << recurrent.getType();
  if (w[0] != x[2] || w[1] != 4 * units)
    return op->emitOpError() << "expects kernel of shape [" << x[2] << ", " << 4 * units
                             << "] (input features, 4 x units), found " << kernel.getType();
  if (failed(checkChannels(op, bias, 4 * units, "bias")))
    return failure();
  if (returnSequences)
    return SmallVector<int64_t>{x[0], x[1], units};
  return SmallVector<int64_t>{x[0], units};
}

/// An LSTM's input, kernels and output share their element type (f32, or bf16).
static LogicalResult checkLstmTypes(Operation *op, Value input, Value kernel, Value recurrent,
                                    Value output) {
  for (auto [value, what] : {std::pair{kernel, "kernel"}, std::pair{recurrent, "recurrent_kernel"},
                             std::pair{output, "output"}})
    if (failed(checkFactors(op, input, "input", value, what)))
      return failure();
  return success();
}

LogicalResult LstmOp::verify() {
  if (failed(checkLstmTypes(*this, getInput(), getKernel(), getRecurrentKernel(), getResult())))
    return failure();
  FailureOr<SmallVector<int64_t>> out = lstmOutput(
      *this, getInput(), getKernel(), getRecurrentKernel(), getBias(), getReturnSequences());
  if (failed(out))
    return failure();
  return checkResultShape(*this, *out);
}

LogicalResult LstmGradOp::verify() {
  if (failed(checkLstmTypes(*this, getInput(), getKernel(), getRecurrentKernel(), getOutput())))
    return failure();
  FailureOr<SmallVector<int64_t>> out = lstmOutput(
      *this, getInput(), getKernel(), getRecurrentKernel(), getBias(), getReturnSequences());
  if (failed(out))
    return failure();
  for (auto [value, what] : {std::pair{getOutput(), "output"}, std::pair{getGrad(), "grad"}})
    if (tensorType(value).getShape() != ArrayRef<int64_t>(*out))
      return emitOpError() << "expects " << what << " of shape "
                           << RankedTensorType::get(*out, tensorType(value).getElementType())
                           << ", found " << value.getType();
  Value operands[] = {getInput(), getKernel(), getRecurrentKernel(), getBias()};
  // The kernel reads what its forward saved: the output must come from that very LSTM.
  auto forward = getOutput().getDefiningOp<LstmOp>();
  if (!forward || forward->getOperands() != ValueRange(operands))
    return emitOpError("expects output to be the result of a graph.lstm of the same operands");
  if (forward.getReturnSequences() != getReturnSequences())
    return emitOpError("expects return_sequences as in its graph.lstm");
  // Each gradient has its operand's shape, in f32.
  for (auto [i, operand] : llvm::enumerate(operands)) {
    Type want = tensorType(operand).clone(Float32Type::get(getContext()));
    if (getResult(i).getType() != want)
      return emitOpError() << "result #" << i << " should have type " << want << ", found "
                           << getResult(i).getType();
  }
  return success();
}
