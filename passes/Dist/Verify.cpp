// dist-verify: the contract of the dist phase, checked on its output (see Passes.td). Every
// later phase relies on it: the conversion to plan buffers, the collective manifest and the
// runtime's replica engine assume each gradient is averaged once, on the right replica, and
// that each bucket leaves as soon as it is ready.
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Graph/IR/Model.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "passes/Dist/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <map>

#define DEBUG_TYPE "dist-verify"

namespace dp::dist {
#define GEN_PASS_DEF_VERIFYPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

namespace {

/// Every input is read through shards, one per replica of this process, each a micro-shard's
/// rows.
LogicalResult verifyShards(func::FuncOp func, dist::MeshAttr mesh) {
  for (BlockArgument arg : func.getArguments()) {
    for (Operation *user : arg.getUsers()) {
      auto shard = dyn_cast<dist::ShardOp>(user);
      if (!shard && !isa<func::ReturnOp>(user))
        return user->emitOpError() << "reads input #" << arg.getArgNumber()
                                   << " whole; a replicated step reads inputs through "
                                      "dist.shard (run dist-split-batch)";
      if (shard && shard.getShards() != mesh.microShards()) {
        InFlightDiagnostic diag = shard.emitOpError()
                                  << "splits the batch into " << shard.getShards()
                                  << " shards but the mesh has ";
        if (mesh.getAccumulation() == 1)
          return diag << mesh.replicas() << " replicas";
        return diag << mesh.microShards() << " micro-shards (" << mesh.replicas()
                    << " replicas x " << mesh.getAccumulation() << ")";
      }
    }
  }
  return success();
}

/// The collective that averages `mean`, with the operand it averages; null when `mean` is not
/// an allreduce's result.
std::pair<Operation *, Value> averaged(Value mean) {
  auto result = dyn_cast<OpResult>(mean);
  if (!result)
    return {};
  if (auto a = dyn_cast<dist::AllReduceOp>(result.getOwner()))
    return {a, a.getGradients()[result.getResultNumber()]};
  if (auto w = dyn_cast<dist::AllReduceWaitOp>(result.getOwner()))
    if (auto start = w.getStart())
      return {start, start.getGradients()[result.getResultNumber()]};
  return {};
}

/// Every update of a trainable parameter reads the mean of its own replica's gradient over
/// the R x P replicas, averaged once.
LogicalResult verifyUpdates(func::FuncOp func, dist::MeshAttr mesh) {
  llvm::DenseSet<Value> reduced;
  WalkResult walk = func.walk([&](ParameterUpdateOpInterface update) {
    // The update's own verifier has checked that it changes a trainable graph.param.
    auto param = update.getUpdatedParameter().getDefiningOp<g::ParamOp>();
    auto [collective, gradient] = averaged(update.getGradientOperand().get());
    if (!collective) {
      update->emitOpError() << "updates '" << param.getName()
                            << "' from a gradient that is not averaged across replicas "
                               "(run dist-insert-allreduce)";
      return WalkResult::interrupt();
    }
    auto replicas = collective->getAttrOfType<IntegerAttr>("replicas");
    if (!replicas || replicas.getInt() != mesh.getDevicesPerProcess()) {
      update->emitOpError() << "reads a mean over " << (replicas ? replicas.getInt() : 0)
                            << " device(s) per process, but the mesh has "
                            << mesh.getDevicesPerProcess();
      return WalkResult::interrupt();
    }
    Operation *def = gradient.getDefiningOp();
    if (def && (isa<dist::AllReduceOp, dist::AllReduceWaitOp>(def))) {
      update->emitOpError() << "reads the gradient of '" << param.getName()
                            << "' averaged twice";
      return WalkResult::interrupt();
    }
    int64_t from = def ? dist::getReplica(def) : 0;
    if (from != dist::getReplica(update)) {
      update->emitOpError() << "on replica " << dist::getReplica(update)
                            << " reads the mean of replica " << from << "'s gradient of '"
                            << param.getName() << "'";
      return WalkResult::interrupt();
    }
    reduced.insert(gradient);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // A gradient travels in one bucket only.
  llvm::DenseSet<Value> seen;
  walk = func.walk([&](Operation *op) {
    if (!isa<dist::AllReduceOp, dist::AllReduceStartOp>(op))
      return WalkResult::advance();
    for (Value v : op->getOperands())
      if (reduced.contains(v) && !seen.insert(v).second) {
        op->emitOpError("averages a gradient that another allreduce already averages");
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Gradient accumulation (dist-accumulate): with M > 1 micro-shards every update reads, through
/// its average when the step has several replicas, the sum of its gradient over the M
/// micro-shards (a dist.accumulate of count M on its replica); with none, no step sums.
LogicalResult verifyAccumulation(func::FuncOp func, dist::MeshAttr mesh) {
  const int64_t count = mesh.getAccumulation();
  WalkResult walk = func.walk([&](Operation *op) {
    if (auto sum = dyn_cast<dist::AccumulateOp>(op)) {
      if (int64_t(sum.getCount()) != count || func.getSymName() != "train") {
        sum.emitOpError() << "sums " << sum.getCount() << " micro-shards in the "
                          << func.getSymName() << " step of a mesh with accumulation " << count;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    auto update = dyn_cast<ParameterUpdateOpInterface>(op);
    if (!update || count == 1 || dist::getParameterServer(func))
      return WalkResult::advance();
    Value gradient = update.getGradientOperand().get();
    if (auto [collective, operand] = averaged(gradient); collective)
      gradient = operand;
    auto sum = gradient.getDefiningOp<dist::AccumulateOp>();
    if (!sum || dist::getReplica(sum) != dist::getReplica(update)) {
      update->emitOpError()
          << "reads a gradient that is not summed over its replica's micro-shards (run "
             "dist-accumulate)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Clipping by global norm (dist-clip-gradients): either no update of the step reads a scale,
/// or each replica has one graph.clip_factor, every update of the replica reads it as its
/// scale, and its operands are exactly the gradients those updates read, each the allreduced
/// mean when the step has more than one replica (every replica then clips by the norm of the
/// same averaged gradient). All factors clip to one max_norm.
LogicalResult verifyClipping(func::FuncOp func, dist::MeshAttr mesh) {
  std::map<int64_t, g::ClipFactorOp> factors;
  WalkResult walk = func.walk([&](g::ClipFactorOp factor) {
    const int64_t replica = dist::getReplica(factor);
    auto [it, added] = factors.emplace(replica, factor);
    if (!added) {
      factor.emitOpError() << "is a second clip factor on replica " << replica
                           << "; a replica's gradients have one global norm";
      return WalkResult::interrupt();
    }
    if (factor.getMaxNorm() != factors.begin()->second.getMaxNorm()) {
      factor.emitOpError() << "clips to another max_norm than replica " << factors.begin()->first
                           << "'s factor";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // The gradients each factor's updates read.
  llvm::DenseMap<Operation *, llvm::SmallDenseSet<Value>> read;
  llvm::StringSet<> names; // the parameters the step updates
  walk = func.walk([&](ParameterUpdateOpInterface update) {
    auto param = update.getUpdatedParameter().getDefiningOp<g::ParamOp>();
    Value scale = g::updateScale(update);
    if (!scale && factors.empty())
      return WalkResult::advance();
    auto factor = scale ? scale.getDefiningOp<g::ClipFactorOp>() : g::ClipFactorOp();
    if (!factor) {
      update->emitOpError() << "of '" << param.getName()
                            << (scale ? "' is scaled by something other than a graph.clip_factor"
                                      : "' reads its gradient unscaled, but the step clips "
                                        "the gradients by their global norm");
      return WalkResult::interrupt();
    }
    if (dist::getReplica(factor) != dist::getReplica(update)) {
      update->emitOpError() << "on replica " << dist::getReplica(update) << " reads replica "
                            << dist::getReplica(factor) << "'s clip factor";
      return WalkResult::interrupt();
    }
    read[factor].insert(update.getGradientOperand().get());
    names.insert(param.getName());
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Under sharded optimizer state a replica updates its share of the parameters, but its
  // factor is the norm of every gradient: the means on its replica of those it does not update
  // count too.
  const bool sharded = func->hasAttr(dist::kShardOptimizerAttr);
  auto onReplica = [&](Value mean, int64_t replica) {
    auto [collective, operand] = averaged(mean);
    if (!operand || !operand.getDefiningOp() ||
        dist::getReplica(operand.getDefiningOp()) != replica)
      return false;
    // The mean of a parameter's gradient (not of batch statistics): named in its bucket.
    auto tensors = collective->getAttrOfType<ArrayAttr>("tensors");
    const unsigned index = cast<OpResult>(mean).getResultNumber();
    return tensors && !tensors.empty() &&
           names.contains(cast<StringAttr>(tensors[index % tensors.size()]).getValue());
  };
  for (auto &[replica, factor] : factors) {
    const llvm::SmallDenseSet<Value> &gradients = read[factor];
    llvm::SmallDenseSet<Value> seen;
    for (Value v : factor.getGradients()) {
      if (!(gradients.contains(v) || (sharded && onReplica(v, replica))) || !seen.insert(v).second)
        return factor.emitOpError()
               << "on replica " << replica
               << " reads a value that is not the gradient of one of its updates, or reads one "
                  "twice; the norm is that of the gradients the updates read";
      if (mesh.replicas() > 1 && !averaged(v).first)
        return factor.emitOpError()
               << "on replica " << replica
               << " reads a gradient that is not the allreduced mean: every replica must clip "
                  "by the norm of the same averaged gradients";
    }
    if (sharded && (seen.size() != names.size() ||
                    llvm::any_of(gradients, [&](Value g) { return !seen.contains(g); })))
      return factor.emitOpError() << "on replica " << replica << " reads " << seen.size()
                                  << " gradients, but the step's " << names.size()
                                  << " parameters have as many (the norm is that of all)";
    if (!sharded && seen.size() != gradients.size())
      return factor.emitOpError() << "on replica " << replica << " leaves out "
                                  << gradients.size() - seen.size()
                                  << " of the gradients its updates read";
  }
  return success();
}

/// Every allreduce is bucketed and scheduled; each bucket starts as soon as its last tensor is
/// computed (only other starts in between) and has an index of its own.
LogicalResult verifyBuckets(func::FuncOp func) {
  llvm::DenseSet<int64_t> buckets;
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<dist::AllReduceOp>(op)) {
      op->emitOpError("is not scheduled (run dist-fuse-allreduce and dist-schedule)");
      return WalkResult::interrupt();
    }
    if (auto broadcast = dyn_cast<dist::BroadcastStartOp>(op)) {
      if (!buckets.insert(broadcast.getBucket()).second) {
        broadcast.emitOpError() << "reuses bucket " << broadcast.getBucket();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    auto start = dyn_cast<dist::AllReduceStartOp>(op);
    if (!start)
      return WalkResult::advance();
    if (!buckets.insert(start.getBucket()).second) {
      start.emitOpError() << "reuses bucket " << start.getBucket();
      return WalkResult::interrupt();
    }
    // Averaged in place: nothing reads a tensor of the bucket once it has started.
    for (Value v : start->getOperands())
      for (Operation *user : v.getUsers())
        if (user != start.getOperation() && user->getBlock() == start->getBlock() &&
            start->isBeforeInBlock(user)) {
          user->emitOpError() << "reads a tensor of bucket " << start.getBucket()
                              << " after its allreduce started, which averages it in place; "
                                 "the start must come after the last read";
          return WalkResult::interrupt();
        }
    for (Operation *prev = start->getPrevNode(); prev; prev = prev->getPrevNode()) {
      if (llvm::any_of(prev->getResults(),
                       [&](Value r) { return llvm::is_contained(start->getOperands(), r); }) ||
          llvm::any_of(prev->getOperands(),
                       [&](Value v) { return llvm::is_contained(start->getOperands(), v); }))
        break;
      if (!isa<dist::AllReduceStartOp>(prev)) {
        start.emitOpError() << "of bucket " << start.getBucket() << " waits behind '"
                            << prev->getName()
                            << "', which none of its tensors needs; it should start right "
                               "after its last tensor is computed (or read)";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// A bucket of the parameter-server strategy, as the worker and its server see it.
struct PsBucket {
  dist::PushOp push;
  dist::PullOp pull;
  dist::ReceiveOp receive;
  dist::ReplyOp reply;
};

/// The contract of the parameter-server strategy (see Passes.td).
LogicalResult verifyParameterServer(ModuleOp module, func::FuncOp train,
                                    dist::ParameterServerAttr strategy) {
  dist::MeshAttr mesh = dist::getMesh(train);
  if (mesh.getDevicesPerProcess() != 1 || mesh.getProcesses() != strategy.getWorkers())
    return train.emitError() << "a parameter-server train step runs on one device in each of "
                             << strategy.getWorkers() << " worker(s), but the mesh has "
                             << mesh.getDevicesPerProcess() << " x " << mesh.getProcesses();
  std::map<int64_t, PsBucket> buckets;
  WalkResult walk = train.walk([&](Operation *op) {
    if (isa<ParameterUpdateOpInterface, dist::AllReduceOp, dist::AllReduceStartOp>(op)) {
      op->emitOpError("is left in a parameter-server train step: updates run on the servers "
                      "(run dist-split-parameter-server)");
      return WalkResult::interrupt();
    }
    if (auto push = dyn_cast<dist::PushOp>(op)) {
      PsBucket &b = buckets[push.getBucket()];
      if (b.push) {
        push.emitOpError() << "pushes bucket " << push.getBucket() << " a second time";
        return WalkResult::interrupt();
      }
      b.push = push;
      if (push.getServer() >= strategy.getServers()) {
        push.emitOpError() << "pushes to server " << push.getServer() << " of "
                           << strategy.getServers();
        return WalkResult::interrupt();
      }
      for (Operation *prev = push->getPrevNode(); prev; prev = prev->getPrevNode()) {
        if (llvm::any_of(prev->getResults(),
                         [&](Value r) { return llvm::is_contained(push->getOperands(), r); }))
          break;
        if (!isa<dist::PushOp>(prev)) {
          push.emitOpError() << "of bucket " << push.getBucket() << " waits behind '"
                             << prev->getName()
                             << "', which none of its gradients needs; it should leave right "
                                "after its last gradient is computed";
          return WalkResult::interrupt();
        }
      }
    } else if (auto pull = dyn_cast<dist::PullOp>(op)) {
      PsBucket &b = buckets[pull.getBucket()];
      if (!b.push || b.pull) {
        pull.emitOpError() << "pulls bucket " << pull.getBucket()
                           << (b.pull ? " a second time" : " before the step pushes it");
        return WalkResult::interrupt();
      }
      if (pull.getServer() != b.push.getServer() || pull.getTensors() != b.push.getTensors()) {
        pull.emitOpError() << "of bucket " << pull.getBucket()
                           << " names other tensors or another server than its push";
        return WalkResult::interrupt();
      }
      b.pull = pull;
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (auto &[index, b] : buckets)
    if (!b.pull)
      return b.push.emitOpError() << "of bucket " << index << " is never pulled";
  // Every parameter a pull writes is read after it by nothing in the step: the pulls come
  // after the last read.
  for (auto &[index, b] : buckets)
    for (Value param : b.pull.getParams())
      for (Operation *user : param.getUsers())
        if (user != b.pull && user->getBlock() == b.pull->getBlock() &&
            b.pull->isBeforeInBlock(user) && !isa<dist::PullOp>(user))
          return b.pull.emitOpError()
                 << "writes '" << param.getDefiningOp<g::ParamOp>().getName()
                 << "' before the step's last read of it ('" << user->getName() << "')";

  SmallVector<func::FuncOp> servers = dist::getServerFunctions(module);
  if (static_cast<int64_t>(servers.size()) != strategy.getServers())
    return train.emitError() << "the strategy has " << strategy.getServers()
                             << " server(s) but the module has " << servers.size()
                             << " server function(s)";
  llvm::StringSet<> placed;
  for (auto [s, server] : llvm::enumerate(servers)) {
    if (dist::getServer(server) != static_cast<int64_t>(s))
      return server.emitError() << "is server " << dist::getServer(server)
                                << "; the server functions must be 0 to "
                                << strategy.getServers() - 1;
    if (dist::getParameterServer(server) != strategy)
      return server.emitError("has another parameter-server strategy than the train step");
    dist::ReceiveOp open;
    llvm::DenseSet<Value> updated;
    walk = server.walk([&](Operation *op) {
      if (auto receive = dyn_cast<dist::ReceiveOp>(op)) {
        auto it = buckets.find(receive.getBucket());
        if (open || it == buckets.end() || it->second.receive ||
            it->second.push.getServer() != static_cast<int64_t>(s) ||
            it->second.push.getTensors() != receive.getTensors()) {
          receive.emitOpError() << "receives bucket " << receive.getBucket()
                                << ", which no worker pushes to server " << s
                                << " with these tensors"
                                << (open ? " (or the previous bucket has no reply)" : "");
          return WalkResult::interrupt();
        }
        it->second.receive = receive;
        open = receive;
      } else if (auto update = dyn_cast<ParameterUpdateOpInterface>(op)) {
        Value grad = update.getGradientOperand().get();
        auto param = update.getUpdatedParameter().getDefiningOp<g::ParamOp>();
        if (!open || grad.getDefiningOp() != open.getOperation()) {
          update->emitOpError() << "updates '" << param.getName()
                                << "' from a gradient that is not the received bucket's";
          return WalkResult::interrupt();
        }
        if (!placed.insert(param.getName()).second) {
          update->emitOpError() << "updates '" << param.getName() << "' a second time";
          return WalkResult::interrupt();
        }
        updated.insert(update.getUpdatedParameter());
      } else if (auto reply = dyn_cast<dist::ReplyOp>(op)) {
        if (!open || open.getBucket() != reply.getBucket() ||
            reply.getTensors() != open.getTensors() ||
            !llvm::all_of(reply.getParams(), [&](Value p) { return updated.contains(p); })) {
          reply.emitOpError() << "of bucket " << reply.getBucket()
                              << " does not answer the received bucket with its updated "
                                 "parameters";
          return WalkResult::interrupt();
        }
        buckets[reply.getBucket()].reply = reply;
        open = nullptr;
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (open)
      return open.emitOpError() << "of bucket " << open.getBucket() << " has no reply";
  }
  for (auto &[index, b] : buckets)
    if (!b.receive)
      return b.push.emitOpError() << "sends bucket " << index << " to server "
                                  << b.push.getServer() << ", which never receives it";
  walk = train.walk([&](g::ParamOp param) {
    if (param.getTrainable() && !param.getOptimizerState() && !placed.contains(param.getName())) {
      param.emitOpError() << "is trainable but no server updates it";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Only the train step clips: no other function (the eval step, a server's) has a clip factor
/// or a scaled update.
LogicalResult verifyClippingOnlyInTrain(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func == g::getStepFunction(module, "train"))
      continue;
    WalkResult walk = func.walk([&](Operation *op) {
      if (isa<g::ClipFactorOp>(op) || g::updateScale(op)) {
        op->emitOpError() << "clips gradients in '" << func.getSymName()
                          << "'; only the train step of an allreduce job clips";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return success();
}

/// Sharded optimizer state (dist-shard-optimizer): with `dist.shard_optimizer` on the train step,
/// every trainable parameter is updated on exactly one replica, its owner; its optimizer state
/// lives there only; after the update one dist.broadcast_start from the owner (of a bucket of
/// the owner's parameters: their copies replica by replica), and one dist.broadcast_wait for
/// it before the step ends, after every update and read of the parameter. Without the attribute,
/// no broadcast. Bucket indices are checked with the allreduces' (verifyBuckets).
LogicalResult verifySharding(func::FuncOp func, dist::MeshAttr mesh) {
  auto stage = func->getAttrOfType<IntegerAttr>(dist::kShardOptimizerAttr);
  if (!stage) {
    WalkResult walk = func.walk([&](dist::BroadcastStartOp start) {
      start.emitOpError("broadcasts a parameter in a step whose optimizer state is not sharded "
                        "(no dist.shard_optimizer on the step)");
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return failure();
    walk = func.walk([&](dist::AllReduceStartOp start) {
      if (!start.getOwnersAttr())
        return WalkResult::advance();
      start.emitOpError("scatters its means to owners in a step whose optimizer state is not "
                        "sharded (no dist.shard_optimizer on the step)");
      return WalkResult::interrupt();
    });
    return failure(walk.wasInterrupted());
  }
  const int64_t replicas = mesh.getDevicesPerProcess(), processes = mesh.getProcesses();
  if ((stage.getInt() != 1 && stage.getInt() != 2) || replicas * processes < 2 ||
      dist::getParameterServer(func) || (stage.getInt() == 2 && mesh.getAccumulation() > 1))
    return func.emitError() << "dist.shard_optimizer = " << stage.getInt()
                            << " needs stage 1 or 2 (2 without accumulation), 2 or more replicas "
                               "and the allreduce strategy";
  // Each parameter's one update (its owner's) and one broadcast.
  llvm::StringMap<ParameterUpdateOpInterface> updated;
  WalkResult walk = func.walk([&](ParameterUpdateOpInterface update) {
    auto param = update.getUpdatedParameter().getDefiningOp<g::ParamOp>();
    auto [it, added] = updated.try_emplace(param.getName(), update);
    if (!added) {
      update->emitOpError() << "updates '" << param.getName() << "' on replica "
                            << dist::getReplica(update) << " as well as on replica "
                            << dist::getReplica(it->second)
                            << ": under sharded optimizer state only its owner updates it";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  llvm::StringMap<dist::BroadcastStartOp> broadcast;
  walk = func.walk([&](dist::BroadcastStartOp start) {
    // With several processes the state is sharded over all of them: one process updates.
    const int64_t process = start.getProcessAttr() ? start.getProcessAttr().getInt() : -1;
    if (processes > 1 ? process < 0 || process >= processes : process >= 0) {
      start.emitOpError() << "broadcasts from process " << process << ", but the mesh has "
                          << processes << " process(es)"
                          << (processes > 1 ? ": one of them must hold its parameters' state"
                                            : ": every process holds the state");
      return WalkResult::interrupt();
    }
    const int64_t n = start.tensorsPerReplica();
    if (static_cast<int64_t>(start.getParams().size()) != replicas * n) {
      start.emitOpError() << "copies " << n << " parameter(s) to " << start.getParams().size() / n
                          << " replicas, but the mesh has " << replicas;
      return WalkResult::interrupt();
    }
    for (auto [i, attr] : llvm::enumerate(start.getTensors())) {
      StringRef name = cast<StringAttr>(attr).getValue();
      auto it = updated.find(name);
      if (it == updated.end()) {
        start.emitOpError() << "broadcasts '" << name << "', which no update of the step changes";
        return WalkResult::interrupt();
      }
      ParameterUpdateOpInterface update = it->second;
      if (!broadcast.try_emplace(name, start).second) {
        start.emitOpError() << "broadcasts '" << name << "' a second time";
        return WalkResult::interrupt();
      }
      if (start.getRoot() != dist::getReplica(update)) {
        start.emitOpError() << "broadcasts '" << name << "' from replica " << start.getRoot()
                            << ", but replica " << dist::getReplica(update) << " updates it";
        return WalkResult::interrupt();
      }
      if (dist::getProcess(update) != process) {
        start.emitOpError() << "broadcasts '" << name << "' from process " << process
                            << ", but its update runs on process " << dist::getProcess(update);
        return WalkResult::interrupt();
      }
      for (int64_t r = 0; r < replicas; ++r) {
        auto p = start.getParams()[r * n + i].getDefiningOp<g::ParamOp>();
        if (!p || p.getName() != name || dist::getReplica(p) != r) {
          start.emitOpError() << "operand " << r * n + i << " must be replica " << r
                              << "'s copy of '" << name << "'";
          return WalkResult::interrupt();
        }
      }
      if (update->getBlock() != start->getBlock() || !update->isBeforeInBlock(start)) {
        start.emitOpError() << "of '" << name << "' must come after its update";
        return WalkResult::interrupt();
      }
    }
    // One wait; between the start and it the engine writes the other replicas' copies (and
    // reads the owner's): nothing else touches any copy there.
    if (!start.getPending().hasOneUse() ||
        !isa<dist::BroadcastWaitOp>(*start.getPending().getUsers().begin())) {
      start.emitOpError() << "needs exactly one dist.broadcast_wait";
      return WalkResult::interrupt();
    }
    Operation *wait = *start.getPending().getUsers().begin();
    for (auto [i, copy] : llvm::enumerate(start.getParams()))
      for (Operation *user : copy.getUsers())
        if (user != start.getOperation() && user->getBlock() == start->getBlock() &&
            start->isBeforeInBlock(user) && user->isBeforeInBlock(wait)) {
          user->emitOpError() << "uses '" << cast<StringAttr>(start.getTensors()[i % n]).getValue()
                              << "' while its broadcast copies it (between the start and the "
                                 "wait)";
          return WalkResult::interrupt();
        }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (auto &[name, update] : updated)
    if (!broadcast.count(name))
      return update->emitOpError() << "updates '" << name
                                   << "' on its owner, but no dist.broadcast_start copies it "
                                      "to the other replicas";
  // A reduce-scattered bucket: its owners are the mesh's replicas, and each mean is read by
  // its owner only (the other replicas' copies are not averaged).
  const int64_t lanes = processes > 1 ? replicas * processes : replicas;
  walk = func.walk([&](dist::AllReduceStartOp start) {
    auto owners = start.getOwnersAttr();
    if (!owners)
      return WalkResult::advance();
    const int64_t n = owners.size();
    for (int64_t i = 0; i < n; ++i)
      if (owners[i] >= lanes) {
        start.emitOpError() << "scatters tensor " << i << " to replica " << owners[i]
                            << ", but the mesh has " << lanes << " replica(s)"
                            << (processes > 1 ? " over its processes" : "");
        return WalkResult::interrupt();
      }
    for (Operation *user : start.getPending().getUsers())
      for (OpOperand &use : user->getUses()) {
        const unsigned j = cast<OpResult>(use.get()).getResultNumber();
        const int64_t replica = j / n, owner = owners[j % n];
        auto update = dyn_cast<ParameterUpdateOpInterface>(use.getOwner());
        const int64_t lane =
            update ? std::max<int64_t>(dist::getProcess(update), 0) * replicas + replica : -1;
        if (!update || lane != owner || dist::getReplica(update) != replica) {
          // Over the processes an owner is a replica of the job: name its process too.
          auto diag = use.getOwner()->emitOpError()
                      << "reads replica " << replica << "'s mean of tensor " << j % n
                      << " of a reduce-scattered bucket, which only its owner (";
          if (processes > 1)
            diag << "replica " << owner % replicas << " of process " << owner / replicas
                 << ", the job's replica " << owner;
          else
            diag << "replica " << owner;
          diag << ") receives: only the owner's update may read it";
          return WalkResult::interrupt();
        }
      }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Optimizer state only where its parameter is updated.
  walk = func.walk([&](g::ParamOp p) {
    if (!p.getOptimizerState())
      return WalkResult::advance();
    for (Operation *user : p->getUsers()) {
      auto update = dyn_cast<ParameterUpdateOpInterface>(user);
      if (!update || dist::getReplica(update) != dist::getReplica(p) ||
          dist::getProcess(update) != dist::getProcess(p))
        continue;
      return WalkResult::advance();
    }
    p.emitOpError() << "keeps optimizer state '" << p.getName() << "' on replica "
                    << dist::getReplica(p)
                    << (dist::getProcess(p) >= 0
                            ? " of process " + std::to_string(dist::getProcess(p))
                            : std::string())
                    << ", where no update reads it: under sharded optimizer state it lives "
                       "on its parameter's owner only";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

struct VerifyPass : dist::impl::VerifyPassBase<VerifyPass> {
  void runOnOperation() override {
    if (failed(verifyClippingOnlyInTrain(getOperation())))
      return signalPassFailure();
    if (func::FuncOp train = g::getStepFunction(getOperation(), "train"))
      if (dist::ParameterServerAttr strategy = dist::getParameterServer(train))
        if (dist::getMesh(train) &&
            failed(verifyParameterServer(getOperation(), train, strategy)))
          return signalPassFailure();
    for (StringRef step : {"train", "eval"}) {
      func::FuncOp func = g::requireStepFunction(getOperation(), step);
      if (!func)
        return signalPassFailure();
      dist::MeshAttr mesh = dist::getMesh(func);
      if (!mesh) {
        func.emitError() << "the " << step << " step has no mesh (run dist-replicate first)";
        return signalPassFailure();
      }
      if (step == "train" && failed(verifyClipping(func, mesh)))
        return signalPassFailure();
      if (step == "train" && failed(verifySharding(func, mesh)))
        return signalPassFailure();
      if (failed(verifyAccumulation(func, mesh)))
        return signalPassFailure();
      if (mesh.microShards() == 1)
        continue;
      const bool ps = step == "train" && dist::getParameterServer(func);
      if (failed(verifyShards(func, mesh)) ||
          (step == "train" && !ps && mesh.replicas() > 1 &&
           (failed(verifyUpdates(func, mesh)) || failed(verifyBuckets(func)))))
        return signalPassFailure();
    }
  }
};

} // namespace
