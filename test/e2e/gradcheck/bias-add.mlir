// Tests that the gradients of bias_add (a position embedding of one sample's shape and a bias
// of the last axis) match finite differences of the loss.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<8x6xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x24xf32>
  %h = graph.dense %x, %w1 : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
  %r = graph.reshape %h : tensor<8x24xf32> -> tensor<8x6x4xf32>
  %pos = graph.param "pos" {init = #graph.uniform<low = -0.5, high = 0.5>} : tensor<6x4xf32>
  %b = graph.param "b" {init = #graph.uniform<low = -0.5, high = 0.5>} : tensor<4xf32>
  %p = graph.bias_add %r, %pos : (tensor<8x6x4xf32>, tensor<6x4xf32>) -> tensor<8x6x4xf32>
  %q = graph.bias_add %p, %b : (tensor<8x6x4xf32>, tensor<4xf32>) -> tensor<8x6x4xf32>
  %t = graph.tanh %q : tensor<8x6x4xf32>
  %f = graph.reshape %t : tensor<8x6x4xf32> -> tensor<8x24xf32>
  %w2 = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<24x3xf32>
  %z = graph.dense %f, %w2 : (tensor<8x24xf32>, tensor<24x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
