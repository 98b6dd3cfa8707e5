// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of every plan op and of #plan.init.

// Tests that a program with its persistent buffers (inputs, parameters with each kind of
// initialiser, optimizer state, gradients), with and without offsets, and its steps with allocs,
// views, kernels (with and without inputs, with several outputs, with attributes) and outputs
// round-trips.
// CHECK-LABEL: plan.program "m" attributes {batch = 8 : i64} {
plan.program "m" attributes {batch = 8 : i64} {
  // CHECK: %[[X:.*]] = plan.input "x" : memref<8x4xf32>
  %x = plan.input "x" : memref<8x4xf32>
  // CHECK: %[[L:.*]] = plan.input "label" {offset = 128 : i64} : memref<8xi32>
  %l = plan.input "label" {offset = 128 : i64} : memref<8xi32>
  // CHECK: %[[W:.*]] = plan.param "w" {init = #plan.init<kind = "glorot_uniform", fan_in = 4, fan_out = 3>} : memref<4x3xf32>
  %w = plan.param "w" {init = #plan.init<kind = "glorot_uniform", fan_in = 4, fan_out = 3>} : memref<4x3xf32>
  // CHECK: %[[B:.*]] = plan.param "b" {init = #plan.init<kind = "zeros">, offset = 64 : i64} : memref<3xf32>
  %b = plan.param "b" {init = #plan.init<kind = "zeros">, offset = 64 : i64} : memref<3xf32>
  // CHECK: plan.param "ones" {init = #plan.init<kind = "ones">} : memref<3xf32>
  %o = plan.param "ones" {init = #plan.init<kind = "ones">} : memref<3xf32>
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
    // CHECK: plan.output "correct", %[[ONE]] : memref<f32>
    plan.output "correct", %one : memref<f32>
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
