// The gradient-rule op interface (see GradientOpInterface.td).
#pragma once

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "dialect/Interfaces/GradientOpInterface.h.inc"
