// RUN: dp-opt %s -split-input-file -graph-inline-calls -verify-diagnostics

// One case per diagnostic of passes/Graph/InlineCalls.cpp.

// Tests that a model function cannot call itself.
func.func @m(%x: tensor<4x3xf32> {graph.input = "x"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  // expected-error @+1 {{calls 'm' recursively; blocks cannot call themselves}}
  %0 = func.call @m(%x, %l) : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that a cycle through a block back into the function being inlined is found at the
// call that closes it (inside the block).
func.func private @block(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{calls 'm' recursively; blocks cannot call themselves}}
  %y = func.call @m(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

func.func @m(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = func.call @block(%x) {graph.scope = "b"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that a called function needs a body (an external declaration cannot be inlined).
func.func private @external(%x: tensor<4x3xf32>) -> tensor<4x3xf32>

func.func @m(%x: tensor<4x3xf32> {graph.input = "x"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  // expected-error @+1 {{calls 'external', which is not a function with a body in this module}}
  %0 = func.call @external(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %0, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that an explicit scope cannot be empty (the parameters would be named "_w").
func.func private @block(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<3x3xf32>
  %y = graph.dense %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

func.func @m(%x: tensor<4x3xf32> {graph.input = "x"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  // expected-error @+1 {{has an empty 'graph.scope'}}
  %0 = func.call @block(%x) {graph.scope = ""} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %0, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a called function must have a single block.
// expected-error @+1 {{a called block must have a single block}}
func.func private @two_blocks(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
^bb1:
  return %x : tensor<4x3xf32>
}

func.func @m(%x: tensor<4x3xf32> {graph.input = "x"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %0 = func.call @two_blocks(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %0, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that an error in a nested block is reported where it is and stops the pass (here the
// external call inside a called block).
func.func private @external(%x: tensor<4x3xf32>) -> tensor<4x3xf32>

func.func private @block(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{calls 'external', which is not a function with a body in this module}}
  %y = func.call @external(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

func.func @m(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = func.call @block(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that a cycle between private blocks is found (the model itself is not on it).
func.func private @ping(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @pong(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @pong(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{calls 'ping' recursively; blocks cannot call themselves}}
  %0 = func.call @ping(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @m(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @ping(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
