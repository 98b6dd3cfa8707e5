// The generated definitions of the kernel-lowering op interface.
#include "dialect/Interfaces/KernelLoweringOpInterface.h"

#include "dialect/Interfaces/KernelLoweringOpInterface.cpp.inc"
