// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s

// Tests that a model with momentum, flatten and a reshaped parameter lowers to one program
// with the train step's batch; inputs, then parameters (with their optimizer state) in order of
// declaration, with initialisers and Keras fans ([in, out] for matrices, times the receptive
// field for higher ranks, (n, n) for vectors, (1, 1) for scalars); one plan.grad per updated
// parameter, before the steps; in each step, a kernel writing a fresh plan.alloc per op,
// gradients written straight into their plan.grad buffers, reshapes and flattens as plan.views
// (no data moves; a gradient that is a view is copied into its buffer), updates in place, and a
// plan.output per result. The graph functions are gone.
// CHECK-NOT: func.func
// CHECK-LABEL: plan.program "conv" attributes {batch = 8 : i64} {
// CHECK-NEXT: %[[IMG:.*]] = plan.input "image" as samples : memref<8x2x2xf32>
// CHECK-NEXT: %[[L:.*]] = plan.input "label" as targets : memref<8xi32>
// CHECK-NEXT: %[[K:.*]] = plan.param "k" {init = #plan.init<kind = "he_uniform", fan_in = 16, fan_out = 12>} : memref<2x2x4x3xf32>
// CHECK-NEXT: %[[KV:.*]] = plan.param "k/velocity" {init = #plan.init<kind = "zeros", fan_in = 16, fan_out = 12>, optimizer_state} : memref<2x2x4x3xf32>
// CHECK-NEXT: %[[W1:.*]] = plan.param "dense1.kernel" {init = #plan.init<kind = "glorot_normal", fan_in = 4, fan_out = 16>} : memref<4x16xf32>
// CHECK-NEXT: %[[W1V:.*]] = plan.param "dense1.kernel/velocity" {init = #plan.init<kind = "zeros", fan_in = 4, fan_out = 16>, optimizer_state} : memref<4x16xf32>
// CHECK-NEXT: %[[B1:.*]] = plan.param "dense1.bias" {init = #plan.init<kind = "constant", a = 1.000000e-01, fan_in = 16, fan_out = 16>} : memref<16xf32>
// CHECK-NEXT: %[[B1V:.*]] = plan.param "dense1.bias/velocity" {init = #plan.init<kind = "zeros", fan_in = 16, fan_out = 16>, optimizer_state} : memref<16xf32>
// CHECK-NEXT: plan.param "s" {init = #plan.init<kind = "uniform", a = -1.000000e+00, b = 1.000000e+00, fan_in = 1, fan_out = 1>} : memref<f32>
// CHECK-NEXT: %[[GW1:.*]] = plan.grad "dense1.kernel" : memref<4x16xf32>
// CHECK-NEXT: %[[GB1:.*]] = plan.grad "dense1.bias" : memref<16xf32>
// CHECK-NEXT: %[[GK:.*]] = plan.grad "k" : memref<2x2x4x3xf32>
// CHECK-NEXT: plan.step "train" {
// CHECK-NEXT: %[[F:.*]] = plan.view %[[IMG]] : memref<8x2x2xf32> to memref<8x4xf32>
// CHECK-NEXT: %[[W2:.*]] = plan.view %[[K]] : memref<2x2x4x3xf32> to memref<16x3xf32>
// CHECK-NEXT: %[[H:.*]] = plan.alloc : memref<8x16xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[F]], %[[W1]], %[[B1]] : memref<8x4xf32>, memref<4x16xf32>, memref<16xf32>) outs(%[[H]] : memref<8x16xf32>) {activation = "relu"}
// CHECK-NEXT: %[[Y:.*]] = plan.alloc : memref<8x3xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[H]], %[[W2]] : memref<8x16xf32>, memref<16x3xf32>) outs(%[[Y]] : memref<8x3xf32>) {activation = "none"}
// CHECK-NEXT: %[[T:.*]] = plan.alloc : memref<8x3xf32>
// CHECK-NEXT: plan.kernel "activation" ins(%[[Y]] : memref<8x3xf32>) outs(%[[T]] : memref<8x3xf32>) {activation = "tanh"}
// CHECK-NEXT: %[[LOSS:.*]] = plan.alloc : memref<f32>
// CHECK-NEXT: plan.kernel "softmax_xent" ins(%[[T]], %[[L]] : memref<8x3xf32>, memref<8xi32>) outs(%[[LOSS]] : memref<f32>)
// CHECK-NEXT: %[[C:.*]] = plan.alloc : memref<f32>
// CHECK-NEXT: plan.kernel "count_correct" ins(%[[T]], %[[L]] : memref<8x3xf32>, memref<8xi32>) outs(%[[C]] : memref<f32>)
// CHECK-NEXT: %[[ONE:.*]] = plan.alloc : memref<f32>
// CHECK-NEXT: plan.kernel "fill" outs(%[[ONE]] : memref<f32>) {value = 1.000000e+00 : f64}
// CHECK-NEXT: %[[DT:.*]] = plan.alloc : memref<8x3xf32>
// CHECK-NEXT: plan.kernel "softmax_xent_grad" ins(%[[T]], %[[L]], %[[ONE]] : memref<8x3xf32>, memref<8xi32>, memref<f32>) outs(%[[DT]] : memref<8x3xf32>)
// CHECK-NEXT: %[[DY:.*]] = plan.alloc : memref<8x3xf32>
// CHECK-NEXT: plan.kernel "activation_grad" ins(%[[T]], %[[DT]] : memref<8x3xf32>, memref<8x3xf32>) outs(%[[DY]] : memref<8x3xf32>) {activation = "tanh"}
// CHECK-NEXT: %[[DH:.*]] = plan.alloc : memref<8x16xf32>
// CHECK-NEXT: plan.kernel "matmul" ins(%[[DY]], %[[W2]] : memref<8x3xf32>, memref<16x3xf32>) outs(%[[DH]] : memref<8x16xf32>) {transpose_a = 0 : i64, transpose_b = 1 : i64}
// CHECK-NEXT: %[[DW2:.*]] = plan.alloc : memref<16x3xf32>
// CHECK-NEXT: plan.kernel "matmul" ins(%[[H]], %[[DY]] : memref<8x16xf32>, memref<8x3xf32>) outs(%[[DW2]] : memref<16x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: %[[DZ:.*]] = plan.alloc : memref<8x16xf32>
// CHECK-NEXT: plan.kernel "activation_grad" ins(%[[H]], %[[DH]] : memref<8x16xf32>, memref<8x16xf32>) outs(%[[DZ]] : memref<8x16xf32>) {activation = "relu"}
// CHECK-NEXT: plan.kernel "matmul" ins(%[[F]], %[[DZ]] : memref<8x4xf32>, memref<8x16xf32>) outs(%[[GW1]] : memref<4x16xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "reduce_rows" ins(%[[DZ]] : memref<8x16xf32>) outs(%[[GB1]] : memref<16xf32>)
// CHECK-NEXT: plan.kernel "momentum_update" ins(%[[GW1]] : memref<4x16xf32>) outs(%[[W1]], %[[W1V]] : memref<4x16xf32>, memref<4x16xf32>) {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64, nesterov = 1 : i64}
// CHECK-NEXT: plan.kernel "momentum_update" ins(%[[GB1]] : memref<16xf32>) outs(%[[B1]], %[[B1V]] : memref<16xf32>, memref<16xf32>) {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64, nesterov = 1 : i64}
// CHECK-NEXT: %[[DK:.*]] = plan.view %[[DW2]] : memref<16x3xf32> to memref<2x2x4x3xf32>
// CHECK-NEXT: plan.kernel "copy" ins(%[[DK]] : memref<2x2x4x3xf32>) outs(%[[GK]] : memref<2x2x4x3xf32>)
// CHECK-NEXT: plan.kernel "momentum_update" ins(%[[GK]] : memref<2x2x4x3xf32>) outs(%[[K]], %[[KV]] : memref<2x2x4x3xf32>, memref<2x2x4x3xf32>) {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64, nesterov = 1 : i64}
// CHECK-NEXT: plan.output "loss" as loss, %[[LOSS]] : memref<f32>
// CHECK-NEXT: plan.output "correct" as correct, %[[C]] : memref<f32>
// CHECK-NEXT: }
// CHECK-NEXT: plan.step "eval" {
// CHECK-NEXT: %[[F:.*]] = plan.view %[[IMG]] : memref<8x2x2xf32> to memref<8x4xf32>
// CHECK-NEXT: %[[W2:.*]] = plan.view %[[K]] : memref<2x2x4x3xf32> to memref<16x3xf32>
// CHECK-NEXT: %[[H:.*]] = plan.alloc : memref<8x16xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[F]], %[[W1]], %[[B1]] : {{.*}}) outs(%[[H]] : memref<8x16xf32>) {activation = "relu"}
// CHECK-NEXT: %[[Y:.*]] = plan.alloc : memref<8x3xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[H]], %[[W2]] : {{.*}}) outs(%[[Y]] : memref<8x3xf32>) {activation = "none"}
// CHECK-NEXT: %[[T:.*]] = plan.alloc : memref<8x3xf32>
// CHECK-NEXT: plan.kernel "activation" ins(%[[Y]] : memref<8x3xf32>) outs(%[[T]] : memref<8x3xf32>) {activation = "tanh"}
// CHECK-NEXT: %[[LOSS:.*]] = plan.alloc : memref<f32>
// CHECK-NEXT: plan.kernel "softmax_xent" ins(%[[T]], %[[L]] : memref<8x3xf32>, memref<8xi32>) outs(%[[LOSS]] : memref<f32>)
// CHECK-NEXT: %[[C:.*]] = plan.alloc : memref<f32>
// CHECK-NEXT: plan.kernel "count_correct" ins(%[[T]], %[[L]] : memref<8x3xf32>, memref<8xi32>) outs(%[[C]] : memref<f32>)
// CHECK-NEXT: plan.output "loss" as loss, %[[LOSS]] : memref<f32>
// CHECK-NEXT: plan.output "correct" as correct, %[[C]] : memref<f32>
// CHECK-NEXT: plan.output "logits" as logits, %[[T]] : memref<8x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: func.func
func.func @conv(%img: tensor<8x2x2xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.momentum<nesterov = true>} {
  %f = graph.flatten %img : tensor<8x2x2xf32> -> tensor<8x4xf32>
  %k = graph.param "k" {init = #graph.he_uniform} : tensor<2x2x4x3xf32>
  %w = graph.reshape %k : tensor<2x2x4x3xf32> -> tensor<16x3xf32>
  %w1 = graph.param "dense1.kernel" {init = #graph.glorot_normal} : tensor<4x16xf32>
  %b1 = graph.param "dense1.bias" {init = #graph.constant<0.1>} : tensor<16xf32>
  %h = graph.dense %f, %w1, %b1 {activation = #graph.act<relu>} : (tensor<8x4xf32>, tensor<4x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %y = graph.dense %h, %w : (tensor<8x16xf32>, tensor<16x3xf32>) -> tensor<8x3xf32>
  %t = graph.tanh %y : tensor<8x3xf32>
  %s = graph.param "s" {init = #graph.uniform<low = -1.0, high = 1.0>, trainable = false} : tensor<f32>
  %loss = graph.softmax_cross_entropy %t, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that Adam lowers to adam_update with three outputs (the parameter and its moments), the
// gradient sum of a shared parameter to an add kernel writing the plan.grad buffer, the other
// activations to their kernels, and that a parameter of both steps is declared once.
// CHECK-LABEL: plan.program "shared" attributes {batch = 8 : i64} {
// CHECK: %[[W:.*]] = plan.param "w" {init = #plan.init<kind = "normal", b = 5.000000e-01, fan_in = 4, fan_out = 4>} : memref<4x4xf32>
// CHECK-DAG: %[[M:.*]] = plan.param "w/m" {init = #plan.init<kind = "zeros", fan_in = 4, fan_out = 4>, optimizer_state} : memref<4x4xf32>
// CHECK-DAG: %[[V:.*]] = plan.param "w/v" {init = #plan.init<kind = "zeros", fan_in = 4, fan_out = 4>, optimizer_state} : memref<4x4xf32>
// CHECK: %[[B:.*]] = plan.param "b" {init = #plan.init<kind = "ones", fan_in = 4, fan_out = 4>} : memref<4xf32>
// CHECK-NOT: plan.param "w"
// CHECK: %[[G:.*]] = plan.grad "w" : memref<4x4xf32>
// CHECK-NOT: plan.grad "b"
// CHECK: plan.step "train" {
// CHECK: plan.kernel "activation" ins(%{{.*}} : memref<8x4xf32>) outs(%{{.*}} : memref<8x4xf32>) {activation = "sigmoid"}
// CHECK: plan.kernel "dense" {{.*}} {activation = "softmax"}
// CHECK: plan.kernel "activation" ins(%{{.*}} : memref<8x4xf32>) outs(%{{.*}} : memref<8x4xf32>) {activation = "relu"}
// CHECK: plan.kernel "activation_grad" {{.*}} {activation = "relu"}
// CHECK: plan.kernel "activation_grad" {{.*}} {activation = "softmax"}
// CHECK: plan.kernel "activation_grad" {{.*}} {activation = "sigmoid"}
// CHECK: %[[DW2:.*]] = plan.alloc : memref<4x4xf32>
// CHECK-NEXT: plan.kernel "matmul" ins({{.*}}) outs(%[[DW2]] : memref<4x4xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "add" ins(%{{.*}}, %[[DW2]] : memref<4x4xf32>, memref<4x4xf32>) outs(%[[G]] : memref<4x4xf32>)
// CHECK-NEXT: plan.kernel "adam_update" ins(%[[G]] : memref<4x4xf32>) outs(%[[W]], %[[M]], %[[V]] : memref<4x4xf32>, memref<4x4xf32>, memref<4x4xf32>) {beta1 = 9.000000e-01 : f64, beta2 = {{.*}} : f64, epsilon = {{.*}} : f64, lr = 1.000000e-03 : f64, torch_epsilon = 0 : i64}
// CHECK: plan.step "eval" {
// CHECK-NOT: _update
// CHECK: plan.output "correct"
func.func @shared(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<>} {
  %w = graph.param "w" {init = #graph.normal<stddev = 0.5>} : tensor<4x4xf32>
  %b = graph.param "b" {init = #graph.ones, trainable = false} : tensor<4xf32>
  %h = graph.dense %x, %w, %b : (tensor<8x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %s = graph.sigmoid %h : tensor<8x4xf32>
  %y = graph.dense %s, %w {activation = #graph.act<softmax>} : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %r = graph.relu %y : tensor<8x4xf32>
  %loss = graph.softmax_cross_entropy %r, %l : (tensor<8x4xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that SGD lowers to sgd_update (the parameter is the only output), that the remaining
// initialisers lower with their fans, and that the batch comes from the first input.
// CHECK-LABEL: plan.program "sgd" attributes {batch = 2 : i64} {
// CHECK: %[[W:.*]] = plan.param "w" {init = #plan.init<kind = "glorot_uniform", fan_in = 4, fan_out = 3>} : memref<4x3xf32>
// CHECK-NEXT: plan.param "h" {init = #plan.init<kind = "he_normal", fan_in = 3, fan_out = 3>} : memref<3xf32>
// CHECK-NEXT: plan.param "z" {init = #plan.init<kind = "zeros", fan_in = 5, fan_out = 7>} : memref<5x7xf32>
// CHECK-NEXT: %[[G:.*]] = plan.grad "w" : memref<4x3xf32>
// CHECK: plan.kernel "matmul" {{.*}} outs(%[[G]] : memref<4x3xf32>)
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[G]] : memref<4x3xf32>) outs(%[[W]] : memref<4x3xf32>) {lr = 2.500000e-01 : f64}
func.func @sgd(%x: tensor<2x4xf32> {graph.input = "x"}, %l: tensor<2xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.25>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %h = graph.param "h" {init = #graph.he_normal, trainable = false} : tensor<3xf32>
  %z = graph.param "z" {init = #graph.zeros, trainable = false} : tensor<5x7xf32>
  %y = graph.dense %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that AdamW's decoupled weight decay lowers to the update kernel's weight_decay (left out
// at 0: above, adam_update has none).
// CHECK-LABEL: plan.program "adamw"
// CHECK: plan.kernel "adam_update" ins({{.*}}) outs({{.*}}) {beta1 = 9.000000e-01 : f64, beta2 = {{.*}}, torch_epsilon = 1 : i64, weight_decay = 1.000000e-02 : f64}
func.func @adamw(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<epsilon = 1.0e-8, torch_epsilon = true, weight_decay = 0.01>} {
  %w = graph.param "w" {init = #graph.normal<stddev = 0.5>} : tensor<4x4xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x4xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
