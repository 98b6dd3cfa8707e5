// RUN: dp-opt %s -split-input-file -verify-diagnostics

// The verifier messages of relu6, hard_sigmoid and hard_swish (the pointwise classes): f32
// only, and a gradient op's operands and result of one type.

func.func @f(%x: tensor<8x3xi32>) {
  // expected-error @+1 {{'graph.relu6' op operand #0 must be statically shaped tensor of 32-bit float, but got 'tensor<8x3xi32>'}}
  %y = graph.relu6 %x : tensor<8x3xi32>
  return
}

// -----

func.func @f(%x: tensor<8x3xf32>, %dy: tensor<8x4xf32>) {
  // expected-error @+1 {{'graph.hard_sigmoid_grad' op failed to verify that all of {input, grad, result} have same type}}
  %dx = "graph.hard_sigmoid_grad"(%x, %dy) : (tensor<8x3xf32>, tensor<8x4xf32>) -> tensor<8x3xf32>
  return
}

// -----

func.func @f(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'graph.hard_swish' op requires the same type for all operands and results}}
  %y = "graph.hard_swish"(%x) : (tensor<8x3xf32>) -> tensor<8x4xf32>
  return
}
