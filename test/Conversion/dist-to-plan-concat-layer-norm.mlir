// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s

// Tests the lowering of concat, split and layer_norm through their KernelLoweringOpInterface:
// a concat is one "concat" kernel (f32 or i32) with its axis, a split one "slice" kernel per
// piece at its offset, layer_norm and layer_norm_grad their kernels with epsilon; gamma's and
// beta's gradients land in their persistent gradient buffers.
// CHECK-LABEL: plan.step "train"
// CHECK: plan.kernel "concat" ins(%{{.*}}, %{{.*}} : memref<8x4xf32>, memref<8x2xf32>) outs(%[[H:.*]] : memref<8x6xf32>) {axis = 1 : i64}
// CHECK: plan.kernel "layer_norm" ins(%[[H]], %{{.*}}, %{{.*}} : memref<8x6xf32>, memref<6xf32>, memref<6xf32>) outs(%{{.*}} : memref<8x6xf32>) {epsilon = 1.000000e-03 : f64}
// CHECK: plan.kernel "concat" ins({{.*}} : memref<8x3xf32>, memref<8x3xf32>) outs(%{{.*}} : memref<16x3xf32>) {axis = 0 : i64}
// CHECK: plan.kernel "concat" ins({{.*}} : memref<8xi32>, memref<8xi32>) outs(%{{.*}} : memref<16xi32>) {axis = 0 : i64}
// CHECK: plan.kernel "slice" ins(%[[DZ:.*]] : memref<16x3xf32>) outs(%{{.*}} : memref<8x3xf32>) {axis = 0 : i64, offset = 0 : i64}
// CHECK: plan.kernel "slice" ins(%[[DZ]] : memref<16x3xf32>) outs(%{{.*}} : memref<8x3xf32>) {axis = 0 : i64, offset = 8 : i64}
// CHECK: plan.kernel "layer_norm_grad" ins(%[[H]], {{.*}}) outs({{.*}} : memref<8x6xf32>, memref<6xf32>, memref<6xf32>) {epsilon = 1.000000e-03 : f64}
// CHECK: plan.kernel "slice" {{.*}} {axis = 1 : i64, offset = 0 : i64}
// CHECK: plan.kernel "slice" {{.*}} {axis = 1 : i64, offset = 4 : i64}
func.func @m(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x4xf32>
  %w2 = graph.param "b.kernel" {init = #graph.glorot_uniform} : tensor<6x2xf32>
  %a = graph.dense %x, %w1 {activation = #graph.act<relu>} : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %b = graph.dense %x, %w2 {activation = #graph.act<tanh>} : (tensor<8x6xf32>, tensor<6x2xf32>) -> tensor<8x2xf32>
  %h = graph.concat %a, %b {axis = 1 : i64} : (tensor<8x4xf32>, tensor<8x2xf32>) -> tensor<8x6xf32>
  %g = graph.param "ln.gamma" {init = #graph.ones} : tensor<6xf32>
  %be = graph.param "ln.beta" {init = #graph.zeros} : tensor<6xf32>
  %n = graph.layer_norm %h, %g, %be : (tensor<8x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<8x6xf32>
  %w3 = graph.param "out1.kernel" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %w4 = graph.param "out2.kernel" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %z1 = graph.dense %n, %w3 : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  %z2 = graph.dense %h, %w4 : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  %z = graph.concat %z1, %z2 {axis = 0 : i64} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<16x3xf32>
  %ll = graph.concat %l, %l {axis = 0 : i64} : (tensor<8xi32>, tensor<8xi32>) -> tensor<16xi32>
  %loss = graph.softmax_cross_entropy %z, %ll : (tensor<16x3xf32>, tensor<16xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
