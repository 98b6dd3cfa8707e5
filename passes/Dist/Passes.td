// Passes of the dist phase: data parallelism decided at compile time, readable in the IR.
#ifndef DP_DIST_PASSES
#define DP_DIST_PASSES

include "mlir/Pass/PassBase.td"

def ReplicatePass : Pass<"dist-replicate", "mlir::ModuleOp"> {
  let summary = "Copy the step once per device of a process (in-graph replication)";
  let description = [{
    Gives every step function the mesh `#dist.mesh<devices_per_process = R, processes = P,
    device = ..., nodes = N>` (nodes omitted when 1) and, when R > 1, replaces its body by R copies interleaved op by op, each
    op tagged `dist.replica = r`. Each copy has its own `graph.param` ops (mirrored
    parameters, one per device), and the function returns every replica's outputs, replica
    by replica, each result tagged with its replica. Copies still read the whole global
    batch: `dist-split-batch` gives each its shard. With `micro-batch` b > 0, the mesh's
    `accumulation` is M = B / (R x P x b) (B the global batch), refused when b does not
    divide a device's rows.
  }];
  let dependentDialects = ["dp::dist::DistDialect"];
  let options = [
    Option<"devicesPerProcess", "devices-per-process", "int64_t", "1",
           "Replicas (devices) in each process">,
    Option<"processes", "processes", "int64_t", "1", "Processes of the job (MPI ranks)">,
    Option<"device", "device", "std::string", "\"cpu\"", "Device kind: cpu or cuda">,
    Option<"nodes", "nodes", "int64_t", "1",
           "Hosts the processes are spread over, evenly (checked at launch)">,
    Option<"microBatch", "micro-batch", "int64_t", "0",
           "Rows of a micro-shard: each device runs the train step on its rows in pieces of "
           "this many, accumulating the gradients (0: no accumulation)">,
  ];
}

def SplitBatchPass : Pass<"dist-split-batch", "mlir::ModuleOp"> {
  let summary = "Give each replica its rows of the global batch";
  let description = [{
    In every step function with a mesh of S = R x P > 1 replicas, each replica reads its
    inputs through `dist.shard` (shard `rank * R + r` of S) and every value computed from
    the batch is re-typed with batch / S rows. Which results carry the batch follows from the
    op (a matmul contracting over the rows, `graph.reduce_rows` and the losses do not).
    Fails, naming the input, when the global batch is not a multiple of S, and on an op with
    no batch rule.
  }];
  let dependentDialects = ["dp::dist::DistDialect"];
}

def SyncBatchNormPass : Pass<"dist-sync-batch-norm", "mlir::ModuleOp"> {
  let summary = "Batch normalisation with the statistics of the global batch";
  let description = [{
    After `dist-split-batch` each replica's `graph.batch_moments` sees only its shard. This
    pass averages the moments of the R x P replicas with a `dist.allreduce` marked `dist.sync`
    right after they are computed (equal shards: the mean of the shards' means is the
    batch's), and the same for the sums of `graph.batch_norm_grad_params`, which the input
    gradient needs over the whole batch and which then are the averaged gradients of gamma
    and beta. A data-parallel step then computes what one device computes on the whole
    batch, moving statistics included. Without this pass (dpc --batch-norm-stats=local) each
    replica normalises with its shard's statistics, as Keras's BatchNormalization does under
    a mirrored strategy. Collective names: `<layer>.batch_stats`, and gamma's and beta's.
  }];
  let dependentDialects = ["dp::dist::DistDialect"];
}

def AccumulatePass : Pass<"dist-accumulate", "mlir::ModuleOp"> {
  let summary = "Sum each gradient over a device's micro-shards (gradient accumulation)";
  let description = [{
    When the train step's mesh has `accumulation` M > 1, each gradient that an update reads
    is taken through a `dist.accumulate` placed right after it is computed, so that
    everything the update needs (the allreduce, clipping, the update itself) reads the mean
    over the device's M micro-shards. The conversion to the plan marks the kernels that
    depend on an accumulated gradient `final`: the runtime runs them on the last micro-shard
    only. Runs after `dist-split-batch` and before `dist-insert-allreduce`. Refused with the
    parameter-server strategy, and when batch statistics are averaged across replicas inside
    the step (`dist-sync-batch-norm`; each micro-shard then needs the others' forward pass).
  }];
  let dependentDialects = ["dp::dist::DistDialect"];
}

def InsertAllReducePass : Pass<"dist-insert-allreduce", "mlir::ModuleOp"> {
  let summary = "Average each gradient over all replicas";
  let description = [{
    For each parameter of a train step with S > 1 replicas, one `dist.allreduce` takes the
    R replicas' gradients right where the last of them is computed, and every replica's
    `graph.apply_gradient` uses the mean: in-process first, then across processes.

    With `allreduce-precision=bf16` the train step gets `dist.allreduce_precision = "bf16"`: its
    buckets cross the processes as bf16 (the plan's collective manifest says so), halving
    the bytes sent; the sums within a process and the means stay f32.
  }];
  let options = [
    Option<"allreducePrecision", "allreduce-precision", "std::string", /*default=*/"\"fp32\"",
           "fp32, or bf16: the type the gradients cross the processes in">,
  ];
  let dependentDialects = ["dp::dist::DistDialect"];
}

def FuseAllReducePass : Pass<"dist-fuse-allreduce", "mlir::ModuleOp"> {
  let summary = "Pack gradient allreduces into buckets";
  let description = [{
    Walks the allreduces in the order their gradients become ready and packs consecutive
    ones into buckets of at most `bucket-mb` MiB per replica (a larger gradient gets a bucket
    of its own; 0 gives every gradient its own bucket). With `first-bucket-mb`, the first
    bucket (the gradients ready first) holds at most that, so that its allreduce starts
    before more of the backward pass is done (PyTorch DDP's small first bucket). Each bucket becomes one
    `dist.allreduce {bucket = k}` placed where its last gradient is ready, with the
    gradients' users moved after it.
  }];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", "25.0",
           "Largest bucket in MiB (per replica); 0: one bucket per gradient">,
    Option<"firstBucketMb", "first-bucket-mb", "double", "0.0",
           "Largest first bucket in MiB (per replica): the gradients ready first start "
           "their allreduce sooner; 0: as bucket-mb">,
  ];
}

def SchedulePass : Pass<"dist-schedule", "mlir::ModuleOp"> {
  let summary = "Overlap the allreduces with the rest of the backward pass";
  let description = [{
    Splits each `dist.allreduce` into a `dist.allreduce_start` right after its last gradient
    is computed and every other read of its gradients (the allreduce averages them in place:
    with local batch statistics, a batch normalisation's input gradient reads its gamma and
    beta gradients, the local sums, after they are computed) and a `dist.allreduce_wait` right before the first use of its means, and
    moves the optimizer updates that consume means to the end of the step (after every
    read of the parameters they change), so that each bucket travels while the backward
    pass goes on.
  }];
}

def ClipGradientsPass : Pass<"dist-clip-gradients", "mlir::ModuleOp"> {
  let summary = "Clip the gradients to a global norm, after the allreduce";
  let description = [{
    With `clip-norm` > 0, after `dist-schedule`: on each replica of the train step, one
    `graph.clip_factor` of every gradient its optimizer updates read (the allreduced means,
    so every replica computes the same factor from the same averaged gradients, and a
    layout of R x P replicas clips as one device does), placed after the last of them (the
    last allreduce's wait), and each update after it, reading the factor as its `scale`:
    `gradient * min(1, clip-norm / (norm + 1e-6))` (PyTorch's `clip_grad_norm_`). Updates
    that scheduling left before the last wait move after the factor; the updates of the
    first buckets no longer overlap the last buckets' allreduces. Fails under the
    parameter-server strategy, where no process holds the whole gradient. 0 (the default)
    changes nothing.
  }];
  let dependentDialects = ["dp::graph::GraphDialect"];
  let options = [
    Option<"clipNorm", "clip-norm", "double", "0.0",
           "Largest global norm of the gradients (0: no clipping)">,
  ];
}

def ShardOptimizerPass : Pass<"dist-shard-optimizer", "mlir::ModuleOp"> {
  let summary = "Keep each parameter's optimizer state on one replica of the job (ZeRO-1)";
  let description = [{
    With `shard-optimizer` = 1, after `dist-schedule` (and `dist-clip-gradients`): each
    trainable parameter of the train step gets an owner among the replicas, largest optimizer
    state first, each onto the replica holding the fewest state bytes so far (lowest index on
    a tie), so the shares are balanced and fixed at compile time. Only the owner keeps the
    update and its optimizer state (`graph.param`s with `optimizer_state`); the other
    replicas' updates and state are removed. Each owner's parameters, in the order of its
    updates, are packed into broadcast buckets of at most `bucket-mb` MiB (the gradients'
    cap); after the owner's last update of a bucket, a `dist.broadcast_start` (root = the
    owner, a bucket index of its own after the allreduces') starts copying them to the other
    replicas, and its `dist.broadcast_wait` ends the step. The train step is marked
    `dist.shard_optimizer = 1`.

    With one process (P = 1) the owners are the R replicas of the process. With several, they
    are the R x P replicas of the job (replica r of process p counts as p * R + r): the
    owner's update and state carry `dist.process = p`, only that process runs and holds them,
    and the broadcast (`process = p`) copies the parameters to every replica of every process.
    Each gradient bucket whose means only the updates read is reduce-scattered: its tensors
    reordered by owner and `owners` set on its `dist.allreduce_start`, so that each owner
    alone receives its means (under clipping the norm reads them all: no bucket is). The
    gradient memory is still whole on every replica. Stage 2 marks the step
    `dist.shard_optimizer = 2` and waits for each reduce-scattered bucket as soon as the next
    bucket has started (after the run of starts it begins), mid-backward, rather than before
    the updates (the last bucket's wait stays there): `convert-dist-to-plan` then makes the
    gradient buckets transient, placed with the train step's buffers, and copies each
    owner's means out of its bucket at the wait, so that the bucket dies there (refused with
    accumulation, whose sums outlive the step's runs). Fails
    with one device in all, with parameter servers, and when the optimizer keeps no state
    (sgd).
  }];
  let dependentDialects = ["dp::dist::DistDialect"];
  let options = [
    Option<"shardOptimizer", "shard-optimizer", "int64_t", "0",
           "ZeRO stage: 1 shards the optimizer state over the replicas of the job; 2 also "
           "keeps no gradient between steps (each bucket waited for once the next starts, its "
           "owners' means copied out, its buffer transient; not with accumulation); "
           "0 changes nothing">,
    Option<"bucketMb", "bucket-mb", "double", "25.0",
           "Largest broadcast bucket in MiB (an owner's parameters); 0: one per parameter">,
  ];
}

def PlaceParametersPass : Pass<"dist-place-parameters", "mlir::ModuleOp"> {
  let summary = "Place each trainable parameter on one of S parameter servers";
  let description = [{
    The parameter-server strategy's first pass, after `dist-split-batch` (the mesh's P
    processes are the W workers, one device each). Puts
    `#dist.parameter_server<servers = S, workers = W, staleness = K, sync = ...>` on the train
    step and `dist.server = s` on every `graph.param` of a trainable parameter, in every
    function: largest parameter first, each onto the server holding the fewest bytes so far
    (lowest index on a tie), so the servers' bytes are balanced and the placement is fixed at
    compile time. Fails when the model has fewer trainable parameters than servers.
  }];
  let dependentDialects = ["dp::dist::DistDialect"];
  let options = [
    Option<"servers", "servers", "int64_t", "1", "Parameter servers (S)">,
    Option<"staleness", "staleness", "int64_t", "-1",
           "Steps a worker may run ahead of the slowest worker; -1: unbounded (asynchronous)">,
    Option<"sync", "sync", "bool", "false",
           "Average one gradient from every worker before each update (staleness 0)">,
  ];
}

def SplitParameterServerPass : Pass<"dist-split-parameter-server", "mlir::ModuleOp"> {
  let summary = "Split the train step into a worker's step and one program per server";
  let description = [{
    After `dist-place-parameters`. The optimizer's updates leave the train step: each server
    gets a function `@server<s>` (`dist.server = s`) that, per bucket, `dist.receive`s the
    gradients, applies the updates (with the optimizer state, which lives only there) and
    `dist.reply`s with the parameters. Gradients of one server are packed, in the order they
    are ready, into buckets of at most `bucket-mb` MiB (0: one per gradient); buckets are
    numbered in the order they leave. On the worker, each bucket's `dist.push` comes right
    after its last gradient (so it travels while the backward pass goes on) and its
    `dist.pull` at the end of the step, where the updates were (after every read of the
    parameters it writes).
  }];
  let dependentDialects = ["dp::dist::DistDialect", "mlir::func::FuncDialect"];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", "25.0",
           "Largest bucket in MiB; 0: one bucket per gradient">,
  ];
}

def VerifyPass : Pass<"dist-verify", "mlir::ModuleOp"> {
  let summary = "Check the contract of the dist phase on its output";
  let description = [{
    The last pass of the dist phase. For steps on more than one replica (R x P > 1):

    - every input is read through `dist.shard`s of R x P shards (no replica reads the whole
      global batch);
    - every update of a trainable parameter reads the result of an allreduce over the R
      devices of the process (and so over all R x P replicas), of its own replica's
      gradient, averaged exactly once, and no gradient travels in two allreduces;
    - every allreduce is bucketed and scheduled (`dist.allreduce_start` /
      `dist.allreduce_wait`), each bucket index is used once, and each start comes right
      after the last of its tensors is computed or read (only other starts in between), so that
      buckets leave in the order they become ready; nothing reads a bucket's tensors after
      its start (the allreduce averages them in place).

    Under the parameter-server strategy, instead: one device per worker, W workers in the
    mesh; no update and no allreduce left in the train step; each bucket index pushed once,
    right after its last gradient, and pulled once, after its push, with the same server and
    tensors; server functions 0 to S - 1, each receiving exactly the buckets pushed to it,
    updating every received parameter once from the received gradient, and replying with the
    bucket's parameters; every trainable parameter on exactly one server.

    Changes nothing.
  }];
}

#endif // DP_DIST_PASSES
