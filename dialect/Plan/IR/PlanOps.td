// The plan dialect: buffers, kernel calls and step structure, one op per record of the
// serialized plan (runtime/format/plan.fbs). The last compiler IR before the .dpx file.
#ifndef DP_PLAN_OPS
#define DP_PLAN_OPS

include "dialect/Plan/IR/PlanAttrs.td"

def Plan_Buffer : MemRefRankOf<[F32, I32, BF16], [0, 1, 2, 3, 4, 5, 6]>;

def Plan_ProgramOp : Plan_Op<"program", [NoTerminator, SingleBlock]> {
  let summary = "a compiled model: persistent buffers and steps";
  let description = [{
    The whole plan of `model` for a global batch of `batch` rows on
    `devices_per_process` (R) devices of kind `device` in each of `processes` (P)
    processes: persistent buffers (`plan.param`, `plan.bucket`, `plan.grad`, `plan.input`)
    first, then one `plan.step` per step. Every op with a `device` attribute is on a
    device below R. After `plan-memory` it carries `arena_bytes` and `persistent_bytes`.
    `lr_schedule`, when present, is the learning-rate schedule the runtime applies to every
    optimizer's rate ("warmup-linear:epochs=5,start=0.25+cosine:epochs=30,min=0"; see
    `dpc compile --lr-schedule`); the verifier parses it. `nodes`, when present, is the
    number of hosts the processes are spread over, evenly (dprun checks the launch's
    placement against it). `allreduce_precision = "bf16"` sends the gradient buckets across
    the processes as bf16 (the collective manifest's dtype); without it they go as f32.
    `accumulation` M > 1 (gradient accumulation, `dpc compile --micro-batch`): each device
    runs the train step on M micro-shards of its rows in turn, its input buffers one
    micro-shard's rows; the kernels marked `final` run on the last only, and each step's
    `accumulate` kernels sum the gradients over them. The eval step runs once per micro-shard
    as well.

    ```mlir
    plan.program "mnist_mlp" attributes {batch = 100 : i64} {
      %w = plan.param "dense1.kernel" {init = #plan.init<kind = "glorot_uniform">} : memref<784x100xf32>
      plan.step "train" { ... }
    }
    ```
  }];
  let arguments = (ins StrAttr:$model, I64Attr:$batch,
                       DefaultValuedAttr<I64Attr, "1">:$devices_per_process,
                       DefaultValuedAttr<I64Attr, "1">:$processes,
                       DefaultValuedStrAttr<StrAttr, "cpu">:$device,
                       OptionalAttr<StrAttr>:$lr_schedule,
                       OptionalAttr<I64Attr>:$nodes,
                       OptionalAttr<I64Attr>:$servers,
                       OptionalAttr<I64Attr>:$staleness,
                       UnitAttr:$sync,
                       OptionalAttr<I64Attr>:$server,
                       OptionalAttr<StrAttr>:$allreduce_precision,
                       OptionalAttr<I64Attr>:$accumulation);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$model attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The rules of gradient accumulation: its phases and accumulate kernels.
    ::mlir::LogicalResult verifyAccumulation();
  }];
}

def Plan_ParamOp : Plan_Op<"param", [HasParent<"ProgramOp">]> {
  let summary = "a persistent parameter buffer and its initialiser";
  let description = [{
    The buffer of the parameter `name` on `device`, drawn once by the runtime from `init`
    (same name, same values on every device); `optimizer_state` marks moments and
    velocities. `offset` is its place in the device's arena, set by `plan-memory`. Optimizer
    state sharded over the processes carries `process`: only that process holds it, and
    `plan-memory` lays the processes' shares over one another. A weight that a broadcast
    copies (sharded optimizer state) lies in the broadcast's `bucket`, from element
    `bucket_offset` on: the bucket's parameters travel as one buffer.

    ```mlir
    %w = plan.param "dense1.kernel" {init = #plan.init<kind = "glorot_uniform", fan_in = 784, fan_out = 100>} : memref<784x100xf32>
    %m = plan.param "dense1.kernel.m" {init = #plan.init<kind = "zeros">, optimizer_state, process = 1 : i64} : memref<784x100xf32>
    %b = plan.bucket 3 : memref<96xf32>
    %v = plan.param "dense2.kernel" in %b : memref<96xf32> {bucket_offset = 0 : i64, init = #plan.init<kind = "zeros">} : memref<5x3xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Plan_InitAttr:$init, UnitAttr:$optimizer_state,
                       OptionalAttr<I64Attr>:$offset, DefaultValuedAttr<I64Attr, "0">:$device,
                       OptionalAttr<I64Attr>:$process,
                       Optional<MemRefRankOf<[F32], [1]>>:$bucket,
                       OptionalAttr<I64Attr>:$bucket_offset);
  let results = (outs Plan_Buffer:$buffer);
  let assemblyFormat = [{
    $name (`in` $bucket^ `:` type($bucket))? attr-dict `:` type($buffer)
  }];
  let hasVerifier = 1;
}

def Plan_BucketOp : Plan_Op<"bucket", [HasParent<"ProgramOp">]> {
  let summary = "a device's contiguous buffer that one collective exchanges";
  let description = [{
    The gradients of a bucket are `plan.grad`s inside it, so the kernels that compute them
    write straight into the buffer the collective sends: no packing copy. On a
    parameter-server worker, `server` is the server the bucket is pushed to. A broadcast's
    bucket (sharded optimizer state) holds the `plan.param`s it copies. A reduce-scattered
    bucket's `segments` are where each owner's gradients begin, in elements (owner o's are
    elements segments[o] to segments[o + 1]; replica r of process p is owner p * R + r when
    the state is sharded over the job), and its end: only the owner receives their means.

    A `transient` bucket (`--shard-optimizer 2`) does not outlive the train step: `plan-memory`
    places it in the step's region, live from the first kernel that writes one of its
    gradients to the last that reads one (the owner's update), so its bytes are the backward
    pass's activations' before and after.
  }];
  let arguments = (ins I64Attr:$index, OptionalAttr<I64Attr>:$offset,
                       DefaultValuedAttr<I64Attr, "0">:$device, OptionalAttr<I64Attr>:$server,
                       OptionalAttr<DenseI64ArrayAttr>:$segments, UnitAttr:$transient);
  let results = (outs MemRefRankOf<[F32], [1]>:$buffer);
  let assemblyFormat = "$index attr-dict `:` type($buffer)";
}

def Plan_GradOp : Plan_Op<"grad", [HasParent<"ProgramOp">]> {
  let summary = "the persistent buffer holding a parameter's gradient after a train step";
  let description = [{
    With a bucket, the gradient occupies the bucket's elements from `bucket_offset` on.
  }];
  let arguments = (ins StrAttr:$param, Optional<MemRefRankOf<[F32], [1]>>:$bucket,
                       OptionalAttr<I64Attr>:$bucket_offset, OptionalAttr<I64Attr>:$offset,
                       DefaultValuedAttr<I64Attr, "0">:$device);
  let results = (outs Plan_Buffer:$buffer);
  let assemblyFormat = [{
    $param (`in` $bucket^ `:` type($bucket))? attr-dict `:` type($buffer)
  }];
  let hasVerifier = 1;
}

def Plan_InputOp : Plan_Op<"input", [HasParent<"ProgramOp">]> {
  let summary = "a buffer the runtime fills with a batch before each step";
  let description = [{
    Holds the device's shard of the global batch: its rows are rows `s * n` to `(s + 1) * n`
    of the global batch, where `n` is the buffer's row count and `s = rank * R + device`.
    The runtime finds it by its role: `samples` (the batch's samples) or `targets` (what the
    loss compares the predictions with); each device has at most one input of each role.
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$role, OptionalAttr<I64Attr>:$offset,
                       DefaultValuedAttr<I64Attr, "0">:$device);
  let results = (outs Plan_Buffer:$buffer);
  let assemblyFormat = "$name `as` custom<Role>($role) attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Plan_StepOp : Plan_Op<"step", [HasParent<"ProgramOp">, NoTerminator, SingleBlock]> {
  let summary = "an executable step: kernels run in order";
  let description = [{
    `train` or `eval`: its transient buffers, views, kernel calls in execution order (each
    device's replica runs its own kernels and the collectives, in this order) and named
    outputs.
  }];
  let arguments = (ins StrAttr:$name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$name attr-dict-with-keyword $body";
}

def Plan_AllocOp : Plan_Op<"alloc", [HasParent<"StepOp">]> {
  let summary = "a transient buffer of a step";
  let description = [{
    Lives from its first to its last use in the step; `plan-memory` gives it an `offset`
    that other buffers not live at the same time may share.
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset, DefaultValuedAttr<I64Attr, "0">:$device);
  let results = (outs Plan_Buffer:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
}

def Plan_ViewOp : Plan_Op<"view", [HasParent<"StepOp">]> {
  let summary = "the same bytes under another shape";
  let description = [{
    A reshape: no data moves. The element count and type must be the source's.

    ```mlir
    %f = plan.view %x : memref<100x28x28xf32> to memref<100x784xf32>
    ```
  }];
  let arguments = (ins Plan_Buffer:$source);
  let results = (outs Plan_Buffer:$buffer);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($buffer)";
  let hasVerifier = 1;
}

def Plan_KernelOp : Plan_Op<"kernel", [HasParent<"StepOp">, AttrSizedOperandSegments]> {
  let summary = "one call of a runtime kernel";
  let description = [{
    `kind` names a kernel of runtime/format/Kernels.def; the number of inputs and outputs must
    match it. Outputs are written (update kernels also read them). The op's other attributes
    are the kernel's attributes. A kernel runs on the device of its buffers, which must all
    be on one device, except the collectives (`allreduce_start`, `allreduce_wait`), whose
    input `d` is device `d`'s copy of a bucket.

    ```mlir
    plan.kernel "dense" ins(%x, %w, %b : memref<100x784xf32>, memref<784x100xf32>, memref<100xf32>)
        outs(%h : memref<100x100xf32>) {activation = "sigmoid"}
    ```

    The attributes are the kernel's contract in Kernels.def: integers as i64, flags as i64 0
    or 1, floats as finite f64, activations by name; the verifier rejects any other. Under
    gradient accumulation, `final` marks a kernel of the train step's final phase (it depends
    on an accumulated gradient: allreduces, clipping, updates), which runs on a step's last
    micro-shard only. `process` marks a kernel that runs on that process of the job alone (the
    update of a parameter whose optimizer state is sharded over the processes).
  }];
  let extraClassDeclaration = [{
    ::mlir::LogicalResult verifyAttributes(::dp::rt::KernelKind kind);
  }];
  let arguments = (ins StrAttr:$kind, Variadic<Plan_Buffer>:$inputs,
                       Variadic<Plan_Buffer>:$outputs, UnitAttr:$final,
                       OptionalAttr<I64Attr>:$process);
  let assemblyFormat = [{
    $kind (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    (`outs` `(` $outputs^ `:` type($outputs) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def Plan_OutputOp : Plan_Op<"output", [HasParent<"StepOp">]> {
  let summary = "a named result of the step, left in a buffer for the runtime";
  let description = [{
    The runtime reads an f32 scalar from the buffer after each step and reduces it by its
    role: `loss` (the mean loss over the device's rows) or `correct` (how many rows the model
    predicts right); each device has at most one output of each role in a step.
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$role, Plan_Buffer:$buffer);
  let assemblyFormat = "$name `as` custom<Role>($role) `,` $buffer attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

#endif // DP_PLAN_OPS
