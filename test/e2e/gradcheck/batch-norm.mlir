// Tests that the gradients of a model with batch normalisation match finite differences of the
// loss the train step differentiates: a dense layer, batch_norm (in the train step, the
// batch's moments normalise it and the moving statistics are updated), tanh and dense. The
// check used to take finite differences of the eval step's loss, which normalises with the
// moving statistics, and reported every parameter FAILED (relative errors 0.7 to 1.9). The
// moving statistics are not trainable: they have no gradient to check.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK-NOT: moving_
// CHECK: dense1.kernel {{.*}} ok
// CHECK: bn.gamma {{.*}} ok
// CHECK: bn.beta {{.*}} ok
// CHECK: dense2.kernel {{.*}} ok
// CHECK: gradient check passed
func.func @m(%x: tensor<8x6xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<6x5xf32>
  %h = graph.dense %x, %w : (tensor<8x6xf32>, tensor<6x5xf32>) -> tensor<8x5xf32>
  %g = graph.param "bn.gamma" {init = #graph.uniform<low = 0.5, high = 1.5>} : tensor<5xf32>
  %b = graph.param "bn.beta" {init = #graph.uniform<low = -0.1, high = 0.1>} : tensor<5xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<5xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<5xf32>
  %y = graph.batch_norm %h, %g, %b, %m, %v : (tensor<8x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %r = graph.tanh %y : tensor<8x5xf32>
  %w2 = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<5x3xf32>
  %o = graph.dense %r, %w2 : (tensor<8x5xf32>, tensor<5x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %o, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
