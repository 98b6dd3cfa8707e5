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

// Tests that plan-write needs a program to write.
// expected-error @+1 {{expected one plan.program to write, found none}}
module {
}

// -----

// Tests that plan-write writes one workers' program: two without a server index are two plans.
// expected-error @+1 {{expected one plan.program to write (and its servers'), found two without a server index}}
module {
  plan.program "a" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64} {
  }
  plan.program "b" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64} {
  }
}

// -----

// Tests that the workers' program and its servers' agree on the number of servers.
module {
  // expected-error @+1 {{the program names 2 server(s) but the module has 1 server program(s)}}
  plan.program "a" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64, servers = 2 : i64} {
  }
  plan.program "a" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64, server = 0 : i64} {
  }
}

// -----

// Tests that the servers are numbered from 0.
module {
  plan.program "a" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64, servers = 1 : i64} {
  }
  // expected-error @+1 {{is server 1; the server programs must be 0 to 0}}
  plan.program "a" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64, server = 1 : i64} {
  }
}

// -----

// Tests that a server's program needs its serve step.
module {
  plan.program "a" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64, servers = 1 : i64} {
  }
  // expected-error @+1 {{a server's plan needs a 'serve' step}}
  plan.program "a" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64, server = 0 : i64} {
  }
}
