// RUN: dp-opt %s -split-input-file -dist-shard-optimizer=shard-optimizer=1 -verify-diagnostics
// RUN: not dp-opt %s -split-input-file -dist-shard-optimizer=shard-optimizer=3 2>&1 | FileCheck %s --check-prefix=STAGE3
// STAGE3: error: dist-shard-optimizer: stage 3 is not built (1 shards the optimizer state, 2 the gradients' memory too)

// Tests that the optimizer state is sharded over the devices of the job: one is refused.
// expected-error @+1 {{dist-shard-optimizer shards the optimizer state over the replicas of the job, and the mesh has 1 device}}
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %m = graph.param "w/m" {init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v = graph.param "w/v" {init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g = graph.fill 1.0 : tensor<3xf32>
  %p = dist.allreduce_start %g {bucket = 0 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  %a = dist.allreduce_wait %p : tensor<3xf32>
  graph.adam_update %w, %m, %v, %a {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01} : tensor<3xf32>
  return
}

// -----

// Tests that an optimizer without state (sgd) has nothing to shard.
// expected-error @+1 {{dist-shard-optimizer: the optimizer keeps no state (sgd): there is nothing to shard}}
func.func @train() attributes {graph.step = "train",  dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.sgd_update %w0, %a#0 {lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  graph.sgd_update %w1, %a#1 {lr = 0.01, dist.replica = 1 : i64} : tensor<3xf32>
  return
}

// -----

// Tests that the pass runs once.
// expected-error @+1 {{dist-shard-optimizer: the step is sharded already (the pass runs once)}}
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %m1 = graph.param "w/m" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v1 = graph.param "w/v" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  graph.adam_update %w1, %m1, %v1, %a#1 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 1 : i64} : tensor<3xf32>
  return
}
