// Tests that the gradients of a small CNN match finite differences: conv2d with a fused relu and
// a bias ("valid"), max-pooling, a second conv2d without bias ("same", stride 2) whose input
// gradient goes back through the pool and the first conv's relu, flatten and dense.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<3x7x7x2xf32> {graph.input = "image"}, %l: tensor<3xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "conv1.kernel" {init = #graph.glorot_uniform} : tensor<3x3x2x4xf32>
  %b1 = graph.param "conv1.bias" {init = #graph.uniform<low = -0.1, high = 0.1>} : tensor<4xf32>
  %c1 = graph.conv2d %x, %w1, %b1 {activation = #graph.act<relu>}
      : (tensor<3x7x7x2xf32>, tensor<3x3x2x4xf32>, tensor<4xf32>) -> tensor<3x5x5x4xf32>
  %p = graph.max_pool2d %c1 {window = [2, 2], strides = [2, 2]} : tensor<3x5x5x4xf32> -> tensor<3x2x2x4xf32>
  %w2 = graph.param "conv2.kernel" {init = #graph.glorot_uniform} : tensor<3x3x4x3xf32>
  %c2 = graph.conv2d %p, %w2 {strides = [2, 2], padding = "same"}
      : (tensor<3x2x2x4xf32>, tensor<3x3x4x3xf32>) -> tensor<3x1x1x3xf32>
  %f = graph.flatten %c2 : tensor<3x1x1x3xf32> -> tensor<3x3xf32>
  %w3 = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<3x4xf32>
  %b3 = graph.param "dense.bias" {init = #graph.zeros} : tensor<4xf32>
  %y = graph.dense %f, %w3, %b3 : (tensor<3x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<3x4xf32>, tensor<3xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
