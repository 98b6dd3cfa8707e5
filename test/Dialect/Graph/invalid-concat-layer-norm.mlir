// RUN: dp-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of concat, split, layer_norm and layer_norm_grad
// (dialect/Graph/IR/Ops/Concat.cpp, Ops/LayerNorm.cpp).

// Tests that concat needs an input.
func.func @f() {
  // expected-error @+1 {{'graph.concat' op needs at least one input}}
  %y = graph.concat {axis = 0 : i64} : () -> tensor<8x3xf32>
  return
}

// -----

// Tests that the axis lies inside the rank.
func.func @f(%a: tensor<8x3xf32>) {
  // expected-error @+1 {{'graph.concat' op axis 2 is outside a tensor of rank 2}}
  %y = graph.concat %a, %a {axis = 2 : i64} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x6xf32>
  return
}

// -----

// Tests that the inputs share a rank and an element type with the result.
func.func @f(%a: tensor<8x3xf32>, %l: tensor<8x3xi32>) {
  // expected-error @+1 {{'graph.concat' op input #1 is 'tensor<8x3xi32>', expected rank 2 of 'f32'}}
  %y = graph.concat %a, %l {axis = 1 : i64} : (tensor<8x3xf32>, tensor<8x3xi32>) -> tensor<8x6xf32>
  return
}

// -----

// Tests that sizes off the axis agree.
func.func @f(%a: tensor<8x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.concat' op input #1 has size 4 on axis 0, expected 8}}
  %y = graph.concat %a, %b {axis = 1 : i64} : (tensor<8x3xf32>, tensor<4x3xf32>) -> tensor<8x6xf32>
  return
}

// -----

// Tests that a concat joins at most as many inputs as its kernel takes (Kernels.def: 64).
func.func @f(%a: tensor<1x3xf32>) {
  // expected-error @+1 {{'graph.concat' op joins 65 inputs; at most 64 are supported}}
  %y = graph.concat %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a {axis = 0 : i64} : (tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<65x3xf32>
  return
}

// -----

// Tests that the sizes along the axis add up to the result's.
func.func @f(%a: tensor<8x3xf32>) {
  // expected-error @+1 {{'graph.concat' op sizes along axis 1 add up to 6, expected 7}}
  %y = graph.concat %a, %a {axis = 1 : i64} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x7xf32>
  return
}

// -----

// Tests the same checks on split, with its results as the pieces.
func.func @f(%y: tensor<8x8xf32>) {
  // expected-error @+1 {{'graph.split' op sizes along axis 1 add up to 7, expected 8}}
  %p:2 = graph.split %y {axis = 1 : i64} : (tensor<8x8xf32>) -> (tensor<8x3xf32>, tensor<8x4xf32>)
  return
}

// -----

// Tests that concat's operands are static f32 or i32 tensors (ODS).
func.func @f(%a: tensor<8x3xf16>) {
  // expected-error @+1 {{'graph.concat' op operand #0 must be variadic of statically shaped tensor of 32-bit float or 32-bit signless integer}}
  %y = graph.concat %a {axis = 0 : i64} : (tensor<8x3xf16>) -> tensor<8x3xf16>
  return
}

// -----

// Tests that layer_norm needs rows and a channel axis.
func.func @f(%x: tensor<16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'graph.layer_norm' op expects an input with a batch axis and a channel axis, found 'tensor<16xf32>'}}
  %y = graph.layer_norm %x, %g, %g : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return
}

// -----

// Tests that gamma has one value per channel.
func.func @f(%x: tensor<8x16xf32>, %g: tensor<8xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'graph.layer_norm' op expects gamma of shape [16] (one per channel), found 'tensor<8xf32>'}}
  %y = graph.layer_norm %x, %g, %b : (tensor<8x16xf32>, tensor<8xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that beta has one value per channel.
func.func @f(%x: tensor<8x16xf32>, %g: tensor<16xf32>, %b: tensor<4x4xf32>) {
  // expected-error @+1 {{'graph.layer_norm' op expects beta of shape [16] (one per channel), found 'tensor<4x4xf32>'}}
  %y = graph.layer_norm %x, %g, %b : (tensor<8x16xf32>, tensor<16xf32>, tensor<4x4xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that epsilon is positive.
func.func @f(%x: tensor<8x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'graph.layer_norm' op expects a positive epsilon, found 0.000000e+00}}
  %y = graph.layer_norm %x, %g, %g {epsilon = 0.0} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that the result has the input's type (ODS).
func.func @f(%x: tensor<8x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'graph.layer_norm' op failed to verify that all of {input, result} have same type}}
  %y = graph.layer_norm %x, %g, %g : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return
}

// -----

// Tests that the gradient's gamma is per channel too.
func.func @f(%x: tensor<8x16xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'graph.layer_norm_grad' op expects gamma of shape [16] (one per channel), found 'tensor<4xf32>'}}
  %dx, %dg, %db = graph.layer_norm_grad %x, %g, %x {epsilon = 1.0e-3} : (tensor<8x16xf32>, tensor<4xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Tests that gamma's and beta's gradients have gamma's type.
func.func @f(%x: tensor<8x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'graph.layer_norm_grad' op expects gamma's and beta's gradients of gamma's type 'tensor<16xf32>', found 'tensor<8xf32>'}}
  %dx, %dg, %db = graph.layer_norm_grad %x, %g, %x {epsilon = 1.0e-3} : (tensor<8x16xf32>, tensor<16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<8xf32>)
  return
}

// -----

// Tests that the gradient's epsilon is positive.
func.func @f(%x: tensor<8x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'graph.layer_norm_grad' op expects a positive epsilon, found -1.000000e+00}}
  %dx, %dg, %db = graph.layer_norm_grad %x, %g, %x {epsilon = -1.0} : (tensor<8x16xf32>, tensor<16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}
