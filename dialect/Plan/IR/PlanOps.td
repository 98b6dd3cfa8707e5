// The plan dialect: buffers, kernel calls and step structure, one op per record of the
// serialized plan (runtime/format/plan.fbs). The last compiler IR before the .dpx file.
#ifndef DP_PLAN_OPS
#define DP_PLAN_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "dialect/Common/AttrParams.td"

def Plan_Dialect : Dialect {
  let name = "plan";
  let cppNamespace = "::dp::plan";
  let summary = "Buffers and kernel calls: the compiled plan as IR";
  let description = [{
    A `plan.program` holds the persistent buffers (parameters, their gradients, the input
    bindings) and one `plan.step` per executable step (train, eval). Inside a step, transient
    buffers come from `plan.alloc`, `plan.view` gives a buffer another shape, and each
    `plan.kernel` is one call of a runtime kernel (runtime/format/Kernels.def) on buffers.
    Memory planning assigns every buffer an `offset` in the arena of its `device` (a replica
    of this process; one arena per device). A program compiled for several devices or
    processes has `plan.bucket`s, the contiguous gradient buffers that allreduce kernels
    average across every replica of the job.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Plan_Op<string mnemonic, list<Trait> traits = []> : Op<Plan_Dialect, mnemonic, traits>;

def Plan_InitAttr : AttrDef<Plan_Dialect, "Init"> {
  let mnemonic = "init";
  let summary = "how a parameter's first value is drawn";
  let description = [{
    `kind` is one of zeros, ones, constant (a), uniform (a, b), normal (mean a, stddev b),
    glorot_uniform, glorot_normal, he_normal, he_uniform; the fans are the parameter's, as
    the compiler computed them from the layer it belongs to.
  }];
  let parameters = (ins StringRefParameter<"initialiser kind">:$kind,
                        DP_F64Param<"0.0">:$a, DP_F64Param<"0.0">:$b,
                        DefaultValuedParameter<"int64_t", "0">:$fan_in,
                        DefaultValuedParameter<"int64_t", "0">:$fan_out);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Plan_Buffer : MemRefRankOf<[F32, I32], [0, 1, 2, 3, 4, 5, 6]>;

def Plan_ProgramOp : Plan_Op<"program", [NoTerminator, SingleBlock]> {
  let summary = "a compiled model: persistent buffers and steps";
  let description = [{
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
                       DefaultValuedStrAttr<StrAttr, "cpu">:$device);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$model attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Plan_ParamOp : Plan_Op<"param", [HasParent<"ProgramOp">]> {
  let summary = "a persistent parameter buffer and its initialiser";
  let arguments = (ins StrAttr:$name, Plan_InitAttr:$init, UnitAttr:$optimizer_state,
                       OptionalAttr<I64Attr>:$offset, DefaultValuedAttr<I64Attr, "0">:$device);
  let results = (outs Plan_Buffer:$buffer);
  let assemblyFormat = "$name attr-dict `:` type($buffer)";
}

def Plan_BucketOp : Plan_Op<"bucket", [HasParent<"ProgramOp">]> {
  let summary = "a device's contiguous gradient buffer, averaged by one allreduce";
  let description = [{
    The gradients of a bucket are `plan.grad`s inside it, so the kernels that compute them
    write straight into the buffer the collective sends: no packing copy.
  }];
  let arguments = (ins I64Attr:$index, OptionalAttr<I64Attr>:$offset,
                       DefaultValuedAttr<I64Attr, "0">:$device);
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
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<I64Attr>:$offset,
                       DefaultValuedAttr<I64Attr, "0">:$device);
  let results = (outs Plan_Buffer:$buffer);
  let assemblyFormat = "$name attr-dict `:` type($buffer)";
}

def Plan_StepOp : Plan_Op<"step", [HasParent<"ProgramOp">, NoTerminator, SingleBlock]> {
  let summary = "an executable step: kernels run in order";
  let arguments = (ins StrAttr:$name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$name attr-dict-with-keyword $body";
}

def Plan_AllocOp : Plan_Op<"alloc", [HasParent<"StepOp">]> {
  let summary = "a transient buffer of a step";
  let arguments = (ins OptionalAttr<I64Attr>:$offset, DefaultValuedAttr<I64Attr, "0">:$device);
  let results = (outs Plan_Buffer:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
}

def Plan_ViewOp : Plan_Op<"view", [HasParent<"StepOp">]> {
  let summary = "the same bytes under another shape";
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
    or 1, floats as finite f64, activations by name; the verifier rejects any other.
  }];
  let extraClassDeclaration = [{
    ::mlir::LogicalResult verifyAttributes(::dp::rt::KernelKind kind);
  }];
  let arguments = (ins StrAttr:$kind, Variadic<Plan_Buffer>:$inputs,
                       Variadic<Plan_Buffer>:$outputs);
  let assemblyFormat = [{
    $kind (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    (`outs` `(` $outputs^ `:` type($outputs) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def Plan_OutputOp : Plan_Op<"output", [HasParent<"StepOp">]> {
  let summary = "a named result of the step, left in a buffer for the runtime";
  let arguments = (ins StrAttr:$name, Plan_Buffer:$buffer);
  let assemblyFormat = "$name `,` $buffer attr-dict `:` type($buffer)";
}

#endif // DP_PLAN_OPS
