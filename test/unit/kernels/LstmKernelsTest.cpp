// (to be written)
#include "test/unit/kernels/KernelTestUtil.h"
