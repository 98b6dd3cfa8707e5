// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -verify-diagnostics | FileCheck %s

// Tests that the backward pass of a two-layer MLP (dense + sigmoid, dense, softmax
// cross-entropy) is right: the loss gradient is seeded with 1, each layer's rule gives the
// kernel and bias gradients, each apply_gradient follows as soon as its gradient is complete
// (the second layer's before the first layer's backward starts), and no gradient is computed
// for the input %x (the CHECK-NEXT chain leaves no room for a `matmul %dz, %w1
// {transpose_rhs}`). The eval step gets no backward pass.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
// CHECK: %[[W1:.*]] = graph.param "dense1.kernel"
// CHECK: %[[B1:.*]] = graph.param "dense1.bias"
// CHECK: %[[H:.*]] = graph.dense %[[X]], %[[W1]], %[[B1]] {activation = #graph.act<sigmoid>}
// CHECK: %[[W2:.*]] = graph.param "dense2.kernel"
// CHECK: %[[B2:.*]] = graph.param "dense2.bias"
// CHECK: %[[Y:.*]] = graph.dense %[[H]], %[[W2]], %[[B2]] :
// CHECK: %[[LOSS:.*]] = graph.softmax_cross_entropy %[[Y]], %[[L]]
// CHECK: %[[C:.*]] = graph.count_correct %[[Y]], %[[L]]
// CHECK-NEXT: %[[ONE:.*]] = graph.fill 1.000000e+00 : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = graph.softmax_cross_entropy_grad %[[Y]], %[[L]], %[[ONE]] : (tensor<8x3xf32>, tensor<8xi32>, tensor<f32>) -> tensor<8x3xf32>
// CHECK-NEXT: %[[DH:.*]] = graph.matmul %[[DY]], %[[W2]] {transpose_rhs} : (tensor<8x3xf32>, tensor<5x3xf32>) -> tensor<8x5xf32>
// CHECK-NEXT: %[[DW2:.*]] = graph.matmul %[[H]], %[[DY]] {transpose_lhs} : (tensor<8x5xf32>, tensor<8x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: %[[DB2:.*]] = graph.reduce_rows %[[DY]] : tensor<8x3xf32> -> tensor<3xf32>
// CHECK-NEXT: graph.apply_gradient %[[W2]], %[[DW2]] : tensor<5x3xf32>
// CHECK-NEXT: graph.apply_gradient %[[B2]], %[[DB2]] : tensor<3xf32>
// CHECK-NEXT: %[[DZ:.*]] = graph.activation_grad %[[H]], %[[DH]] {activation = #graph.act<sigmoid>} : tensor<8x5xf32>
// CHECK-NEXT: %[[DW1:.*]] = graph.matmul %[[X]], %[[DZ]] {transpose_lhs} : (tensor<8x4xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %[[DB1:.*]] = graph.reduce_rows %[[DZ]] : tensor<8x5xf32> -> tensor<5xf32>
// CHECK-NEXT: graph.apply_gradient %[[W1]], %[[DW1]] : tensor<4x5xf32>
// CHECK-NEXT: graph.apply_gradient %[[B1]], %[[DB1]] : tensor<5xf32>
// CHECK-NEXT: return %[[LOSS]], %[[C]] : tensor<f32>, tensor<f32>
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: graph.fill
// CHECK-NOT: graph.apply_gradient
// CHECK: return
func.func @mlp(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<4x5xf32>
  %b1 = graph.param "dense1.bias" {init = #graph.zeros} : tensor<5xf32>
  %h = graph.dense %x, %w1, %b1 {activation = #graph.act<sigmoid>} : (tensor<8x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %w2 = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<5x3xf32>
  %b2 = graph.param "dense2.bias" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %h, %w2, %b2 : (tensor<8x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the gradients of a value used twice (%t, by a dense layer and a relu) and of a
// parameter used twice (%w, shared by both dense layers) are summed with graph.add; that the
// shared parameter gets one apply_gradient, after its last use is differentiated; that
// non-trainable parameters get no gradient; and the rules of tanh, relu, softmax and add.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
// CHECK: %[[W:.*]] = graph.param "w"
// CHECK: %[[H:.*]] = graph.dense %[[X]], %[[W]]
// CHECK: %[[T:.*]] = graph.tanh %[[H]]
// CHECK: %[[A:.*]] = graph.dense %[[T]], %[[W]]
// CHECK: %[[R:.*]] = graph.relu %[[T]]
// CHECK: %[[S:.*]] = graph.add %[[A]], %[[R]]
// CHECK: %[[F:.*]] = graph.param "frozen"
// CHECK: %[[S2:.*]] = graph.add %[[S]], %[[F]]
// CHECK: %[[SM:.*]] = graph.softmax %[[S2]]
// CHECK: %[[ONE:.*]] = graph.fill 1.000000e+00
// CHECK-NEXT: %[[DSM:.*]] = graph.softmax_cross_entropy_grad %[[SM]], %[[L]], %[[ONE]]
// CHECK-NEXT: %[[DS:.*]] = graph.activation_grad %[[SM]], %[[DSM]] {activation = #graph.act<softmax>}
// CHECK-NEXT: %[[DT1:.*]] = graph.activation_grad %[[R]], %[[DS]] {activation = #graph.act<relu>}
// CHECK-NEXT: %[[DT2:.*]] = graph.matmul %[[DS]], %[[W]] {transpose_rhs}
// CHECK-NEXT: %[[DW1:.*]] = graph.matmul %[[T]], %[[DS]] {transpose_lhs}
// CHECK-NEXT: %[[DT:.*]] = graph.add %[[DT1]], %[[DT2]] : tensor<8x4xf32>
// CHECK-NEXT: %[[DH:.*]] = graph.activation_grad %[[T]], %[[DT]] {activation = #graph.act<tanh>}
// CHECK-NEXT: %[[DW2:.*]] = graph.matmul %[[X]], %[[DH]] {transpose_lhs}
// CHECK-NEXT: %[[DW:.*]] = graph.add %[[DW1]], %[[DW2]] : tensor<4x4xf32>
// CHECK-NEXT: graph.apply_gradient %[[W]], %[[DW]] : tensor<4x4xf32>
// CHECK-NEXT: return
func.func @shared(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x4xf32>
  %h = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %t = graph.tanh %h : tensor<8x4xf32>
  %a = graph.dense %t, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %r = graph.relu %t : tensor<8x4xf32>
  %s = graph.add %a, %r : tensor<8x4xf32>
  %f = graph.param "frozen" {init = #graph.ones, trainable = false} : tensor<8x4xf32>
  %s2 = graph.add %s, %f : tensor<8x4xf32>
  %sm = graph.softmax %s2 : tensor<8x4xf32>
  %loss = graph.softmax_cross_entropy %sm, %l : (tensor<8x4xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a parameter declared twice under one name is one tensor: its gradients from both
// uses are summed and it gets a single apply_gradient, after the backward pass of its first use
// (the second declaration is merged into the first).
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}
// CHECK: %[[W:.*]] = graph.param "w"
// CHECK-NEXT: %[[H:.*]] = graph.dense %[[X]], %[[W]]
// CHECK-NEXT: %[[Y:.*]] = graph.dense %[[H]], %[[W]]
// CHECK: %[[DY:.*]] = graph.softmax_cross_entropy_grad
// CHECK-NEXT: %[[DH:.*]] = graph.matmul %[[DY]], %[[W]] {transpose_rhs}
// CHECK-NEXT: %[[DW1:.*]] = graph.matmul %[[H]], %[[DY]] {transpose_lhs}
// CHECK-NEXT: %[[DW2:.*]] = graph.matmul %[[X]], %[[DH]] {transpose_lhs}
// CHECK-NEXT: %[[DW:.*]] = graph.add %[[DW1]], %[[DW2]]
// CHECK-NEXT: graph.apply_gradient %[[W]], %[[DW]] : tensor<4x4xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @eval(
func.func @redeclared(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x4xf32>
  %h = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %w2 = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x4xf32>
  %y = graph.dense %h, %w2 : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x4xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the gradient through a reshape is the incoming gradient reshaped back to the
// operand's shape, and that a flattened input gets none.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[IMG:[^:]*]]: tensor<8x2x2xf32> {graph.input = "image", graph.role = "samples"}
// CHECK: %[[F:.*]] = graph.flatten %[[IMG]]
// CHECK: %[[P:.*]] = graph.param "p"
// CHECK: %[[Q:.*]] = graph.reshape %[[P]] : tensor<2x2xf32> -> tensor<4xf32>
// CHECK: %[[Y:.*]] = graph.dense %[[F]], %{{.*}}, %[[Q]]
// CHECK: graph.softmax_cross_entropy_grad
// CHECK-NOT: graph.reshape {{.*}} -> tensor<8x2x2xf32>
// CHECK: %[[DQ:.*]] = graph.reduce_rows %{{.*}} : tensor<8x4xf32> -> tensor<4xf32>
// CHECK: %[[DP:.*]] = graph.reshape %[[DQ]] : tensor<4xf32> -> tensor<2x2xf32>
// CHECK-NEXT: graph.apply_gradient %[[P]], %[[DP]] : tensor<2x2xf32>
// CHECK-NOT: graph.reshape {{.*}} -> tensor<8x2x2xf32>
// CHECK: return
func.func @reshapes(%img: tensor<8x2x2xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %f = graph.flatten %img : tensor<8x2x2xf32> -> tensor<8x4xf32>
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x4xf32>
  %p = graph.param "p" {init = #graph.zeros} : tensor<2x2xf32>
  %q = graph.reshape %p : tensor<2x2xf32> -> tensor<4xf32>
  %y = graph.dense %f, %w, %q : (tensor<8x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x4xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a trainable parameter that does not reach the loss gets a warning and no update,
// and that nothing is differentiated on its side branch.
// CHECK-LABEL: func.func @train(
// CHECK: %[[W:.*]] = graph.param "w"
// CHECK: graph.apply_gradient %[[W]]
// CHECK-NOT: graph.apply_gradient
// CHECK: return
func.func @unused(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  // expected-warning @+1 {{parameter 'unused' does not affect the loss; it will not be trained}}
  %u = graph.param "unused" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %side = graph.dense %x, %u {activation = #graph.act<relu>} : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that an op on the path from a parameter to the loss without a gradient rule is an error
// (graph.matmul is a backward-pass op with no rule of its own).
func.func @no_rule(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  // expected-error @+1 {{'graph.matmul' op has no gradient rule, but the loss depends on a parameter through it}}
  %y = graph.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a model may use graph.fill for a constant (it is not mistaken for the seed of an
// earlier backward pass) and that the constant gets no gradient.
// CHECK-LABEL: func.func @train(
// CHECK: %[[W:.*]] = graph.param "w"
// CHECK: %[[K:.*]] = graph.fill 5.000000e-01 : tensor<8x3xf32>
// CHECK: %[[ONE:.*]] = graph.fill 1.000000e+00 : tensor<f32>
// CHECK-NEXT: %[[DZ:.*]] = graph.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %[[ONE]]
// CHECK-NEXT: %[[DW:.*]] = graph.matmul %{{.*}}, %[[DZ]] {transpose_lhs}
// CHECK-NEXT: graph.apply_gradient %[[W]], %[[DW]] : tensor<4x3xf32>
// CHECK-NEXT: return
func.func @constant(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %k = graph.fill 0.5 : tensor<8x3xf32>
  %z = graph.add %y, %k : tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the loss's label smoothing goes to its gradient.
// CHECK-LABEL: func.func @train(
// CHECK: graph.softmax_cross_entropy %{{.*}}, %{{.*}} {label_smoothing = 2.000000e-01 : f64}
// CHECK: graph.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} {label_smoothing = 2.000000e-01 : f64}
func.func @smoothed(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %b = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %x, %w, %b : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l {label_smoothing = 0.2} : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
