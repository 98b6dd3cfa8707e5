// The plan dialect's definition and op base class (see PlanOps.td for the ops).
#ifndef DP_PLAN_BASE
#define DP_PLAN_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

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

#endif // DP_PLAN_BASE
