// Tests that the gradients of graph.hard_swish (a pointwise op: its class's autodiff rule and the
// generic pointwise kernels) match finite differences, on both sides of its kinks (the check skips points at a kink).
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<4x6xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "d.kernel" {init = #graph.glorot_uniform} : tensor<6x5xf32>
  %b = graph.param "d.bias" {init = #graph.uniform<low = -4.0, high = 4.0>} : tensor<5xf32>
  %w2 = graph.param "o.kernel" {init = #graph.glorot_uniform} : tensor<5x3xf32>
  %z = graph.dense %x, %w, %b : (tensor<4x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %h = graph.hard_swish %z : tensor<4x5xf32>
  %y = graph.dense %h, %w2 : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
