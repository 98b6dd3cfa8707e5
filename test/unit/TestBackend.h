// A backend for tests of the executor, and the proof that a backend plugs in without touching
// core/: devices on host threads that can say their memory is not host-addressable (as a GPU's
// is not), registered for any device kind, running the CPU backend's kernels wrapped so that a
// test can count the kernels each device has run, wait for a count, and make one fail.
#pragma once

#include "runtime/backends/cpu/CpuBackend.h"
#include "runtime/base/Error.h"
#include "runtime/device/HostStreams.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace dp::rt::testing {

class TestBackend final : public Backend {
public:
  /// Devices of `kind` whose memory the host may address only when `hostAccessible`.
  explicit TestBackend(DeviceKind kind = DeviceKind::Cuda, bool hostAccessible = false)
      : kind_(kind), hostAccessible_(hostAccessible), cpu_(cpu::makeCpuBackend()) {}

  DeviceKind kind() const override { return kind_; }
  std::string describe() const override { return "test backend"; }
  std::vector<std::unique_ptr<Device>> openDevices(int count) override {
    std::vector<std::unique_ptr<Device>> devices;
    for (int d = 0; d < count; ++d)
      devices.push_back(std::make_unique<TestDevice>(*this, d));
    return devices;
  }
  void checkMemory(uint64_t bytes, int count, const std::string &what) override {
    if (bytes * count > memoryLimit)
      throw Error(ErrorKind::Memory, "test device memory: " + what);
  }
  std::unique_ptr<Kernel> makeKernel(Device &device, const KernelSite &site) override {
    return std::make_unique<CountingKernel>(*this, device.ordinal(),
                                            cpu_->makeKernel(device, site));
  }

  /// Kernels device `d` has run so far.
  int runs(int d) {
    std::lock_guard<std::mutex> lock(mutex_);
    return runs_[d];
  }
  /// Waits up to `seconds` for device `d` to have run `n` kernels; false on timeout.
  bool waitForRuns(int d, int n, double seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    return ran_.wait_for(lock, std::chrono::duration<double>(seconds),
                         [&] { return runs_[d] >= n; });
  }
  /// Makes the `n`-th kernel (1-based, counted from now) that device `d` runs throw.
  void failKernel(int d, int n) {
    std::lock_guard<std::mutex> lock(mutex_);
    failDevice_ = d;
    failAt_ = runs_[d] + n;
  }

  /// What checkMemory accepts, per process.
  uint64_t memoryLimit = UINT64_MAX;

private:
  class TestDevice final : public HostDevice {
  public:
    TestDevice(TestBackend &backend, int ordinal) : backend_(backend), ordinal_(ordinal) {}
    DeviceKind kind() const override { return backend_.kind_; }
    int ordinal() const override { return ordinal_; }
    std::string describe() const override { return "test:" + std::to_string(ordinal_); }
    bool hostAccessible() const override { return backend_.hostAccessible_; }
    DeviceMemory allocate(size_t bytes) override {
      const size_t rounded = (bytes + 64) / 64 * 64;
      void *data = std::aligned_alloc(64, rounded);
      if (!data)
        throw Error(ErrorKind::Memory, "test device out of memory");
      std::memset(data, 0, rounded);
      return DeviceMemory(data, bytes, [](void *p) { std::free(p); });
    }
    DeviceMemory allocateHost(size_t bytes) override { return allocate(bytes); }

  private:
    TestBackend &backend_;
    int ordinal_;
  };

  class CountingKernel final : public Kernel {
  public:
    CountingKernel(TestBackend &backend, int device, std::unique_ptr<Kernel> inner)
        : backend_(backend), device_(device), inner_(std::move(inner)) {}
    void run(const StepContext &ctx) override {
      bool fail;
      {
        std::lock_guard<std::mutex> lock(backend_.mutex_);
        const int n = ++backend_.runs_[device_];
        fail = backend_.failDevice_ == device_ && backend_.failAt_ == n;
      }
      backend_.ran_.notify_all();
      if (fail)
        throw Error(ErrorKind::Runtime, "injected failure on device " + std::to_string(device_));
      inner_->run(ctx);
    }

  private:
    TestBackend &backend_;
    int device_;
    std::unique_ptr<Kernel> inner_;
  };

  DeviceKind kind_;
  bool hostAccessible_;
  std::unique_ptr<Backend> cpu_;
  std::mutex mutex_;
  std::condition_variable ran_;
  int runs_[64] = {};
  int failDevice_ = -1, failAt_ = -1;
};

} // namespace dp::rt::testing
