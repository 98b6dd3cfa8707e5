// RUN: rm -f %t.dpx
// RUN: dp-opt %s -split-input-file -plan-write=output=%t.dpx -verify-diagnostics
// RUN: not test -e %t.dpx
// RUN: not dp-opt %s -split-input-file -plan-write -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOOUT
// NOOUT: plan-write needs an output file (output=FILE)

// Tests that plan-write runs the runtime's own verifier on the bytes it built and writes
// nothing the runtime would refuse: here a parameter placed past the end of the arena.
// expected-error @+1 {{the runtime's verifier refuses the plan built from this program}}
plan.program "m" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64} {
  %w = plan.param "w" {init = #plan.init<kind = "zeros">, offset = 128 : i64} : memref<4xf32>
  plan.step "train" {
  }
  plan.step "eval" {
  }
}

// -----

// Tests that plan-write needs exactly one program to write.
// expected-error @+1 {{expected one plan.program to write, found 0}}
module {
}
