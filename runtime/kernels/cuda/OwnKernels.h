// Launches of the CUDA backend's own kernels (OwnKernels.cu) on a stream. Each returns the
// launch's cudaError_t (cudaSuccess when it was enqueued); errors of the kernel itself surface
// at the stream's next synchronisation, as CUDA reports them.
#pragma once

#include "runtime/kernels/cuda/Ops.h"

#include <cuda_runtime_api.h>

namespace dp::rt::cuda {

/// Threads per block of the grid-stride kernels, and the blocks for `n` elements (bounded:
/// the grid strides over the rest).
inline constexpr int kThreadsPerBlock = 256;
int blocksFor(int64_t n);

/// y = act(x) over n elements.
cudaError_t launchActivation(cudaStream_t stream, const float *x, float *y, int64_t n,
                             Activation act);
/// dx = dy * act'(.) through y, over n elements.
cudaError_t launchActivationGrad(cudaStream_t stream, const float *y, const float *dy,
                                 float *dx, int64_t n, Activation act);
/// One update of every segment by `rule` in a single launch: `segments` and `starts` (the
/// first global element of each) are `count` entries in device memory; `total` the sum of
/// their elements.
cudaError_t launchMultiTensorUpdate(cudaStream_t stream, const TensorSegment *segments,
                                    const int64_t *starts, int count, int64_t total,
                                    const UpdateRule &rule);

} // namespace dp::rt::cuda
