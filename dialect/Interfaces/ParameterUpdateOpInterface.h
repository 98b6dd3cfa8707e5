// The parameter-update op interface (see ParameterUpdateOpInterface.td).
#pragma once

#include "mlir/IR/OpDefinition.h"

#include "dialect/Interfaces/ParameterUpdateOpInterface.h.inc"
