// The generated definitions of StepOpInterfaces.td.
#include "dialect/Interfaces/StepOpInterfaces.h"

#include "dialect/Interfaces/StepOpInterfaces.cpp.inc"
