// GPU selection; see DeviceSelection.h.
#include "runtime/backends/cuda/DeviceSelection.h"

#include "runtime/base/Error.h"

namespace dp::rt::cuda {

std::vector<int> selectDevices(int localRank, int devicesPerProcess, int visible,
                               const std::string &visibleEnv) {
  if (localRank < 0 || devicesPerProcess < 1)
    throw Error(ErrorKind::Launch, "cannot place " + std::to_string(devicesPerProcess) +
                                       " device(s) for local rank " + std::to_string(localRank));
  const long first = long(localRank) * devicesPerProcess;
  const long needed = first + devicesPerProcess;
  if (needed > visible) {
    std::string shown = visibleEnv.empty() ? std::string("CUDA_VISIBLE_DEVICES is unset")
                                           : "CUDA_VISIBLE_DEVICES=" + visibleEnv;
    throw Error(ErrorKind::Launch,
                "local rank " + std::to_string(localRank) + " runs " +
                    std::to_string(devicesPerProcess) + " device(s) per process, so the " +
                    std::to_string(localRank + 1) + " process(es) up to it on this node need " +
                    std::to_string(needed) + " GPU(s), but the node shows " +
                    std::to_string(visible) + " (" + shown +
                    "): start fewer processes per node or compile with fewer "
                    "--devices-per-process");
  }
  std::vector<int> devices;
  for (int d = 0; d < devicesPerProcess; ++d)
    devices.push_back(static_cast<int>(first) + d);
  return devices;
}

} // namespace dp::rt::cuda
