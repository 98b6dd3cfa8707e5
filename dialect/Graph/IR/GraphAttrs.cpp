// Graph dialect attributes: parsing of plain-double parameters and the attribute verifiers.
#include "dialect/Graph/IR/GraphDialect.h"

#include <cmath>

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include "dialect/Common/AttrParsers.h"

using namespace mlir;
using namespace dp::graph;

#include "dialect/Graph/IR/GraphEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialect/Graph/IR/GraphAttrs.cpp.inc"

void GraphDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/Graph/IR/GraphAttrs.cpp.inc"
      >();
}

LogicalResult UniformAttr::verify(function_ref<InFlightDiagnostic()> emitError, APFloat lowF,
                                  APFloat highF) {
  double low = lowF.convertToDouble(), high = highF.convertToDouble();
  if (!(low < high))
    return emitError() << "uniform initialiser needs low < high, found low " << low << " and high "
                       << high;
  return success();
}

LogicalResult NormalAttr::verify(function_ref<InFlightDiagnostic()> emitError, APFloat,
                                 APFloat stddevF) {
  double stddev = stddevF.convertToDouble();
  if (!(stddev > 0) || !std::isfinite(stddev))
    return emitError() << "normal initialiser needs a finite stddev > 0, found " << stddev;
  return success();
}

static LogicalResult verifyLearningRate(function_ref<InFlightDiagnostic()> emitError, double lr) {
  if (!(lr > 0))
    return emitError() << "learning rate must be positive, found " << lr;
  // An infinite rate turns every parameter into inf or NaN at the first step.
  if (!std::isfinite(lr))
    return emitError() << "learning rate must be finite, found " << lr;
  return success();
}

static LogicalResult verifyWeightDecay(function_ref<InFlightDiagnostic()> emitError,
                                       APFloat decayF) {
  const double decay = decayF.convertToDouble();
  if (!(decay >= 0) || !std::isfinite(decay))
    return emitError() << "weight_decay must be finite and >= 0, found " << decay;
  return success();
}

LogicalResult SgdAttr::verify(function_ref<InFlightDiagnostic()> emitError, APFloat lr,
                              APFloat weightDecay) {
  if (failed(verifyLearningRate(emitError, lr.convertToDouble())))
    return failure();
  return verifyWeightDecay(emitError, weightDecay);
}

LogicalResult MomentumAttr::verify(function_ref<InFlightDiagnostic()> emitError, APFloat lr,
                                   APFloat momentumF, bool nesterov, APFloat weightDecay) {
  if (failed(verifyWeightDecay(emitError, weightDecay)))
    return failure();
  double momentum = momentumF.convertToDouble();
  if (failed(verifyLearningRate(emitError, lr.convertToDouble())))
    return failure();
  if (!(momentum >= 0 && momentum < 1))
    return emitError() << "momentum must be in [0, 1), found " << momentum;
  return success();
}

LogicalResult AdamAttr::verify(function_ref<InFlightDiagnostic()> emitError, APFloat lr,
                               APFloat beta1F, APFloat beta2F, APFloat epsilonF, bool,
                               APFloat weightDecay) {
  if (failed(verifyWeightDecay(emitError, weightDecay)))
    return failure();
  double beta1 = beta1F.convertToDouble(), beta2 = beta2F.convertToDouble();
  double epsilon = epsilonF.convertToDouble();
  if (failed(verifyLearningRate(emitError, lr.convertToDouble())))
    return failure();
  if (!(beta1 >= 0 && beta1 < 1))
    return emitError() << "beta1 must be in [0, 1), found " << beta1;
  if (!(beta2 >= 0 && beta2 < 1))
    return emitError() << "beta2 must be in [0, 1), found " << beta2;
  if (!(epsilon > 0) || !std::isfinite(epsilon))
    return emitError() << "epsilon must be positive and finite, found " << epsilon;
  return success();
}

bool dp::graph::isInitializer(Attribute attr) {
  return isa<ZerosAttr, OnesAttr, ConstantAttr, UniformAttr, NormalAttr, GlorotUniformAttr,
             GlorotNormalAttr, HeNormalAttr, HeUniformAttr, OrthogonalAttr, UnitForgetBiasAttr,
             ElementsAttr>(attr);
}

bool dp::graph::isOptimizer(Attribute attr) { return isa<SgdAttr, MomentumAttr, AdamAttr>(attr); }
