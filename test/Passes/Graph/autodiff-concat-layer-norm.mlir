// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s

// Tests the gradient rules of concat and layer_norm: a concatenation's gradient is the
// incoming gradient split back into the inputs' pieces (along the batch for the logits, a
// `stacked` split, along the features for the hidden layer), and layer_norm's is one layer_norm_grad giving the
// input's, gamma's and beta's gradients, the input's summed with the other path's.
// CHECK-LABEL: func.func @train(
// CHECK: %[[H:.*]] = graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64}
// CHECK: %[[DZ:.*]] = graph.softmax_cross_entropy_grad
// CHECK-NEXT: %[[P:.*]]:2 = graph.split %[[DZ]] {axis = 0 : i64, stacked} : (tensor<16x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>)
// CHECK: %[[DN:.*]] = graph.matmul %[[P]]#0, %{{.*}} {transpose_rhs}
// CHECK: %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = graph.layer_norm_grad %[[H]], %{{.*}}, %[[DN]] {epsilon = 1.000000e-03 : f64}
// CHECK-NEXT: %[[SUM:.*]] = graph.add %{{.*}}, %[[DX]]
// CHECK: graph.apply_gradient %{{.*}}, %[[DG]] : tensor<6xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DB]] : tensor<6xf32>
// CHECK-NEXT: %{{.*}}:2 = graph.split %[[SUM]] {axis = 1 : i64} : (tensor<8x6xf32>) -> (tensor<8x4xf32>, tensor<8x2xf32>)
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: graph.split
// CHECK-NOT: layer_norm_grad
func.func @m(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x4xf32>
  %w2 = graph.param "b.kernel" {init = #graph.glorot_uniform} : tensor<6x2xf32>
  %a = graph.dense %x, %w1 {activation = #graph.act<relu>} : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %b = graph.dense %x, %w2 {activation = #graph.act<tanh>} : (tensor<8x6xf32>, tensor<6x2xf32>) -> tensor<8x2xf32>
  %h = graph.concat %a, %b {axis = 1 : i64} : (tensor<8x4xf32>, tensor<8x2xf32>) -> tensor<8x6xf32>
  %g = graph.param "ln.gamma" {init = #graph.ones} : tensor<6xf32>
  %be = graph.param "ln.beta" {init = #graph.zeros} : tensor<6xf32>
  %n = graph.layer_norm %h, %g, %be : (tensor<8x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<8x6xf32>
  %w3 = graph.param "out1.kernel" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %w4 = graph.param "out2.kernel" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %z1 = graph.dense %n, %w3 : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  %z2 = graph.dense %h, %w4 : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  %z = graph.concat %z1, %z2 {axis = 0 : i64} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<16x3xf32>
  %ll = graph.concat %l, %l {axis = 0 : i64} : (tensor<8xi32>, tensor<8xi32>) -> tensor<16xi32>
  %loss = graph.softmax_cross_entropy %z, %ll : (tensor<16x3xf32>, tensor<16xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
