// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate="devices-per-process=2 micro-batch=3" -dist-split-batch -dist-sync-batch-norm -dist-accumulate -verify-diagnostics

// Tests that a micro-batch must divide each device's rows (8 rows over 2 devices: 4 each; 3
// does not divide them): the error is on the train step, derived from the model function.
// expected-error @+1 {{the micro-batch (3 rows) must divide each device's rows of the global batch (8 rows over 2 device(s))}}
func.func @mlp(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %y = graph.dense %x, %w : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that batch statistics averaged across replicas inside the step (dist-sync-batch-norm,
// --batch-norm-stats global) are refused: each micro-shard's normalisation would need the
// others' forward passes. 12 rows over 2 devices in micro-batches of 3: M = 2.
func.func @bn(%x: tensor<12x6xf32> {graph.input = "image"}, %l: tensor<12xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %h = graph.dense %x, %w : (tensor<12x6xf32>, tensor<6x3xf32>) -> tensor<12x3xf32>
  %g = graph.param "bn.gamma" {init = #graph.ones} : tensor<3xf32>
  %b = graph.param "bn.beta" {init = #graph.zeros} : tensor<3xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<3xf32>
  // expected-error @+1 {{'dist.allreduce' op averages batch statistics across replicas inside the step, which micro-shards cannot do yet: compile with --batch-norm-stats local}}
  %y = graph.batch_norm %h, %g, %b, %m, %v : (tensor<12x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<12x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<12x3xf32>, tensor<12xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
