// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s

// Tests the gradient rule of graph.mul, a squeeze-and-excitation product: the image's
// gradient is dy times the broadcast weights (graph.mul again), the weights' the sum of dy
// times the image over the broadcast axes (graph.mul_reduce).
// CHECK-LABEL: func.func @train(
// CHECK: %[[Y:.*]] = graph.mul %[[X:.*]], %[[S:.*]] : (tensor<8x3x3x4xf32>, tensor<8x1x1x4xf32>) -> tensor<8x3x3x4xf32>
// CHECK: %[[DY:.*]] = graph.reshape %{{.*}} : tensor<8x36xf32> -> tensor<8x3x3x4xf32>
// CHECK-DAG: graph.mul %[[DY]], %[[S]] : (tensor<8x3x3x4xf32>, tensor<8x1x1x4xf32>) -> tensor<8x3x3x4xf32>
// CHECK-DAG: graph.mul_reduce %[[DY]], %[[X]] : (tensor<8x3x3x4xf32>, tensor<8x3x3x4xf32>) -> tensor<8x1x1x4xf32>
func.func @m(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x36xf32>
  %h = graph.dense %x, %w1 : (tensor<8x6xf32>, tensor<6x36xf32>) -> tensor<8x36xf32>
  %img = graph.reshape %h : tensor<8x36xf32> -> tensor<8x3x3x4xf32>
  %w2 = graph.param "s.kernel" {init = #graph.glorot_uniform} : tensor<6x4xf32>
  %g = graph.dense %x, %w2 : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %sig = graph.sigmoid %g : tensor<8x4xf32>
  %s = graph.reshape %sig : tensor<8x4xf32> -> tensor<8x1x1x4xf32>
  %y = graph.mul %img, %s : (tensor<8x3x3x4xf32>, tensor<8x1x1x4xf32>) -> tensor<8x3x3x4xf32>
  %f = graph.reshape %y : tensor<8x3x3x4xf32> -> tensor<8x36xf32>
  %w3 = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<36x3xf32>
  %z = graph.dense %f, %w3 : (tensor<8x36xf32>, tensor<36x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
