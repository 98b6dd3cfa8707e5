// The generated definitions of MixedPrecisionOpInterface.td.
#include "dialect/Interfaces/MixedPrecisionOpInterface.h"

#include "dialect/Interfaces/MixedPrecisionOpInterface.cpp.inc"
