// The CPU backend: devices that are shares of this process's cores with host memory, streams
// on host threads, and kernels on oneDNN and plain loops.
#pragma once

#include "runtime/device/Device.h"

#include <memory>

namespace dp::rt::cpu {

/// A new CPU backend.
std::unique_ptr<Backend> makeCpuBackend();

/// Adds the CPU backend to the registry.
void registerCpuBackend();

} // namespace dp::rt::cpu
