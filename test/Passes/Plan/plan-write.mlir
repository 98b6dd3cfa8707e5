// REQUIRES: dprun
// RUN: rm -f %t.dpx
// RUN: dp-opt %s -plan-memory -plan-write=output=%t.dpx | FileCheck %s --check-prefix=IR
// RUN: dprun %t.dpx --inspect | FileCheck %s

// Tests that plan-write leaves the IR as it is and writes a plan that dprun loads: the
// program's model, batch, device kind and kernels are in the file.
// IR: plan.program "tiny"
// CHECK: model: tiny
// CHECK: batch: 4
// CHECK: device: cuda
plan.program "tiny" attributes {batch = 4 : i64, device = "cuda"} {
  %w = plan.param "w" {init = #plan.init<kind = "ones">} : memref<3xf32>
  plan.step "train" {
    %y = plan.alloc : memref<3xf32>
    plan.kernel "activation" ins(%w : memref<3xf32>) outs(%y : memref<3xf32>) {activation = "relu"}
  }
  plan.step "eval" {
  }
}
