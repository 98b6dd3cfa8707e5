// plan-memory: liveness-based placement of every buffer in one arena (see Passes.td).
#include "passes/Plan/Passes.h"

#include "dialect/Common/TensorBytes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "plan-memory"

namespace dp::plan {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "passes/Plan/Passes.h.inc"
} // namespace dp::plan

using namespace mlir;
using namespace dp::plan;

namespace {

int64_t aligned(int64_t bytes) { return llvm::alignTo(bytes, kAlignment); }

/// A transient bucket (--shard-optimizer 2), or null.
BucketOp transientBucket(Value bucket) {
  auto op = bucket ? bucket.getDefiningOp<BucketOp>() : BucketOp();
  return op && op.getTransient() ? op : BucketOp();
}

/// The step-placed buffer a value ultimately refers to (through views): an alloc, or a
/// transient bucket (directly or through one of its gradients); null for persistent ones.
Operation *rootAlloc(Value v) {
  Value root = bufferRoot(v);
  if (auto alloc = root.getDefiningOp<AllocOp>())
    return alloc;
  if (auto grad = root.getDefiningOp<GradOp>())
    return transientBucket(grad.getBucket());
  return transientBucket(root);
}

struct Interval {
  Operation *buffer; // an AllocOp or a transient BucketOp
  int64_t size, start, end, offset = -1;
  /// The process whose kernels alone touch the buffer (sharded optimizer state's copies of
  /// an owner's means), or -1: every process's. Buffers of two different processes never
  /// meet in one process's arena, so they may share bytes whatever their lifetimes.
  int64_t process = -2; // -2: no kernel seen yet
  bool meets(const Interval &other) const {
    const bool apart = process >= 0 && other.process >= 0 && process != other.process;
    return !apart && start <= other.end && other.start <= end;
  }
};

/// Places the step's allocs of `device` from `base`; returns their transient peak in bytes.
int64_t planStep(StepOp step, int64_t device, int64_t base) {
  llvm::DenseMap<Operation *, unsigned> index;
  SmallVector<Interval> intervals;
  // An output keeps its buffer live to the end of the step.
  const int64_t last = static_cast<int64_t>(step.getBody().front().getOperations().size()) - 1;
  int64_t position = 0;
  for (Operation &op : step.getBody().front()) {
    if (auto alloc = dyn_cast<AllocOp>(op); alloc && alloc.getDevice() == uint64_t(device)) {
      index[alloc] = intervals.size();
      intervals.push_back({alloc, aligned(bufferBytes(alloc.getType())), position, position});
    }
    for (Value operand : op.getOperands()) {
      Operation *root = rootAlloc(operand);
      if (!root)
        continue;
      // A transient bucket is live from the first kernel that touches it.
      if (auto bucket = dyn_cast<BucketOp>(root);
          bucket && !index.count(root) && bufferDevice(bucket.getBuffer()) == device) {
        index[root] = intervals.size();
        intervals.push_back({root, aligned(bufferBytes(bucket.getType())), position, position});
      }
      if (index.count(root)) {
        Interval &iv = intervals[index[root]];
        iv.end = isa<OutputOp>(op) ? last : std::max(iv.end, position);
        auto kernel = dyn_cast<KernelOp>(op);
        const int64_t process =
            kernel && kernel.getProcess() ? static_cast<int64_t>(*kernel.getProcess()) : -1;
        iv.process = iv.process == -2 || iv.process == process ? process : -1;
      }
    }
    ++position;
  }
  // Largest first, then earliest: a classic greedy that packs well for layer-by-layer graphs.
  SmallVector<Interval *> order;
  for (Interval &iv : intervals)
    order.push_back(&iv);
  llvm::stable_sort(order, [](Interval *a, Interval *b) {
    return a->size != b->size ? a->size > b->size : a->start < b->start;
  });
  SmallVector<Interval *> placed;
  int64_t peak = 0;
  for (Interval *iv : order) {
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (Interval *p : placed)
      if (p->meets(*iv))
        busy.push_back({p->offset, p->offset + p->size});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (offset + iv->size <= lo)
        break;
      offset = std::max(offset, hi);
    }
    iv->offset = offset;
    peak = std::max(peak, offset + iv->size);
    placed.push_back(iv);
  }
  Builder b(step.getContext());
  for (Interval &iv : intervals)
    iv.buffer->setAttr("offset", b.getI64IntegerAttr(base + iv.offset));
  return peak;
}

struct PlanMemoryPass : dp::plan::impl::PlanMemoryPassBase<PlanMemoryPass> {
  void runOnOperation() override {
    auto programs = llvm::to_vector(getOperation().getOps<ProgramOp>());
    if (programs.empty()) {
      getOperation().emitError("expected a plan.program, found none");
      return signalPassFailure();
    }
    // The workers' program and, under the parameter-server strategy, each server's: each
    // process runs one of them, in an arena of its own.
    for (ProgramOp program : programs)
      if (failed(planProgram(program)))
        return signalPassFailure();
  }

  static LogicalResult planProgram(ProgramOp program) {
    Builder b(program.getContext());
    // Each device has its own arena; replicas are copies, so the arenas have one size (under
    // sharded optimizer state their persistent parts differ: the largest sets it).
    int64_t devices = program.getDevicesPerProcess();
    SmallVector<int64_t> persistent(devices, 0);
    // Optimizer state sharded over the processes (`process`): each process holds only its
    // own, so the processes' shares of a device are laid over one another after the rest.
    SmallVector<ParamOp> shared;
    for (Operation &op : program.getBody().front()) {
      if (!isa<ParamOp, GradOp, InputOp, BucketOp>(op))
        continue;
      int64_t device = bufferDevice(op.getResult(0));
      // A transient bucket and its gradients are placed with the train step's buffers.
      if (transientBucket(op.getResult(0)) ||
          (isa<GradOp>(op) && transientBucket(cast<GradOp>(op).getBucket())))
        continue;
      // A gradient (a broadcast's parameter) inside a bucket takes its slot there.
      Value bucket;
      std::optional<uint64_t> slot;
      if (auto grad = dyn_cast<GradOp>(op))
        bucket = grad.getBucket(), slot = grad.getBucketOffset();
      else if (auto param = dyn_cast<ParamOp>(op))
        bucket = param.getBucket(), slot = param.getBucketOffset();
      if (bucket) {
        auto bucketOffset = bucket.getDefiningOp()->getAttrOfType<IntegerAttr>("offset");
        const int64_t element =
            dp::elementBytes(cast<ShapedType>(op.getResult(0).getType()).getElementType());
        op.setAttr("offset", b.getI64IntegerAttr(bucketOffset.getInt() + *slot * element));
        continue;
      }
      if (auto param = dyn_cast<ParamOp>(op); param && param.getProcess()) {
        shared.push_back(param);
        continue;
      }
      auto type = cast<MemRefType>(op.getResult(0).getType());
      op.setAttr("offset", b.getI64IntegerAttr(persistent[device]));
      persistent[device] += aligned(bufferBytes(type));
    }
    llvm::DenseMap<std::pair<int64_t, int64_t>, int64_t> share; // (device, process) -> bytes
    SmallVector<int64_t> largestShare(devices, 0);
    for (ParamOp param : shared) {
      const int64_t device = bufferDevice(param.getResult());
      int64_t &bytes = share[{device, int64_t(*param.getProcess())}];
      param->setAttr("offset", b.getI64IntegerAttr(persistent[device] + bytes));
      bytes += aligned(bufferBytes(cast<MemRefType>(param.getType())));
      largestShare[device] = std::max(largestShare[device], bytes);
    }
    for (int64_t d = 0; d < devices; ++d)
      persistent[d] += largestShare[d];
    int64_t base = *llvm::max_element(persistent), peak = 0;
    for (StepOp step : program.getOps<StepOp>()) {
      int64_t stepPeak = 0;
      for (int64_t d = 0; d < devices; ++d)
        stepPeak = std::max(stepPeak, planStep(step, d, base));
      step->setAttr("peak_bytes", b.getI64IntegerAttr(stepPeak));
      peak = std::max(peak, stepPeak);
    }
    // The gradients in transient buckets: their slots where the train step placed the bucket.
    for (GradOp grad : program.getOps<GradOp>()) {
      BucketOp bucket = transientBucket(grad.getBucket());
      if (!bucket)
        continue;
      if (!bucket.getOffset()) {
        // No kernel touches it: it gets no bytes (the plan would not run its collective).
        return bucket->emitError("transient bucket ") << bucket.getIndex() << " is used by no step";
      }
      grad->setAttr("offset",
                    b.getI64IntegerAttr(int64_t(*bucket.getOffset()) +
                                        int64_t(*grad.getBucketOffset()) *
                                            dp::elementBytes(grad.getType().getElementType())));
    }
    program->setAttr("persistent_bytes", b.getI64IntegerAttr(base));
    program->setAttr("arena_bytes", b.getI64IntegerAttr(base + peak));
    return success();
  }
};

} // namespace
