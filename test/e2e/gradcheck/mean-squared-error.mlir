// Tests that the gradient of graph.mean_squared_error (a regression's loss against float
// targets), through a dense layer with a sigmoid, matches finite differences.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<4x6xf32> {graph.input = "image"}, %t: tensor<4x3xf32> {graph.input = "target"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "d.kernel" {init = #graph.glorot_uniform} : tensor<6x5xf32>
  %b = graph.param "d.bias" {init = #graph.uniform<low = -0.1, high = 0.1>} : tensor<5xf32>
  %w2 = graph.param "o.kernel" {init = #graph.glorot_uniform} : tensor<5x3xf32>
  %h = graph.dense %x, %w, %b {activation = #graph.act<sigmoid>} : (tensor<4x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %y = graph.dense %h, %w2 : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  %loss = graph.mean_squared_error %y, %t : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
