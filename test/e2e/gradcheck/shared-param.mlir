// Tests that the gradients of a parameter used twice and graph.add (gradient accumulation) (autodiff rule + runtime kernels) match finite differences.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<4x6xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "d.kernel" {init = #graph.glorot_uniform} : tensor<6x6xf32>
  %w2 = graph.param "o.kernel" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %h1 = graph.dense %x, %w {activation = #graph.act<tanh>} : (tensor<4x6xf32>, tensor<6x6xf32>) -> tensor<4x6xf32>
  %h2 = graph.dense %h1, %w {activation = #graph.act<sigmoid>} : (tensor<4x6xf32>, tensor<6x6xf32>) -> tensor<4x6xf32>
  %s = graph.add %h1, %h2 : tensor<4x6xf32>
  %y = graph.dense %s, %w2 : (tensor<4x6xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
