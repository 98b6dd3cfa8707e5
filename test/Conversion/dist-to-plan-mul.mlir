// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s

// Tests the lowering of graph.mul on 2 replicas: one "mul" kernel per replica on its 4 rows
// of the image and of the weights; the weights' gradient a "mul_reduce" on the same rows, and
// a weight parameter broadcast over the batch ("g", [1, 1, 1, 4]) gets a mul_reduce over the
// replica's rows that the allreduce sums.
// CHECK-LABEL: plan.step "train"
// CHECK: plan.kernel "mul" ins(%{{.*}}, %{{.*}} : memref<4x3x3x4xf32>, memref<4x1x1x4xf32>) outs(%{{.*}} : memref<4x3x3x4xf32>){{$}}
// CHECK: plan.kernel "mul" ins(%{{.*}}, %{{.*}} : memref<4x3x3x4xf32>, memref<1x1x1x4xf32>) outs(%{{.*}} : memref<4x3x3x4xf32>){{$}}
// CHECK: plan.kernel "mul_reduce" ins(%{{.*}}, %{{.*}} : memref<4x3x3x4xf32>, memref<4x3x3x4xf32>) outs(%{{.*}} : memref<1x1x1x4xf32>)
// CHECK: plan.kernel "mul_reduce" ins(%{{.*}}, %{{.*}} : memref<4x3x3x4xf32>, memref<4x3x3x4xf32>) outs(%{{.*}} : memref<4x1x1x4xf32>)
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
  %gain = graph.param "g" {init = #graph.ones} : tensor<1x1x1x4xf32>
  %y2 = graph.mul %y, %gain : (tensor<8x3x3x4xf32>, tensor<1x1x1x4xf32>) -> tensor<8x3x3x4xf32>
  %f = graph.reshape %y2 : tensor<8x3x3x4xf32> -> tensor<8x36xf32>
  %w3 = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<36x3xf32>
  %z = graph.dense %f, %w3 : (tensor<8x36xf32>, tensor<36x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
