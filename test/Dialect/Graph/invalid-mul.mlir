// RUN: dp-opt %s -split-input-file -verify-diagnostics

// The verifier messages of graph.mul and graph.mul_reduce.

// Tests that the right operand broadcasts to the left: an axis of another size.
func.func @f(%x: tensor<8x4x4x16xf32>, %s: tensor<8x1x1x8xf32>) {
  // expected-error @+1 {{'graph.mul' op multiplies 'tensor<8x4x4x16xf32>' by 'tensor<8x1x1x8xf32>': the right operand must have the left's rank, each axis the left's or of size 1}}
  %y = graph.mul %x, %s : (tensor<8x4x4x16xf32>, tensor<8x1x1x8xf32>) -> tensor<8x4x4x16xf32>
  return
}

// -----

// Tests that the right operand has the left's rank.
func.func @f(%x: tensor<8x16xf32>, %s: tensor<16xf32>) {
  // expected-error @+1 {{'graph.mul' op multiplies 'tensor<8x16xf32>' by 'tensor<16xf32>': the right operand must have the left's rank}}
  %y = graph.mul %x, %s : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that the broadcast is one-sided: the left operand is the result's shape.
func.func @f(%x: tensor<8x1xf32>, %s: tensor<8x16xf32>) {
  // expected-error @+1 {{'graph.mul' op multiplies 'tensor<8x1xf32>' by 'tensor<8x16xf32>'}}
  %y = graph.mul %x, %s : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that the result has the left operand's type.
func.func @f(%x: tensor<8x16xf32>, %s: tensor<8x1xf32>) {
  // expected-error @+1 {{'graph.mul' op result should be 'tensor<8x16xf32>', found 'tensor<16x8xf32>'}}
  %y = graph.mul %x, %s : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<16x8xf32>
  return
}

// -----

// Tests that a scalar is multiplied by nothing of rank 0.
func.func @f(%x: tensor<f32>, %s: tensor<f32>) {
  // expected-error @+1 {{'graph.mul' op multiplies 'tensor<f32>' by 'tensor<f32>'}}
  %y = graph.mul %x, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

// Tests that mul_reduce's operands have one type.
func.func @f(%dy: tensor<8x16xf32>, %x: tensor<8x8xf32>) {
  // expected-error @+1 {{'graph.mul_reduce' op multiplies 'tensor<8x16xf32>' by 'tensor<8x8xf32>': they must have one type}}
  %y = graph.mul_reduce %dy, %x : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<8x1xf32>
  return
}

// -----

// Tests that mul_reduce's result keeps or sums each axis.
func.func @f(%dy: tensor<8x16xf32>, %x: tensor<8x16xf32>) {
  // expected-error @+1 {{'graph.mul_reduce' op sums 'tensor<8x16xf32>' to 'tensor<8x2xf32>': the result must have the operands' rank, each axis theirs or of size 1}}
  %y = graph.mul_reduce %dy, %x : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x2xf32>
  return
}

// -----

// Tests that mul_reduce has an axis to sum over.
func.func @f(%dy: tensor<f32>, %x: tensor<f32>) {
  // expected-error @+1 {{'graph.mul_reduce' op sums 'tensor<f32>', which has no axis}}
  %y = graph.mul_reduce %dy, %x : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}
