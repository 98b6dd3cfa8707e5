// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-replicate=devices-per-process=2 -verify-diagnostics

// Tests that a step is replicated once: a second dist-replicate finds the mesh and fails on
// the train step (derived from, and located at, the model function).
// expected-error @+1 {{is already distributed (it has a dist.mesh)}}
func.func @mlp(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %y = graph.dense %x, %w : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
