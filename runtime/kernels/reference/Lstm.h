// Reference kernels (to be written).
#pragma once

#include "runtime/format/Enums.h"

#include <cstdint>

namespace dp::rt::ref {} // namespace dp::rt::ref
