// Tests that the gradient of graph.gather (an embedding lookup of token ids; the table's
// gradient a scatter-add, graph.gather_grad) matches finite differences: token ids drawn over
// the table's 5 rows, so rows are picked several times.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: embed {{.*}} ok
// CHECK: gradient check passed
func.func @m(%ids: tensor<4x3xi32> {graph.input = "tokens"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %t = graph.param "embed" {init = #graph.uniform<low = -1.0, high = 1.0>} : tensor<5x2xf32>
  %e = graph.gather %t, %ids : (tensor<5x2xf32>, tensor<4x3xi32>) -> tensor<4x3x2xf32>
  %f = graph.reshape %e : tensor<4x3x2xf32> -> tensor<4x6xf32>
  %w = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %z = graph.dense %f, %w {activation = #graph.act<tanh>} : (tensor<4x6xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
