// dist-sync-batch-norm: batch statistics over the global batch, not each replica's shard
// (see Passes.td).
#include "passes/Dist/Passes.h"
#include "passes/Graph/Utils.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dist-sync-batch-norm"

namespace dp::dist {
#define GEN_PASS_DEF_SYNCBATCHNORMPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

namespace {

/// The layer name of a batch normalisation: the prefix of its gamma's name.
std::string layerOf(Value gamma) {
  if (auto param = gamma.getDefiningOp<g::ParamOp>())
    return param.getName().rsplit('.').first.str();
  return "batch_norm";
}

/// The replicas of each op of type OpT, in order: group k holds the k-th such op of every
/// replica, indexed by replica.
template <typename OpT>
FailureOr<SmallVector<SmallVector<OpT>>> replicaGroups(func::FuncOp func, int64_t replicas) {
  SmallVector<SmallVector<OpT>> groups;
  SmallVector<unsigned> seen(replicas, 0);
  for (OpT op : func.getOps<OpT>()) {
    int64_t r = dist::getReplica(op);
    if (r < 0 || r >= replicas)
      return op.emitOpError() << "is on replica " << r << " but the mesh has " << replicas
                              << " device(s) per process";
    unsigned k = seen[r]++;
    if (groups.size() <= k)
      groups.emplace_back(replicas);
    groups[k][r] = op;
  }
  for (auto &group : groups)
    for (int64_t r = 0; r < replicas; ++r)
      if (!group[r])
        return func.emitError() << "replica " << r << " has fewer "
                                << OpT::getOperationName() << " ops than replica 0";
  return groups;
}

/// Averages `values` (replica-major groups of the same tensors) over every replica of the job
/// right after the last of `ops`, and makes every user but the allreduce read the means.
void average(ArrayRef<Operation *> ops, ArrayRef<Value> values, int64_t replicas,
             ArrayRef<std::string> names) {
  Operation *last = ops.front();
  for (Operation *op : ops)
    if (last->isBeforeInBlock(op))
      last = op;
  OpBuilder b(last->getContext());
  b.setInsertionPointAfter(last);
  SmallVector<StringRef> refs(names.begin(), names.end());
  auto allreduce = b.create<dist::AllReduceOp>(last->getLoc(), values,
                                               b.getI64IntegerAttr(replicas), IntegerAttr(),
                                               b.getStrArrayAttr(refs));
  allreduce->setAttr(dist::kSyncAttr, b.getUnitAttr());
  for (auto [value, mean] : llvm::zip(values, allreduce.getResults()))
    Value(value).replaceAllUsesExcept(mean, allreduce);
}

LogicalResult syncBatchNorm(func::FuncOp func, dist::MeshAttr mesh) {
  int64_t replicas = mesh.getDevicesPerProcess();
  // Forward: the mean of the shards' moments is the batch's (equal shards).
  auto moments = replicaGroups<g::BatchMomentsOp>(func, replicas);
  if (failed(moments))
    return failure();
  for (auto &group : *moments) {
    auto users = group[0]->getUsers();
    auto train = llvm::find_if(users, [](Operation *u) { return isa<g::BatchNormTrainOp>(u); });
    std::string layer =
        train == users.end() ? "batch_norm" : layerOf(cast<g::BatchNormTrainOp>(*train).getGamma());
    SmallVector<Operation *> ops;
    SmallVector<Value> values;
    for (g::BatchMomentsOp op : group) {
      ops.push_back(op);
      values.push_back(op.getResult());
    }
    average(ops, values, replicas, {layer + ".batch_stats"});
  }
  // Backward: the input gradient needs the sums of the whole batch; averaged here, they are
  // also the averaged gradients of gamma and beta.
  auto params = replicaGroups<g::BatchNormGradParamsOp>(func, replicas);
  if (failed(params))
    return failure();
  for (auto &group : *params) {
    SmallVector<std::string> names{"batch_norm.gamma", "batch_norm.beta"};
    for (auto [i, name] : llvm::enumerate(names))
      for (Operation *user : group[0]->getResult(i).getUsers())
        if (auto apply = dyn_cast<g::ApplyGradientOp>(user))
          if (auto param = apply.getParam().getDefiningOp<g::ParamOp>())
            name = param.getName().str();
    SmallVector<Operation *> ops;
    SmallVector<Value> values;
    for (g::BatchNormGradParamsOp op : group) {
      ops.push_back(op);
      values.append({op.getGammaGrad(), op.getBetaGrad()});
    }
    average(ops, values, replicas, names);
  }
  return success();
}

struct SyncBatchNormPass : dist::impl::SyncBatchNormPassBase<SyncBatchNormPass> {
  void runOnOperation() override {
    func::FuncOp train = dist::getReplicatedTrainStep(getOperation());
    if (train && failed(syncBatchNorm(train, dist::getMesh(train))))
      signalPassFailure();
  }
};

} // namespace
