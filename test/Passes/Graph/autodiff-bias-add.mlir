// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s

// Tests the gradient rule of graph.bias_add: the input's gradient is the incoming one; the
// bias's the sum over the leading axes, a reduce_rows (after a reshape to rows of the bias's
// shape when the bias leaves out more than the batch axis).
// CHECK-LABEL: func.func @train(
// CHECK: graph.bias_add %{{.*}}, %{{.*}} : (tensor<8x6x4xf32>, tensor<4xf32>) -> tensor<8x6x4xf32>
// CHECK: %[[DY:.*]] = graph.reshape %{{.*}} : tensor<8x24xf32> -> tensor<8x6x4xf32>
// CHECK-DAG: graph.reduce_rows %[[DY]] : tensor<8x6x4xf32> -> tensor<6x4xf32>
// CHECK-DAG: %[[ROWS:.*]] = graph.reshape %[[DY]] : tensor<8x6x4xf32> -> tensor<48x4xf32>
// CHECK-DAG: graph.reduce_rows %[[ROWS]] : tensor<48x4xf32> -> tensor<4xf32>
func.func @m(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x24xf32>
  %h = graph.dense %x, %w1 : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
  %r = graph.reshape %h : tensor<8x24xf32> -> tensor<8x6x4xf32>
  %pos = graph.param "pos" {init = #graph.zeros} : tensor<6x4xf32>
  %b = graph.param "b" {init = #graph.zeros} : tensor<4xf32>
  %p = graph.bias_add %r, %pos : (tensor<8x6x4xf32>, tensor<6x4xf32>) -> tensor<8x6x4xf32>
  %q = graph.bias_add %p, %b : (tensor<8x6x4xf32>, tensor<4xf32>) -> tensor<8x6x4xf32>
  %f = graph.reshape %q : tensor<8x6x4xf32> -> tensor<8x24xf32>
  %w2 = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<24x3xf32>
  %z = graph.dense %f, %w2 : (tensor<8x24xf32>, tensor<24x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
