// The CUDA backend: NVIDIA GPUs through the CUDA runtime. Built where the CUDA toolkit is.
#pragma once

#include "runtime/device/Device.h"

#include <memory>

namespace dp::rt::cuda {

/// A new CUDA backend.
std::unique_ptr<Backend> makeCudaBackend();

/// Adds the CUDA backend to the registry.
void registerCudaBackend();

} // namespace dp::rt::cuda
