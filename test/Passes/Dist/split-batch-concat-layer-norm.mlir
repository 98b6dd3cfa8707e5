// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate=devices-per-process=2 -dist-split-batch | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate=devices-per-process=2 -dist-split-batch -dist-sync-batch-norm | FileCheck %s --check-prefix=NOSYNC

// Tests the batch sharding of concat, split and layer_norm on 2 replicas of 4 rows: a feature
// concat keeps the replica's rows; a batch concat stacks the replica's own rows of each input
// (logits and labels alike), split cuts them back; layer_norm is row-wise; layer_norm_grad's
// input gradient has the rows while gamma's and beta's gradients sum over them.
// CHECK-LABEL: func.func @train(
// CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64, dist.replica = 0 : i64} : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x6xf32>
// CHECK: graph.layer_norm {{.*}}dist.replica = 0 {{.*}} -> tensor<4x6xf32>
// CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64, dist.replica = 0 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64, dist.replica = 0 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<8xi32>
// CHECK: graph.split %{{.*}} {axis = 0 : i64, dist.replica = 0 : i64, stacked} : (tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK: graph.layer_norm_grad {{.*}}dist.replica = 0{{.*}} -> (tensor<4x6xf32>, tensor<6xf32>, tensor<6xf32>)

// Per-sample statistics need no collective in the forward pass (unlike batch_norm's).
// NOSYNC-LABEL: func.func @train(
// NOSYNC-NOT: dist.allreduce
// NOSYNC: return
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
