// graph.param. Each op's verifier, gradient rule, batch sharding and lowering (those it has) are
// here; see docs/architecture.md, "Adding an op".
#include "dialect/Graph/IR/Ops/Common.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;
using rt::KernelKind;

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
  // Values given as data (an imported model's weights): f32, the parameter's own shape.
  if (auto data = dyn_cast<ElementsAttr>(getInit()); data && data.getType() != getType())
    return emitOpError() << "is " << getType() << " but its initial data is " << data.getType();
  if (isa<OrthogonalAttr>(getInit()) && getType().getRank() < 2)
    return emitOpError() << "#graph.orthogonal needs a tensor of rank 2 or more, found "
                         << getType();
  return success();
}
