// Thin glue to oneDNN: the process-wide CPU engine, and a primitive bound once to arena memory
// that can be executed repeatedly without building argument maps or allocating.
#pragma once

#include "runtime/device/Kernel.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <string>
#include <utility>
#include <vector>

namespace dp::rt::cpu {

/// The CPU engine shared by all kernels (engines are thread-safe; streams are per kernel).
const dnnl::engine &cpuEngine();

/// A plain memory descriptor of `dims` f32 elements with explicit `strides`.
dnnl::memory::desc f32Desc(const dnnl::memory::dims &dims, const dnnl::memory::dims &strides);
/// oneDNN's type for `t` (f32, s32 or bf16).
dnnl::memory::data_type dnnlType(DType t);
/// A plain memory descriptor of `dims` elements of `t` with explicit `strides`.
dnnl::memory::desc plainDesc(const dnnl::memory::dims &dims, const dnnl::memory::dims &strides,
                             DType t);

/// Multiply-adds below which a oneDNN primitive runs on one thread: splitting a tiny matmul
/// across cores costs more in synchronisation than it saves.
inline constexpr double kSingleThreadMacs = 1 << 19;

/// The thread cap for a primitive doing `macs` multiply-adds (0: no cap).
inline int threadsFor(double macs) { return macs < kSingleThreadMacs ? 1 : 0; }

/// Primitive attributes with scratchpad_mode::user (see DnnlCall) and, unless `act` is None,
/// the activation fused as an eltwise post-op (softmax cannot be: callers reject it).
dnnl::primitive_attr userScratchpad(Activation act = Activation::None);

/// A oneDNN primitive with its arguments bound to fixed memory. Primitives must be created with
/// scratchpad_mode::user so that the scratchpad is allocated here, once, and under a
/// ThreadCap(threads) when `threads` is not 0.
class DnnlCall {
public:
  DnnlCall() = default;
  /// `args` pairs DNNL_ARG_* with memory objects wrapping arena pointers.
  DnnlCall(const dnnl::primitive_desc_base &pd, dnnl::primitive prim,
           std::vector<std::pair<int, dnnl::memory>> args, std::string where, int threads = 0);
  /// Executes the primitive and waits for it. Throws Error(Runtime) on a oneDNN failure.
  void run();

private:
  dnnl::primitive prim_;
  dnnl::stream stream_;
  std::vector<dnnl::memory> memories_; // keeps the handles in args_ alive
  std::vector<dnnl_exec_arg_t> args_;
  std::string where_;
  int threads_ = 0;
};

/// A oneDNN matmul bound to arena memory: c = a b (+ bias), `a` [..., m, k] and `b` [..., k, n]
/// plain in their compute type (a transposed operand is the stored matrix read with swapped
/// strides, never a copy), `c` f32, `bias` (null for none) f32 [1, n]; `attr` carries the
/// post-ops and scales. Created and run on the threads its size warrants (threadsFor).
DnnlCall matmulCall(const dnnl::memory::desc &a, void *aData, const dnnl::memory::desc &b,
                    void *bData, const dnnl::memory::desc &c, void *cData, const void *bias,
                    const dnnl::primitive_attr &attr, const std::string &where);

/// A reorder between `from` and `to` bound to their memory, run under `threads`.
DnnlCall reorderCall(const dnnl::memory &from, const dnnl::memory &to, const std::string &where,
                     int threads);

/// A kernel that is one oneDNN primitive call.
class PrimitiveKernel final : public Kernel {
public:
  explicit PrimitiveKernel(DnnlCall call) : call_(std::move(call)) {}
  void run(const StepContext &) override { call_.run(); }

private:
  DnnlCall call_;
};

} // namespace dp::rt::cpu
