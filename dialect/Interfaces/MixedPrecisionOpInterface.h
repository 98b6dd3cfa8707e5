// The mixed-precision op interface (see MixedPrecisionOpInterface.td).
#pragma once

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "dialect/Interfaces/MixedPrecisionOpInterface.h.inc"
