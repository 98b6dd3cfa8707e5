// RUN: dp-opt %s -split-input-file -graph-autodiff -verify-diagnostics

// The preconditions of graph-autodiff, on hand-written steps (graph-derive-steps cannot produce
// them).

// Tests that the pass needs a train step.
// expected-error @+1 {{no train step (run graph-derive-steps first)}}
module {
  func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
      attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
    %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
    %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
    %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// Tests that a train step is differentiated only once.
// expected-error @+1 {{the train step is already differentiated}}
func.func @train(%x: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}, %l: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
    -> (tensor<f32> {graph.output = "loss", graph.role = "loss"})
    attributes {graph.step = "train", graph.model = "m", graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  %one = graph.fill 1.0 : tensor<f32>
  %dy = graph.softmax_cross_entropy_grad %y, %l, %one : (tensor<8x3xf32>, tensor<8xi32>, tensor<f32>) -> tensor<8x3xf32>
  %dw = graph.matmul %x, %dy {transpose_lhs} : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  graph.apply_gradient %w, %dw : tensor<4x3xf32>
  return %loss : tensor<f32>
}

// -----

// Tests that the train step must name its loss output.
// expected-error @+1 {{train step has no 'loss' output (run graph-derive-steps first)}}
func.func @train(%x: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}, %l: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
    -> (tensor<f32> {graph.output = "cost"})
    attributes {graph.step = "train", graph.model = "m", graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
