// dist-schedule: each allreduce starts as soon as its gradients exist and is waited for only
// where its means are needed, with the updates that need them moved to the end of the step.
#include "passes/Dist/Passes.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dist-schedule"

namespace dp::dist {
#define GEN_PASS_DEF_SCHEDULEPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;

namespace {

/// The op after which every operand of `op` is defined and read by every other op of the
/// block (null: the start of the block). An allreduce averages its tensors in place: a read of
/// one after its start would see the engine's partial sums (batch normalisation's input
/// gradient reads its gamma and beta gradients, the local sums, with --batch-norm-stats local).
Operation *lastDefinitionOrRead(Operation *op) {
  Operation *last = nullptr;
  auto consider = [&](Operation *o) {
    if (o && o != op && o->getBlock() == op->getBlock() && (!last || last->isBeforeInBlock(o)))
      last = o;
  };
  for (Value v : op->getOperands()) {
    consider(v.getDefiningOp());
    for (Operation *user : v.getUsers())
      consider(user);
  }
  return last;
}

LogicalResult schedule(func::FuncOp func) {
  SmallVector<dist::AllReduceOp> all(func.getOps<dist::AllReduceOp>());
  if (all.empty())
    return success();
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();

  // Updates consuming means sink to the end, in their order: nothing later in the step reads
  // the parameters they write.
  if (failed(dist::verifyOnlyUpdatesUseMeans(all)))
    return failure();
  SmallVector<Operation *> updates;
  for (Operation &op : body.without_terminator())
    if (op.getNumResults() == 0 &&
        llvm::any_of(op.getOperands(), [](Value v) { return v.getDefiningOp<dist::AllReduceOp>(); }))
      updates.push_back(&op);
  for (Operation *u : updates)
    u->moveBefore(ret);

  OpBuilder b(func.getContext());
  for (dist::AllReduceOp op : all) {
    if (!op.getBucket())
      return op.emitOpError("has no bucket (run dist-fuse-allreduce first)");
    if (Operation *def = lastDefinitionOrRead(op))
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(&body);
    auto start = b.create<dist::AllReduceStartOp>(
        op.getLoc(), dist::PendingType::get(func.getContext()), op.getGradients(),
        op.getReplicasAttr(), op.getBucketAttr(), op.getTensorsAttr(), DenseI64ArrayAttr());
    Operation *firstUse = nullptr;
    for (Operation *user : op->getUsers())
      if (!firstUse || user->isBeforeInBlock(firstUse))
        firstUse = user;
    b.setInsertionPoint(firstUse ? firstUse : ret);
    auto wait = b.create<dist::AllReduceWaitOp>(op.getLoc(), op.getResultTypes(), start);
    op.replaceAllUsesWith(wait.getResults());
    op.erase();
  }
  return success();
}

struct SchedulePass : dist::impl::SchedulePassBase<SchedulePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(schedule(func)))
        return signalPassFailure();
  }
};

} // namespace

LogicalResult dp::dist::verifyOnlyUpdatesUseMeans(ArrayRef<AllReduceOp> allreduces) {
  for (AllReduceOp op : allreduces)
    for (Operation *user : op->getUsers())
      // Averaged batch statistics feed the rest of the step; gradients only the updates.
      if (!op->hasAttr(kSyncAttr) && user->getNumResults() != 0)
        return user->emitOpError("uses an allreduced gradient and has results; only updates "
                                 "may consume the means");
  return success();
}
