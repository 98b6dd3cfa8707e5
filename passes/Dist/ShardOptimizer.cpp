// dist-shard-optimizer: each parameter's optimizer state on one replica, which alone receives
// its gradient's mean (the gradient buckets reduce-scattered), updates it and broadcasts the
// parameters it owns, in buckets, to the others (ZeRO stage 1; see Passes.td):
// over the replicas of the process when the job has one process, over every replica of the job
// when it has several.
#include "dialect/Common/TensorBytes.h"
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Graph/IR/Model.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "passes/Dist/Bucketing.h"
#include "passes/Dist/Passes.h"
#include "passes/Pipelines/CompileOptions.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>
#include <vector>

#define DEBUG_TYPE "dist-shard-optimizer"

namespace dp::dist {
#define GEN_PASS_DEF_SHARDOPTIMIZERPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

namespace {

/// The optimizer state an update reads and writes: its operands from `graph.param`s marked
/// `optimizer_state`.
SmallVector<g::ParamOp> stateOf(ParameterUpdateOpInterface update) {
  SmallVector<g::ParamOp> state;
  for (Value v : update->getOperands())
    if (auto p = v.getDefiningOp<g::ParamOp>(); p && p.getOptimizerState())
      state.push_back(p);
  return state;
}

/// One trainable parameter: its update on each replica, in replica order.
struct Parameter {
  StringRef name;
  SmallVector<ParameterUpdateOpInterface> updates;
  SmallVector<Value> copies; // the parameter on each replica, in replica order
  int64_t stateBytes = 0;
  int64_t owner = -1;   // the replica that updates it
  int64_t process = -1; // the process that does, or -1: every process (one process a job)
};

/// Reduce-scatters the gradient buckets: each bucket whose means only updates read (not a
/// clip factor's norm, not batch statistics) has its tensors reordered by owner (replica p * R
/// + r of the job, or r of the process), and `owners` on its start, so that each mean reaches
/// its owner alone, one contiguous segment of the bucket each.
void scatterGradients(func::FuncOp func, llvm::MapVector<StringRef, Parameter> &params,
                      int64_t replicas) {
  OpBuilder b(func.getContext());
  SmallVector<dist::AllReduceStartOp> starts(func.getOps<dist::AllReduceStartOp>());
  for (dist::AllReduceStartOp start : starts) {
    ArrayAttr tensors = start.getTensorsAttr();
    if (!start.getPending().hasOneUse() || !tensors)
      continue;
    auto wait = dyn_cast<dist::AllReduceWaitOp>(*start.getPending().getUsers().begin());
    const unsigned n = start.getGradients().size() / start.getReplicas();
    if (!wait || tensors.size() != n)
      continue;
    const bool onlyUpdates = llvm::all_of(
        wait->getUsers(), [](Operation *user) { return isa<ParameterUpdateOpInterface>(user); });
    SmallVector<int64_t> lane;
    for (Attribute name : tensors) {
      auto it = params.find(cast<StringAttr>(name).getValue());
      if (it == params.end())
        break;
      lane.push_back(std::max<int64_t>(it->second.process, 0) * replicas + it->second.owner);
    }
    if (!onlyUpdates || lane.size() != n)
      continue;
    SmallVector<unsigned> order = llvm::to_vector(llvm::seq<unsigned>(0, n));
    llvm::stable_sort(order, [&](unsigned a, unsigned c) { return lane[a] < lane[c]; });
    SmallVector<Value> grads;
    SmallVector<Type> types;
    SmallVector<Attribute> names;
    SmallVector<int64_t> owners;
    for (unsigned k : order) {
      names.push_back(tensors[k]);
      owners.push_back(lane[k]);
    }
    for (unsigned r = 0; r < start.getReplicas(); ++r)
      for (unsigned k : order) {
        grads.push_back(start.getGradients()[r * n + k]);
        types.push_back(grads.back().getType());
      }
    b.setInsertionPoint(start);
    auto scattered = b.create<dist::AllReduceStartOp>(
        start.getLoc(), start.getPending().getType(), grads, start.getReplicasAttr(),
        start.getBucketAttr(), b.getArrayAttr(names), b.getDenseI64ArrayAttr(owners));
    b.setInsertionPoint(wait);
    auto means = b.create<dist::AllReduceWaitOp>(wait.getLoc(), types, scattered.getPending());
    for (unsigned r = 0; r < start.getReplicas(); ++r)
      for (auto [k, old] : llvm::enumerate(order))
        wait.getResult(r * n + old).replaceAllUsesWith(means.getResult(r * n + k));
    wait->erase();
    start->erase();
  }
}

/// Stage 2: each reduce-scattered bucket is waited for as soon as the next bucket has started
/// (after the run of starts it begins: a start follows its last gradient directly), while the
/// backward pass goes on, rather than before the updates: its owners' means are then copied out
/// of it (convert-dist-to-plan), and its buffer dies there. A bucket's communication overlaps
/// the computation of the next one's gradients; the last is waited for where it was.
void waitAfterNextStart(func::FuncOp func) {
  SmallVector<dist::AllReduceStartOp> starts(func.getOps<dist::AllReduceStartOp>());
  llvm::DenseMap<Operation *, Operation *> lastWaitAfter; // anchor -> the wait placed last
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    if (!starts[i].getOwnersAttr())
      continue;
    Operation *anchor = starts[i + 1];
    while (isa_and_nonnull<dist::AllReduceStartOp>(anchor->getNextNode()))
      anchor = anchor->getNextNode();
    Operation *wait = *starts[i].getPending().getUsers().begin();
    if (!anchor->isBeforeInBlock(wait))
      continue;
    Operation *&last = lastWaitAfter[anchor];
    wait->moveAfter(last ? last : anchor); // the waits in the starts' order
    last = wait;
  }
}

LogicalResult shard(func::FuncOp func, int64_t stage, int64_t capBytes) {
  dist::MeshAttr mesh = dist::getMesh(func);
  const int64_t replicas = mesh.getDevicesPerProcess(), processes = mesh.getProcesses();
  if (stage != 1 && stage != 2)
    return func.emitError() << "dist-shard-optimizer: stage " << stage
                            << " is not built (1 shards the optimizer state, 2 the gradients' "
                               "memory too)";
  if (stage == 2 && mesh.getAccumulation() > 1)
    return func.emitError() << "dist-shard-optimizer: stage 2 keeps no gradient between the "
                               "step's runs, but gradient accumulation sums "
                            << mesh.getAccumulation()
                            << " micro-shards into them across its runs; use stage 1 with "
                               "--micro-batch";
  if (replicas * processes < 2)
    return func.emitError() << "dist-shard-optimizer shards the optimizer state over the "
                               "replicas of the job, and the mesh has 1 device";
  if (dist::getParameterServer(func))
    return func.emitError() << "dist-shard-optimizer applies to the allreduce strategy; "
                               "parameter servers hold the optimizer state already";
  if (func->hasAttr(dist::kShardOptimizerAttr))
    return func.emitError("dist-shard-optimizer: the step is sharded already (the pass runs once)");

  llvm::MapVector<StringRef, Parameter> params;
  for (auto update : func.getOps<ParameterUpdateOpInterface>()) {
    auto param = update.getUpdatedParameter().getDefiningOp<g::ParamOp>();
    if (!param)
      return update->emitOpError("expects its parameter from a graph.param");
    Parameter &p = params[param.getName()];
    p.name = param.getName();
    if (p.updates.empty())
      p.updates.resize(replicas);
    const int64_t r = dist::getReplica(update);
    if (r < 0 || r >= replicas || p.updates[r])
      return update->emitOpError() << "is a second update of '" << p.name << "' on replica " << r
                                   << ", or on none of the mesh's " << replicas;
    p.updates[r] = update;
  }
  int64_t totalState = 0;
  for (auto &[name, p] : params) {
    for (int64_t r = 0; r < replicas; ++r)
      if (!p.updates[r])
        return func.emitError() << "parameter '" << name << "' has no update on replica " << r;
    for (g::ParamOp s : stateOf(p.updates[0]))
      p.stateBytes += tensorBytes(s.getType());
    totalState += p.stateBytes;
  }
  if (params.empty() || totalState == 0)
    return func.emitError() << "dist-shard-optimizer: the optimizer keeps no state (sgd): there "
                               "is nothing to shard; compile without --shard-optimizer";

  // Largest state first, each onto the replica with the fewest bytes so far (lowest index on
  // a tie): the parameter servers' placement, over the R replicas of the process or, with
  // several processes, over the R x P of the job (replica r of process p is p * R + r).
  SmallVector<int64_t> stateBytes;
  for (auto &entry : params)
    stateBytes.push_back(entry.second.stateBytes);
  const bool acrossProcesses = processes > 1;
  std::vector<int64_t> owners =
      dist::placeByBytes(stateBytes, acrossProcesses ? replicas * processes : replicas);
  for (auto [i, entry] : llvm::enumerate(params)) {
    entry.second.owner = owners[i] % replicas;
    if (acrossProcesses)
      entry.second.process = owners[i] / replicas;
  }

  // Broadcast buckets after the allreduces'.
  int64_t bucket = 0;
  func.walk(
      [&](dist::AllReduceStartOp s) { bucket = std::max(bucket, int64_t(s.getBucket()) + 1); });
  func.walk([&](dist::AllReduceOp a) {
    if (a.getBucket())
      bucket = std::max(bucket, int64_t(*a.getBucket()) + 1);
  });

  OpBuilder b(func.getContext());
  for (auto &[name, p] : params) {
    for (int64_t r = 0; r < replicas; ++r)
      p.copies.push_back(p.updates[r].getUpdatedParameter());
    for (int64_t r = 0; r < replicas; ++r) {
      if (r == p.owner)
        continue;
      SmallVector<g::ParamOp> state = stateOf(p.updates[r]);
      p.updates[r]->erase();
      for (g::ParamOp s : state)
        if (s->use_empty())
          s->erase();
    }
    if (p.process >= 0) {
      // Only that process runs the update and holds the state.
      IntegerAttr process = b.getI64IntegerAttr(p.process);
      p.updates[p.owner]->setAttr(dist::kProcessAttr, process);
      for (g::ParamOp s : stateOf(p.updates[p.owner]))
        s->setAttr(dist::kProcessAttr, process);
    }
  }

  // Broadcast buckets: each owner's parameters, in the order of its updates, packed into
  // buckets of at most `capBytes` (the gradients' cap), one collective each. A bucket starts
  // after the last of its updates.
  SmallVector<Parameter *> byUpdate;
  for (auto &entry : params)
    byUpdate.push_back(&entry.second);
  llvm::stable_sort(byUpdate, [](Parameter *a, Parameter *b) {
    return a->updates[a->owner]->isBeforeInBlock(b->updates[b->owner]);
  });
  dist::BucketPacker packer(capBytes);
  SmallVector<SmallVector<Parameter *>> buckets;
  for (Parameter *p : byUpdate) {
    const int64_t lane = std::max<int64_t>(p->process, 0) * replicas + p->owner;
    // Counted as the bucket will hold it: from a 64-byte boundary (convert-dist-to-plan's
    // slots, plan::kAlignment).
    const int64_t bytes =
        llvm::alignTo(tensorBytes(p->updates[p->owner].getUpdatedParameter().getType()), 64);
    const int64_t index = packer.add(bytes, lane);
    if (index == static_cast<int64_t>(buckets.size()))
      buckets.emplace_back();
    buckets[index].push_back(p);
  }
  for (ArrayRef<Parameter *> members : buckets) {
    Parameter *last = members.back();
    Operation *update = last->updates[last->owner];
    SmallVector<Value> copies; // replica by replica, each the members' copies
    SmallVector<StringRef> names;
    SmallVector<Location> locs;
    for (int64_t r = 0; r < replicas; ++r)
      for (Parameter *p : members)
        copies.push_back(p->copies[r]);
    for (Parameter *p : members) {
      names.push_back(p->name);
      locs.push_back(p->updates[p->owner]->getLoc());
    }
    b.setInsertionPointAfter(update);
    b.create<dist::BroadcastStartOp>(
        b.getFusedLoc(locs), dist::PendingType::get(func.getContext()), copies,
        b.getI64IntegerAttr(last->owner), b.getI64IntegerAttr(bucket), b.getStrArrayAttr(names),
        last->process >= 0 ? b.getI64IntegerAttr(last->process) : IntegerAttr());
  }
  // A replica that owns no parameter (fewer parameters than replicas) has no update left to
  // scale: its clip factor would compute a norm nothing reads.
  for (g::ClipFactorOp factor : llvm::make_early_inc_range(func.getOps<g::ClipFactorOp>()))
    if (factor->use_empty())
      factor->erase();
  scatterGradients(func, params, replicas);
  if (stage == 2)
    waitAfterNextStart(func);
  // The starts leave in the order of their updates: number the buckets so.
  SmallVector<dist::BroadcastStartOp> starts(func.getOps<dist::BroadcastStartOp>());
  for (auto [i, s] : llvm::enumerate(starts))
    s.setBucketAttr(b.getI64IntegerAttr(bucket + static_cast<int64_t>(i)));
  // The waits end the step, in the starts' order.
  b.setInsertionPoint(func.getBody().front().getTerminator());
  for (dist::BroadcastStartOp s : starts)
    b.create<dist::BroadcastWaitOp>(s.getLoc(), s.getPending());
  func->setAttr(dist::kShardOptimizerAttr, b.getI64IntegerAttr(stage));
  return success();
}

struct ShardOptimizerPass : dist::impl::ShardOptimizerPassBase<ShardOptimizerPass> {
  using ShardOptimizerPassBase::ShardOptimizerPassBase;
  void runOnOperation() override {
    if (shardOptimizer == 0)
      return;
    func::FuncOp train = g::getStepFunction(getOperation(), "train");
    if (!train || !dist::getMesh(train)) {
      getOperation().emitError("dist-shard-optimizer: no distributed train step (run "
                               "dist-replicate first)");
      return signalPassFailure();
    }
    if (std::string problem = CompileOptions::check("bucket-mb", bucketMb); !problem.empty()) {
      getOperation().emitError() << "dist-shard-optimizer: " << problem;
      return signalPassFailure();
    }
    if (failed(shard(train, shardOptimizer, static_cast<int64_t>(bucketMb * 1024 * 1024))))
      signalPassFailure();
  }
};

} // namespace
