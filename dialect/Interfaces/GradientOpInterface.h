// The gradient-rule op interface (see GradientOpInterface.td).
#pragma once

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "dialect/Interfaces/GradientOpInterface.h.inc"

namespace dp {

/// The StopsGradient trait (GradientOpInterface.td): the op's results take no gradient.
template <typename ConcreteType>
class StopsGradient : public mlir::OpTrait::TraitBase<ConcreteType, StopsGradient> {};

} // namespace dp
