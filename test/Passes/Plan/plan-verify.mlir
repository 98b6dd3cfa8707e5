// RUN: dp-opt %s -split-input-file -plan-verify -verify-diagnostics | FileCheck %s

// Tests that plan-verify, the end of the plan phase, runs the runtime's verifier on the image
// plan-write would write, without an output file, and leaves a valid program as it is.

// CHECK: plan.program "tiny"
// CHECK: plan.kernel "fill"
plan.program "tiny" attributes {arena_bytes = 64 : i64, batch = 4 : i64, persistent_bytes = 64 : i64} {
  %w = plan.param "w" {init = #plan.init<kind = "ones">, offset = 0 : i64} : memref<3xf32>
  plan.step "train" {
    plan.kernel "fill" outs(%w : memref<3xf32>) {value = 0.0 : f64}
  }
  plan.step "eval" {
  }
}

// -----

// Tests that a program the runtime would refuse fails the phase, with no output asked for:
// here a parameter placed past the end of the arena.
// expected-error @+1 {{the runtime's verifier refuses the plan built from this program}}
plan.program "m" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64} {
  %w = plan.param "w" {init = #plan.init<kind = "zeros">, offset = 128 : i64} : memref<4xf32>
  plan.step "train" {
  }
  plan.step "eval" {
  }
}

// -----

// Tests that the phase needs a program.
// expected-error @+1 {{expected one plan.program to write, found none}}
module {
}
