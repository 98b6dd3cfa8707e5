// Conversions between the dialects of the pipeline.
#ifndef DP_CONVERSION_PASSES
#define DP_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertGraphToPlanPass : Pass<"convert-graph-to-plan", "mlir::ModuleOp"> {
  let summary = "Lower the train and eval steps to buffers and kernel calls";
  let description = [{
    Replaces the `@train` and `@eval` graph functions by one `plan.program`: a `plan.param`
    per parameter name (initialiser and fans recorded), a `plan.input` per input name, a
    `plan.grad` buffer per gradient consumed by an optimizer update, and a `plan.step` per
    function in which every graph op becomes a `plan.kernel` writing a fresh `plan.alloc`
    (reshapes become `plan.view`s: no data moves) and every result a `plan.output`.
    Fans follow Keras: [in, out] matrices give (in, out); higher ranks multiply the receptive
    field into both.
  }];
  let dependentDialects = ["dp::plan::PlanDialect"];
}

#endif // DP_CONVERSION_PASSES
