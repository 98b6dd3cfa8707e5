// The CUDA backend's own kernels: grid-stride loops over the per-element code of Ops.h, the
// same source the host tests check against the reference kernels.
#include "runtime/kernels/cuda/OwnKernels.h"

namespace dp::rt::cuda {
namespace {

/// The first element of this thread and the stride of the grid.
__device__ inline int64_t firstIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t gridStride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

__global__ void activationKernel(const float *__restrict__ x, float *__restrict__ y, int64_t n,
                                 Activation act) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    y[i] = activate(act, x[i]);
}

__global__ void activationGradKernel(const float *__restrict__ y, const float *__restrict__ dy,
                                     float *__restrict__ dx, int64_t n, Activation act) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    dx[i] = activationGrad(act, y[i], dy[i]);
}

__global__ void multiTensorUpdateKernel(const TensorSegment *segments, const int64_t *starts,
                                        int count, int64_t total, UpdateRule rule) {
  for (int64_t i = firstIndex(); i < total; i += gridStride())
    updateElement(segments, starts, count, i, rule);
}

} // namespace

int blocksFor(int64_t n) {
  // Enough blocks to fill an H100 several times over; the grid strides over the rest.
  const int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(blocks < 1 ? 1 : blocks > 4096 ? 4096 : blocks);
}

cudaError_t launchActivation(cudaStream_t stream, const float *x, float *y, int64_t n,
                             Activation act) {
  activationKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream>>>(x, y, n, act);
  return cudaGetLastError();
}

cudaError_t launchActivationGrad(cudaStream_t stream, const float *y, const float *dy,
                                 float *dx, int64_t n, Activation act) {
  activationGradKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream>>>(y, dy, dx, n, act);
  return cudaGetLastError();
}

cudaError_t launchMultiTensorUpdate(cudaStream_t stream, const TensorSegment *segments,
                                    const int64_t *starts, int count, int64_t total,
                                    const UpdateRule &rule) {
  multiTensorUpdateKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream>>>(segments, starts,
                                                                             count, total, rule);
  return cudaGetLastError();
}

} // namespace dp::rt::cuda
