// Tests that the gradients of concat (along the features and along the batch, labels
// included), split and layer_norm match finite differences of the loss.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<8x6xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
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
