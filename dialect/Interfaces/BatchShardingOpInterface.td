// The batch-sharding interface: how an op's results relate to the batch axis, given which of
// its operands carry it. dist-split-batch and dist-sync-batch-norm know no op by name; they ask
// each op for this.
#ifndef DP_BATCH_SHARDING_OP_INTERFACE
#define DP_BATCH_SHARDING_OP_INTERFACE

include "mlir/IR/OpBase.td"

def BatchShardingOpInterface : OpInterface<"BatchShardingOpInterface"> {
  let cppNamespace = "::dp";
  let description = [{
    An op that data parallelism can split along the batch. A value "carries the batch" when
    its leading axis is the batch's rows; a replica then holds only its shard's rows. Given
    which operands carry the batch, the op says of each result whether it carries the batch
    too (`BatchSharding::Rows`), reduces over it (`BatchSharding::Reduced`: each replica holds
    its shard's part, as a weight gradient or a loss does), or does not depend on it
    (`BatchSharding::None`).

    The default is a row-wise op: every result carries the batch as soon as one operand
    does, or, with the `ReducesBatch` trait, every result reduces over it (losses, sums over
    the rows). Ops with another rule override `getResultSharding`; an op that cannot be
    split returns failure. Results whose value the op's own semantics need over the
    global batch (batch normalisation's statistics) say so through `isGlobalStatistic`: data
    parallelism averages those across replicas where they are computed.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{Fills `results` (one entry per result) from which operands carry the batch;
                 called only when at least one does. Fails when the op cannot be split.}],
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"getResultSharding",
      /*args=*/(ins "::llvm::ArrayRef<bool>":$batchedOperands,
                    "::llvm::SmallVectorImpl<::dp::BatchSharding> &":$results),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        results.assign($_op->getNumResults(),
                       ConcreteOp::template hasTrait<::dp::OpTrait::ReducesBatch>()
                           ? ::dp::BatchSharding::Reduced
                           : ::dp::BatchSharding::Rows);
        return ::mlir::success();
      }]>,
    InterfaceMethod<
      /*desc=*/[{True when `result` (a `Reduced` one) is a statistic that the op's users need
                 over the global batch, not the shard: the mean over replicas of each
                 replica's value is the global batch's value.}],
      /*retTy=*/"bool",
      /*methodName=*/"isGlobalStatistic",
      /*args=*/(ins "unsigned":$result),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return false;">,
    InterfaceMethod<
      /*desc=*/[{The name under which a global statistic travels in the collective manifest
                 and the plan, unless a parameter's update reads it (then it is that
                 parameter's gradient and carries its name).}],
      /*retTy=*/"std::string",
      /*methodName=*/"getStatisticName",
      /*args=*/(ins "unsigned":$result),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return (::llvm::Twine($_op->getName().stripDialect()) + "." + ::llvm::Twine(result)).str();
      }]>,
  ];
}

// Every result of the op reduces over the batch's rows (the default sharding rule reads it).
def ReducesBatchTrait : NativeOpTrait<"ReducesBatch"> {
  let cppNamespace = "::dp::OpTrait";
}

#endif // DP_BATCH_SHARDING_OP_INTERFACE
