// Conversions between the dialects of the pipeline.
#ifndef DP_CONVERSION_PASSES
#define DP_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertDistToPlanPass : Pass<"convert-dist-to-plan", "mlir::ModuleOp"> {
  let summary = "Lower the replicated train and eval steps to buffers and kernel calls";
  let description = [{
    The conversion out of the dist phase. Replaces the `@train` and `@eval` functions (graph
    compute ops, `dist.shard`s and allreduces, on R replicas) by one `plan.program`:

    - a `plan.param` per parameter name and device (initialiser and fans recorded; fans
      follow Keras: [in, out] matrices give (in, out), higher ranks multiply the receptive
      field into both), a `plan.input` per input name and device (the replica's shard);
    - a `plan.bucket` per allreduce bucket and device, holding a `plan.grad` per averaged
      tensor (with `segments` when the allreduce scatters to owners; `transient` under
      `dist.shard_optimizer = 2`, where at each scattered bucket's wait a `copy` kernel on
      the owner's device (and, over the processes, with the owner's `process`) moves each
      mean an update reads into a `plan.alloc` of the step, which the update reads), and a
      `plan.grad` for every other gradient an optimizer update reads;
    - a `plan.step` per function: each compute op lowers itself to `plan.kernel` calls
      through its `KernelLoweringOpInterface` (reshapes become `plan.view`s: no data moves),
      each allreduce becomes `allreduce_start` / `allreduce_wait` kernels over every device's
      copy of its bucket, and each result a `plan.output`.

    An op without a lowering (`graph.apply_gradient` before `graph-expand-optimizer`) is an
    error.
  }];
  let dependentDialects = ["dp::plan::PlanDialect"];
}

#endif // DP_CONVERSION_PASSES
