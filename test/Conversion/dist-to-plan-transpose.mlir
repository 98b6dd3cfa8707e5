// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s

// Tests the lowering of graph.transpose: one "transpose" kernel per exchange of two axes. The
// cycle [0, 2, 3, 1] takes two (axes 1 and 2, then 2 and 3) through a scratch buffer; its
// gradient's inverse [0, 3, 1, 2] two more (axes 1 and 3, then 2 and 3).
// CHECK-LABEL: plan.step "train"
// CHECK: plan.kernel "transpose" ins(%{{.*}} : memref<8x2x3x4xf32>) outs(%[[S:.*]] : memref<8x3x2x4xf32>) {axis_a = 1 : i64, axis_b = 2 : i64}
// CHECK: plan.kernel "transpose" ins(%[[S]] : memref<8x3x2x4xf32>) outs(%{{.*}} : memref<8x3x4x2xf32>) {axis_a = 2 : i64, axis_b = 3 : i64}
// CHECK: plan.kernel "transpose" ins(%{{.*}} : memref<8x3x4x2xf32>) outs(%[[G:.*]] : memref<8x2x4x3xf32>) {axis_a = 1 : i64, axis_b = 3 : i64}
// CHECK: plan.kernel "transpose" ins(%[[G]] : memref<8x2x4x3xf32>) outs(%{{.*}} : memref<8x2x3x4xf32>) {axis_a = 2 : i64, axis_b = 3 : i64}
// CHECK-LABEL: plan.step "eval"
// CHECK-COUNT-2: plan.kernel "transpose"
// CHECK-NOT: plan.kernel "transpose"
func.func @m(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x24xf32>
  %h = graph.dense %x, %w1 : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
  %r = graph.reshape %h : tensor<8x24xf32> -> tensor<8x2x3x4xf32>
  %t = graph.transpose %r [0, 2, 3, 1] : tensor<8x2x3x4xf32> -> tensor<8x3x4x2xf32>
  %f = graph.reshape %t : tensor<8x3x4x2xf32> -> tensor<8x24xf32>
  %w2 = graph.param "b.kernel" {init = #graph.glorot_uniform} : tensor<24x3xf32>
  %z = graph.dense %f, %w2 : (tensor<8x24xf32>, tensor<24x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
