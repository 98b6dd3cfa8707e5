// Tests that the gradients of graph.mul (squeeze-and-excitation: an image times per-sample
// channel weights; and times a parameter broadcast over the batch and the image) match finite
// differences of the loss.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<8x6xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x36xf32>
  %h = graph.dense %x, %w1 : (tensor<8x6xf32>, tensor<6x36xf32>) -> tensor<8x36xf32>
  %img = graph.reshape %h : tensor<8x36xf32> -> tensor<8x3x3x4xf32>
  %w2 = graph.param "s.kernel" {init = #graph.glorot_uniform} : tensor<6x4xf32>
  %g = graph.dense %x, %w2 : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %sig = graph.sigmoid %g : tensor<8x4xf32>
  %s = graph.reshape %sig : tensor<8x4xf32> -> tensor<8x1x1x4xf32>
  %y = graph.mul %img, %s : (tensor<8x3x3x4xf32>, tensor<8x1x1x4xf32>) -> tensor<8x3x3x4xf32>
  %gain = graph.param "g" {init = #graph.uniform<low = 0.5, high = 1.5>} : tensor<1x3x1x4xf32>
  %y2 = graph.mul %y, %gain : (tensor<8x3x3x4xf32>, tensor<1x3x1x4xf32>) -> tensor<8x3x3x4xf32>
  %t = graph.tanh %y2 : tensor<8x3x3x4xf32>
  %f = graph.reshape %t : tensor<8x3x3x4xf32> -> tensor<8x36xf32>
  %w3 = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<36x3xf32>
  %z = graph.dense %f, %w3 : (tensor<8x36xf32>, tensor<36x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
