// RUN: dp-opt %s -split-input-file -verify-diagnostics

// The verifier messages of graph.transpose.

// Tests that the permutation has one entry per axis.
func.func @f(%x: tensor<8x3x4xf32>) {
  // expected-error @+1 {{'graph.transpose' op permutation has 2 entries for an input of rank 3}}
  %y = graph.transpose %x [0, 1] : tensor<8x3x4xf32> -> tensor<8x3xf32>
  return
}

// -----

// Tests that an axis may not appear twice.
func.func @f(%x: tensor<8x3x4xf32>) {
  // expected-error @+1 {{'graph.transpose' op permutation [0, 1, 1] is not an order of the axes 0 to 2}}
  %y = graph.transpose %x [0, 1, 1] : tensor<8x3x4xf32> -> tensor<8x3x3xf32>
  return
}

// -----

// Tests that every entry is an axis of the input.
func.func @f(%x: tensor<8x3x4xf32>) {
  // expected-error @+1 {{'graph.transpose' op permutation [0, 3, 1] is not an order of the axes 0 to 2}}
  %y = graph.transpose %x [0, 3, 1] : tensor<8x3x4xf32> -> tensor<8x4x3xf32>
  return
}

// -----

// Tests that the result has the input's sizes in the permutation's order.
func.func @f(%x: tensor<8x3x4xf32>) {
  // expected-error @+1 {{'graph.transpose' op result should be 'tensor<8x4x3xf32>', found 'tensor<8x3x4xf32>'}}
  %y = graph.transpose %x [0, 2, 1] : tensor<8x3x4xf32> -> tensor<8x3x4xf32>
  return
}

// -----

// Tests that transpose takes f32 only.
func.func @f(%x: tensor<8x3xi32>) {
  // expected-error @+1 {{'graph.transpose' op operand #0 must be statically shaped tensor of 32-bit float, but got 'tensor<8x3xi32>'}}
  %y = graph.transpose %x [1, 0] : tensor<8x3xi32> -> tensor<3x8xi32>
  return
}
