// The dist dialect: how a step is spread over devices and processes. Replicas are copies of
// the graph ops tagged `dist.replica`; these ops are what replication adds between them.
#ifndef DP_DIST_OPS
#define DP_DIST_OPS

include "dialect/Dist/IR/DistAttrs.td"
include "dialect/Dist/IR/DistTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Dist_F32Tensor : RankedTensorOf<[F32]>;

def Dist_ShardOp : Dist_Op<"shard", [Pure]> {
  let summary = "this replica's rows of a global batch";
  let description = [{
    Replica `replica` of the process with rank `p` takes shard `p * R + replica` of
    `shards` = R x P equal row blocks of the global batch. Under gradient accumulation
    (`accumulation` M > 1 on the mesh) `shards` is R x P x M and the replica takes shards
    `(p * R + replica) * M + m`, micro-shard m = 0 to M - 1 one after another.

    ```mlir
    %s = dist.shard %image {replica = 1 : i64, shards = 4 : i64} : tensor<100x784xf32> -> tensor<25x784xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$replica, I64Attr:$shards);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dist_AccumulateOp : Dist_Op<"accumulate", [SameOperandsAndResultType]> {
  let summary = "a gradient summed over a device's micro-shards";
  let description = [{
    Under gradient accumulation (the mesh's `accumulation` M = `count`), a device runs the
    train step once per micro-shard of its rows; everything that reads this op's result
    (allreduces, clipping, the optimizer's updates: the step's final phase) runs on the last
    micro-shard only. The result is the mean of `gradient` over the `count` micro-shards: as
    each loss is a mean over its micro-shard's rows, the gradient of the device's mean loss.
    Placed by `dist-accumulate` right after each gradient an update reads.

    ```mlir
    %a = dist.accumulate %g {count = 4 : i64} : tensor<784x100xf32>
    ```
  }];
  let arguments = (ins Dist_F32Tensor:$gradient, I64Attr:$count);
  let results = (outs Dist_F32Tensor:$result);
  let assemblyFormat = "$gradient attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dist_AllReduceOp : Dist_Op<"allreduce", [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the mean of gradients over every replica of the job";
  let description = [{
    Operands are `replicas` groups of the same tensors, one group per replica of this
    process in replica order; result `i` is the mean of operand `i` over the R x P replicas
    (in-process first, then across processes), on operand `i`'s replica. With `bucket`, the
    tensors travel as one fused buffer. `tensors` names the parameters whose gradients these
    are, for reports and the collective manifest.

    ```mlir
    %m0, %m1 = dist.allreduce %g0, %g1 {replicas = 2 : i64} : tensor<784x100xf32>, tensor<784x100xf32>
    ```
  }];
  let arguments = (ins Variadic<Dist_F32Tensor>:$gradients, I64Attr:$replicas,
                       OptionalAttr<I64Attr>:$bucket, OptionalAttr<StrArrayAttr>:$tensors);
  let results = (outs Variadic<Dist_F32Tensor>:$results);
  let assemblyFormat = "$gradients attr-dict `:` type($gradients)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Tensors per replica.
    unsigned tensorsPerReplica() { return getGradients().size() / getReplicas(); }
    /// Bytes of one replica's tensors.
    int64_t bytesPerReplica();
  }];
}

def Dist_AllReduceStartOp : Dist_Op<"allreduce_start"> {
  let summary = "start averaging a bucket; its gradients are final from here on";
  let description = [{
    The first half of a scheduled `dist.allreduce`: placed right after the last of its
    gradients is computed. The matching `dist.allreduce_wait` yields the means.

    With `owners` (sharded optimizer state, `dist-shard-optimizer`), the bucket is
    reduce-scattered: `owners[i]` is the one replica that reads tensor `i`'s mean (replica r
    of the process, or r of process p as p * R + r when the state is sharded over the job),
    the tensors ordered by owner, so each owner's means are one contiguous segment of the
    bucket. The other replicas' results for tensor `i` are left unspecified.

    ```mlir
    %p = dist.allreduce_start %g0, %h0, %g1, %h1 {bucket = 0 : i64, owners = array<i64: 0, 1>, replicas = 2 : i64} : tensor<10xf32>, tensor<4xf32>, tensor<10xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<Dist_F32Tensor>:$gradients, I64Attr:$replicas,
                       I64Attr:$bucket, OptionalAttr<StrArrayAttr>:$tensors,
                       OptionalAttr<DenseI64ArrayAttr>:$owners);
  let results = (outs Dist_PendingType:$pending);
  let assemblyFormat = "$gradients attr-dict `:` type($gradients)";
  let hasVerifier = 1;
}

def Dist_AllReduceWaitOp : Dist_Op<"allreduce_wait"> {
  let summary = "wait for a started allreduce and take its means";
  let description = [{
    Placed right before the first use of the means. Results match the start's operands.
  }];
  let arguments = (ins Dist_PendingType:$pending);
  let results = (outs Variadic<Dist_F32Tensor>:$results);
  let assemblyFormat = "$pending attr-dict `:` type($results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    AllReduceStartOp getStart() { return getPending().getDefiningOp<AllReduceStartOp>(); }
  }];
}

//===----------------------------------------------------------------------===//
// Sharded optimizer state
//===----------------------------------------------------------------------===//

def Dist_BroadcastStartOp : Dist_Op<"broadcast_start"> {
  let summary = "start copying parameters from the replica that updated them to the others";
  let description = [{
    Under sharded optimizer state (`dist-shard-optimizer`), one replica of each process, its
    `root`, keeps the optimizer state of some parameters and updates them; this op starts
    copying its copies of them into every other replica's. `tensors` names the parameters of
    the bucket (all with the same root); operands are one group per replica of this process,
    in replica order, each group the replica's copies of `tensors` in that order (as a
    `dist.allreduce`'s). Placed after the root's last update of them; the matching
    `dist.broadcast_wait` ends the step. `bucket` is the collective manifest's index: the
    parameters travel as one buffer, in which the plan lays them out.

    Without `process`, every process's root computes the same update from the same mean and
    the copy stays within each process (the state is sharded over the replicas of a process,
    each process holding the same shares). With `process = p`, the state is sharded over
    every replica of the job: only process p's root holds it and updates the parameters (its
    updates and state carry `dist.process = p`), and the copy goes from that replica to every
    replica of every process; one group (one replica a process) is then enough.

    ```mlir
    %p = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 1 : i64, tensors = ["dense1.kernel"]} : tensor<784x100xf32>, tensor<784x100xf32>
    dist.broadcast_wait %p
    %q = dist.broadcast_start %v, %c {bucket = 2 : i64, process = 1 : i64, root = 0 : i64, tensors = ["dense2.kernel", "dense2.bias"]} : tensor<100x10xf32>, tensor<10xf32>
    dist.broadcast_wait %q
    ```
  }];
  let arguments = (ins Variadic<Dist_F32Tensor>:$params, I64Attr:$root, I64Attr:$bucket,
                       StrArrayAttr:$tensors, OptionalAttr<I64Attr>:$process);
  let results = (outs Dist_PendingType:$pending);
  let assemblyFormat = "$params attr-dict `:` type($params)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Parameters of the bucket (copies per replica).
    unsigned tensorsPerReplica() { return getTensors().size(); }
    /// Replicas of this process whose copies it names.
    unsigned replicas() { return getParams().size() / tensorsPerReplica(); }
    /// Replica r's copies, in `tensors` order.
    ::mlir::ValueRange copiesOf(unsigned r) {
      return getParams().slice(r * tensorsPerReplica(), tensorsPerReplica());
    }
  }];
}

def Dist_BroadcastWaitOp : Dist_Op<"broadcast_wait"> {
  let summary = "wait until every replica holds the root's copies of the parameters";
  let arguments = (ins Dist_PendingType:$pending);
  let assemblyFormat = "$pending attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    BroadcastStartOp getStart() { return getPending().getDefiningOp<BroadcastStartOp>(); }
  }];
}

//===----------------------------------------------------------------------===//
// The parameter-server strategy
//===----------------------------------------------------------------------===//

def Dist_PushOp : Dist_Op<"push"> {
  let summary = "send a bucket of this worker's gradients to the server holding the parameters";
  let description = [{
    On a worker's train step, right after the last of the bucket's gradients is computed:
    the gradients of the parameters `tensors`, all held by server `server`, travel as one
    buffer while the backward pass goes on. The server answers with the parameters, which
    the bucket's `dist.pull` takes.

    ```mlir
    dist.push %gw, %gb {bucket = 0 : i64, server = 0 : i64, tensors = ["dense2.kernel", "dense2.bias"]} : tensor<100x10xf32>, tensor<10xf32>
    ```
  }];
  let arguments = (ins Variadic<Dist_F32Tensor>:$gradients, I64Attr:$bucket, I64Attr:$server,
                       StrArrayAttr:$tensors);
  let assemblyFormat = "$gradients attr-dict `:` type($gradients)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Bytes of the bucket's gradients.
    int64_t bytes();
  }];
}

def Dist_PullOp : Dist_Op<"pull"> {
  let summary = "take a bucket's parameters as the server holds them, in place";
  let description = [{
    On a worker's train step, after the last read of the parameters in the step: waits for
    the server's answer to the bucket's `dist.push` and writes the parameters (operands, the
    `graph.param`s named by `tensors`, in order) in place, as an update does. When the server
    answers is the strategy's: at once (asynchronous), once the slowest worker is at most
    `staleness` steps behind, or once every worker's gradient was averaged and applied (sync).

    ```mlir
    dist.pull %w, %b {bucket = 0 : i64, server = 0 : i64, tensors = ["dense2.kernel", "dense2.bias"]} : tensor<100x10xf32>, tensor<10xf32>
    ```
  }];
  let arguments = (ins Variadic<Dist_F32Tensor>:$params, I64Attr:$bucket, I64Attr:$server,
                       StrArrayAttr:$tensors);
  let assemblyFormat = "$params attr-dict `:` type($params)";
  let hasVerifier = 1;
}

def Dist_ReceiveOp : Dist_Op<"receive"> {
  let summary = "a bucket of gradients a worker pushed, on the server holding them";
  let description = [{
    The first op of a bucket's part of a server function: the gradients of `tensors`, as
    one worker pushed them (or, with `sync`, their mean over every worker's push of the same
    step). The optimizer's updates of those parameters follow, then the bucket's
    `dist.reply`.

    ```mlir
    %gw, %gb = dist.receive {bucket = 0 : i64, tensors = ["dense2.kernel", "dense2.bias"]} : tensor<100x10xf32>, tensor<10xf32>
    ```
  }];
  let arguments = (ins I64Attr:$bucket, StrArrayAttr:$tensors);
  let results = (outs Variadic<Dist_F32Tensor>:$gradients);
  let assemblyFormat = "attr-dict `:` type($gradients)";
  let hasVerifier = 1;
}

def Dist_ReplyOp : Dist_Op<"reply"> {
  let summary = "answer the workers' pulls of a bucket with the parameters as updated";
  let description = [{
    The last op of a bucket's part of a server function: the parameters `tensors` (operands,
    their `graph.param`s, in order) go to the workers whose pulls of the bucket the strategy
    lets through.

    ```mlir
    dist.reply %w, %b {bucket = 0 : i64, tensors = ["dense2.kernel", "dense2.bias"]} : tensor<100x10xf32>, tensor<10xf32>
    ```
  }];
  let arguments = (ins Variadic<Dist_F32Tensor>:$params, I64Attr:$bucket,
                       StrArrayAttr:$tensors);
  let assemblyFormat = "$params attr-dict `:` type($params)";
  let hasVerifier = 1;
}

#endif // DP_DIST_OPS
