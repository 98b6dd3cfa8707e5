// RUN: dp-opt %s -split-input-file -dp-compile -verify-diagnostics | FileCheck %s
// RUN: dp-opt %s -split-input-file -dp-compile=lr-scale=4 -verify-diagnostics | FileCheck %s --check-prefix=SCALE
// RUN: dp-opt %models/mnist_mlp.mlir -dp-compile | FileCheck %s --check-prefix=MNIST

// Tests that the whole pipeline (verify, derive steps, autodiff, optimizer, lowering, memory)
// turns a one-layer model into a planned program with both steps and no graph dialect left.
//
// Persistent: x 128 B @0, label 64 @128, w 64 @192, b 64 @256, grad w @320, grad b @384: 448.
// Train transients (a 128 B buffer per [8, 3] tensor, 64 B per scalar), positions in the step:
//   y [0, 11] @0, loss [2, 17] @384 and correct [4, 17] @448 (outputs), one [6, 9] @256,
//   dy [8, 11] @128, dz [10, 13] @256 (one is dead): peak 512.
// Eval: y @0, loss @128, correct @192: peak 256. Arena 448 + 512 = 960.
// CHECK-NOT: func.func
// CHECK-NOT: graph.
// CHECK-LABEL: plan.program "tiny" attributes {arena_bytes = 960 : i64, batch = 8 : i64, persistent_bytes = 448 : i64} {
// CHECK-NEXT: %[[X:.*]] = plan.input "x" as samples {offset = 0 : i64} : memref<8x4xf32>
// CHECK-NEXT: %[[L:.*]] = plan.input "label" as targets {offset = 128 : i64} : memref<8xi32>
// CHECK-NEXT: %[[W:.*]] = plan.param "w" {init = #plan.init<kind = "glorot_uniform", fan_in = 4, fan_out = 3>, offset = 192 : i64} : memref<4x3xf32>
// CHECK-NEXT: %[[B:.*]] = plan.param "b" {init = #plan.init<kind = "zeros", fan_in = 3, fan_out = 3>, offset = 256 : i64} : memref<3xf32>
// CHECK-NEXT: %[[GW:.*]] = plan.grad "w" {offset = 320 : i64} : memref<4x3xf32>
// CHECK-NEXT: %[[GB:.*]] = plan.grad "b" {offset = 384 : i64} : memref<3xf32>
// CHECK-NEXT: plan.step "train" attributes {peak_bytes = 512 : i64} {
// CHECK-NEXT: %[[Y:.*]] = plan.alloc {offset = 448 : i64} : memref<8x3xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[X]], %[[W]], %[[B]] : memref<8x4xf32>, memref<4x3xf32>, memref<3xf32>) outs(%[[Y]] : memref<8x3xf32>) {activation = "sigmoid"}
// CHECK-NEXT: %[[LOSS:.*]] = plan.alloc {offset = 832 : i64} : memref<f32>
// CHECK-NEXT: plan.kernel "softmax_xent" ins(%[[Y]], %[[L]] : memref<8x3xf32>, memref<8xi32>) outs(%[[LOSS]] : memref<f32>)
// CHECK-NEXT: %[[C:.*]] = plan.alloc {offset = 896 : i64} : memref<f32>
// CHECK-NEXT: plan.kernel "count_correct" ins(%[[Y]], %[[L]] : memref<8x3xf32>, memref<8xi32>) outs(%[[C]] : memref<f32>)
// CHECK-NEXT: %[[ONE:.*]] = plan.alloc {offset = 704 : i64} : memref<f32>
// CHECK-NEXT: plan.kernel "fill" outs(%[[ONE]] : memref<f32>) {value = 1.000000e+00 : f64}
// CHECK-NEXT: %[[DY:.*]] = plan.alloc {offset = 576 : i64} : memref<8x3xf32>
// CHECK-NEXT: plan.kernel "softmax_xent_grad" ins(%[[Y]], %[[L]], %[[ONE]] : memref<8x3xf32>, memref<8xi32>, memref<f32>) outs(%[[DY]] : memref<8x3xf32>)
// CHECK-NEXT: %[[DZ:.*]] = plan.alloc {offset = 704 : i64} : memref<8x3xf32>
// CHECK-NEXT: plan.kernel "activation_grad" ins(%[[Y]], %[[DY]] : memref<8x3xf32>, memref<8x3xf32>) outs(%[[DZ]] : memref<8x3xf32>) {activation = "sigmoid"}
// CHECK-NEXT: plan.kernel "matmul" ins(%[[X]], %[[DZ]] : memref<8x4xf32>, memref<8x3xf32>) outs(%[[GW]] : memref<4x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "reduce_rows" ins(%[[DZ]] : memref<8x3xf32>) outs(%[[GB]] : memref<3xf32>)
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW]] : memref<4x3xf32>) outs(%[[W]] : memref<4x3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GB]] : memref<3xf32>) outs(%[[B]] : memref<3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.output "loss" as loss, %[[LOSS]] : memref<f32>
// CHECK-NEXT: plan.output "correct" as correct, %[[C]] : memref<f32>
// CHECK-NEXT: }
// CHECK-NEXT: plan.step "eval" attributes {peak_bytes = 256 : i64} {
// CHECK-NEXT: %[[Y:.*]] = plan.alloc {offset = 448 : i64} : memref<8x3xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[X]], %[[W]], %[[B]] : memref<8x4xf32>, memref<4x3xf32>, memref<3xf32>) outs(%[[Y]] : memref<8x3xf32>) {activation = "sigmoid"}
// CHECK-NEXT: %[[LOSS:.*]] = plan.alloc {offset = 576 : i64} : memref<f32>
// CHECK-NEXT: plan.kernel "softmax_xent" ins(%[[Y]], %[[L]] : memref<8x3xf32>, memref<8xi32>) outs(%[[LOSS]] : memref<f32>)
// CHECK-NEXT: %[[C:.*]] = plan.alloc {offset = 640 : i64} : memref<f32>
// CHECK-NEXT: plan.kernel "count_correct" ins(%[[Y]], %[[L]] : memref<8x3xf32>, memref<8xi32>) outs(%[[C]] : memref<f32>)
// CHECK-NEXT: plan.output "loss" as loss, %[[LOSS]] : memref<f32>
// CHECK-NEXT: plan.output "correct" as correct, %[[C]] : memref<f32>
// CHECK-NEXT: plan.output "logits" as logits, %[[Y]] : memref<8x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// SCALE-LABEL: plan.program "tiny"
// SCALE: plan.kernel "sgd_update" {{.*}} {lr = 4.000000e-01 : f64}
// SCALE-NEXT: plan.kernel "sgd_update" {{.*}} {lr = 4.000000e-01 : f64}
func.func @tiny(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %b = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %x, %w, %b {activation = #graph.act<sigmoid>} : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the pipeline starts by verifying the model (no plan comes out of an invalid one).
// expected-error @+1 {{model 'bad' needs an optimizer}}
func.func @bad(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32> {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// Tests that the shipped MNIST MLP compiles: its 79,510 parameters, their gradients and the
// 100-image batch are persistent; the train step's peak holds the activations and their gradients.
// MNIST-LABEL: plan.program "mnist_mlp" attributes {arena_bytes = 1070464 : i64, batch = 100 : i64, persistent_bytes = 950336 : i64} {
// MNIST-NEXT: plan.input "image" as samples {offset = 0 : i64} : memref<100x784xf32>
// MNIST-NEXT: plan.input "label" as targets {offset = 313600 : i64} : memref<100xi32>
// MNIST-NEXT: plan.param "dense1.kernel" {init = #plan.init<kind = "glorot_uniform", fan_in = 784, fan_out = 100>, offset = 314048 : i64} : memref<784x100xf32>
// MNIST: plan.step "train" attributes {peak_bytes = 120128 : i64} {
// MNIST-COUNT-4: plan.kernel "sgd_update"
// MNIST: plan.step "eval" attributes {peak_bytes = 44032 : i64} {
// MNIST-NOT: _update
// MNIST: plan.output "correct"
