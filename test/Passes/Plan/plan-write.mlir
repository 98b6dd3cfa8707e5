// REQUIRES: dprun
// RUN: rm -f %t.dpx
// RUN: dp-opt %s -plan-memory -plan-write=output=%t.dpx | FileCheck %s --check-prefix=IR
// RUN: not dprun %t.dpx --inspect 2>&1 | FileCheck %s

// Tests that plan-write leaves the IR as it is and writes a plan that dprun reads and verifies
// (its format, its kernels against the contract) up to the training interface, which this
// program lacks: --inspect accepts only what a run could train (checkRunnable).
// IR: plan.program "tiny"
// CHECK: dprun: error: {{.*}}.dpx: the plan has no samples input; dprun feeds one samples and one targets input
plan.program "tiny" attributes {batch = 4 : i64, device = "cuda"} {
  %w = plan.param "w" {init = #plan.init<kind = "ones">} : memref<3xf32>
  plan.step "train" {
    %y = plan.alloc : memref<3xf32>
    plan.kernel "activation" ins(%w : memref<3xf32>) outs(%y : memref<3xf32>) {activation = "relu"}
  }
  plan.step "eval" {
  }
}
