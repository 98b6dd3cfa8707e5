// The cuDNN LSTM adapter's checks, as pure functions tested on the host: whether the sizes fit
// cuDNN's 32-bit RNN descriptors, and whether the weight-space layout cuDNN reports (one
// matrix and bias per gate) is one dp can pack into.
#pragma once

#include "runtime/backends/cuda/RnnOps.h"
#include "runtime/kernels/Contract.h"

#include <cstdint>
#include <string>

namespace dp::rt::cuda {

/// Empty when the layer's sizes fit cuDNN's descriptors; else why not.
std::string rnnProblem(const contract::LstmShape &s);

/// Empty when every gate's input matrix ([U,F]), recurrent matrix ([U,U]) and bias ([U]) lies
/// inside a weight space of `spaceElements` floats and no two overlap; else which do not.
std::string rnnLayoutProblem(const RnnWeightLayout &layout, int64_t f, int64_t u,
                             int64_t spaceElements);

} // namespace dp::rt::cuda
