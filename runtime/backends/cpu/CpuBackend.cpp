// The CPU backend; see CpuBackend.h. Device d of R gets its own share of the cores the process
// may run on: its compute stream's thread is pinned there (when every device can have a core of
// its own) and its OpenMP loops and oneDNN primitives use that many threads. One device keeps
// the whole process's cores and is not pinned.
#include "runtime/backends/cpu/CpuBackend.h"

#include "runtime/backends/cpu/CpuKernels.h"
#include "runtime/backends/cpu/Dnnl.h"
#include "runtime/base/Error.h"
#include "runtime/base/HostMemory.h"
#include "runtime/device/HostStreams.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dp::rt::cpu {
namespace {

class CpuDevice final : public HostDevice {
public:
  /// `cores` are this device's share; `pin` says whether its compute thread is pinned to them.
  CpuDevice(int ordinal, std::vector<int> cores, bool pin, int threads)
      : ordinal_(ordinal), cores_(std::move(cores)), pin_(pin), threads_(threads) {}

  DeviceKind kind() const override { return DeviceKind::Cpu; }
  int ordinal() const override { return ordinal_; }
  std::string describe() const override {
    std::string text = "cpu:" + std::to_string(ordinal_);
    if (pin_) {
      text += " (core" + std::string(cores_.size() > 1 ? "s" : "");
      for (size_t i = 0; i < cores_.size(); ++i)
        text += (i ? "," : " ") + std::to_string(cores_[i]);
      text += ")";
    }
    return text;
  }
  bool hostAccessible() const override { return true; }
  int hostCores() const override { return threads_ > 0 ? threads_ : omp_get_max_threads(); }

  DeviceMemory allocate(size_t bytes) override {
    // aligned_alloc wants a multiple of the alignment; a non-empty block keeps pointers valid.
    const size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
    void *data = rounded < bytes ? nullptr : std::aligned_alloc(64, rounded);
    if (!data)
      throw Error(ErrorKind::Memory, describe() + ": cannot allocate " + bytesText(bytes) + " (" +
                                         std::to_string(bytes) + " bytes)");
    std::memset(data, 0, rounded);
    return DeviceMemory(data, bytes, [](void *p) { std::free(p); });
  }
  DeviceMemory allocateHost(size_t bytes) override { return allocate(bytes); }

protected:
  void startStreamThread(const std::string &stream) override {
    if (stream != "compute")
      return;
    if (pin_) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int c : cores_)
        CPU_SET(c, &set);
      sched_setaffinity(0, sizeof(set), &set);
    }
    if (threads_ > 0)
      omp_set_num_threads(threads_);
  }

private:
  int ordinal_;
  std::vector<int> cores_;
  bool pin_;
  int threads_;
};

/// What a CPU run needs beyond its arenas and data, at least (see checkMemory).
constexpr uint64_t kRuntimeReserveBytes = uint64_t(224) << 20;

class CpuBackend final : public Backend {
public:
  DeviceKind kind() const override { return DeviceKind::Cpu; }
  std::string describe() const override {
    const dnnl_version_t *v = dnnl_version();
    return "cpu (oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + ", " + std::to_string(allowedCpus().size()) + " cores)";
  }

  std::vector<std::unique_ptr<Device>> openDevices(int count) override {
    if (count < 1)
      throw Error(ErrorKind::Launch, "cannot open " + std::to_string(count) + " CPU devices");
    std::vector<int> cpus = allowedCpus();
    int available = cpus.empty() ? omp_get_max_threads() : static_cast<int>(cpus.size());
    if (threads_ > 0)
      available = threads_;
    const int share = std::max(1, available / count);
    // Pin only when every device can have cores of its own; one device keeps all of them and
    // OpenMP's own thread count. Under a cap (other processes use some of the cores) nothing
    // is pinned: which cores are free is the scheduler's to know.
    const bool pin = count > 1 && threads_ == 0 && cpus.size() >= static_cast<size_t>(count);
    const int deviceThreads = count > 1 ? share : threads_;
    // The kernels are made on this thread, and oneDNN sizes a primitive for the thread count
    // it is created under: the same as its device's compute thread runs it with.
    if (threads_ > 0)
      omp_set_num_threads(deviceThreads);
    std::vector<std::unique_ptr<Device>> devices;
    for (int d = 0; d < count; ++d) {
      std::vector<int> cores;
      if (pin)
        cores.assign(cpus.begin() + d * share, cpus.begin() + (d + 1) * share);
      devices.push_back(std::make_unique<CpuDevice>(d, cores, pin, deviceThreads));
    }
    return devices;
  }

  void checkMemory(uint64_t bytes, int count, const std::string &what) override {
    // The devices share the host's memory: the process needs all of them at once, and beyond
    // them what the run itself takes: its threads' stacks, the libraries' first allocations,
    // oneDNN's primitives (weights in their own layouts) and scratchpads. Measured
    // (2026-11-27, 2 threads, under ulimit -v): mnist_mlp needed 196 MiB beyond the address
    // space in use, its arena and its data; mnist_cnn 230, resnet50v2_32 328 (docs/cli.md).
    const uint64_t total = bytes * static_cast<uint64_t>(count);
    const uint64_t reserve = kRuntimeReserveBytes + total / 2;
    checkMemoryFits(total + reserve,
                    (count > 1 ? what + " on " + std::to_string(count) + " devices (" +
                                     std::to_string(count) + " x " + bytesText(bytes) + ")"
                               : what + " (" + bytesText(total) + ")") +
                        " and the run's own needs (" + bytesText(reserve) +
                        ": threads, libraries, the kernels' scratch)");
  }

  std::unique_ptr<Kernel> makeKernel(Device &, const KernelSite &site) override {
    return makeCpuKernel(site);
  }

  void setComputeThreads(int threads) override { threads_ = std::max(0, threads); }
  void setReproducible(bool on) override { setFixedPartitions(on); }

private:
  int threads_ = 0;
};

} // namespace

std::unique_ptr<Backend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

void registerCpuBackend() { BackendRegistry::add(makeCpuBackend()); }

} // namespace dp::rt::cpu
