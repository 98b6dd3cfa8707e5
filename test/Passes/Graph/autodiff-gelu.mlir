// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s

// Tests the gradient rule of a pointwise op: gelu's input gradient is one gelu_grad of its
// input and the incoming gradient, and the eval step has none.
// CHECK-LABEL: func.func @train(
// CHECK: %[[H:.*]] = graph.dense %{{.*}}, %{{.*}} : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[G:.*]] = graph.gelu %[[H]] : tensor<8x4xf32>
// CHECK: %[[DG:.*]] = graph.matmul %{{.*}}, %{{.*}} {transpose_rhs} : (tensor<8x3xf32>, tensor<4x3xf32>) -> tensor<8x4xf32>
// CHECK: %[[DH:.*]] = graph.gelu_grad %[[H]], %[[DG]] : tensor<8x4xf32>
// CHECK: graph.matmul %{{.*}}, %[[DH]] {transpose_lhs}
// CHECK-LABEL: func.func @eval(
// CHECK: graph.gelu
// CHECK-NOT: graph.gelu_grad
func.func @m(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x4xf32>
  %h = graph.dense %x, %w1 : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %g = graph.gelu %h : tensor<8x4xf32>
  %w2 = graph.param "b.kernel" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %z = graph.dense %g, %w2 : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
