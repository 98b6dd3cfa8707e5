// convert-dist-to-plan: the replicated train and eval steps that the dist phase leaves become one
// plan.program (see Passes.td). The conversion owns the program's structure (parameters, input
// shards, gradient buckets, collectives, outputs); every compute op lowers itself through its
// KernelLoweringOpInterface, so no compute op is named here.
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/Model.h"
#include "dialect/Interfaces/KernelLoweringOpInterface.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "passes/Conversion/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "convert-dist-to-plan"

namespace dp {
#define GEN_PASS_DEF_CONVERTDISTTOPLANPASS
#include "passes/Conversion/Passes.h.inc"
} // namespace dp

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

namespace {

MemRefType bufferType(Type tensor) {
  auto t = cast<RankedTensorType>(tensor);
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// Keras's fans: (in, out) for a matrix, times the receptive field for convolution kernels.
std::pair<int64_t, int64_t> fans(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return {1, 1};
  if (shape.size() == 1)
    return {shape[0], shape[0]};
  int64_t receptive = 1;
  for (int64_t d : shape.drop_back(2))
    receptive *= d;
  return {shape[shape.size() - 2] * receptive, shape.back() * receptive};
}

plan::InitAttr initFor(g::ParamOp param) {
  MLIRContext *ctx = param.getContext();
  auto [fanIn, fanOut] = fans(param.getType().getShape());
  auto make = [&](StringRef kind, double a = 0, double b = 0) {
    return plan::InitAttr::get(ctx, kind, APFloat(a), APFloat(b), fanIn, fanOut, ElementsAttr());
  };
  return llvm::TypeSwitch<Attribute, plan::InitAttr>(param.getInit())
      .Case([&](g::ZerosAttr) { return make("zeros"); })
      .Case([&](g::OnesAttr) { return make("ones"); })
      .Case([&](g::ConstantAttr c) { return make("constant", c.getValue().convertToDouble()); })
      .Case([&](g::UniformAttr u) {
        return make("uniform", u.getLow().convertToDouble(), u.getHigh().convertToDouble());
      })
      .Case([&](g::NormalAttr n) {
        return make("normal", n.getMean().convertToDouble(), n.getStddev().convertToDouble());
      })
      .Case([&](g::GlorotUniformAttr) { return make("glorot_uniform"); })
      .Case([&](g::GlorotNormalAttr) { return make("glorot_normal"); })
      .Case([&](g::HeNormalAttr) { return make("he_normal"); })
      .Case([&](g::HeUniformAttr) { return make("he_uniform"); })
      .Case([&](g::OrthogonalAttr o) {
        // Keras's view: [all axes but the last, the last axis].
        auto shape = param.getType().getShape();
        int64_t cols = shape.empty() ? 1 : shape.back();
        return plan::InitAttr::get(ctx, "orthogonal", APFloat(o.getGain().convertToDouble()),
                                   APFloat(0.0), param.getType().getNumElements() / cols, cols,
                                   ElementsAttr());
      })
      .Case([&](g::UnitForgetBiasAttr) { return make("unit_forget_bias"); })
      .Case([&](ElementsAttr data) {
        return plan::InitAttr::get(ctx, "data", APFloat(0.0), APFloat(0.0), fanIn, fanOut, data);
      });
}

/// Lowers the functions of one module into a plan.program.
class Lowering : public KernelLowering {
public:
  explicit Lowering(plan::ProgramOp program) : program_(program), b_(program.getContext()) {}

  void declarePersistent(func::FuncOp func) {
    b_.setInsertionPointToEnd(&program_.getBody().front());
    // Each replica's shard of an input is that device's input buffer; an input read whole
    // (a single replica) is device 0's. Its role is the one graph-derive-steps gave it (the
    // plan verifier refuses an input without one).
    auto declareInput = [&](Value v, Value arg, int64_t device) {
      unsigned n = cast<BlockArgument>(arg).getArgNumber();
      StringRef name = func.getArgAttrOfType<StringAttr>(n, g::kInputAttr).getValue();
      auto role = func.getArgAttrOfType<StringAttr>(n, g::kRoleAttr);
      Value &buffer = inputs_[{name, device}];
      if (!buffer)
        buffer = b_.create<plan::InputOp>(v.getLoc(), bufferType(v.getType()), name,
                                          role ? role.getValue() : "", IntegerAttr(), device);
    };
    for (BlockArgument arg : func.getArguments())
      if (llvm::any_of(arg.getUsers(), [](Operation *u) { return !isa<dist::ShardOp>(u); }))
        declareInput(arg, arg, 0);
    for (auto shard : func.getOps<dist::ShardOp>())
      declareInput(shard, shard.getInput(), dist::getReplica(shard));
    // The weights a broadcast copies lie in its bucket, on every device, in `tensors` order.
    llvm::DenseMap<std::pair<StringRef, int64_t>, std::pair<Value, int64_t>> inBucket;
    for (auto start : func.getOps<dist::BroadcastStartOp>()) {
      const unsigned n = start.tensorsPerReplica();
      int64_t elements = 0;
      SmallVector<int64_t> offsets;
      for (Value p : start.copiesOf(0)) {
        offsets.push_back(elements);
        elements += slotElements(p.getType());
      }
      SmallVector<Value> perDevice;
      for (unsigned r = 0; r < start.replicas(); ++r) {
        Value bucket = b_.create<plan::BucketOp>(
            start.getLoc(), MemRefType::get({elements}, b_.getF32Type()),
            b_.getI64IntegerAttr(start.getBucket()), IntegerAttr(), deviceAttr(r), IntegerAttr(),
            DenseI64ArrayAttr(), UnitAttr());
        perDevice.push_back(bucket);
        for (unsigned i = 0; i < n; ++i) {
          auto copy = start.copiesOf(r)[i].getDefiningOp<g::ParamOp>();
          inBucket[{copy.getName(), dist::getReplica(copy)}] = {bucket, offsets[i]};
        }
      }
      broadcastBuckets_[start.getBucket()] = perDevice;
    }
    for (g::ParamOp param : func.getOps<g::ParamOp>()) {
      Value &buffer = params_[{param.getName(), dist::getReplica(param)}];
      if (buffer)
        continue;
      auto [bucket, offset] = inBucket.lookup({param.getName(), dist::getReplica(param)});
      buffer = b_.create<plan::ParamOp>(
          param.getLoc(), bufferType(param.getType()), param.getName(), initFor(param),
          param.getOptimizerState(), IntegerAttr(), dist::getReplica(param), processAttr(param),
          bucket, bucket ? b_.getI64IntegerAttr(offset) : IntegerAttr());
    }
  }

  /// The elements a tensor takes in a bucket: each starts on an arena alignment boundary, and
  /// the padding after it stays zero (averaged, it stays zero; broadcast, it is copied).
  static int64_t slotElements(Type tensorType) {
    return llvm::alignTo(cast<RankedTensorType>(tensorType).getNumElements(), plan::kAlignment / 4);
  }

  /// Every allreduced gradient gets its slot in its device's bucket, where the kernel that
  /// computes it writes. Each allreduce needs a bucket index of its own: the collective
  /// kernels name their buffers by it.
  LogicalResult declareBuckets(func::FuncOp func) {
    int64_t replicas = program_.getDevicesPerProcess();
    const int64_t processes = program_.getProcesses();
    // Stage 2 of sharded optimizer state: no gradient bucket outlives the train step.
    auto stage = func->getAttrOfType<IntegerAttr>(dist::kShardOptimizerAttr);
    const bool transient = stage && stage.getInt() == 2;
    auto declare = [&](Operation *op, ValueRange grads, int64_t bucket, IntegerAttr server,
                       DenseI64ArrayAttr owners = {}) {
      unsigned n = grads.size() / replicas;
      auto slot = [&](Value g) { return slotElements(g.getType()); };
      int64_t elements = 0;
      // A reduce-scattered bucket (tensors ordered by owner): where each owner's begin.
      SmallVector<int64_t> segments;
      for (auto [i, g] : llvm::enumerate(grads.take_front(n))) {
        if (owners)
          while (static_cast<int64_t>(segments.size()) <= owners[i])
            segments.push_back(elements);
        elements += slot(g);
      }
      if (owners)
        while (static_cast<int64_t>(segments.size()) <=
               (processes > 1 ? replicas * processes : replicas))
          segments.push_back(elements);
      SmallVector<Value> perDevice;
      for (int64_t r = 0; r < replicas; ++r) {
        b_.setInsertionPoint(*program_.getBody().front().getOps<plan::StepOp>().begin());
        Value buffer = b_.create<plan::BucketOp>(
            op->getLoc(), MemRefType::get({elements}, b_.getF32Type()),
            b_.getI64IntegerAttr(bucket), IntegerAttr(), deviceAttr(r), server,
            owners ? b_.getDenseI64ArrayAttr(segments) : DenseI64ArrayAttr(),
            transient && !server ? b_.getUnitAttr() : UnitAttr());
        perDevice.push_back(buffer);
        int64_t offset = 0;
        for (Value g : grads.slice(r * n, n)) {
          auto [name, device] = gradOf_.lookup(g);
          Value grad = b_.create<plan::GradOp>(g.getLoc(), bufferType(g.getType()), name,
                                               buffer, b_.getI64IntegerAttr(offset),
                                               IntegerAttr(), r);
          grads_[{name, r}] = grad;
          offset += slot(g);
        }
      }
      buckets_[bucket] = perDevice;
    };
    WalkResult walk = func.walk([&](Operation *op) {
      int64_t bucket;
      ValueRange grads;
      IntegerAttr server;
      DenseI64ArrayAttr owners;
      if (auto p = dyn_cast<dist::PushOp>(op)) {
        bucket = p.getBucket(), grads = p.getGradients(), server = p.getServerAttr();
      } else if (auto r = dyn_cast<dist::ReceiveOp>(op)) {
        bucket = r.getBucket(), grads = r.getGradients();
      } else if (auto a = dyn_cast<dist::AllReduceOp>(op)) {
        if (!a.getBucket()) {
          a.emitOpError("has no bucket (run dist-fuse-allreduce first)");
          return WalkResult::interrupt();
        }
        bucket = a.getBucketAttr().getInt(), grads = a.getGradients();
      } else if (auto a = dyn_cast<dist::AllReduceStartOp>(op)) {
        bucket = a.getBucketAttr().getInt(), grads = a.getGradients(), owners = a.getOwnersAttr();
      } else {
        return WalkResult::advance();
      }
      if (buckets_.count(bucket)) {
        op->emitOpError() << "reuses bucket " << bucket << " of another allreduce";
        return WalkResult::interrupt();
      }
      declare(op, grads, bucket, server, owners);
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  LogicalResult lowerStep(func::FuncOp func, StringRef name) {
    b_.setInsertionPointToEnd(&program_.getBody().front());
    auto step = b_.create<plan::StepOp>(func.getLoc(), name);
    Block *block = b_.createBlock(&step.getBody());
    b_.setInsertionPointToEnd(block);
    values_.clear();
    remembered_.clear();
    counters_.clear();
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      values_[func.getArgument(i)] =
          inputs_.lookup({func.getArgAttrOfType<StringAttr>(i, g::kInputAttr).getValue(), 0});
    collectGradients(func);
    if (failed(declareBuckets(func)))
      return failure();
    b_.setInsertionPointToEnd(block);
    llvm::DenseSet<Operation *> final = finalPhase(func);
    for (Operation &op : func.getBody().front()) {
      final_ = final.contains(&op);
      process_ = processAttr(&op);
      if (failed(lower(&op)))
        return failure();
    }
    final_ = false;
    process_ = {};
    return success();
  }

private:
  /// Under gradient accumulation, the ops of the train step's final phase: those that read an
  /// accumulated gradient (dist.accumulate), directly or through others, and the updates.
  /// The runtime runs their kernels on a step's last micro-shard only.
  static llvm::DenseSet<Operation *> finalPhase(func::FuncOp func) {
    llvm::DenseSet<Operation *> final;
    dist::MeshAttr mesh = dist::getMesh(func);
    if (!mesh || mesh.getAccumulation() == 1)
      return final;
    for (Operation &op : func.getBody().front()) {
      if (isa<func::ReturnOp>(op))
        continue;
      if (isa<ParameterUpdateOpInterface, dist::BroadcastStartOp>(op) ||
          llvm::any_of(op.getOperands(), [&](Value v) {
            Operation *def = v.getDefiningOp();
            return def && (isa<dist::AccumulateOp>(def) || final.contains(def));
          }))
        final.insert(&op);
    }
    return final;
  }

  /// Gradients consumed by updates get persistent buffers: they outlive the step, to be
  /// inspected, checkpointed or averaged across replicas.
  void collectGradients(func::FuncOp func) {
    gradOf_.clear();
    func.walk([&](ParameterUpdateOpInterface update) {
      Value param = update.getUpdatedParameter(), grad = update.getGradientOperand().get();
      // An averaged gradient's buffer is the one its replica computed (reduced in place).
      if (auto result = dyn_cast<OpResult>(grad)) {
        if (auto a = dyn_cast<dist::AllReduceOp>(result.getOwner()))
          grad = a.getGradients()[result.getResultNumber()];
        else if (auto w = dyn_cast<dist::AllReduceWaitOp>(result.getOwner()))
          grad = w.getStart().getGradients()[result.getResultNumber()];
      }
      gradOf_[grad] = {param.getDefiningOp<g::ParamOp>().getName(), dist::getReplica(update)};
    });
    // Other averaged tensors (batch statistics) live in their bucket like gradients, under
    // the allreduce's names.
    auto nameOthers = [&](ValueRange tensors, std::optional<ArrayAttr> names) {
      if (!names || names->empty() || tensors.size() % names->size() != 0)
        return;
      unsigned n = names->size();
      for (auto [i, v] : llvm::enumerate(tensors))
        if (!gradOf_.count(v))
          gradOf_[v] = {cast<StringAttr>((*names)[i % n]).getValue(),
                        dist::getReplica(v.getDefiningOp())};
    };
    func.walk([&](Operation *op) {
      if (auto p = dyn_cast<dist::PushOp>(op))
        nameOthers(p.getGradients(), p.getTensors());
      else if (auto a = dyn_cast<dist::AllReduceOp>(op))
        nameOthers(a.getGradients(), a.getTensors());
      else if (auto a = dyn_cast<dist::AllReduceStartOp>(op))
        nameOthers(a.getGradients(), a.getTensors());
    });
  }

  Value gradBuffer(Value result) {
    auto key = gradOf_.lookup(result);
    auto it = grads_.find(key);
    if (it != grads_.end())
      return it->second;
    OpBuilder::InsertionGuard guard(b_);
    // Persistent buffers come before the steps.
    b_.setInsertionPoint(*program_.getBody().front().getOps<plan::StepOp>().begin());
    Value buffer = b_.create<plan::GradOp>(result.getLoc(), bufferType(result.getType()),
                                           key.first, Value(), IntegerAttr(), IntegerAttr(),
                                           key.second);
    grads_[key] = buffer;
    return buffer;
  }

  /// The persistent buffer of an accumulated gradient's partial sums: `levels` rows of its
  /// size, named after its parameter.
  Value partialSums(Value sum, int64_t levels) {
    auto [name, device] = gradOf_.lookup(sum);
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(*program_.getBody().front().getOps<plan::StepOp>().begin());
    const int64_t n = cast<RankedTensorType>(sum.getType()).getNumElements();
    return b_.create<plan::GradOp>(sum.getLoc(), MemRefType::get({levels, n}, b_.getF32Type()),
                                   (name + ".partial_sums").str(), Value(), IntegerAttr(),
                                   IntegerAttr(), device);
  }

  // KernelLowering: what the ops' lowering rules ask for.
  MLIRContext *context() override { return b_.getContext(); }

  Value buffer(Value tensor) override { return values_.lookup(tensor); }

  Value newBuffer(Value result) override {
    Value buffer = allocate(result);
    values_[result] = buffer;
    return buffer;
  }

  Value scratch(Operation *op, Type tensorType) override {
    return b_.create<plan::AllocOp>(op->getLoc(), bufferType(tensorType), IntegerAttr(),
                                    deviceAttr(dist::getReplica(op)));
  }

  void view(Value result, Value source) override {
    values_[result] = b_.create<plan::ViewOp>(result.getLoc(), bufferType(result.getType()),
                                              values_.lookup(source));
    // A gradient that is a view of another buffer is copied into its persistent buffer.
    if (gradOf_.count(result)) {
      Value dst = gradBuffer(result);
      emit(result.getLoc(), rt::KernelKind::Copy, {values_.lookup(result)}, {dst}, rt::NoAttrs{});
      values_[result] = dst;
    }
  }

  void remember(Value key, Value buffer) override { remembered_[key] = buffer; }
  Value recall(Value key) override { return remembered_.lookup(key); }

  int64_t nextIndex(Operation *op, StringRef counter) override {
    return counters_[(counter + "@" + Twine(dist::getReplica(op))).str()]++;
  }

  void emitKernel(Location loc, rt::KernelKind kind, ValueRange inputs, ValueRange outputs,
                  ArrayRef<NamedAttribute> attrs) override {
    auto k = b_.create<plan::KernelOp>(loc, rt::kernelInfo(kind).name, inputs, outputs,
                                       /*final=*/false, /*process=*/IntegerAttr());
    k.setFinal(final_);
    k.setProcessAttr(process_);
    for (NamedAttribute a : attrs)
      k->setAttr(a.getName(), a.getValue());
  }

  /// The buffer a result is written to: its persistent gradient buffer, or a new one.
  Value allocate(Value result) {
    if (gradOf_.count(result))
      return gradBuffer(result);
    int64_t device = result.getDefiningOp() ? dist::getReplica(result.getDefiningOp()) : 0;
    return b_.create<plan::AllocOp>(result.getLoc(), bufferType(result.getType()), IntegerAttr(),
                                    deviceAttr(device));
  }

  /// The `process` attribute of an op that runs on one process alone (`dist.process`), else
  /// absent.
  IntegerAttr processAttr(Operation *op) {
    const int64_t process = dist::getProcess(op);
    return process >= 0 ? b_.getI64IntegerAttr(process) : IntegerAttr();
  }

  /// The `device` attribute of a buffer op: absent for device 0, as in a single-device plan.
  IntegerAttr deviceAttr(int64_t device) {
    return device ? b_.getI64IntegerAttr(device) : IntegerAttr();
  }

  /// The collective kernels of bucket `index`, on every device's copy.
  void collective(Location loc, rt::KernelKind kind, int64_t index) {
    emit(loc, kind, buckets_.lookup(index), ValueRange(), rt::CollectiveAttrs{index});
  }

  /// A broadcast kernel's bucket, root replica and (over the processes) root process.
  static rt::CollectiveAttrs broadcastAttrs(dist::BroadcastStartOp s) {
    return rt::CollectiveAttrs{s.getBucketAttr().getInt(), s.getRootAttr().getInt(),
                               s.getProcessAttr() ? s.getProcessAttr().getInt() : -1};
  }

  /// Stage 2 of sharded optimizer state: a reduce-scattered bucket dies at its wait, before
  /// the updates that read its means, so each mean that an update reads is copied out of it
  /// by its owner (replica r of process p: the copy runs there alone) into a buffer of the
  /// step's, live from the copy to the update. The owners' copies of different processes may
  /// share bytes (plan-memory): each process holds its own.
  void copyOwnersMeans(dist::AllReduceWaitOp w) {
    dist::AllReduceStartOp start = w.getStart();
    auto stage = w->getParentOp()->getAttrOfType<IntegerAttr>(dist::kShardOptimizerAttr);
    DenseI64ArrayAttr owners = start.getOwnersAttr();
    if (!owners || !stage || stage.getInt() != 2)
      return;
    const int64_t n = owners.size(), replicas = program_.getDevicesPerProcess();
    IntegerAttr saved = process_;
    for (OpResult mean : w->getResults()) {
      if (mean.use_empty())
        continue;
      const int64_t owner = owners[mean.getResultNumber() % n];
      const int64_t device = mean.getResultNumber() / n;
      process_ =
          program_.getProcesses() > 1 ? b_.getI64IntegerAttr(owner / replicas) : IntegerAttr();
      Value copy = b_.create<plan::AllocOp>(mean.getLoc(), bufferType(mean.getType()),
                                            IntegerAttr(), deviceAttr(device));
      emit(mean.getLoc(), rt::KernelKind::Copy, {values_.lookup(mean)}, {copy}, rt::NoAttrs{});
      values_[mean] = copy;
    }
    process_ = saved;
  }

  /// Means are left in place: results take the buffers of the gradients they average.
  void bindMeans(ValueRange results, ValueRange grads) {
    for (auto [result, grad] : llvm::zip(results, grads))
      values_[result] = values_.lookup(grad);
  }

  /// The structure of the program (parameters, shards, collectives, outputs) is lowered here;
  /// every other op lowers itself.
  LogicalResult lower(Operation *op) {
    bool ok = true;
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](g::ParamOp p) {
          values_[p.getResult()] = params_.lookup({p.getName(), dist::getReplica(p)});
        })
        .Case([&](dist::ShardOp s) {
          StringRef name = cast<func::FuncOp>(s->getParentOp())
                               .getArgAttrOfType<StringAttr>(
                                   cast<BlockArgument>(s.getInput()).getArgNumber(),
                                   g::kInputAttr)
                               .getValue();
          values_[s.getResult()] = inputs_.lookup({name, dist::getReplica(s)});
        })
        .Case([&](dist::AccumulateOp a) {
          // The sum lives where the gradient would: its persistent buffer or bucket slot; the
          // tree's partial sums past level 0 in a persistent buffer of their own.
          SmallVector<Value> outs{newBuffer(a.getResult())};
          const int64_t count = a.getCount();
          if (int64_t levels = rt::accumulatePartialLevels(count))
            outs.push_back(partialSums(a.getResult(), levels));
          emit(a.getLoc(), rt::KernelKind::Accumulate, {values_.lookup(a.getGradient())}, outs,
               rt::AccumulateAttrs{count});
        })
        .Case([&](dist::AllReduceOp a) {
          int64_t bucket = a.getBucketAttr().getInt();
          collective(a.getLoc(), rt::KernelKind::AllReduceStart, bucket);
          collective(a.getLoc(), rt::KernelKind::AllReduceWait, bucket);
          bindMeans(a.getResults(), a.getGradients());
        })
        .Case([&](dist::AllReduceStartOp a) {
          collective(a.getLoc(), rt::KernelKind::AllReduceStart, a.getBucket());
        })
        .Case([&](dist::AllReduceWaitOp w) {
          collective(w.getLoc(), rt::KernelKind::AllReduceWait, w.getStart().getBucket());
          bindMeans(w.getResults(), w.getStart().getGradients());
          copyOwnersMeans(w);
        })
        .Case([&](dist::BroadcastStartOp s) {
          // The bucket holds its parameters, each replica's copies (declarePersistent).
          emit(s.getLoc(), rt::KernelKind::BroadcastStart, broadcastBuckets_.lookup(s.getBucket()),
               ValueRange(), broadcastAttrs(s));
        })
        .Case([&](dist::BroadcastWaitOp w) {
          dist::BroadcastStartOp s = w.getStart();
          emit(w.getLoc(), rt::KernelKind::BroadcastWait, broadcastBuckets_.lookup(s.getBucket()),
               ValueRange(), broadcastAttrs(s));
        })
        .Case([&](dist::PushOp p) {
          collective(p.getLoc(), rt::KernelKind::PushStart, p.getBucket());
        })
        .Case([&](dist::PullOp p) {
          collective(p.getLoc(), rt::KernelKind::PullWait, p.getBucket());
        })
        .Case([&](dist::ReceiveOp r) {
          // The updates read the received gradients where they arrive: in the bucket.
          for (Value g : r.getGradients())
            values_[g] = grads_.lookup(gradOf_.lookup(g));
          collective(r.getLoc(), rt::KernelKind::ReceivePush, r.getBucket());
        })
        .Case([&](dist::ReplyOp r) {
          collective(r.getLoc(), rt::KernelKind::ReplyPull, r.getBucket());
        })
        .Case([&](func::ReturnOp ret) {
          auto func = ret->getParentOfType<func::FuncOp>();
          for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i) {
            auto name = func.getResultAttrOfType<StringAttr>(i, g::kOutputAttr);
            auto role = func.getResultAttrOfType<StringAttr>(i, g::kRoleAttr);
            b_.create<plan::OutputOp>(ret.getLoc(), name ? name.getValue() : "result",
                                      role ? role.getValue() : "",
                                      values_.lookup(ret.getOperand(i)));
          }
        })
        .Case([&](KernelLoweringOpInterface l) { ok = succeeded(l.lowerToKernels(*this)); })
        .Default([&](Operation *other) {
          other->emitOpError("has no kernel to lower to");
          ok = false;
        });
    return success(ok);
  }

  plan::ProgramOp program_;
  OpBuilder b_;
  /// Persistent buffers by (name, device).
  using Key = std::pair<StringRef, int64_t>;
  llvm::DenseMap<Key, Value> inputs_, params_, grads_;
  llvm::DenseMap<int64_t, SmallVector<Value>> buckets_;
  /// Each broadcast's bucket on every device, by bucket index.
  llvm::DenseMap<int64_t, SmallVector<Value>> broadcastBuckets_;
  llvm::DenseMap<Value, Value> values_;
  /// Buffers ops remembered for later ops of the step, and per-device counters of ops.
  llvm::DenseMap<Value, Value> remembered_;
  llvm::StringMap<int64_t> counters_;
  /// The (parameter, device) whose gradient a value is.
  llvm::DenseMap<Value, Key> gradOf_;
  /// Whether the op being lowered is of the train step's final phase (finalPhase).
  bool final_ = false;
  /// The process the op being lowered runs on alone, or null (every process).
  IntegerAttr process_;
};

struct ConvertDistToPlanPass : dp::impl::ConvertDistToPlanPassBase<ConvertDistToPlanPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp train = g::getStepFunction(module, "train");
    func::FuncOp eval = g::getStepFunction(module, "eval");
    if (!train || !eval) {
      module.emitError("expected a train and an eval step (run graph-derive-steps first)");
      return signalPassFailure();
    }
    int64_t batch = cast<RankedTensorType>(train.getArgument(0).getType()).getDimSize(0);
    StringRef model = train->getAttrOfType<StringAttr>(g::kModelAttr).getValue();
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    int64_t devices = 1, processes = 1, nodes = 1;
    StringRef device = rt::deviceKindName(rt::DeviceKind::Cpu);
    if (dist::MeshAttr mesh = dist::getMesh(train)) {
      devices = mesh.getDevicesPerProcess();
      processes = mesh.getProcesses();
      device = mesh.getDevice();
      nodes = mesh.getNodes();
    }
    auto program = b.create<plan::ProgramOp>(module.getLoc(), model, batch, devices, processes,
                                             device, StringAttr(), IntegerAttr(), IntegerAttr(),
                                             IntegerAttr(), false, IntegerAttr(), StringAttr(),
                                             IntegerAttr());
    // A layout over several hosts reaches the plan; one host is left implicit.
    if (nodes > 1)
      program.setNodes(nodes);
    if (dist::MeshAttr mesh = dist::getMesh(train); mesh && mesh.getAccumulation() > 1)
      program.setAccumulation(mesh.getAccumulation());
    if (auto schedule = train->getAttrOfType<StringAttr>(g::kLrScheduleAttr))
      program.setLrSchedule(schedule.getValue());
    if (auto wire = train->getAttrOfType<StringAttr>(dist::kAllReducePrecisionAttr))
      program.setAllreducePrecisionAttr(wire);
    program.getBody().emplaceBlock();

    dist::ParameterServerAttr strategy = dist::getParameterServer(train);
    if (strategy) {
      program.setServers(strategy.getServers());
      program.setStaleness(strategy.getStaleness());
      program.setSync(strategy.getSync());
    }

    Lowering lowering(program);
    lowering.declarePersistent(train);
    lowering.declarePersistent(eval);
    if (failed(lowering.lowerStep(train, "train")) || failed(lowering.lowerStep(eval, "eval")))
      return signalPassFailure();
    train.erase();
    eval.erase();

    // Each server's program: its parameters and their optimizer state, and the serve step.
    for (func::FuncOp server : dist::getServerFunctions(module)) {
      if (!strategy) {
        server.emitError("is a server function, but the train step has no parameter-server "
                         "strategy");
        return signalPassFailure();
      }
      b.setInsertionPointToEnd(module.getBody());
      auto serverProgram = b.create<plan::ProgramOp>(
          server.getLoc(), model, batch, 1, 1, rt::deviceKindName(rt::DeviceKind::Cpu),
          StringAttr(), IntegerAttr(), IntegerAttr(), IntegerAttr(), false,
          b.getI64IntegerAttr(dist::getServer(server)), StringAttr(), IntegerAttr());
      if (auto schedule = program.getLrScheduleAttr())
        serverProgram.setLrScheduleAttr(schedule);
      serverProgram.getBody().emplaceBlock();
      Lowering serving(serverProgram);
      serving.declarePersistent(server);
      if (failed(serving.lowerStep(server, "serve")))
        return signalPassFailure();
      server.erase();
    }
  }
};

} // namespace
