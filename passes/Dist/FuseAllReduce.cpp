// dist-fuse-allreduce: consecutive gradient allreduces packed into size-capped buckets.
#include "passes/Dist/Bucketing.h"
#include "passes/Dist/Passes.h"
#include "passes/Pipelines/CompileOptions.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dist-fuse-allreduce"

namespace dp::dist {
#define GEN_PASS_DEF_FUSEALLREDUCEPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;

namespace {

/// Replaces `members` (in block order) by one allreduce of bucket `index` at the last one.
void fuse(ArrayRef<dist::AllReduceOp> members, int64_t index) {
  dist::AllReduceOp last = members.back();
  OpBuilder b(last);
  if (members.size() == 1) {
    last.setBucketAttr(b.getI64IntegerAttr(index));
    return;
  }
  int64_t replicas = last.getReplicas();
  // Operands replica by replica: replica r's tensors of every member, in member order.
  SmallVector<Value> grads;
  SmallVector<Location> locs;
  for (int64_t r = 0; r < replicas; ++r)
    for (dist::AllReduceOp m : members) {
      unsigned n = m.tensorsPerReplica();
      llvm::append_range(grads, m.getGradients().slice(r * n, n));
    }
  SmallVector<Attribute> names;
  for (dist::AllReduceOp m : members) {
    locs.push_back(m.getLoc());
    if (m.getTensors())
      llvm::append_range(names, *m.getTensors());
  }
  auto fused = b.create<dist::AllReduceOp>(b.getFusedLoc(locs), grads, b.getI64IntegerAttr(replicas),
                                           b.getI64IntegerAttr(index), b.getArrayAttr(names));
  // Results follow the same order; users of earlier members move after the bucket.
  unsigned offset = 0;
  unsigned total = fused.tensorsPerReplica();
  Operation *after = fused;
  for (dist::AllReduceOp m : members) {
    unsigned n = m.tensorsPerReplica();
    for (int64_t r = 0; r < replicas; ++r)
      for (unsigned i = 0; i < n; ++i) {
        Value old = m.getResult(r * n + i);
        Value now = fused.getResult(r * total + offset + i);
        for (Operation *user : llvm::make_early_inc_range(old.getUsers()))
          if (user->isBeforeInBlock(fused)) {
            user->moveAfter(after);
            after = user;
          }
        old.replaceAllUsesWith(now);
      }
    offset += n;
    m.erase();
  }
}

struct FuseAllReducePass : dist::impl::FuseAllReducePassBase<FuseAllReducePass> {
  using FuseAllReducePassBase::FuseAllReducePassBase;

  void runOnOperation() override {
    for (auto [name, value] : {std::pair{"bucket-mb", double(bucketMb)},
                               std::pair{"first-bucket-mb", double(firstBucketMb)}})
      if (std::string problem = CompileOptions::check(name, value); !problem.empty()) {
        getOperation().emitError() << "dist-fuse-allreduce: " << problem;
        return signalPassFailure();
      }
    const int64_t cap = static_cast<int64_t>(bucketMb * 1024 * 1024);
    // A first cap below a byte is one byte (the first gradient alone), not 0 (none).
    const int64_t firstCap =
        firstBucketMb > 0 ? std::max<int64_t>(1, static_cast<int64_t>(firstBucketMb * 1024 * 1024))
                          : 0;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      SmallVector<dist::AllReduceOp> all(func.getOps<dist::AllReduceOp>());
      for (dist::AllReduceOp op : all)
        if (op.getBucket()) {
          op.emitOpError("is already bucketed (dist-fuse-allreduce runs once)");
          return signalPassFailure();
        }
      if (failed(dist::verifyOnlyUpdatesUseMeans(all)))
        return signalPassFailure();
      SmallVector<SmallVector<dist::AllReduceOp>> buckets;
      dist::BucketPacker packer(cap, firstCap);
      for (dist::AllReduceOp op : all) {
        // What the step waits for travels alone, so that no gradient delays it.
        const int64_t index =
            op->hasAttr(dist::kSyncAttr) ? packer.addAlone() : packer.add(op.bytesPerReplica());
        if (index == static_cast<int64_t>(buckets.size()))
          buckets.emplace_back();
        buckets[index].push_back(op);
      }
      for (auto [index, members] : llvm::enumerate(buckets))
        fuse(members, index);
    }
  }
};

} // namespace
