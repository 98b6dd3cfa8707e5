// The generated definitions of the parameter-update op interface.
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"

#include "dialect/Interfaces/ParameterUpdateOpInterface.cpp.inc"
