// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s

// Tests the lowering of a pointwise op (the class's KernelLoweringOpInterface): gelu is one
// "gelu" kernel and its gradient one "gelu_grad" kernel reading the forward input and the
// incoming gradient, neither with attributes.
// CHECK-LABEL: plan.step "train"
// CHECK: plan.kernel "dense" ins(%{{.*}}, %{{.*}} : memref<8x6xf32>, memref<6x4xf32>) outs(%[[H:.*]] : memref<8x4xf32>)
// CHECK: plan.kernel "gelu" ins(%[[H]] : memref<8x4xf32>) outs(%{{.*}} : memref<8x4xf32>){{$}}
// CHECK: plan.kernel "gelu_grad" ins(%[[H]], %{{.*}} : memref<8x4xf32>, memref<8x4xf32>) outs(%{{.*}} : memref<8x4xf32>){{$}}
// CHECK-LABEL: plan.step "eval"
// CHECK: plan.kernel "gelu"
// CHECK-NOT: gelu_grad
func.func @m(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<6x4xf32>
  %h = graph.dense %x, %w1 : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %g = graph.gelu %h : tensor<8x4xf32>
  %w2 = graph.param "b.kernel" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %z = graph.dense %g, %w2 : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
