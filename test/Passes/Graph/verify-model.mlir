// RUN: dp-opt %s -split-input-file -graph-verify-model -verify-diagnostics | FileCheck %s

// One case per diagnostic of passes/Graph/VerifyModel.cpp, and a valid model that the pass
// leaves unchanged.

// Tests that a well-formed model passes unchanged: two inputs with the same batch, a parameter
// declared twice with the same type, a non-trainable parameter, the optimizer, the loss.
// CHECK-LABEL: func.func @m(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32> {graph.input = "x"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
// CHECK-SAME: attributes {graph.optimizer = #graph.momentum<nesterov = true>} {
// CHECK-NEXT: %[[W:.*]] = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
// CHECK-NEXT: %[[S:.*]] = graph.param "scale" {init = #graph.ones, trainable = false} : tensor<4x3xf32>
// CHECK-NEXT: %[[W2:.*]] = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
// CHECK-NEXT: %[[Y:.*]] = graph.dense %[[X]], %[[W]] : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: %[[LOSS:.*]] = graph.softmax_cross_entropy %[[Y]], %[[L]] : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
// CHECK-NEXT: return %[[LOSS]] : tensor<f32>
// CHECK-NEXT: }
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.momentum<nesterov = true>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %s = graph.param "scale" {init = #graph.ones, trainable = false} : tensor<4x3xf32>
  %w2 = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a module needs exactly one model function (functions that are already steps, and
// declarations, do not count).
// expected-error @+1 {{expected exactly one model function, found 2}}
module {
  func.func private @declared(tensor<4xf32>) -> tensor<4xf32>
  func.func @a() attributes {graph.step = "eval"} {
    return
  }
  func.func @b() {
    return
  }
  func.func @c() {
    return
  }
}

// -----

// Tests that a model function has a single block.
// expected-error @+1 {{a model function must have a single block}}
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
^bb1:
  return %loss : tensor<f32>
}

// -----

// Tests that every argument needs an input name.
// expected-error @+1 {{argument #1 of model 'm' needs a name: add {graph.input = "..."}}}
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32>) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that input names are unique.
// expected-error @+1 {{input 'x' is bound to arguments #0 and #1}}
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "x"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that inputs are static tensors with a batch axis.
// expected-error @+1 {{input 'x' must be a static tensor with a batch axis, found 'tensor<?x4xf32>'}}
func.func @m(%x: tensor<?x4xf32> {graph.input = "x"}, %i: tensor<8x4xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %i, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that all inputs share the batch size.
// expected-error @+1 {{input 'label' has batch 7 but the first input has batch 8}}
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<7xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.fill 0.0 : tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a model needs inputs.
// expected-error @+1 {{model 'm' has no inputs}}
func.func @m() -> tensor<f32> attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<8x3xf32>
  %l = graph.param "l" {init = #graph.zeros, trainable = false} : tensor<8xf32>
  %loss = graph.fill 0.0 : tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a parameter name declared again must have the same type.
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  // expected-error @+1 {{parameter 'w' redeclared as 'tensor<3x4xf32>', first declared as 'tensor<4x3xf32>'}}
  %w2 = graph.param "w" {init = #graph.glorot_uniform} : tensor<3x4xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a model needs a trainable parameter.
// expected-error @+1 {{model 'm' has no trainable parameter}}
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform, trainable = false} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a model needs an optimizer.
// expected-error @+1 {{model 'm' needs an optimizer: add attributes {graph.optimizer = #graph.sgd<lr = 0.1>}}}
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32> {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the optimizer must be an optimizer attribute.
// expected-error @+1 {{'graph.optimizer' must be #graph.sgd, #graph.momentum or #graph.adam, found #graph.zeros}}
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.zeros} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a model returns exactly one value.
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> (tensor<f32>, tensor<f32>)
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  %c = graph.count_correct %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  // expected-error @+1 {{a model returns exactly one value, its loss; found 2}}
  return %loss, %c : tensor<f32>, tensor<f32>
}

// -----

// Tests that the returned value must be produced by a loss op.
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %c = graph.count_correct %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  // expected-error @+1 {{the returned value must be a loss (graph.softmax_cross_entropy or graph.mean_squared_error)}}
  return %c : tensor<f32>
}

// -----

// Tests that every tensor holds at least one element: a zero-width layer reached the plan
// writer, whose verifier refused a buffer of dimension 0 with no source location.
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  // expected-error @+1 {{a tensor must hold at least one element, found 'tensor<4x0xf32>'}}
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x0xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x0xf32>) -> tensor<8x0xf32>
  %w2 = graph.param "w2" {init = #graph.glorot_uniform} : tensor<0x3xf32>
  %z = graph.dense %y, %w2 : (tensor<8x0xf32>, tensor<0x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that no tensor holds more than 2^32 elements: a 2^60-element parameter, even unused,
// was compiled into a plan whose arena no machine has.
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  // expected-error @+1 {{a tensor may hold at most 2^32 elements, found 'tensor<1073741824x1073741824xf32>'}}
  %big = graph.param "big" {init = #graph.zeros} : tensor<1073741824x1073741824xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that an input is checked too.
// expected-error @+1 {{input #0: a tensor must hold at least one element, found 'tensor<8x0xf32>'}}
func.func @m(%x: tensor<8x0xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<0x3xf32>
  %y = graph.dense %x, %w : (tensor<8x0xf32>, tensor<0x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
