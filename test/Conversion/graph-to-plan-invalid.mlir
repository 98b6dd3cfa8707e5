// RUN: dp-opt %s -split-input-file -convert-graph-to-plan -verify-diagnostics

// The preconditions of convert-graph-to-plan, on hand-written steps.

// Tests that the conversion needs both a train and an eval step.
// expected-error @+1 {{expected a train and an eval step (run graph-derive-steps first)}}
module {
  func.func @train(%x: tensor<8x4xf32> {graph.input = "x"}) attributes {graph.step = "train", graph.model = "m"} {
    return
  }
}

// -----

// Tests that an op without a kernel (an apply_gradient left by a pipeline without
// graph-expand-optimizer) is an error.
func.func @train(%x: tensor<4x3xf32> {graph.input = "g"}) -> (tensor<f32> {graph.output = "loss"})
    attributes {graph.step = "train", graph.model = "m", graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4x3xf32>
  // expected-error @+1 {{'graph.apply_gradient' op has no kernel to lower to}}
  graph.apply_gradient %w, %x : tensor<4x3xf32>
  %loss = graph.fill 0.0 : tensor<f32>
  return %loss : tensor<f32>
}
func.func @eval(%x: tensor<4x3xf32> {graph.input = "g"}) -> (tensor<f32> {graph.output = "loss"})
    attributes {graph.step = "eval", graph.model = "m"} {
  %loss = graph.fill 0.0 : tensor<f32>
  return %loss : tensor<f32>
}
