// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch | FileCheck %s

// dist-split-batch with R = 2 devices on models with padding, average pooling, batch
// normalisation and LSTMs: ops on the batch take 4 / 2 = 2 rows, statistics and weight
// gradients keep their shapes.

// Tests that zero_pad2d, avg_pool2d, global_avg_pool2d, batch_norm_train and their gradients
// (reshape + avg_pool2d_grad over the whole image, avg_pool2d_grad, zero_pad2d_grad,
// batch_norm_grad_input) take and give 2 images per replica; that batch_moments stays [2, C]
// (the shard's own mean and mean of squares, one per replica, read by that replica's
// batch_norm_train, moving_stats_update and gradients), and so do batch_norm_grad_params's
// [C] sums and the moving statistics' update; the eval step's batch_norm takes 2 images too.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8x8x1xf32> {graph.input = "image", graph.role = "samples"}
// CHECK-DAG: %[[X0:.*]] = dist.shard %[[X]] {dist.replica = 0 : i64, replica = 0 : i64, shards = 2 : i64} : tensor<4x8x8x1xf32> -> tensor<2x8x8x1xf32>
// CHECK-DAG: %[[X1:.*]] = dist.shard %[[X]] {dist.replica = 1 : i64, replica = 1 : i64, shards = 2 : i64} : tensor<4x8x8x1xf32> -> tensor<2x8x8x1xf32>
// CHECK: %[[C0:.*]] = graph.conv2d %[[X0]], {{.*}} -> tensor<2x6x6x2xf32>
// CHECK-NEXT: %[[C1:.*]] = graph.conv2d %[[X1]], {{.*}} -> tensor<2x6x6x2xf32>
// CHECK: %[[M0:.*]] = graph.param "bn.moving_mean" {dist.replica = 0 : i64
// CHECK-NEXT: %[[M1:.*]] = graph.param "bn.moving_mean" {dist.replica = 1 : i64
// CHECK-NEXT: %[[V0:.*]] = graph.param "bn.moving_variance" {dist.replica = 0 : i64
// CHECK-NEXT: %[[V1:.*]] = graph.param "bn.moving_variance" {dist.replica = 1 : i64
// CHECK-NEXT: %[[S0:.*]] = graph.batch_moments %[[C0]] {dist.replica = 0 : i64} : tensor<2x6x6x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[S1:.*]] = graph.batch_moments %[[C1]] {dist.replica = 1 : i64} : tensor<2x6x6x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[N0:.*]] = graph.batch_norm_train %[[C0]], %[[S0]], {{.*}} {dist.replica = 0 : i64, epsilon = 1.001000e-05 : f64} : (tensor<2x6x6x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x6x2xf32>
// CHECK-NEXT: %[[N1:.*]] = graph.batch_norm_train %[[C1]], %[[S1]], {{.*}} {dist.replica = 1 : i64, epsilon = 1.001000e-05 : f64} : (tensor<2x6x6x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x6x2xf32>
// CHECK-NEXT: graph.moving_stats_update %[[M0]], %[[V0]], %[[S0]] {dist.replica = 0 : i64, momentum = {{.*}}} : tensor<2xf32>, tensor<2x2xf32>
// CHECK-NEXT: graph.moving_stats_update %[[M1]], %[[V1]], %[[S1]] {dist.replica = 1 : i64, momentum = {{.*}}} : tensor<2xf32>, tensor<2x2xf32>
// CHECK: graph.zero_pad2d {{.*}} {dist.replica = 0 : i64, padding = [1, 1, 0, 2]} : tensor<2x6x6x2xf32> -> tensor<2x8x8x2xf32>
// CHECK-NEXT: graph.zero_pad2d {{.*}} {dist.replica = 1 : i64, padding = [1, 1, 0, 2]} : tensor<2x6x6x2xf32> -> tensor<2x8x8x2xf32>
// CHECK-NEXT: graph.avg_pool2d {{.*}} {dist.replica = 0 : i64, strides = [1, 2], window = [3, 2]} : tensor<2x8x8x2xf32> -> tensor<2x6x4x2xf32>
// CHECK-NEXT: graph.avg_pool2d {{.*}} {dist.replica = 1 : i64, strides = [1, 2], window = [3, 2]} : tensor<2x8x8x2xf32> -> tensor<2x6x4x2xf32>
// CHECK-NEXT: graph.global_avg_pool2d {{.*}} {dist.replica = 0 : i64} : tensor<2x6x4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT: graph.global_avg_pool2d {{.*}} {dist.replica = 1 : i64} : tensor<2x6x4x2xf32> -> tensor<2x2xf32>
// CHECK: graph.reshape {{.*}} {dist.replica = 0 : i64} : tensor<2x2xf32> -> tensor<2x1x1x2xf32>
// CHECK-NEXT: graph.reshape {{.*}} {dist.replica = 1 : i64} : tensor<2x2xf32> -> tensor<2x1x1x2xf32>
// CHECK-NEXT: graph.avg_pool2d_grad {{.*}} {dist.replica = 0 : i64, strides = [6, 4], window = [6, 4]} : tensor<2x1x1x2xf32> -> tensor<2x6x4x2xf32>
// CHECK-NEXT: graph.avg_pool2d_grad {{.*}} {dist.replica = 1 : i64, strides = [6, 4], window = [6, 4]} : tensor<2x1x1x2xf32> -> tensor<2x6x4x2xf32>
// CHECK-NEXT: graph.avg_pool2d_grad {{.*}} {dist.replica = 0 : i64, strides = [1, 2], window = [3, 2]} : tensor<2x6x4x2xf32> -> tensor<2x8x8x2xf32>
// CHECK-NEXT: graph.avg_pool2d_grad {{.*}} {dist.replica = 1 : i64, strides = [1, 2], window = [3, 2]} : tensor<2x6x4x2xf32> -> tensor<2x8x8x2xf32>
// CHECK-NEXT: graph.zero_pad2d_grad {{.*}} {dist.replica = 0 : i64, padding = [1, 1, 0, 2]} : tensor<2x8x8x2xf32> -> tensor<2x6x6x2xf32>
// CHECK-NEXT: graph.zero_pad2d_grad {{.*}} {dist.replica = 1 : i64, padding = [1, 1, 0, 2]} : tensor<2x8x8x2xf32> -> tensor<2x6x6x2xf32>
// CHECK: %[[DG0:.*]], %[[DB0:.*]] = graph.batch_norm_grad_params %[[C0]], %[[S0]], %{{.*}} {dist.replica = 0 : i64, epsilon = 1.001000e-05 : f64} : (tensor<2x6x6x2xf32>, tensor<2x2xf32>, tensor<2x6x6x2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT: %[[DG1:.*]], %[[DB1:.*]] = graph.batch_norm_grad_params %[[C1]], %[[S1]], %{{.*}} {dist.replica = 1 : i64, epsilon = 1.001000e-05 : f64} : (tensor<2x6x6x2xf32>, tensor<2x2xf32>, tensor<2x6x6x2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT: graph.batch_norm_grad_input %[[C0]], %[[S0]], %{{.*}}, %[[DG0]], %[[DB0]], %{{.*}} {dist.replica = 0 : i64, epsilon = 1.001000e-05 : f64} : (tensor<2x6x6x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x6x6x2xf32>) -> tensor<2x6x6x2xf32>
// CHECK-NEXT: graph.batch_norm_grad_input %[[C1]], %[[S1]], %{{.*}}, %[[DG1]], %[[DB1]], %{{.*}} {dist.replica = 1 : i64, epsilon = 1.001000e-05 : f64} : (tensor<2x6x6x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x6x6x2xf32>) -> tensor<2x6x6x2xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DG0]] {dist.replica = 0 : i64} : tensor<2xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DG1]] {dist.replica = 1 : i64} : tensor<2xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DB0]] {dist.replica = 0 : i64} : tensor<2xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DB1]] {dist.replica = 1 : i64} : tensor<2xf32>
// CHECK: graph.conv2d_grad_filter {{.*}} {dist.replica = 0 : i64} : (tensor<2x8x8x1xf32>, tensor<2x6x6x2xf32>) -> tensor<3x3x1x2xf32>
// CHECK-LABEL: func.func @eval(
// CHECK: graph.batch_norm {{.*}} {dist.replica = 0 : i64, epsilon = 1.001000e-05 : f64} : (tensor<2x6x6x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x6x2xf32>
// CHECK-NEXT: graph.batch_norm {{.*}} {dist.replica = 1 : i64, epsilon = 1.001000e-05 : f64} : (tensor<2x6x6x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x6x2xf32>
// CHECK-NOT: batch_moments
// CHECK: return
func.func @cnn(%x: tensor<4x8x8x1xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %k = graph.param "conv.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x2xf32>
  %c = graph.conv2d %x, %k : (tensor<4x8x8x1xf32>, tensor<3x3x1x2xf32>) -> tensor<4x6x6x2xf32>
  %g = graph.param "bn.gamma" {init = #graph.ones} : tensor<2xf32>
  %b = graph.param "bn.beta" {init = #graph.zeros} : tensor<2xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<2xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<2xf32>
  %n = graph.batch_norm %c, %g, %b, %m, %v {epsilon = 1.001e-05}
      : (tensor<4x6x6x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x6x6x2xf32>
  %r = graph.relu %n : tensor<4x6x6x2xf32>
  %z = graph.zero_pad2d %r {padding = [1, 1, 0, 2]} : tensor<4x6x6x2xf32> -> tensor<4x8x8x2xf32>
  %a = graph.avg_pool2d %z {window = [3, 2], strides = [1, 2]} : tensor<4x8x8x2xf32> -> tensor<4x6x4x2xf32>
  %p = graph.global_avg_pool2d %a : tensor<4x6x4x2xf32> -> tensor<4x2xf32>
  %w = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<2x3xf32>
  %y = graph.dense %p, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the LSTMs take and give 2 sequences per replica ([2, T, U] with return_sequences,
// [2, U] without), and that lstm_grad's input gradient (result #0) has the replica's 2 rows
// while its kernel, recurrent kernel and bias gradients (sums over the batch) keep the
// weights' shapes.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x5x6xf32> {graph.input = "seq", graph.role = "samples"}
// CHECK-DAG: %[[X0:.*]] = dist.shard %[[X]] {dist.replica = 0 : i64, replica = 0 : i64, shards = 2 : i64} : tensor<4x5x6xf32> -> tensor<2x5x6xf32>
// CHECK-DAG: %[[X1:.*]] = dist.shard %[[X]] {dist.replica = 1 : i64, replica = 1 : i64, shards = 2 : i64} : tensor<4x5x6xf32> -> tensor<2x5x6xf32>
// CHECK: %[[H1_0:.*]] = graph.lstm %[[X0]], {{.*}} {dist.replica = 0 : i64, return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x5x3xf32>
// CHECK-NEXT: %[[H1_1:.*]] = graph.lstm %[[X1]], {{.*}} {dist.replica = 1 : i64, return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x5x3xf32>
// CHECK: %[[H2_0:.*]] = graph.lstm %[[H1_0]], {{.*}} {dist.replica = 0 : i64} : (tensor<2x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %[[H2_1:.*]] = graph.lstm %[[H1_1]], {{.*}} {dist.replica = 1 : i64} : (tensor<2x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x2xf32>
// CHECK: %[[DX2_0:[^,]*]], {{.*}} = graph.lstm_grad %[[H1_0]], {{.*}}, %[[H2_0]], %{{.*}} {dist.replica = 0 : i64} : (tensor<2x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>)
// CHECK-NEXT: %[[DX2_1:[^,]*]], {{.*}} = graph.lstm_grad %[[H1_1]], {{.*}}, %[[H2_1]], %{{.*}} {dist.replica = 1 : i64} : (tensor<2x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>)
// CHECK: graph.lstm_grad %[[X0]], {{.*}}, %[[H1_0]], %[[DX2_0]] {dist.replica = 0 : i64, return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
// CHECK-NEXT: graph.lstm_grad %[[X1]], {{.*}}, %[[H1_1]], %[[DX2_1]] {dist.replica = 1 : i64, return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
// CHECK-LABEL: func.func @eval(
// CHECK: graph.lstm {{.*}} {dist.replica = 0 : i64, return_sequences} : {{.*}} -> tensor<2x5x3xf32>
// CHECK-NEXT: graph.lstm {{.*}} {dist.replica = 1 : i64, return_sequences} : {{.*}} -> tensor<2x5x3xf32>
// CHECK: graph.lstm {{.*}} {dist.replica = 0 : i64} : {{.*}} -> tensor<2x2xf32>
// CHECK-NEXT: graph.lstm {{.*}} {dist.replica = 1 : i64} : {{.*}} -> tensor<2x2xf32>
// CHECK-NOT: lstm_grad
func.func @rnn(%x: tensor<4x5x6xf32> {graph.input = "seq"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<>} {
  %w1 = graph.param "lstm1.kernel" {init = #graph.glorot_uniform} : tensor<6x12xf32>
  %r1 = graph.param "lstm1.recurrent_kernel" {init = #graph.orthogonal} : tensor<3x12xf32>
  %b1 = graph.param "lstm1.bias" {init = #graph.unit_forget_bias} : tensor<12xf32>
  %h1 = graph.lstm %x, %w1, %r1, %b1 {return_sequences}
      : (tensor<4x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<4x5x3xf32>
  %w2 = graph.param "lstm2.kernel" {init = #graph.glorot_uniform} : tensor<3x8xf32>
  %r2 = graph.param "lstm2.recurrent_kernel" {init = #graph.orthogonal} : tensor<2x8xf32>
  %b2 = graph.param "lstm2.bias" {init = #graph.unit_forget_bias} : tensor<8xf32>
  %h2 = graph.lstm %h1, %w2, %r2, %b2
      : (tensor<4x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<4x2xf32>
  %w = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<2x3xf32>
  %y = graph.dense %h2, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
