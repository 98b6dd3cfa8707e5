// RUN: dp-opt %s -split-input-file -graph-verify-steps -verify-diagnostics

// Tests that the module needs a train step.
// expected-error @+1 {{no train step (run graph-derive-steps first)}}
module {
  func.func @eval() -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}) attributes {graph.step = "eval"} {
    %z = graph.fill 0.0 : tensor<f32>
    return %z : tensor<f32>
  }
}

// -----

// Tests that each step returns the loss and the correct count.
// expected-error @+1 {{the train step does not return 'correct'}}
func.func @train() -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}) attributes {graph.step = "train"} {
  %z = graph.fill 0.0 : tensor<f32>
  return %z : tensor<f32>
}
func.func @eval() -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}) attributes {graph.step = "eval"} {
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}

// -----

// Tests that every op of a step lowers to kernels: an unexpanded apply_gradient does not.
func.func @train(%g: tensor<4xf32> {graph.role = "samples"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}) attributes {graph.step = "train"} {
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
func.func @train(%g: tensor<4xf32> {graph.role = "samples"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}) attributes {graph.step = "train"} {
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
func.func @train() -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}) attributes {graph.step = "train"} {
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}
func.func @eval(%g: tensor<4xf32> {graph.role = "samples"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}) attributes {graph.step = "eval"} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  // expected-error @+1 {{'graph.sgd_update' op updates 'w' in the eval step}}
  graph.sgd_update %w, %g {lr = 1.0e-01 : f64} : tensor<4xf32>
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}

// -----

// Tests that every input of a step has the role the runtime feeds it by.
// expected-error @+1 {{argument 1 of the train step has no input role (samples or targets)}}
func.func @train(%x: tensor<4xf32> {graph.input = "x", graph.role = "samples"}, %l: tensor<4xi32> {graph.input = "label", graph.role = "labels"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}) attributes {graph.step = "train"} {
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}
func.func @eval() attributes {graph.step = "eval"} {
  return
}

// -----

// Tests that a step has at most one targets input.
func.func @train() -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}) attributes {graph.step = "train"} {
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}
// expected-error @+1 {{the eval step has 2 targets inputs; the runtime feeds one}}
func.func @eval(%a: tensor<4xi32> {graph.role = "targets"}, %b: tensor<4xi32> {graph.role = "targets"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}) attributes {graph.step = "eval"} {
  %z = graph.fill 0.0 : tensor<f32>
  return %z, %z : tensor<f32>, tensor<f32>
}
