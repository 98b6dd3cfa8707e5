// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s

// Tests the gradient rule of graph.transpose: the incoming gradient transposed back by the
// inverse permutation ([0, 2, 3, 1] is undone by [0, 3, 1, 2]).
// CHECK-LABEL: func.func @train(
// CHECK: %[[T:.*]] = graph.transpose %{{.*}} [0, 2, 3, 1] : tensor<8x2x3x4xf32> -> tensor<8x3x4x2xf32>
// CHECK: %[[DT:.*]] = graph.reshape %{{.*}} : tensor<8x24xf32> -> tensor<8x3x4x2xf32>
// CHECK: %{{.*}} = graph.transpose %[[DT]] [0, 3, 1, 2] : tensor<8x3x4x2xf32> -> tensor<8x2x3x4xf32>
func.func @m(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x24xf32>
  %h = graph.dense %x, %w1 : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
  %r = graph.reshape %h : tensor<8x24xf32> -> tensor<8x2x3x4xf32>
  %t = graph.transpose %r [0, 2, 3, 1] : tensor<8x2x3x4xf32> -> tensor<8x3x4x2xf32>
  %f = graph.reshape %t : tensor<8x3x4x2xf32> -> tensor<8x24xf32>
  %w2 = graph.param "b.kernel" {init = #graph.glorot_uniform} : tensor<24x3xf32>
  %z = graph.dense %f, %w2 : (tensor<8x24xf32>, tensor<24x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
