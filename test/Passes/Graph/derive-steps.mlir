// RUN: dp-opt %s -split-input-file -graph-derive-steps -verify-diagnostics | FileCheck %s

// Tests that the model function becomes @train and @eval: both return (loss, correct) with the
// results named by graph.output, count the correct rows on the loss's logits and labels, and
// carry their step and model names; @eval also returns the logits (its predictions); only
// @train keeps the optimizer. Arguments and results get
// the roles the runtime finds them by (graph.role).
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
// CHECK-SAME: -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"})
// CHECK-SAME: attributes {graph.model = "tiny", graph.optimizer = #graph.sgd<lr = 1.000000e-01>, graph.step = "train"}
// CHECK: %[[W:.*]] = graph.param "w"
// CHECK: %[[Y:.*]] = graph.dense %[[X]], %[[W]]
// CHECK: %[[R:.*]] = graph.relu %[[Y]]
// CHECK: %[[LOSS:.*]] = graph.softmax_cross_entropy %[[R]], %[[L]]
// CHECK-NEXT: %[[C:.*]] = graph.count_correct %[[R]], %[[L]] : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
// CHECK-NEXT: return %[[LOSS]], %[[C]] : tensor<f32>, tensor<f32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @eval(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
// CHECK-SAME: -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}, tensor<8x3xf32> {graph.output = "logits", graph.role = "logits"})
// CHECK-SAME: attributes {graph.model = "tiny", graph.step = "eval"} {
// CHECK: %[[W:.*]] = graph.param "w"
// CHECK: %[[Y:.*]] = graph.dense %[[X]], %[[W]]
// CHECK: %[[R:.*]] = graph.relu %[[Y]]
// CHECK: %[[LOSS:.*]] = graph.softmax_cross_entropy %[[R]], %[[L]]
// CHECK-NEXT: %[[C:.*]] = graph.count_correct %[[R]], %[[L]] : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
// CHECK-NEXT: return %[[LOSS]], %[[C]], %[[R]] : tensor<f32>, tensor<f32>, tensor<8x3xf32>
// CHECK-NEXT: }
// CHECK-NOT: func.func
func.func @tiny(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %r = graph.relu %y : tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %r, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the steps keep declarations and other functions as they are, and take their name
// from the model.
// CHECK-LABEL: func.func private @helper(tensor<4xf32>)
// CHECK-LABEL: func.func @train(
// CHECK-SAME: graph.model = "other", graph.optimizer = #graph.adam<>, graph.step = "train"
// CHECK-LABEL: func.func @eval(
// CHECK-SAME: attributes {graph.model = "other", graph.step = "eval"}
func.func private @helper(tensor<4xf32>)
func.func @other(%x: tensor<2x4xf32> {graph.input = "x"}, %l: tensor<2xi32> {graph.input = "y"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<>} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the roles come from the loss, not from the names: the loss's targets are the
// targets input whatever it is called, and every other input holds samples.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: {graph.input = "label", graph.role = "samples"}, %{{[^:]*}}: tensor<2xi32> {graph.input = "image", graph.role = "targets"}, %{{[^:]*}}: tensor<2x4xf32> {graph.input = "mask", graph.role = "samples"})
// CHECK-LABEL: func.func @eval(
// CHECK-SAME: {graph.input = "label", graph.role = "samples"}, %{{[^:]*}}: tensor<2xi32> {graph.input = "image", graph.role = "targets"}, %{{[^:]*}}: tensor<2x4xf32> {graph.input = "mask", graph.role = "samples"})
func.func @named(%x: tensor<2x4xf32> {graph.input = "label"}, %t: tensor<2xi32> {graph.input = "image"},
                 %m: tensor<2x4xf32> {graph.input = "mask"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<>} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %loss = graph.softmax_cross_entropy %y, %t : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the loss's targets come from one input: the runtime feeds them. (They may pass
// through ops: a concat of the labels along the batch is e2e/gradcheck/concat-layer-norm.mlir.)
func.func private @targets() -> tensor<2xi32>
func.func @computed(%x: tensor<2x4xf32> {graph.input = "x"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<>} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4x3xf32>
  %t = func.call @targets() : () -> tensor<2xi32>
  %y = graph.dense %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  // expected-error @+1 {{'graph.softmax_cross_entropy' op takes its targets from 0 inputs of the model: the runtime feeds them from one}}
  %loss = graph.softmax_cross_entropy %y, %t : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the eval step returns no predictions where the logits are not one row per sample
// fed: here the model scores each sample twice (a concat along the batch).
// CHECK-LABEL: func.func @eval(
// CHECK-SAME: -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}) attributes
func.func @twice(%x: tensor<2x4xf32> {graph.input = "x"}, %l: tensor<2xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4x3xf32>
  %xx = graph.concat %x, %x {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %ll = graph.concat %l, %l {axis = 0 : i64} : (tensor<2xi32>, tensor<2xi32>) -> tensor<4xi32>
  %y = graph.dense %xx, %w : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %ll : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that the pass needs exactly one model function (the steps it made are not models).
// expected-error @+1 {{expected exactly one model function, found 0 (run graph-verify-model first)}}
module {
  func.func @train() attributes {graph.step = "train"} {
    return
  }
  func.func @eval() attributes {graph.step = "eval"} {
    return
  }
}
