// Passes of the plan phase.
#ifndef DP_PLAN_PASSES
#define DP_PLAN_PASSES

include "mlir/Pass/PassBase.td"

def PlanMemoryPass : Pass<"plan-memory", "mlir::ModuleOp"> {
  let summary = "Assign arena offsets to every buffer, reusing memory by liveness";
  let description = [{
    Every device has its own arena, planned separately (replicas are copies, so the arenas
    have the same size). Persistent buffers (`plan.param`, `plan.bucket`, `plan.grad`,
    `plan.input`) are laid out first, one after the other; a gradient in a bucket takes its
    slot inside the bucket. Then, for each `plan.step` separately (steps never run concurrently, so
    their transient regions overlap), every `plan.alloc` lives from its first to its last use
    (uses through `plan.view`s count, a `plan.output` keeps a buffer live to the end of the
    step) and is placed at the lowest offset that no simultaneously live buffer occupies,
    largest first. All offsets are multiples of 64 bytes. The program gets `arena_bytes` and
    `persistent_bytes`, each step its `peak_bytes` (its transient high-water mark).
  }];
}

#endif // DP_PLAN_PASSES
