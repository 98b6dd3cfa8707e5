// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s

// Tests the lowering of graph.bias_add on 2 replicas: one "add_rows" kernel per replica on its
// 4 rows, and the bias's gradient a reduce_rows over the replica's rows (48 / 2 of the bias's
// last axis) that the allreduce sums.
// CHECK-LABEL: plan.step "train"
// CHECK: plan.kernel "add_rows" ins(%{{.*}}, %{{.*}} : memref<4x6x4xf32>, memref<6x4xf32>) outs(%{{.*}} : memref<4x6x4xf32>){{$}}
// CHECK: plan.kernel "add_rows" ins(%{{.*}}, %{{.*}} : memref<4x6x4xf32>, memref<4xf32>) outs(%{{.*}} : memref<4x6x4xf32>){{$}}
// CHECK: plan.kernel "reduce_rows" ins(%{{.*}} : memref<24x4xf32>) outs(%{{.*}} : memref<4xf32>)
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
