// RUN: dp-opt %s -split-input-file -verify-diagnostics

// The verifier messages of graph.batch_matmul.

// Tests that the operands have at least one leading axis.
func.func @f(%a: tensor<8x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'graph.batch_matmul' op expects lhs and rhs of one rank, at least 3, found 'tensor<8x3xf32>' and 'tensor<3x4xf32>'}}
  %c = graph.batch_matmul %a, %b : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that the operands have one rank.
func.func @f(%a: tensor<8x2x3xf32>, %b: tensor<8x2x3x4xf32>) {
  // expected-error @+1 {{'graph.batch_matmul' op expects lhs and rhs of one rank, at least 3, found 'tensor<8x2x3xf32>' and 'tensor<8x2x3x4xf32>'}}
  %c = graph.batch_matmul %a, %b : (tensor<8x2x3xf32>, tensor<8x2x3x4xf32>) -> tensor<8x2x4xf32>
  return
}

// -----

// Tests that the leading axes are equal (no broadcasting).
func.func @f(%a: tensor<8x2x5x3xf32>, %b: tensor<8x1x3x4xf32>) {
  // expected-error @+1 {{'graph.batch_matmul' op multiplies the matrices of 'tensor<8x2x5x3xf32>' and 'tensor<8x1x3x4xf32>': the sizes before the last two axes differ}}
  %c = graph.batch_matmul %a, %b : (tensor<8x2x5x3xf32>, tensor<8x1x3x4xf32>) -> tensor<8x2x5x4xf32>
  return
}

// -----

// Tests that the contracted sizes agree, with the transposes applied.
func.func @f(%a: tensor<8x5x3xf32>, %b: tensor<8x3x4xf32>) {
  // expected-error @+1 {{'graph.batch_matmul' op contracts 3 columns of lhs with 4 rows of rhs}}
  %c = graph.batch_matmul %a, %b {transpose_rhs} : (tensor<8x5x3xf32>, tensor<8x3x4xf32>) -> tensor<8x5x3xf32>
  return
}

// -----

// Tests the result's shape.
func.func @f(%a: tensor<8x5x3xf32>, %b: tensor<8x3x4xf32>) {
  // expected-error @+1 {{'graph.batch_matmul' op result should be 'tensor<8x5x4xf32>', found 'tensor<8x4x5xf32>'}}
  %c = graph.batch_matmul %a, %b : (tensor<8x5x3xf32>, tensor<8x3x4xf32>) -> tensor<8x4x5xf32>
  return
}

// -----

// Tests that alpha is finite.
func.func @f(%a: tensor<8x5x3xf32>, %b: tensor<8x3x4xf32>) {
  // expected-error @+1 {{'graph.batch_matmul' op expects a finite alpha, found INF}}
  %c = graph.batch_matmul %a, %b {alpha = 0x7FF0000000000000 : f64} : (tensor<8x5x3xf32>, tensor<8x3x4xf32>) -> tensor<8x5x4xf32>
  return
}

// -----

// Tests that the factors share an element type (mixed precision casts both to bf16).
func.func @f(%a: tensor<8x2x5x3xbf16>, %b: tensor<8x2x3x4xf32>) {
  // expected-error @+1 {{'graph.batch_matmul' op multiplies lhs of 'bf16' by rhs of 'f32': the factors must share an element type}}
  %c = graph.batch_matmul %a, %b : (tensor<8x2x5x3xbf16>, tensor<8x2x3x4xf32>) -> tensor<8x2x5x4xf32>
  return
}
