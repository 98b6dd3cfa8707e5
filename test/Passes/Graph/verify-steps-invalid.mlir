// RUN: dp-opt %s -split-input-file -graph-verify-steps -verify-diagnostics

// Tests that the module needs a train step.
// expected-error @+1 {{no train step (run graph-derive-steps first)}}
module {
  func.func @eval() -> (tensor<f32> {graph.output = "loss"}) attributes {graph.step = "eval"} {
    %z = graph.fill 0.0 : tensor<f32>
    return %z : tensor<f32>
  }
}

// -----

// Tests that each step returns the loss and the correct count.
// expected-error @+1 {{the train step does not return 'correct'}}
func.func @train() -> (tensor<f32> {graph.output = "loss"}) attributes {graph.step = "train"} {
  %z = graph.fill 0.0 : tensor<f32>
  return %z : tensor<f32>
}
func.func @eval() -> (tensor<f32> {graph.output = "loss"}, tensor<f32> {graph.output = "correct"}) attributes {graph.step = "eval"} {
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}

// -----

// Tests that every op of a step lowers to kernels: an unexpanded apply_gradient does not.
func.func @train(%g: tensor<4xf32>) -> (tensor<f32> {graph.output = "loss"}, tensor<f32> {graph.output = "correct"}) attributes {graph.step = "train"} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  // expected-error @+1 {{'graph.apply_gradient' op has no kernel to lower to (run graph-expand-optimizer)}}
  graph.apply_gradient %w, %g : tensor<4xf32>
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}
func.func @eval() attributes {graph.step = "eval"} {
  return
}

// -----

// Tests that a parameter is updated once per step.
func.func @train(%g: tensor<4xf32>) -> (tensor<f32> {graph.output = "loss"}, tensor<f32> {graph.output = "correct"}) attributes {graph.step = "train"} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 1.0e-01 : f64} : tensor<4xf32>
  // expected-error @+1 {{'graph.sgd_update' op is the second update of 'w'}}
  graph.sgd_update %w, %g {lr = 1.0e-01 : f64} : tensor<4xf32>
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}
func.func @eval() attributes {graph.step = "eval"} {
  return
}

// -----

// Tests that the eval step updates nothing.
func.func @train() -> (tensor<f32> {graph.output = "loss"}, tensor<f32> {graph.output = "correct"}) attributes {graph.step = "train"} {
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}
func.func @eval(%g: tensor<4xf32>) -> (tensor<f32> {graph.output = "loss"}, tensor<f32> {graph.output = "correct"}) attributes {graph.step = "eval"} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  // expected-error @+1 {{'graph.sgd_update' op updates 'w' in the eval step}}
  graph.sgd_update %w, %g {lr = 1.0e-01 : f64} : tensor<4xf32>
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}
