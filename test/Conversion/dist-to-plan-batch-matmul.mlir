// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s

// Tests the lowering of graph.batch_matmul: one "batch_matmul" kernel with its transposes and
// alpha (a transpose left out at 0 like matmul's).
// CHECK-LABEL: plan.step "train"
// CHECK: plan.kernel "batch_matmul" ins(%{{.*}}, %{{.*}} : memref<8x2x3x4xf32>, memref<8x2x3x4xf32>) outs(%{{.*}} : memref<8x2x3x3xf32>) {alpha = 5.000000e-01 : f64, transpose_a = 0 : i64, transpose_b = 1 : i64}
// CHECK-DAG: plan.kernel "batch_matmul" ins(%{{.*}}, %{{.*}} : memref<8x2x3x3xf32>, memref<8x2x3x4xf32>) outs(%{{.*}} : memref<8x2x3x4xf32>) {alpha = 5.000000e-01 : f64, transpose_a = 0 : i64, transpose_b = 0 : i64}
// CHECK-DAG: plan.kernel "batch_matmul" ins(%{{.*}}, %{{.*}} : memref<8x2x3x3xf32>, memref<8x2x3x4xf32>) outs(%{{.*}} : memref<8x2x3x4xf32>) {alpha = 5.000000e-01 : f64, transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-LABEL: plan.step "eval"
// CHECK: plan.kernel "batch_matmul"
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
