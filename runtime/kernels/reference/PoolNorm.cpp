#include "runtime/kernels/reference/PoolNorm.h"
