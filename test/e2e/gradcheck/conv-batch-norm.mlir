// Tests that the gradients of a convolution followed by batch normalisation over NHWC images
// (the moments taken over batch, height and width, per channel, as in the ResNets), relu and
// a global average pool match finite differences of the train step's loss. Momentum updates
// the moving statistics and the velocities; neither may leak into the finite differences.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: conv.kernel {{.*}} ok
// CHECK: bn.gamma {{.*}} ok
// CHECK: bn.beta {{.*}} ok
// CHECK: gradient check passed
func.func @m(%x: tensor<4x5x5x2xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.momentum<lr = 0.1, momentum = 0.9>} {
  %w1 = graph.param "conv.kernel" {init = #graph.glorot_uniform} : tensor<3x3x2x3xf32>
  %c = graph.conv2d %x, %w1 : (tensor<4x5x5x2xf32>, tensor<3x3x2x3xf32>) -> tensor<4x3x3x3xf32>
  %g = graph.param "bn.gamma" {init = #graph.uniform<low = 0.5, high = 1.5>} : tensor<3xf32>
  %b = graph.param "bn.beta" {init = #graph.uniform<low = -0.1, high = 0.1>} : tensor<3xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<3xf32>
  %y = graph.batch_norm %c, %g, %b, %m, %v {epsilon = 1.001e-05} : (tensor<4x3x3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x3x3xf32>
  %r = graph.relu %y : tensor<4x3x3x3xf32>
  %p = graph.global_avg_pool2d %r : tensor<4x3x3x3xf32> -> tensor<4x3xf32>
  %w2 = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<3x4xf32>
  %b2 = graph.param "dense.bias" {init = #graph.zeros} : tensor<4xf32>
  %o = graph.dense %p, %w2, %b2 : (tensor<4x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %loss = graph.softmax_cross_entropy %o, %l : (tensor<4x4xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
