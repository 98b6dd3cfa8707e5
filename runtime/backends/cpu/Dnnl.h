// Thin glue to oneDNN: the process-wide CPU engine, and a primitive bound once to arena memory
// that can be executed repeatedly without building argument maps or allocating.
#pragma once

#include "runtime/device/Kernel.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
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
  /// Points argument `arg` (DNNL_ARG_*) at `data` for the calls from now on.
  void rebind(int arg, void *data);

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
/// post-ops and scales. Created and run on the threads its size warrants (threadsFor), or on
/// `threads` when it is not -1.
DnnlCall matmulCall(const dnnl::memory::desc &a, void *aData, const dnnl::memory::desc &b,
                    void *bData, const dnnl::memory::desc &c, void *cData, const void *bias,
                    const dnnl::primitive_attr &attr, const std::string &where, int threads = -1);

/// A reorder between `from` and `to` bound to their memory, run under `threads`.
DnnlCall reorderCall(const dnnl::memory &from, const dnnl::memory &to, const std::string &where,
                     int threads);

/// dprun --reproducible: whether the kernels made from now on sum over rows in a partition of
/// fixed size (ChunkedSum) where oneDNN would partition by the thread count. Process-wide, as
/// the backend is.
bool fixedPartitions();
void setFixedPartitions(bool on);

/// The chunks a reduction over `rows` rows is cut into under fixed partitions: min(rows,
/// kReduceChunks) of them, as even as can be (the first rows % chunks one row longer), as
/// (first row, rows) pairs. A function of the rows alone, never of the thread count.
inline constexpr int64_t kReduceChunks = 8;
std::vector<std::pair<int64_t, int64_t>> reduceChunks(int64_t rows);
/// The chunks of `columns` output columns (filters) a weight gradient is cut into where its
/// rows are few (each chunk computes whole sums: none to add): up to kReduceChunks, of whole
/// 16s of columns but the last, as (first column, columns) pairs; a function of the count.
std::vector<std::pair<int64_t, int64_t>> columnChunks(int64_t columns);
/// Whether a weight gradient over `rows` rows into `outputs` values (per row, `inputs` values
/// read) is better cut by its output columns than by its rows: a cut by rows writes and adds
/// kReduceChunks partial sums of the output, a cut by columns reads the inputs once per chunk.
inline bool cutByColumns(double rows, double inputs, double outputs) {
  return rows * inputs <= 3 * outputs;
}

/// `n` floats, 64-byte aligned (oneDNN's preference), freed with the last owner.
std::shared_ptr<float> alignedFloats(int64_t n);

/// A primitive whose output sums over rows (a weight gradient), computed so that its bits do
/// not depend on the thread count: the rows are cut into the fixed reduceChunks(rows), chunk i
/// is computed by one thread, with a primitive made for one thread (ThreadCap(1)), into
/// partial sum i, the chunks in parallel; the partial sums are added in the binary tree over
/// their indices, ((p0 + p1) + (p2 + p3)) + ..., and `finish` (a reorder from the partial
/// sums' layout) writes the sum. The partial sums live in a buffer of the thread that runs the
/// kernel (a device's stream thread), shared by its kernels: the largest kernel's chunks x its
/// partial sum, not the sum over the kernels.
class ChunkedSum final : public Kernel {
public:
  /// One of the sums: each chunk writes its partial sum (`partial`, f32, dense) through
  /// argument `arg`; `finish` reads the sum through DNNL_ARG_FROM and writes the result.
  struct Output {
    int arg;
    dnnl::memory::desc partial;
    DnnlCall finish;
  };
  /// `chunks[i]` computes chunk i's partial sums of `outputs` in its last call (a chunk may
  /// write other results of its rows in place: they are not sums). With no outputs, the
  /// chunks compute disjoint parts of the result: nothing is added.
  ChunkedSum(std::vector<std::vector<DnnlCall>> chunks, std::vector<Output> outputs);
  /// One call per chunk.
  ChunkedSum(std::vector<DnnlCall> chunks, std::vector<Output> outputs);
  /// One output.
  ChunkedSum(std::vector<DnnlCall> chunks, int outArg, const dnnl::memory::desc &partial,
             DnnlCall finish);
  void run(const StepContext &) override;
  /// Ranges of `base` (f32 elements: offset, length) set to zero on every call.
  void zeroEachCall(float *base, std::vector<std::pair<int64_t, int64_t>> ranges) {
    zeroBase_ = base, zeros_ = std::move(ranges);
  }
  /// Keeps `memory` (the chunks' own buffers) alive with the kernel.
  void keep(std::shared_ptr<void> memory) { kept_.push_back(std::move(memory)); }

private:
  float *zeroBase_ = nullptr;
  std::vector<std::pair<int64_t, int64_t>> zeros_;
  std::vector<std::vector<DnnlCall>> chunks_;
  std::vector<Output> outputs_;
  std::vector<std::shared_ptr<void>> kept_;
  /// Where each output's partial sum starts in a chunk's part of the buffer, and the floats
  /// of that part.
  std::vector<int64_t> offsets_;
  int64_t partialFloats_ = 0;
};

/// A kernel that is one oneDNN primitive call.
class PrimitiveKernel final : public Kernel {
public:
  explicit PrimitiveKernel(DnnlCall call) : call_(std::move(call)) {}
  void run(const StepContext &) override { call_.run(); }

private:
  DnnlCall call_;
};

} // namespace dp::rt::cpu
