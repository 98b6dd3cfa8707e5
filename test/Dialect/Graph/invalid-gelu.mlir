// RUN: dp-opt %s -split-input-file -verify-diagnostics

// The verifier messages of the pointwise ops (their classes in GraphOps.td): f32 only, and a
// gradient op's operands and result of one type.

// Tests that gelu takes f32 only.
func.func @f(%x: tensor<8x3xi32>) {
  // expected-error @+1 {{'graph.gelu' op operand #0 must be statically shaped tensor of 32-bit float, but got 'tensor<8x3xi32>'}}
  %y = graph.gelu %x : tensor<8x3xi32>
  return
}

// -----

// Tests that gelu_grad's input, gradient and result share one type.
func.func @f(%x: tensor<8x3xf32>, %dy: tensor<8x4xf32>) {
  // expected-error @+1 {{'graph.gelu_grad' op failed to verify that all of {input, grad, result} have same type}}
  %dx = "graph.gelu_grad"(%x, %dy) : (tensor<8x3xf32>, tensor<8x4xf32>) -> tensor<8x3xf32>
  return
}
