// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s

// Tests the gradient rule of graph.batch_matmul on attention's scores s = alpha q k^T: dq =
// alpha ds k and dk = alpha ds^T q, each one batch_matmul with alpha.
// CHECK-LABEL: func.func @train(
// CHECK: %[[Q:.*]] = graph.reshape %{{.*}} : tensor<8x24xf32> -> tensor<8x2x3x4xf32>
// CHECK: %[[K:.*]] = graph.reshape %{{.*}} : tensor<8x24xf32> -> tensor<8x2x3x4xf32>
// CHECK: graph.batch_matmul %[[Q]], %[[K]] {alpha = 5.000000e-01 : f64, transpose_rhs} : (tensor<8x2x3x4xf32>, tensor<8x2x3x4xf32>) -> tensor<8x2x3x3xf32>
// CHECK: %[[DS:.*]] = graph.reshape %{{.*}} : tensor<8x18xf32> -> tensor<8x2x3x3xf32>
// CHECK-DAG: graph.batch_matmul %[[DS]], %[[K]] {alpha = 5.000000e-01 : f64} : (tensor<8x2x3x3xf32>, tensor<8x2x3x4xf32>) -> tensor<8x2x3x4xf32>
// CHECK-DAG: graph.batch_matmul %[[DS]], %[[Q]] {alpha = 5.000000e-01 : f64, transpose_lhs} : (tensor<8x2x3x3xf32>, tensor<8x2x3x4xf32>) -> tensor<8x2x3x4xf32>
// CHECK-LABEL: func.func @eval(
// CHECK-COUNT-1: graph.batch_matmul
// CHECK-NOT: graph.batch_matmul
func.func @m(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %wq = graph.param "q.kernel" {init = #graph.glorot_uniform} : tensor<6x24xf32>
  %wk = graph.param "k.kernel" {init = #graph.glorot_uniform} : tensor<6x24xf32>
  %hq = graph.dense %x, %wq : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
  %hk = graph.dense %x, %wk : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
  %q = graph.reshape %hq : tensor<8x24xf32> -> tensor<8x2x3x4xf32>
  %k = graph.reshape %hk : tensor<8x24xf32> -> tensor<8x2x3x4xf32>
  %s = graph.batch_matmul %q, %k {transpose_rhs, alpha = 0.5 : f64} : (tensor<8x2x3x4xf32>, tensor<8x2x3x4xf32>) -> tensor<8x2x3x3xf32>
  %f = graph.reshape %s : tensor<8x2x3x3xf32> -> tensor<8x18xf32>
  %w2 = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<18x3xf32>
  %z = graph.dense %f, %w2 : (tensor<8x18xf32>, tensor<18x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
