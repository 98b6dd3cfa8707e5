// Registration of the built-in backends; see Backends.h.
#include "runtime/kernels/Backends.h"

#include "runtime/kernels/cpu/CpuBackend.h"

#include <mutex>

namespace dp::rt {

void registerBuiltinBackends() {
  static std::once_flag once;
  std::call_once(once, [] { cpu::registerCpuBackend(); });
}

} // namespace dp::rt
