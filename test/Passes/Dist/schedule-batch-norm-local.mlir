// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0 -dist-schedule -dist-verify | FileCheck %s

// Tests that with local batch statistics (no dist-sync-batch-norm) the allreduces of gamma's
// and beta's gradients start only after batch_norm_grad_input has read them: they are the
// local sums the input gradient needs, and the allreduce averages them in place. (Started
// right after batch_norm_grad_params, the engine raced the read: two runs of resnet50v2_32 on
// 2 devices with --batch-norm-stats local left other parameters after 2 steps.)
// CHECK-LABEL: func.func @train(
// CHECK: %[[G0:.*]], %[[B0:.*]] = graph.batch_norm_grad_params {{.*}}dist.replica = 0 : i64
// CHECK-NEXT: %[[G1:.*]], %[[B1:.*]] = graph.batch_norm_grad_params {{.*}}dist.replica = 1 : i64
// CHECK-NEXT: graph.batch_norm_grad_input {{.*}}, %[[G0]], %[[B0]], {{.*}}dist.replica = 0 : i64
// CHECK-NEXT: graph.batch_norm_grad_input {{.*}}, %[[G1]], %[[B1]], {{.*}}dist.replica = 1 : i64
// CHECK-NEXT: dist.allreduce_start %[[B0]], %[[B1]] {bucket = 1 : i64
// CHECK-NEXT: dist.allreduce_start %[[G0]], %[[G1]] {bucket = 0 : i64
func.func @bn(%x: tensor<4x6xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %h = graph.dense %x, %w : (tensor<4x6xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
  %g = graph.param "bn.gamma" {init = #graph.ones} : tensor<3xf32>
  %b = graph.param "bn.beta" {init = #graph.zeros} : tensor<3xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<3xf32>
  %y = graph.batch_norm %h, %g, %b, %m, %v : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
