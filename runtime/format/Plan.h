// A plan as the runtime uses it: the verified file decoded once into plain structs. Buffers,
// parameters, inputs, both steps' kernels with their typed attributes, and the collective
// manifest with its names resolved. Nothing past the loader sees the serialized records: the
// executor, the backends and the training loop read these structs, so that the file format can
// change without touching them and a malformed attribute is refused once, at load.
#pragma once

#include "runtime/format/Enums.h"
#include "runtime/format/KernelAttrs.h"
#include "runtime/format/LrSchedule.h"

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace dp::rt {

class PlanFile;

/// The two steps of a plan.
enum class StepKind { Train, Eval };
inline const char *stepName(StepKind step) { return step == StepKind::Train ? "train" : "eval"; }

/// A region of one device's arena seen as a tensor.
struct BufferDesc {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Product of the shape (1 for a scalar).
  int64_t numel = 1;
  /// Byte offset in its device's arena (64-byte aligned).
  uint64_t offset = 0;
  /// The replica (device) of this process whose arena holds it.
  int device = 0;

  size_t bytes() const { return static_cast<size_t>(numel) * dtypeSize(dtype); }
  /// "f32[100,784]" ("f32[]" for a scalar).
  std::string text() const;
};

/// How a parameter's initial value is drawn (Keras semantics; see core/Init.h).
struct InitDesc {
  InitKind kind = InitKind::Zeros;
  double a = 0, b = 0;
  int64_t fanIn = 0, fanOut = 0;
  /// InitKind::Data: the values (shared by the replicas' copies and the plan), else null.
  std::shared_ptr<const std::vector<float>> values;
};

/// A persistent tensor: a weight or optimizer state, one copy per device.
struct ParamDesc {
  std::string name;
  uint32_t buffer = 0;
  /// The buffer holding d(loss)/d(param) after a train step; -1 for none.
  int32_t grad = -1;
  InitDesc init;
  ParamKind kind = ParamKind::Weight;
  /// The one process that holds it (optimizer state sharded over the processes: its buffer
  /// overlays the other processes' shares), or -1: every process.
  int process = -1;
};

/// An input the runtime fills before each step, found by its role; the name is the model's.
struct InputDesc {
  std::string name;
  uint32_t buffer = 0;
  InputRole role = InputRole::Samples;
};

/// A result a step leaves in a buffer, read by its role; the name is the model's.
struct OutputDesc {
  std::string name;
  uint32_t buffer = 0;
  OutputRole role = OutputRole::Loss;
};

/// The typed attributes of one kernel: the set its kind takes in the contract table.
using KernelAttrSet = std::variant<
#define DP_KERNEL_ATTRS(Set, Fields) Set,
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#include "runtime/format/Kernels.def"
    std::monostate>;

/// One kernel call of a step.
struct KernelDesc {
  KernelKind kind = KernelKind::NumKinds;
  std::vector<uint32_t> inputs, outputs;
  /// Decoded and checked against the contract table at load.
  KernelAttrSet attrs;
  /// Source location of the op it came from; may be empty.
  std::string loc;
  /// The replica that runs it; -1 for a collective, which runs on every device.
  int device = 0;
  /// The one process that runs it (the update of a parameter whose optimizer state is
  /// sharded over the processes), or -1: every process.
  int process = -1;
  /// Of the train step's final phase: under gradient accumulation it runs on a step's last
  /// micro-shard only (Plan::accumulation).
  bool final = false;
  /// "train kernel #3 (dense) at mlp.mlir:7:3", for messages.
  std::string where;

  /// The attributes as the set `A`; its kind must take `A` (the backends' factories are
  /// generated from the same table, so they always ask for the right one).
  template <typename A> const A &attrsAs() const { return std::get<A>(attrs); }
};

/// The kernels of one step, in the order the compiler scheduled them, and its named outputs.
struct StepDesc {
  std::string name;
  std::vector<KernelDesc> kernels;
  std::vector<OutputDesc> outputs;
};

/// One entry of the collective manifest: what every rank issues, in the same order.
struct CollectiveDesc {
  CollectiveKind kind = CollectiveKind::AllReduceMean;
  int bucket = 0; // the `bucket` attribute of its kernels
  DType dtype = DType::F32;
  int64_t elements = 0; // per replica
  GroupKind group = GroupKind::World;
  int groupId = -1; // which group of the kind (a server's index), else -1
  /// A broadcast's member whose copy the others receive, else -1: a replica of the process
  /// (group Replicas), or of the job (group World: replica r of process p is p * R + r).
  int root = -1;
  /// A reduce-scattered allreduce (sharded optimizer state): where each owner's gradients
  /// begin, in elements, and the bucket's end; owner o (replica r of process p is p * R + r
  /// when the plan has several processes, else r) alone receives elements segments[o] to
  /// segments[o + 1] averaged. Empty: every replica receives every mean.
  std::vector<int64_t> segments;
  std::vector<std::string> tensors;
  std::string loc;
};

/// Where a parameter of an imported model goes back to in its source model (plan.fbs
/// ExportParam; the ONNX exporter reads these).
struct ExportParamDesc {
  std::string param, value;
  bool isInitializer = true;
  std::vector<std::pair<int, int>> rewire;
  uint8_t layout = 0;
  std::vector<int64_t> dims, flattenedChw;
};

/// The model an imported plan came from (plan.fbs ExportSource): its format ("onnx"), its
/// bytes without the parameters' values, and where each parameter goes back to.
struct ExportSourceDesc {
  std::string format;
  std::string model;
  std::vector<ExportParamDesc> params;
};

/// A verified plan, decoded.
struct Plan {
  std::string producer, model;
  /// The global batch: rows of one step over all R x P replicas.
  int64_t batch = 0;
  /// Bytes of each device's arena, and of its persistent front.
  uint64_t arenaBytes = 0, persistentBytes = 0;
  std::vector<BufferDesc> buffers;
  std::vector<ParamDesc> params;
  std::vector<InputDesc> inputs;
  StepDesc train, eval;
  /// R: devices (replicas) per process; P: processes of the job.
  int devicesPerProcess = 1, processes = 1;
  /// Hosts the processes are spread over, evenly (1: not said; dprun checks more).
  int nodes = 1;
  /// M: the micro-shards each device runs a train step on, one after another (gradient
  /// accumulation; 1: none). The input buffers hold one micro-shard, batch / (R x P x M)
  /// rows; the kernels marked final run on the last micro-shard only.
  int accumulation = 1;
  std::vector<CollectiveDesc> collectives;
  uint64_t manifestHash = 0;
  DeviceKind deviceKind = DeviceKind::Cpu;
  /// The learning-rate schedule (constant when the plan has none).
  LrSchedule lrSchedule;
  /// The parameter-server strategy, on the workers' plan: each server's plan, in server order
  /// (empty: allreduce data parallelism; `processes` are then the W workers), the staleness
  /// bound K (-1: unbounded) and sync. On a server's plan, `server` is its index (else -1);
  /// its train step ("serve") runs per bucket: receive_push, the updates, reply_pull.
  std::vector<Plan> servers;
  int64_t staleness = -1;
  bool sync = false;
  int server = -1;
  /// An imported model's source, for dprun --export; null for a model written as text IR.
  std::shared_ptr<const ExportSourceDesc> exportSource;
  bool parameterServer() const { return !servers.empty(); }
  /// Asynchronous servers (neither bounded nor sync): the workers share each epoch's batches,
  /// taking shards as they are free, rather than each training its fixed rows of every one.
  bool sharesBatches() const { return parameterServer() && staleness < 0 && !sync; }
  /// Processes of the job: the W workers and the S servers, or P.
  int jobProcesses() const { return processes + static_cast<int>(servers.size()); }

  /// The file it came from: FNV-1a 64 of the whole file (the plan's identity across ranks),
  /// the CRC-32 its header records, and its size.
  uint64_t fileHash = 0;
  uint32_t checksum = 0;
  size_t fileBytes = 0;

  const StepDesc &step(StepKind kind) const { return kind == StepKind::Train ? train : eval; }
  /// The input with `role` on `device`, or null (the first, where a plan has several).
  const InputDesc *input(InputRole role, int device = 0) const;
  /// The output of `step` with `role` on `device`, or null (the first, where it has several).
  const OutputDesc *output(StepKind step, OutputRole role, int device = 0) const;
  /// The FLOPs of one run of `step` on every device of this process that MFU counts: its
  /// products' (runtime/format/Flops.h); under gradient accumulation, of its M micro-shards.
  double stepFlops(StepKind step) const;
  /// Whether the products read bf16 (a plan compiled with --precision bf16).
  bool computesInBf16() const;
  /// Each logical parameter once, in plan order: the index in `params` of its first copy
  /// (device 0's; under sharded optimizer state a state's only copy is on the device that
  /// updates its parameter). What checkpoints and parameter files hold.
  std::vector<size_t> logicalParams() const;
  /// Whether the optimizer state is sharded over the devices (dpc compile --shard-optimizer):
  /// the plan broadcasts parameters.
  bool shardsOptimizerState() const;
  /// Whether some optimizer state is held by one process alone (sharded over the processes).
  bool shardsAcrossProcesses() const;

  /// The process of the job this plan runs on, once keepProcess() said it; -1 before.
  int process = -1;
  /// Makes the plan process `rank`'s: drops the kernels that other processes alone run (the
  /// updates of parameters whose optimizer state they hold). Their state stays in `params`,
  /// where holds() tells it apart: its buffers overlay this process's own share.
  void keepProcess(int rank);
  /// Whether this process holds `p`'s values (every process holds all but the state sharded
  /// over the processes; before keepProcess(), every one counts as held).
  bool holds(const ParamDesc &p) const {
    return p.process < 0 || process < 0 || p.process == process;
  }

  /// Decodes a verified file; `what` names it in messages. Throws Error(Plan) for a kernel
  /// attribute its contract refuses (a missing required one, a flag other than 0 or 1, a
  /// float that is not finite, an unknown activation).
  static Plan decode(const PlanFile &file, const std::string &what);
  /// Reads, verifies and decodes `path`.
  static Plan read(const std::string &path);
  /// Verifies and decodes a whole file image.
  static Plan fromBytes(std::vector<uint8_t> bytes, const std::string &what);
  /// As read, for callers built without exceptions (the compiler's tools): false with the
  /// loader's message in `error` when the file is refused.
  static bool tryRead(const std::string &path, Plan &plan, std::string &error) noexcept;
};

/// The attribute values of `attrs` as "name=value" words in the table's order ("stride_h=2",
/// "activation=relu"), for plan summaries.
std::vector<std::string> attrWords(const KernelAttrSet &attrs);

} // namespace dp::rt
