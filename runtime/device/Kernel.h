// What a backend implements and is given: a Kernel that runs one kernel call of a step, the
// per-call StepContext, views of arena buffers as typed tensors, and the KernelSite that binds
// one plan kernel to its buffers. Backends build their kernels from a KernelSite at load time;
// everything here is header-only so that backends depend on the plan format and the device
// layer, never on the executor.
#pragma once

#include "runtime/base/Error.h"
#include "runtime/device/StepContext.h"
#include "runtime/format/KernelAttrs.h"
#include "runtime/format/Plan.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dp::rt {

/// One kernel of a step, bound to its buffers. Backends implement it. run() executes the call
/// in the order of the stream it was launched on: the CPU backend computes it on the stream's
/// thread; a GPU backend launches it on the stream and returns.
class Kernel {
public:
  virtual ~Kernel() = default;
  virtual void run(const StepContext &ctx) = 0;
};

/// A buffer of the arena seen as a tensor: base pointer, element type and shape.
struct TensorView {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel = 1;
  uint32_t id = 0;

  int rank() const { return static_cast<int>(shape.size()); }
  /// Dimension `i`; negative `i` counts from the last axis.
  int64_t dim(int i) const { return shape[i < 0 ? shape.size() + i : i]; }
  size_t bytes() const { return static_cast<size_t>(numel) * dtypeSize(dtype); }
  float *f32() const { return static_cast<float *>(data); }
  int32_t *i32() const { return static_cast<int32_t *>(data); }
  const uint8_t *begin() const { return static_cast<const uint8_t *>(data); }
  const uint8_t *end() const { return begin() + bytes(); }

  /// True when the two views share at least one byte.
  bool overlaps(const TensorView &o) const { return begin() < o.end() && o.begin() < end(); }
  /// True when the two views cover exactly the same bytes.
  bool sameBytes(const TensorView &o) const { return data == o.data && bytes() == o.bytes(); }
};

/// The view of buffer `id` of `plan`, whose device d's arena starts at `arenas[d]`. The id
/// must be valid.
inline TensorView viewBuffer(const Plan &plan, uint8_t *const *arenas, uint32_t id) {
  const BufferDesc &b = plan.buffers[id];
  TensorView t;
  t.data = arenas[b.device] + b.offset;
  t.dtype = b.dtype;
  t.shape = b.shape;
  t.numel = b.numel;
  t.id = id;
  return t;
}

/// What one kernel leaves for a later kernel of the same program, keyed by the id of a buffer
/// they both use (a training LSTM keeps its gates for its gradient under its output's id).
using KernelStateMap = std::map<uint32_t, std::shared_ptr<void>>;

/// One kernel of a verified plan together with the arena it runs in: what a backend factory
/// needs to validate the kernel's shapes and attributes and to bind it to memory.
class KernelSite {
public:
  /// `where` names the kernel in error messages ("train kernel #3 (dense) at mlp.py:7");
  /// `arenas[d]` is the start of device d's arena.
  KernelSite(const Plan &plan, uint8_t *const *arenas, const KernelDesc &kernel,
             KernelStateMap *state = nullptr)
      : plan_(plan), arenas_(arenas), kernel_(kernel), state_(state) {}

  KernelKind kind() const { return kernel_.kind; }
  const KernelDesc &kernel() const { return kernel_; }
  const std::string &where() const { return kernel_.where; }

  int numInputs() const { return static_cast<int>(kernel_.inputs.size()); }
  int numOutputs() const { return static_cast<int>(kernel_.outputs.size()); }
  TensorView input(int i) const { return viewBuffer(plan_, arenas_, kernel_.inputs[i]); }
  TensorView output(int i) const { return viewBuffer(plan_, arenas_, kernel_.outputs[i]); }

  /// The kernel's typed attributes (the set its kind takes in Kernels.def), checked when the
  /// plan was decoded.
  template <typename Attrs> const Attrs &attrs() const { return kernel_.attrsAs<Attrs>(); }

  /// Fails unless `t` has exactly `shape`; `role` names it.
  void expectShape(const TensorView &t, const std::vector<int64_t> &shape,
                   const std::string &role) const {
    if (t.shape == shape)
      return;
    std::string want, found;
    for (int64_t d : shape)
      want += (want.empty() ? "" : "x") + std::to_string(d);
    for (int64_t d : t.shape)
      found += (found.empty() ? "" : "x") + std::to_string(d);
    fail(role + " (buffer " + std::to_string(t.id) + ") is [" + found + "], expected [" + want +
         "]");
  }

  /// Whether any of the kernel's buffers has element type `dtype`.
  bool touches(DType dtype) const {
    for (int i = 0; i < numInputs(); ++i)
      if (input(i).dtype == dtype)
        return true;
    for (int i = 0; i < numOutputs(); ++i)
      if (output(i).dtype == dtype)
        return true;
    return false;
  }
  /// Whether this site has the program-wide state slots of sharedState.
  bool hasSharedState() const { return state_ != nullptr; }
  /// The program-wide state slot for buffer `id` (empty until a kernel fills it).
  std::shared_ptr<void> &sharedState(uint32_t id) const {
    if (!state_)
      fail("needs kernel state shared across kernels, which this site has none of");
    return (*state_)[id];
  }

  /// Throws Error(Plan) naming this kernel.
  [[noreturn]] void fail(const std::string &message) const {
    throw Error(ErrorKind::Plan, kernel_.where + ": " + message);
  }
  /// Fails unless `t` has element type `dtype`; `role` names it ("input 1 (labels)").
  void expectDType(const TensorView &t, DType dtype, const char *role) const {
    if (t.dtype != dtype)
      fail(std::string(role) + " (buffer " + std::to_string(t.id) + ") is " + dtypeName(t.dtype) +
           ", expected " + dtypeName(dtype));
  }
  /// Fails unless `t` holds `numel` elements.
  void expectNumel(const TensorView &t, int64_t numel, const char *role) const {
    if (t.numel != numel)
      fail(std::string(role) + " (buffer " + std::to_string(t.id) + ") has " +
           std::to_string(t.numel) + " elements, expected " + std::to_string(numel));
  }

private:
  const Plan &plan_;
  uint8_t *const *arenas_;
  const KernelDesc &kernel_;
  KernelStateMap *state_;
};

} // namespace dp::rt
