// The CPU backend's entry point: turns one kernel of a plan into a ready-to-run Kernel.
#pragma once

#include "runtime/device/Kernel.h"

#include <memory>

namespace dp::rt::cpu {

/// Validates the kernel's buffers and attributes and creates its implementation, with all
/// backend primitives built and bound to the arena. Throws Error(Plan) for an inconsistent
/// kernel and Error(Runtime) when the backend cannot create a primitive.
std::unique_ptr<Kernel> makeCpuKernel(const KernelSite &site);

} // namespace dp::rt::cpu
