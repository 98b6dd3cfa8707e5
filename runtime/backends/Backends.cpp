// Registration of the built-in backends; see Backends.h.
#include "runtime/backends/Backends.h"

#include "runtime/backends/cpu/CpuBackend.h"
#ifdef DP_HAVE_CUDA
#include "runtime/backends/cuda/CudaBackend.h"
#endif

#include <mutex>

namespace dp::rt {

void registerBuiltinBackends() {
  static std::once_flag once;
  std::call_once(once, [] {
    cpu::registerCpuBackend();
#ifdef DP_HAVE_CUDA
    cuda::registerCudaBackend();
#endif
  });
}

} // namespace dp::rt
