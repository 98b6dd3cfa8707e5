// RUN: dp-opt %s -split-input-file -dist-shard-optimizer=shard-optimizer=2 -verify-diagnostics

// Tests that stage 2, which keeps no gradient between the step's runs, refuses gradient
// accumulation, which sums the micro-shards into them across its runs.
// expected-error @+1 {{dist-shard-optimizer: stage 2 keeps no gradient between the step's runs, but gradient accumulation sums 2 micro-shards into them across its runs; use stage 1 with --micro-batch}}
func.func @train() attributes {graph.step = "train",  dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu", accumulation = 2>} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %m1 = graph.param "w/m" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.momentum_update %w0, %m0, %a#0 {lr = 0.01, momentum = 0.9, dist.replica = 0 : i64} : tensor<3xf32>
  graph.momentum_update %w1, %m1, %a#1 {lr = 0.01, momentum = 0.9, dist.replica = 1 : i64} : tensor<3xf32>
  return
}
