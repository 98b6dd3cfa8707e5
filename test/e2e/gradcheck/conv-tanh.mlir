// Tests the gradients of two stacked conv2d layers with fused tanh (smooth everywhere, so finite
// differences are exact up to rounding), the second with stride 2 and "same" padding, against
// finite differences; the first conv's input gradient is not needed and not computed.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<2x6x6x1xf32> {graph.input = "image"}, %l: tensor<2xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "conv1.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x3xf32>
  %b1 = graph.param "conv1.bias" {init = #graph.uniform<low = -0.1, high = 0.1>} : tensor<3xf32>
  %c1 = graph.conv2d %x, %w1, %b1 {activation = #graph.act<tanh>}
      : (tensor<2x6x6x1xf32>, tensor<3x3x1x3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  %w2 = graph.param "conv2.kernel" {init = #graph.glorot_uniform} : tensor<2x2x3x2xf32>
  %b2 = graph.param "conv2.bias" {init = #graph.uniform<low = -0.1, high = 0.1>} : tensor<2xf32>
  %c2 = graph.conv2d %c1, %w2, %b2 {strides = [2, 2], padding = "same", activation = #graph.act<tanh>}
      : (tensor<2x4x4x3xf32>, tensor<2x2x3x2xf32>, tensor<2xf32>) -> tensor<2x2x2x2xf32>
  %f = graph.flatten %c2 : tensor<2x2x2x2xf32> -> tensor<2x8xf32>
  %w3 = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<8x3xf32>
  %y = graph.dense %f, %w3 : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
