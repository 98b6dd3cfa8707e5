// RUN: dp-opt %s -split-input-file -verify-diagnostics

// The verifier messages of graph.mean_squared_error and its gradient.

// Tests that each prediction needs its target: targets of another shape.
func.func @f(%y: tensor<8x3xf32>, %t: tensor<8x2xf32>) {
  // expected-error @+1 {{'graph.mean_squared_error' op has predictions 'tensor<8x3xf32>' but targets 'tensor<8x2xf32>': each prediction needs its target}}
  %loss = graph.mean_squared_error %y, %t : (tensor<8x3xf32>, tensor<8x2xf32>) -> tensor<f32>
  return
}

// -----

// Tests that the predictions are [batch, features].
func.func @f(%y: tensor<8xf32>, %t: tensor<8xf32>) {
  // expected-error @+1 {{'graph.mean_squared_error' op expects predictions of rank 2, found 'tensor<8xf32>'}}
  %loss = graph.mean_squared_error %y, %t : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  return
}

// -----

// Tests that the targets are floats: class labels are softmax_cross_entropy's.
func.func @f(%y: tensor<8x1xf32>, %t: tensor<8x1xi32>) {
  // expected-error @+1 {{'graph.mean_squared_error' op operand #1 must be}}
  %loss = graph.mean_squared_error %y, %t : (tensor<8x1xf32>, tensor<8x1xi32>) -> tensor<f32>
  return
}

// -----

// Tests that the gradient has the predictions' type.
func.func @f(%y: tensor<8x3xf32>, %t: tensor<8x3xf32>, %one: tensor<f32>) {
  // expected-error @+1 {{'graph.mean_squared_error_grad' op result type should be 'tensor<8x3xf32>', found 'tensor<3x8xf32>'}}
  %dy = graph.mean_squared_error_grad %y, %t, %one : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<f32>) -> tensor<3x8xf32>
  return
}

// -----

// Tests the gradient's operands as the loss's: targets of another shape.
func.func @f(%y: tensor<8x3xf32>, %t: tensor<4x3xf32>, %one: tensor<f32>) {
  // expected-error @+1 {{'graph.mean_squared_error_grad' op has predictions 'tensor<8x3xf32>' but targets 'tensor<4x3xf32>': each prediction needs its target}}
  %dy = graph.mean_squared_error_grad %y, %t, %one : (tensor<8x3xf32>, tensor<4x3xf32>, tensor<f32>) -> tensor<8x3xf32>
  return
}
