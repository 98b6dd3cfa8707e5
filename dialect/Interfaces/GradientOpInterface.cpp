// The generated definitions of the gradient-rule op interface.
#include "dialect/Interfaces/GradientOpInterface.h"

#include "dialect/Interfaces/GradientOpInterface.cpp.inc"
