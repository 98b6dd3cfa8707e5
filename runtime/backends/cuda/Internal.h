// What the CUDA backend's kernels get from their device, and the factory that builds them:
// shared by CudaBackend.cpp (which implements the device) and CudaKernels.cpp (the kernels).
#pragma once

#include "runtime/base/Error.h"
#include "runtime/device/Device.h"
#include "runtime/device/Kernel.h"

#include "runtime/backends/cuda/Libraries.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

namespace dp::rt::cuda {

/// Throws Error(kind) naming `what` and CUDA's message unless `status` is cudaSuccess.
void check(cudaError_t status, const std::string &what, ErrorKind kind = ErrorKind::Runtime);

/// The stream the kernel being launched enqueues its work on (set by the stream's launch).
cudaStream_t launchStream();

/// The CUDA stream and device ordinal behind the CUDA backend's Stream and Device;
/// Error(Runtime) for another backend's.
cudaStream_t nativeStream(Stream &stream);
int nativeOrdinal(Device &device);

/// The resources of one device that its kernels use.
class KernelEnvironment {
public:
  virtual ~KernelEnvironment() = default;
  /// "cuda:0 (NVIDIA H100, 79.1 GiB)".
  virtual std::string describe() const = 0;
  /// Where the kernels of a launched step read its StepContext (device memory).
  virtual const StepContext *deviceContext() const = 0;
  /// The device's cuBLAS handle (created on the first call, which must come at load, with its
  /// own workspace, so that a captured step allocates nothing), bound to `stream` with that
  /// workspace unless `stream` is null.
  virtual cublasHandle_t blas(cudaStream_t stream) = 0;
  /// The device's cuDNN handle (created on the first call, which must come at load), bound
  /// to `stream` unless `stream` is null.
  virtual cudnnHandle_t dnn(cudaStream_t stream) = 0;
  /// Whether products and convolutions may use TF32 tensor cores (DP_CUDA_TF32=1).
  virtual bool tf32() const = 0;
  /// Reserves `bytes` of the device's scratch memory, which kernels of one stream use in
  /// turn; only before the first scratch().
  virtual void reserveScratch(size_t bytes) = 0;
  /// The scratch memory (the largest reservation's size, allocated before the first capture).
  virtual void *scratch() = 0;
  /// Device memory holding a copy of `bytes` of host data, kept as long as the device.
  virtual void *upload(const void *data, size_t bytes) = 0;
  /// `bytes` of zeroed device memory of a kernel's own (state a kernel keeps across steps or
  /// hands to another), kept as long as the device.
  virtual void *persistent(size_t bytes) = 0;
};

/// The CUDA kernel of `site` on the device of `env`, validated by the kernel contract.
std::unique_ptr<Kernel> makeCudaKernel(KernelEnvironment &env, const KernelSite &site);

} // namespace dp::rt::cuda
