// RUN: dp-opt %s -split-input-file -verify-diagnostics

// The verifier messages of graph.gather and graph.gather_grad.

// Tests that the result is the indices' shape and a table row.
func.func @f(%table: tensor<16x4xf32>, %ids: tensor<8x3xi32>) {
  // expected-error @+1 {{'graph.gather' op result should be 'tensor<8x3x4xf32>' (the indices' shape and the table's row), found 'tensor<8x3x5xf32>'}}
  %e = graph.gather %table, %ids : (tensor<16x4xf32>, tensor<8x3xi32>) -> tensor<8x3x5xf32>
  return
}

// -----

// Tests that the table is [vocabulary, width].
func.func @f(%table: tensor<16xf32>, %ids: tensor<8xi32>) {
  // expected-error @+1 {{'graph.gather' op expects a table of rank 2, found 'tensor<16xf32>'}}
  %e = graph.gather %table, %ids : (tensor<16xf32>, tensor<8xi32>) -> tensor<8xf32>
  return
}

// -----

// Tests that the indices are integers.
func.func @f(%table: tensor<16x4xf32>, %ids: tensor<8xf32>) {
  // expected-error @+1 {{'graph.gather' op operand #1 must be}}
  %e = graph.gather %table, %ids : (tensor<16x4xf32>, tensor<8xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that the indices have a batch axis.
func.func @f(%table: tensor<16x4xf32>, %ids: tensor<i32>) {
  // expected-error @+1 {{'graph.gather' op expects indices with a batch axis, found a scalar}}
  %e = graph.gather %table, %ids : (tensor<16x4xf32>, tensor<i32>) -> tensor<4xf32>
  return
}

// -----

// Tests the gradient's shapes: its grad is the indices' shape and the table's row.
func.func @f(%dy: tensor<8x3x5xf32>, %ids: tensor<8x3xi32>) {
  // expected-error @+1 {{'graph.gather_grad' op grad should be 'tensor<8x3x4xf32>' (the indices' shape and the table's row) for a table gradient 'tensor<16x4xf32>', found 'tensor<8x3x5xf32>'}}
  %dt = graph.gather_grad %dy, %ids : (tensor<8x3x5xf32>, tensor<8x3xi32>) -> tensor<16x4xf32>
  return
}

// -----

// Tests that the gradient is a table.
func.func @f(%dy: tensor<8x4xf32>, %ids: tensor<8xi32>) {
  // expected-error @+1 {{'graph.gather_grad' op expects a table gradient of rank 2, found 'tensor<64xf32>'}}
  %dt = graph.gather_grad %dy, %ids : (tensor<8x4xf32>, tensor<8xi32>) -> tensor<64xf32>
  return
}
