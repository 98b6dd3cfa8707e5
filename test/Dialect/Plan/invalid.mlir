// RUN: dp-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of dialect/Plan/IR/PlanOps.cpp and PlanDialect.cpp (#plan.init),
// then the generated (ODS) constraint failures that matter.

// Tests that a program needs a positive batch.
// expected-error @+1 {{'plan.program' op needs a positive batch, found 0}}
plan.program "m" attributes {batch = 0 : i64} {
}

// -----

// Tests that a program needs a batch (ODS).
// expected-error @+1 {{'plan.program' op requires attribute 'batch'}}
plan.program "m" {
}

// -----

// Tests that a view keeps the element count.
plan.program "m" attributes {batch = 1 : i64} {
  plan.step "s" {
    %0 = plan.alloc : memref<4x3xf32>
    // expected-error @+1 {{'plan.view' op cannot view 'memref<4x3xf32>' as 'memref<10xf32>'}}
    %1 = plan.view %0 : memref<4x3xf32> to memref<10xf32>
  }
}

// -----

// Tests that a kernel's number of inputs must be in its range (dense: 2 or 3).
plan.program "m" attributes {batch = 1 : i64} {
  %x = plan.input "x" : memref<8x4xf32>
  plan.step "s" {
    %0 = plan.alloc : memref<8x3xf32>
    // expected-error @+1 {{'plan.kernel' op kernel 'dense' takes 2 to 3 inputs, found 1}}
    plan.kernel "dense" ins(%x : memref<8x4xf32>) outs(%0 : memref<8x3xf32>)
  }
}

// -----

// Tests that a kernel's number of outputs must match (momentum_update writes param and velocity).
plan.program "m" attributes {batch = 1 : i64} {
  %w = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  %g = plan.grad "w" : memref<4xf32>
  plan.step "s" {
    // expected-error @+1 {{'plan.kernel' op kernel 'momentum_update' takes 2 outputs, found 1}}
    plan.kernel "momentum_update" ins(%g : memref<4xf32>) outs(%w : memref<4xf32>)
  }
}

// -----

// Tests that a kernel must be one the runtime knows.
plan.program "m" attributes {batch = 1 : i64} {
  plan.step "s" {
    %0 = plan.alloc : memref<4xf32>
    // expected-error @+1 {{'plan.kernel' op unknown kernel 'conv2d'}}
    plan.kernel "conv2d" ins(%0 : memref<4xf32>) outs(%0 : memref<4xf32>)
  }
}

// -----

// Tests that an initialiser kind must be known.
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{unknown initialiser kind 'xavier'}}
  %0 = plan.param "w" {init = #plan.init<kind = "xavier">} : memref<4xf32>
}

// -----

// Tests that Glorot initialisers need both fans.
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{initialiser 'glorot_uniform' needs positive fan_in and fan_out}}
  %0 = plan.param "w" {init = #plan.init<kind = "glorot_uniform", fan_in = 4>} : memref<4x3xf32>
}

// -----

// Tests that He initialisers need a fan_in.
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{initialiser 'he_normal' needs a positive fan_in}}
  %0 = plan.param "w" {init = #plan.init<kind = "he_normal", fan_out = 3>} : memref<4x3xf32>
}

// -----

// Tests that persistent buffers live in a program (ODS).
// expected-error @+1 {{'plan.param' op expects parent op 'plan.program'}}
%0 = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4xf32>

// -----

// Tests that transient buffers live in a step (ODS).
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'plan.alloc' op expects parent op 'plan.step'}}
  %0 = plan.alloc : memref<4xf32>
}

// -----

// Tests that kernels live in a step (ODS).
plan.program "m" attributes {batch = 1 : i64} {
  %0 = plan.input "x" : memref<4xf32>
  // expected-error @+1 {{'plan.kernel' op expects parent op 'plan.step'}}
  plan.kernel "copy" ins(%0 : memref<4xf32>) outs(%0 : memref<4xf32>)
}

// -----

// Tests that buffers hold f32 or i32 only (ODS).
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'plan.param' op result #0 must be 0D/1D/2D/3D/4D/5D/6D memref of 32-bit float or 32-bit signless integer values, but got 'memref<4xf64>'}}
  %0 = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4xf64>
}

// -----

// Tests that a parameter needs an initialiser (ODS).
plan.program "m" attributes {batch = 1 : i64} {
  // expected-error @+1 {{'plan.param' op requires attribute 'init'}}
  %0 = plan.param "w" : memref<4xf32>
}
