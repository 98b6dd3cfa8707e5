// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of every plan op and of #plan.init.

// Tests that a program with its persistent buffers (inputs, parameters with each kind of
// initialiser, optimizer state, gradients), with and without offsets, and its steps with allocs,
// views, kernels (with and without inputs, with several outputs, with attributes) and outputs
// round-trips.
// CHECK-LABEL: plan.program "m" attributes {batch = 8 : i64} {
plan.program "m" attributes {batch = 8 : i64} {
  // CHECK: %[[X:.*]] = plan.input "x" as samples : memref<8x4xf32>
  %x = plan.input "x" as samples : memref<8x4xf32>
  // CHECK: %[[L:.*]] = plan.input "label" as targets {offset = 128 : i64} : memref<8xi32>
  %l = plan.input "label" as targets {offset = 128 : i64} : memref<8xi32>
  // CHECK: %[[W:.*]] = plan.param "w" {init = #plan.init<kind = "glorot_uniform", fan_in = 4, fan_out = 3>} : memref<4x3xf32>
  %w = plan.param "w" {init = #plan.init<kind = "glorot_uniform", fan_in = 4, fan_out = 3>} : memref<4x3xf32>
  // CHECK: plan.param "d" {init = #plan.init<kind = "data", data = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>>} : memref<2xf32>
  %d = plan.param "d" {init = #plan.init<kind = "data", data = dense<[1.0, 2.0]> : tensor<2xf32>>} : memref<2xf32>
  // CHECK: %[[B:.*]] = plan.param "b" {init = #plan.init<kind = "zeros">, offset = 64 : i64} : memref<3xf32>
  %b = plan.param "b" {init = #plan.init<kind = "zeros">, offset = 64 : i64} : memref<3xf32>
  // CHECK: plan.param "ones" {init = #plan.init<kind = "ones">} : memref<3xf32>
  %o = plan.param "ones" {init = #plan.init<kind = "ones">} : memref<3xf32>
  // A broadcast's bucket and the weights in it.
  // CHECK: %[[BB:.*]] = plan.bucket 7 : memref<32xf32>
  // CHECK: plan.param "u" in %[[BB]] : memref<32xf32> {bucket_offset = 16 : i64, init = #plan.init<kind = "zeros">} : memref<3xf32>
  %bb = plan.bucket 7 : memref<32xf32>
  %bu = plan.param "u" in %bb : memref<32xf32> {bucket_offset = 16 : i64, init = #plan.init<kind = "zeros">} : memref<3xf32>
  // CHECK: plan.param "c" {init = #plan.init<kind = "constant", a = 5.000000e-01>} : memref<3xf32>
  %c = plan.param "c" {init = #plan.init<kind = "constant", a = 0.5>} : memref<3xf32>
  // CHECK: plan.param "u" {init = #plan.init<kind = "uniform", a = -1.000000e+00, b = 1.000000e+00>} : memref<3xf32>
  %u = plan.param "u" {init = #plan.init<kind = "uniform", a = -1.0, b = 1.0>} : memref<3xf32>
  // Default values (a = 0) are not printed.
  // CHECK: plan.param "n" {init = #plan.init<kind = "normal", b = 2.000000e+00>} : memref<3xf32>
  %n = plan.param "n" {init = #plan.init<kind = "normal", a = 0.0, b = 2.0>} : memref<3xf32>
  // CHECK: plan.param "gn" {init = #plan.init<kind = "glorot_normal", fan_in = 4, fan_out = 3>} : memref<4x3xf32>
  %gn = plan.param "gn" {init = #plan.init<kind = "glorot_normal", fan_in = 4, fan_out = 3>} : memref<4x3xf32>
  // CHECK: plan.param "hn" {init = #plan.init<kind = "he_normal", fan_in = 4>} : memref<4x3xf32>
  %hn = plan.param "hn" {init = #plan.init<kind = "he_normal", fan_in = 4>} : memref<4x3xf32>
  // CHECK: plan.param "hu" {init = #plan.init<kind = "he_uniform", fan_in = 4, fan_out = 3>} : memref<4x3xf32>
  %hu = plan.param "hu" {init = #plan.init<kind = "he_uniform", fan_in = 4, fan_out = 3>} : memref<4x3xf32>
  // CHECK: %[[V:.*]] = plan.param "w/velocity" {init = #plan.init<kind = "zeros">, optimizer_state} : memref<4x3xf32>
  %v = plan.param "w/velocity" {init = #plan.init<kind = "zeros">, optimizer_state} : memref<4x3xf32>
  // CHECK: %[[GW:.*]] = plan.grad "w" : memref<4x3xf32>
  %gw = plan.grad "w" : memref<4x3xf32>
  // CHECK: %[[GB:.*]] = plan.grad "b" {offset = 0 : i64} : memref<3xf32>
  %gb = plan.grad "b" {offset = 0 : i64} : memref<3xf32>
  // CHECK: plan.step "train" {
  plan.step "train" {
    // CHECK: %[[H:.*]] = plan.alloc : memref<8x3xf32>
    %h = plan.alloc : memref<8x3xf32>
    // CHECK: plan.kernel "dense" ins(%[[X]], %[[W]], %[[B]] : memref<8x4xf32>, memref<4x3xf32>, memref<3xf32>) outs(%[[H]] : memref<8x3xf32>) {activation = "sigmoid"}
    plan.kernel "dense" ins(%x, %w, %b : memref<8x4xf32>, memref<4x3xf32>, memref<3xf32>) outs(%h : memref<8x3xf32>) {activation = "sigmoid"}
    // CHECK: %[[ONE:.*]] = plan.alloc {offset = 0 : i64} : memref<f32>
    %one = plan.alloc {offset = 0 : i64} : memref<f32>
    // CHECK: plan.kernel "fill" outs(%[[ONE]] : memref<f32>) {value = 1.000000e+00 : f64}
    plan.kernel "fill" outs(%one : memref<f32>) {value = 1.0 : f64}
    // CHECK: %[[FLAT:.*]] = plan.view %[[H]] : memref<8x3xf32> to memref<24xf32>
    %flat = plan.view %h : memref<8x3xf32> to memref<24xf32>
    // CHECK: plan.kernel "copy" ins(%[[FLAT]] : memref<24xf32>) outs(%[[H]] : memref<8x3xf32>)
    plan.kernel "copy" ins(%flat : memref<24xf32>) outs(%h : memref<8x3xf32>)
    // CHECK: plan.kernel "count_correct" ins(%[[H]], %[[L]] : memref<8x3xf32>, memref<8xi32>) outs(%[[ONE]] : memref<f32>)
    plan.kernel "count_correct" ins(%h, %l : memref<8x3xf32>, memref<8xi32>) outs(%one : memref<f32>)
    // CHECK: plan.kernel "sgd_update" ins(%[[GB]] : memref<3xf32>) outs(%[[B]] : memref<3xf32>) {lr = 1.000000e-01 : f64}
    plan.kernel "sgd_update" ins(%gb : memref<3xf32>) outs(%b : memref<3xf32>) {lr = 0.1 : f64}
    // CHECK: plan.kernel "momentum_update" ins(%[[GW]] : memref<4x3xf32>) outs(%[[W]], %[[V]] : memref<4x3xf32>, memref<4x3xf32>) {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = 1 : i64}
    plan.kernel "momentum_update" ins(%gw : memref<4x3xf32>) outs(%w, %v : memref<4x3xf32>, memref<4x3xf32>) {lr = 0.1 : f64, momentum = 0.9 : f64, nesterov = 1 : i64}
    // CHECK: plan.output "correct" as correct, %[[ONE]] : memref<f32>
    plan.output "correct" as correct, %one : memref<f32>
  }
  // CHECK: plan.step "eval" attributes {peak_bytes = 0 : i64} {
  // CHECK-NEXT: }
  plan.step "eval" attributes {peak_bytes = 0 : i64} {
  }
}

// Tests that a program's attributes other than batch round-trip too.
// CHECK-LABEL: plan.program "empty" attributes {arena_bytes = 0 : i64, batch = 1 : i64, persistent_bytes = 0 : i64} {
// CHECK-NEXT: }
plan.program "empty" attributes {batch = 1 : i64, arena_bytes = 0 : i64, persistent_bytes = 0 : i64} {
}

// Tests that a data-parallel program round-trips: its mesh (devices_per_process, processes),
// per-device persistent buffers (device 0's `device` is the default and not printed), gradient
// buckets with the gradients inside them at their bucket_offset, per-device transients, and
// the collective kernels whose input d is device d's copy of a bucket.
// CHECK-LABEL: plan.program "dp" attributes {batch = 8 : i64, devices_per_process = 2 : i64, processes = 3 : i64} {
// CHECK-NEXT: %[[X0:.*]] = plan.input "x" as samples : memref<2x4xf32>
// CHECK-NEXT: %[[X1:.*]] = plan.input "x" as samples {device = 1 : i64, offset = 0 : i64} : memref<2x4xf32>
// CHECK-NEXT: %[[W0:.*]] = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4x3xf32>
// CHECK-NEXT: %[[W1:.*]] = plan.param "w" {device = 1 : i64, init = #plan.init<kind = "zeros">} : memref<4x3xf32>
// CHECK-NEXT: %[[K0:.*]] = plan.bucket 0 : memref<32xf32>
// CHECK-NEXT: %[[GW0:.*]] = plan.grad "w" in %[[K0]] : memref<32xf32> {bucket_offset = 0 : i64} : memref<4x3xf32>
// CHECK-NEXT: %[[GB0:.*]] = plan.grad "b" in %[[K0]] : memref<32xf32> {bucket_offset = 16 : i64, offset = 64 : i64} : memref<3xf32>
// CHECK-NEXT: %[[K1:.*]] = plan.bucket 0 {device = 1 : i64, offset = 0 : i64} : memref<32xf32>
// CHECK-NEXT: %[[GW1:.*]] = plan.grad "w" in %[[K1]] : memref<32xf32> {bucket_offset = 0 : i64, device = 1 : i64} : memref<4x3xf32>
// CHECK-NEXT: %[[GV:.*]] = plan.grad "v" {device = 1 : i64} : memref<3xf32>
// CHECK-NEXT: plan.step "train" {
// CHECK-NEXT: %[[H0:.*]] = plan.alloc : memref<2x3xf32>
// CHECK-NEXT: %[[H1:.*]] = plan.alloc {device = 1 : i64, offset = 128 : i64} : memref<2x3xf32>
// CHECK-NEXT: plan.kernel "matmul" ins(%[[X0]], %[[H0]] : memref<2x4xf32>, memref<2x3xf32>) outs(%[[GW0]] : memref<4x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "matmul" ins(%[[X1]], %[[H1]] : memref<2x4xf32>, memref<2x3xf32>) outs(%[[GW1]] : memref<4x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "allreduce_start" ins(%[[K0]], %[[K1]] : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
// CHECK-NEXT: %[[V1:.*]] = plan.view %[[H1]] : memref<2x3xf32> to memref<6xf32>
// CHECK-NEXT: plan.kernel "allreduce_wait" ins(%[[K0]], %[[K1]] : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW0]] : memref<4x3xf32>) outs(%[[W0]] : memref<4x3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW1]] : memref<4x3xf32>) outs(%[[W1]] : memref<4x3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.output "h" as loss, %[[V1]] : memref<6xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
plan.program "dp" attributes {batch = 8 : i64, devices_per_process = 2 : i64, processes = 3 : i64} {
  %x0 = plan.input "x" as samples {device = 0 : i64} : memref<2x4xf32>
  %x1 = plan.input "x" as samples {device = 1 : i64, offset = 0 : i64} : memref<2x4xf32>
  %w0 = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4x3xf32>
  %w1 = plan.param "w" {init = #plan.init<kind = "zeros">, device = 1 : i64} : memref<4x3xf32>
  %k0 = plan.bucket 0 : memref<32xf32>
  %gw0 = plan.grad "w" in %k0 : memref<32xf32> {bucket_offset = 0 : i64} : memref<4x3xf32>
  %gb0 = plan.grad "b" in %k0 : memref<32xf32> {bucket_offset = 16 : i64, offset = 64 : i64} : memref<3xf32>
  %k1 = plan.bucket 0 {device = 1 : i64, offset = 0 : i64} : memref<32xf32>
  %gw1 = plan.grad "w" in %k1 : memref<32xf32> {bucket_offset = 0 : i64, device = 1 : i64} : memref<4x3xf32>
  %gv = plan.grad "v" {device = 1 : i64} : memref<3xf32>
  plan.step "train" {
    %h0 = plan.alloc : memref<2x3xf32>
    %h1 = plan.alloc {device = 1 : i64, offset = 128 : i64} : memref<2x3xf32>
    plan.kernel "matmul" ins(%x0, %h0 : memref<2x4xf32>, memref<2x3xf32>) outs(%gw0 : memref<4x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
    plan.kernel "matmul" ins(%x1, %h1 : memref<2x4xf32>, memref<2x3xf32>) outs(%gw1 : memref<4x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
    plan.kernel "allreduce_start" ins(%k0, %k1 : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
    %v1 = plan.view %h1 : memref<2x3xf32> to memref<6xf32>
    plan.kernel "allreduce_wait" ins(%k0, %k1 : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
    plan.kernel "sgd_update" ins(%gw0 : memref<4x3xf32>) outs(%w0 : memref<4x3xf32>) {lr = 0.1 : f64}
    plan.kernel "sgd_update" ins(%gw1 : memref<4x3xf32>) outs(%w1 : memref<4x3xf32>) {lr = 0.1 : f64}
    plan.output "h" as loss, %v1 : memref<6xf32>
  }
}

// Tests that a one-device program of several processes keeps its mesh and that its
// collectives take device 0's bucket alone.
// CHECK-LABEL: plan.program "multi" attributes {batch = 8 : i64, processes = 4 : i64} {
// CHECK-NEXT: %[[K:.*]] = plan.bucket 3 {offset = 0 : i64} : memref<16xf32>
// CHECK-NEXT: plan.step "train" {
// CHECK-NEXT: plan.kernel "allreduce_start" ins(%[[K]] : memref<16xf32>) {bucket = 3 : i64}
// CHECK-NEXT: plan.kernel "allreduce_wait" ins(%[[K]] : memref<16xf32>) {bucket = 3 : i64}
// CHECK-NEXT: }
// CHECK-NEXT: }
plan.program "multi" attributes {batch = 8 : i64, devices_per_process = 1 : i64, processes = 4 : i64} {
  %k = plan.bucket 3 {offset = 0 : i64} : memref<16xf32>
  plan.step "train" {
    plan.kernel "allreduce_start" ins(%k : memref<16xf32>) {bucket = 3 : i64}
    plan.kernel "allreduce_wait" ins(%k : memref<16xf32>) {bucket = 3 : i64}
  }
}

// Tests that a program with gradient accumulation round-trips: its accumulation, an accumulate
// kernel, and a kernel marked final.
// CHECK-LABEL: plan.program "acc" attributes {accumulation = 4 : i64, batch = 8 : i64} {
plan.program "acc" attributes {accumulation = 4 : i64, batch = 8 : i64} {
  %w = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<2xf32>
  %g = plan.grad "w" : memref<2xf32>
  plan.step "train" {
    %x = plan.alloc : memref<2xf32>
    // CHECK: plan.kernel "accumulate" ins(%{{.*}} : memref<2xf32>) outs(%{{.*}} : memref<2xf32>) {count = 4 : i64}
    plan.kernel "accumulate" ins(%x : memref<2xf32>) outs(%g : memref<2xf32>) {count = 4 : i64}
    // CHECK: plan.kernel "sgd_update" ins(%{{.*}} : memref<2xf32>) outs(%{{.*}} : memref<2xf32>) {final, lr = 1.000000e-01 : f64}
    plan.kernel "sgd_update" ins(%g : memref<2xf32>) outs(%w : memref<2xf32>) {final, lr = 1.0e-01 : f64}
  }
}
