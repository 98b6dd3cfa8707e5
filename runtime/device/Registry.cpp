// The registry of backends; see Device.h.
#include "runtime/base/Error.h"
#include "runtime/device/Device.h"

#include <mutex>

namespace dp::rt {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<Backend>> backends;
};

Registry &registry() {
  static Registry instance;
  return instance;
}

} // namespace

void BackendRegistry::add(std::unique_ptr<Backend> backend) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto &existing : r.backends)
    if (existing->kind() == backend->kind()) {
      existing = std::move(backend);
      return;
    }
  r.backends.push_back(std::move(backend));
}

Backend *BackendRegistry::find(DeviceKind kind) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto &backend : r.backends)
    if (backend->kind() == kind)
      return backend.get();
  return nullptr;
}

Backend &BackendRegistry::get(DeviceKind kind) {
  if (Backend *backend = find(kind))
    return *backend;
  std::string have;
  for (Backend *backend : all())
    have += (have.empty() ? "" : ", ") + std::string(deviceKindName(backend->kind()));
  throw Error(ErrorKind::Plan, std::string("the plan was compiled for ") + deviceKindName(kind) +
                                   " devices (dpc compile --device), and this dprun has no " +
                                   deviceKindName(kind) + " backend; it runs " +
                                   (have.empty() ? std::string("none") : have) +
                                   ": recompile with --device " +
                                   (have.empty() ? std::string("cpu") : have.substr(0, have.find(','))));
}

std::vector<Backend *> BackendRegistry::all() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<Backend *> out;
  for (auto &backend : r.backends)
    out.push_back(backend.get());
  return out;
}

} // namespace dp::rt
