// Tests that the gradient of transpose (one exchange, and a cycle lowered to two) matches
// finite differences of the loss.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<8x6xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x24xf32>
  %h = graph.dense %x, %w1 {activation = #graph.act<tanh>} : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
  %r = graph.reshape %h : tensor<8x24xf32> -> tensor<8x2x3x4xf32>
  %t = graph.transpose %r [0, 2, 3, 1] : tensor<8x2x3x4xf32> -> tensor<8x3x4x2xf32>
  %s = graph.transpose %t [0, 1, 3, 2] : tensor<8x3x4x2xf32> -> tensor<8x3x2x4xf32>
  %f = graph.reshape %s : tensor<8x3x2x4xf32> -> tensor<8x24xf32>
  %w2 = graph.param "b.kernel" {init = #graph.glorot_uniform} : tensor<24x3xf32>
  %z = graph.dense %f, %w2 : (tensor<8x24xf32>, tensor<24x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
