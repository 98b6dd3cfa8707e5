// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0.0001 -dist-schedule -dist-verify | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate=processes=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -dist-schedule -dist-verify | FileCheck %s --check-prefix=PROCS
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate -dist-verify | FileCheck %s --check-prefix=ONE

// Tests that the dist phase's output passes its own contract and is left unchanged: inputs
// read through shards, each update reading its replica's mean, buckets scheduled as they
// become ready (2 devices per process, 2 processes, and a single device).
// CHECK-LABEL: func.func @train(
// CHECK-COUNT-2: dist.shard
// CHECK: dist.allreduce_start {{.*}}bucket = 0
// CHECK: dist.allreduce_start {{.*}}bucket = 1
// PROCS-LABEL: func.func @train(
// PROCS: dist.shard %arg0 {replica = 0 : i64, shards = 2 : i64}
// PROCS: dist.allreduce_wait
// ONE-LABEL: func.func @train(
// ONE-NOT: dist.shard
// ONE-NOT: dist.allreduce
// ONE: return
func.func @mlp(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<6x5xf32>
  %b1 = graph.param "dense1.bias" {init = #graph.zeros} : tensor<5xf32>
  %h = graph.dense %x, %w1, %b1 {activation = #graph.act<sigmoid>} : (tensor<8x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %w2 = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<5x3xf32>
  %b2 = graph.param "dense2.bias" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %h, %w2, %b2 : (tensor<8x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
