// graph.layer_norm and graph.layer_norm_grad: verifiers, gradient rule, batch sharding and
// lowering in one place. Statistics are per row, so the forward op splits along the batch as
// a row-wise op; only gamma's and beta's gradients sum over the rows.
#include "dialect/Graph/IR/GraphDialect.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;

LogicalResult LayerNormOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c) || failed(checkChannels(*this, getGamma(), *c, "gamma")) ||
      failed(checkChannels(*this, getBeta(), *c, "beta")))
    return failure();
  return checkEpsilon(*this, getEpsilon().convertToDouble());
}

LogicalResult LayerNormGradOp::verify() {
  FailureOr<int64_t> c = normChannels(*this, getInput());
  if (failed(c) || failed(checkChannels(*this, getGamma(), *c, "gamma")) ||
      failed(checkEpsilon(*this, getEpsilon().convertToDouble())))
    return failure();
  for (Value v : {getGammaGrad(), getBetaGrad()})
    if (v.getType() != getGamma().getType())
      return emitOpError() << "expects gamma's and beta's gradients of gamma's type "
                           << getGamma().getType() << ", found " << v.getType();
  return success();
}

// One op gives all three gradients; the statistics' dependence on the input is in dx.
LogicalResult LayerNormOp::buildGradient(OpBuilder &b, ValueRange resultGrads,
                                         ArrayRef<bool> wanted,
                                         SmallVectorImpl<Value> &operandGrads) {
  Type gammaType = getGamma().getType();
  auto grad = b.create<LayerNormGradOp>(getLoc(), getInput().getType(), gammaType, gammaType,
                                        getInput(), getGamma(), resultGrads[0], getEpsilonAttr());
  operandGrads.assign(3, Value());
  for (unsigned i = 0; i < 3; ++i)
    if (wanted[i])
      operandGrads[i] = grad->getResult(i);
  return success();
}

LogicalResult LayerNormGradOp::getResultSharding(ArrayRef<bool>,
                                                 SmallVectorImpl<BatchSharding> &results) {
  results.assign({BatchSharding::Rows, BatchSharding::Reduced, BatchSharding::Reduced});
  return success();
}

LogicalResult LayerNormOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, rt::KernelKind::LayerNorm, rt::EpsilonAttrs{getEpsilon().convertToDouble()});
  return success();
}

LogicalResult LayerNormGradOp::lowerToKernels(KernelLowering &l) {
  l.kernel(*this, rt::KernelKind::LayerNormGrad,
           rt::EpsilonAttrs{getEpsilon().convertToDouble()});
  return success();
}
