// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -graph-verify-steps | FileCheck %s
// RUN: not dp-opt %s -graph-derive-steps -graph-autodiff -graph-verify-steps -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOOPT

// Tests that the graph phase's output passes its own contract unchanged: both steps, every op
// lowerable, one update per trainable parameter in the train step only.
// CHECK-LABEL: func.func @train(
// CHECK-COUNT-4: graph.sgd_update
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: _update

// Tests that a train step whose optimizer was not expanded breaks the contract.
// NOOPT: 'graph.apply_gradient' op has no kernel to lower to (run graph-expand-optimizer)
func.func @mlp(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.5>} {
  %w1 = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<6x5xf32>
  %b1 = graph.param "dense1.bias" {init = #graph.zeros} : tensor<5xf32>
  %h = graph.dense %x, %w1, %b1 {activation = #graph.act<sigmoid>} : (tensor<8x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %w2 = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<5x3xf32>
  %b2 = graph.param "dense2.bias" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %h, %w2, %b2 : (tensor<8x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
