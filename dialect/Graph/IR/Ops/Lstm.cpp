// graph.lstm and graph.lstm_grad. Each op's verifier, gradient rule, batch sharding and lowering
// (those it has) are here; see docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

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

LogicalResult LstmOp::buildGradient(OpBuilder &b, ValueRange resultGrads, ArrayRef<bool> wanted,
                                    SmallVectorImpl<Value> &operandGrads) {
  auto grad = b.create<LstmGradOp>(getLoc(), getOperandTypes(), getInput(), getKernel(),
                                   getRecurrentKernel(), getBias(), getResult(), resultGrads[0],
                                   getReturnSequencesAttr());
  operandGrads.clear();
  for (auto [result, want] : llvm::zip(grad.getResults(), wanted))
    operandGrads.push_back(want ? result : Value());
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

// An LSTM's input gradient has the input's rows; its weight gradients sum over them.
LogicalResult LstmGradOp::getResultSharding(ArrayRef<bool>,
                                            SmallVectorImpl<BatchSharding> &results) {
  results.assign({BatchSharding::Rows, BatchSharding::Reduced, BatchSharding::Reduced,
                  BatchSharding::Reduced});
  return success();
}

// Under mixed precision the whole layer runs in bf16 (oneDNN): x, w and r are read in bf16 (the
// bias stays f32) and h is written in bf16, which LSTMs and lstm_grad read as it is.
SmallVector<unsigned> LstmOp::getLowPrecisionOperands(int64_t) { return {0, 1, 2}; }

bool LstmOp::hasLowPrecisionResult() { return true; }

bool LstmOp::readsLowPrecisionResultAsIs(unsigned index) { return index == 0; }

SmallVector<unsigned> LstmGradOp::getLowPrecisionOperands(int64_t) { return {0, 1, 2}; }

// lstm_grad's input (0) and the forward output (4) are the LSTM's own values.
bool LstmGradOp::readsLowPrecisionResultAsIs(unsigned index) { return index == 0 || index == 4; }
