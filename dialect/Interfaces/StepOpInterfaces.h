// The step op interfaces: LossOpInterface and StepFormOpInterface (see StepOpInterfaces.td).
#pragma once

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "dialect/Interfaces/StepOpInterfaces.h.inc"
