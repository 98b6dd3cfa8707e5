// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate=processes=2 -dist-split-batch -dist-place-parameters=servers=2 | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate=processes=4 -dist-split-batch "-dist-place-parameters=servers=1 staleness=4" | FileCheck %s --check-prefix=STALE
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate=processes=2 -dist-split-batch "-dist-place-parameters=servers=3 sync=true" | FileCheck %s --check-prefix=SYNC

// Tests the placement by bytes, largest first onto the server with the fewest bytes so far:
// dense1.kernel (6x5, 120 B) goes to server 0, dense2.kernel (5x3, 60 B) to server 1,
// dense1.bias (20 B) to server 1 (60 < 120), dense2.bias (12 B) to server 1 (80 < 120); the
// optimizer state (Adam's m and v) is not placed here: it moves with its parameter. The tag
// is on every function's graph.param of the name (train and eval), and the strategy on the
// train step, with the mesh's processes as the workers.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: dist.parameter_server = #dist.parameter_server<servers = 2, workers = 2, staleness = -1, sync = false>
// CHECK-DAG: graph.param "dense1.kernel" {dist.server = 0 : i64
// CHECK-DAG: graph.param "dense1.bias" {dist.server = 1 : i64
// CHECK-DAG: graph.param "dense2.kernel" {dist.server = 1 : i64
// CHECK-DAG: graph.param "dense2.bias" {dist.server = 1 : i64
// CHECK-DAG: graph.param "dense1.kernel/m" {init = #graph.zeros, optimizer_state, trainable = false}
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: dist.parameter_server
// CHECK-DAG: graph.param "dense1.kernel" {dist.server = 0 : i64
// CHECK-DAG: graph.param "dense2.bias" {dist.server = 1 : i64

// STALE-LABEL: func.func @train(
// STALE-SAME: #dist.parameter_server<servers = 1, workers = 4, staleness = 4, sync = false>
// STALE-COUNT-4: dist.server = 0 : i64

// Tests that sync means staleness 0, and that three servers for four parameters each get
// something: dense1.kernel, dense2.kernel, then dense1.bias onto the emptiest (server 2, 0 B),
// then dense2.bias onto server 2 (20 < 60 < 120).
// SYNC-LABEL: func.func @train(
// SYNC-SAME: #dist.parameter_server<servers = 3, workers = 2, staleness = 0, sync = true>
// SYNC-DAG: graph.param "dense1.kernel" {dist.server = 0 : i64
// SYNC-DAG: graph.param "dense2.kernel" {dist.server = 1 : i64
// SYNC-DAG: graph.param "dense1.bias" {dist.server = 2 : i64
// SYNC-DAG: graph.param "dense2.bias" {dist.server = 2 : i64
func.func @mlp(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<lr = 0.001>} {
  %w1 = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<6x5xf32>
  %b1 = graph.param "dense1.bias" {init = #graph.zeros} : tensor<5xf32>
  %h = graph.dense %x, %w1, %b1 {activation = #graph.act<sigmoid>} : (tensor<8x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %w2 = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<5x3xf32>
  %b2 = graph.param "dense2.bias" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %h, %w2, %b2 : (tensor<8x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
