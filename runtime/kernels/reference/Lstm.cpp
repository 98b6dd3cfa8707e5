#include "runtime/kernels/reference/Lstm.h"
