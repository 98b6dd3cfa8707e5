// RUN: dp-opt %s -split-input-file -verify-diagnostics

// The verifier messages of graph.bias_add.

// Tests that the bias has the shape of the input's trailing axes.
func.func @f(%x: tensor<8x49x128xf32>, %b: tensor<49x64xf32>) {
  // expected-error @+1 {{'graph.bias_add' op adds a bias of 'tensor<49x64xf32>' to 'tensor<8x49x128xf32>': the bias must have the shape of the input's trailing axes, the batch axis left out}}
  %y = graph.bias_add %x, %b : (tensor<8x49x128xf32>, tensor<49x64xf32>) -> tensor<8x49x128xf32>
  return
}

// -----

// Tests that the bias leaves out the batch axis.
func.func @f(%x: tensor<8x4xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{'graph.bias_add' op adds a bias of 'tensor<8x4xf32>' to 'tensor<8x4xf32>': the bias must have the shape of the input's trailing axes, the batch axis left out}}
  %y = graph.bias_add %x, %b : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that a scalar is not a bias.
func.func @f(%x: tensor<8x4xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'graph.bias_add' op adds a bias of 'tensor<f32>' to 'tensor<8x4xf32>'}}
  %y = graph.bias_add %x, %b : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that the result has the input's type.
func.func @f(%x: tensor<8x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'graph.bias_add' op result should be 'tensor<8x4xf32>', found 'tensor<4x8xf32>'}}
  %y = graph.bias_add %x, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}
